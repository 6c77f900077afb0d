/* The sliding-window ARQ of arq.py beside this file (go-back-N), written again in Promela for Spin, so that
   the two checkers can be raced on one model (`seqcheck bench --race-spin`): the same states, one
   global state per state of seqcheck's model (one process, each action one d_step from the loop's
   head, a channel as an array and its length with the unused slots zero), the same transitions.

   The model's figures come from the command line, as in `spin -a -DMESSAGES=8 -DWINDOW=5 -DMODULUS=10
   -DCAPACITY=5 -DLOSS=5 -DDUPLICATE=5 arq.pml` (MODULUS 0: unbounded); CAPACITY is at most 8, MESSAGES
   at most 255. The safety property, in_order_exactly_once, is the assertion after a delivery; the
   loop's head is a valid end state (seqcheck's accepts_end holds in every state without successors
   of this model: every message acknowledged). */

#ifndef MODULUS
#define MODULUS (2 * WINDOW)
#endif
#if MODULUS == 0
#define SEQNO(p) (p)
#define NEWLY(a) ((a) - base)
#else
#define SEQNO(p) ((p) % MODULUS)
#define NEWLY(a) (((a) + MODULUS - SEQNO(base)) % MODULUS)
#endif

byte base, nxt, expect, delivered, bad;
byte data[8], ndata;  /* payloads in flight from S to R, oldest first */
byte acks[8], nacks;  /* cumulative ACKs (the seqno R expects next) in flight from R to S */
byte loss = LOSS, dup = DUPLICATE;
hidden byte i, p, k;  /* scratch: not part of the state */

/* remove position AT of channel C (length N), the freed slot zeroed */
#define REMOVE(C, N, AT) \
    i = AT; do :: i + 1 < N -> C[i] = C[i + 1]; i++ :: else -> break od; N--; C[N] = 0; i = 0

/* a copy of position AT of channel C right after it */
#define DUPLICATE_AT(C, N, AT) \
    i = N; do :: i > AT + 1 -> C[i] = C[i - 1]; i-- :: else -> break od; C[AT + 1] = C[AT]; N++; i = 0

#define FAULTS(AT) \
    :: d_step { AT < ndata && loss > 0 -> REMOVE(data, ndata, AT); loss-- } \
    :: d_step { AT < ndata && dup > 0 && ndata < CAPACITY -> DUPLICATE_AT(data, ndata, AT); dup-- } \
    :: d_step { AT < nacks && loss > 0 -> REMOVE(acks, nacks, AT); loss-- } \
    :: d_step { AT < nacks && dup > 0 && nacks < CAPACITY -> DUPLICATE_AT(acks, nacks, AT); dup-- }

active proctype arq() {
end:
    do
    :: d_step { nxt < base + WINDOW && nxt < MESSAGES && ndata < CAPACITY -> data[ndata] = nxt; ndata++; nxt++ }
    :: d_step { ndata == 0 && nacks == 0 && base < nxt ->
           k = 0;
           do :: base + k < nxt && k < CAPACITY -> data[k] = base + k; k++ :: else -> break od;
           ndata = k; k = 0 }
    :: d_step { ndata > 0 && nacks < CAPACITY ->
           p = data[0]; REMOVE(data, ndata, 0);
           if
           :: SEQNO(p) == expect ->
                  if :: p != delivered -> bad = 1 :: else -> skip fi;
                  delivered++; expect = SEQNO(expect + 1)
           :: else -> skip
           fi;
           acks[nacks] = expect; nacks++; p = 0;
           assert(bad == 0) }
    :: d_step { nacks > 0 ->
           p = acks[0]; REMOVE(acks, nacks, 0);
           k = NEWLY(p);
           if :: k > 0 && k <= nxt - base -> base = base + k :: else -> skip fi;
           p = 0; k = 0 }
    FAULTS(0)
    FAULTS(1)
    FAULTS(2)
    FAULTS(3)
    FAULTS(4)
    FAULTS(5)
    FAULTS(6)
    FAULTS(7)
    od
}
