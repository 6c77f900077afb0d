"""UNICAST4 (JGroups' ReliableUnicast over FixedBuffer, beside NAKACK4; JGRP-2843) as an executable
specification of one member.

Rules
-----
1. This module is the documentation of UNICAST4. It says *what one member does*: a handler for
   every input (an application send, each message type, view change, each timer, the receiver
   removal hook). It knows nothing of networks, budgets or other members' states: ``models/``
   composes members with a network, as for UNICAST3.
2. State is a value (``spec/unicast4_state.py``); handlers are pure ``(node, input) -> Step``.
3. Handlers return the new node and their effects as data (``spec/effects.py``'s, and
   ``SendDropped``); observations never influence the protocol.
4. Time is abstract: each timer is an input that may arrive at any moment (``enabled_timers``).
   A blocked application thread is state (``SendEntry.blocked``); its ``Timer(SEND, peer, seqno)``
   is enabled once the window has room for its seqno.

Theory of operation: what changed from UNICAST3, and why
--------------------------------------------------------
UNICAST4 is UNICAST3 (``spec/unicast3.py``: conn_ids, first seqnos, SEND_FIRST_SEQNO, timestamped
cumulative ACKs, previous-batch XMIT_REQ, the HS resend, CLOSING/CLOSED entries) with JGroups'
fixed windows: every send and receive window is a FixedBuffer of ``capacity`` slots (2048) instead
of a growable Table. What follows from that:

- **Flow control by blocking.** A send whose seqno is more than ``capacity`` above the send
  window's low *blocks* until ACKs purge the window (UNICAST3 never blocks: its window grows without
  bound, and UFC bounds it). A blocked thread has taken its seqno; the entry's counter moved on.
- **Blocking is tied to the connection.** Closing a send entry (CLOSED, after CLOSING and
  conn_close_timeout) closes its buffer: every thread blocked on it wakes, its add fails, its
  message is dropped. A CLOSING entry keeps its buffer open (its threads stay blocked); a view or
  a send that reopens it leaves them blocked. So a sender blocked on a dead peer is released only
  by the timeouts: with both at 0 it blocks for good (JGRP-2929; 10 s each since).
- **Receivers drop beyond capacity.** A DATA more than ``capacity`` above the receive window's
  low is dropped (retransmission brings it back).
- **Counted ACKs.** ACKs are cumulative (highest delivered) as in UNICAST3, but counted: each
  DATA received counts 1 when added (duplicates included) and each delivered batch counts its size;
  when the counter reaches ``ack_threshold`` (capacity/4) it resets and an ACK goes out at once,
  otherwise the entry's pending flag makes the next retransmit run send it. A message therefore
  counts twice, and the ACK on add carries hd *before* that message is delivered.
- **Forced purge.** An accepted ACK purges the send window with force: low := min(ack, highest
  sent), over slots a blocked thread still holds; every purge wakes the blocked threads.
- **conn_ids compared as numbers** (JGRP-2852): a DATA with a lower conn_id than the receive
  entry's is cached, then dropped for the mismatch at the next drain, a greater one with
  ``first`` replaces the window, a greater one without asks for the first seqno. conn_ids are
  Java shorts: after 32767 the next is 0, which every receiver still holding a window of a high
  conn_id from that sender ignores until that window expires (a finding, ``models/unicast4/``).
  UNICAST3 takes any *different* conn_id (variant ``any_conn_id``).

Decisions, with JGroups' code (ReliableUnicast.java, UNICAST4.java, FixedBuffer.java) as reference
---------------------------------------------------------------------------------------------
1. Send (``down``/``send``): getSenderEntry (a new entry with the next conn_id if none), take the
   entry's next seqno, add (blocking), pass down, then CLOSING -> OPEN. Taking the seqno and an add
   that does not block are one step: two threads interleaving between them only reorder copies on
   the wire, which the network already does (send_atomically is not modelled).
2. A full window (``s - low > capacity``): the thread waits with its (seqno, payload) in the
   entry. ``Timer(SEND, peer, s)`` adds and sends it once ``s - low <= capacity``; blocked
   threads of one entry may wake in any order (a later seqno may be stored first: a gap the
   earlier thread fills). With ``dont_block`` and variant ``drop_dont_block`` (5.4.5, before
   JGRP-2873) the send is dropped instead and its seqno stays spent.
3. DATA (handleDataReceived, addMessage, removeAndDeliver): find the receive entry by
   compareConnIds (above); CLOSING -> OPEN; add (non-blocking: purged, beyond capacity or held are
   rejected); count 1 (ACK(hd) now if due); deliver hd+1 up to the first gap as one batch; count its
   size (ACK(new hd) now if due); the batch goes up after the ACK.
4. ACK(a, c, ts): dropped unless the entry's conn_id is c and ts is newer (or the first);
   then a forced purge. SEND_FIRST_SEQNO(ts): timestamp check, then a copy of low+1 marked first,
   if stored. XMIT_REQ: every listed seqno stored in the current send window, original header.
5. Retransmit task (triggerXmit): for each receive entry in member order a pending ACK then the
   previous-batch XMIT_REQ (``spec/unicast_common.missing_requests``); for each send entry the HS
   resend (if HA < HS, (HA, HS) unchanged since the previous run and HS stored). The idle and
   close sweeps are timers of their own (abstract time).
6. Views: entries of peers that left become CLOSING (nothing discarded, buffers open); CLOSING
   entries of members reopen; xmit_task_map keeps members only.
7. conn_close_timeout on a CLOSING send entry (removeSendConnection): CLOSE to the peer if a
   member; the entry is removed and its buffer closed: its unacknowledged messages and every
   blocked thread's message are discarded (``Discarded``, after the grace period). On a CLOSING
   receive entry (removeReceiveConnection): every pending ACK flushed, then removed.
8. The MessageCache (JGRP-2327): a DATA that finds no usable entry (no entry and not first, or a
   lower conn_id) goes into ``msg_cache[sender]``; the next DATA that finds or creates one drains
   it: the cached DATA of the entry's connection are added first (each an addMessage: it counts 1
   and may ACK), the others dropped (``Node.cache``). JGroups' cache is an unbounded queue that keeps
   every copy; the spec keeps one copy of each DATA, which keeps the model finite: a drain of k
   copies of one DATA counts k there and 1 here (the extra ACKs carry the same hd;
   ``checks/jgroups/unicast4.py`` names that difference). Of the queue's order the spec keeps what a
   drain shows: the OOB DATA's arrival order (``Node.cache_order``: each is delivered when added).
   The regular DATA are added in seqno order: an add of one delivers nothing, and every add counts
   1 towards the ACK whatever it holds, so their order changes neither packets nor state
   (``spec/unicast_common.py`` ``cache_drain``, shared with UNICAST3; kept as a set in seqno order
   until the JGroups lockstep showed two OOB DATA cached out of order delivered in arrival order).
   Only start and stop clear it.
   Left out: max_xmit_req_size, the
   AgeOutCache, send_atomically, DISCONNECT (removeAllConnections would close every entry:
   decision 7 for all at once).
9. Expiry of an entry a thread is blocked on is certain: a blocked thread never refreshes the
   entry's age, and nothing else does without new traffic. Its IDLE_SEND and CLOSE_SEND are the
   timers ``IDLE_BLOCKED`` and ``CLOSE_BLOCKED`` (same handlers), which a model may treat as
   progress (the adapter does), unlike the other expiries, which are disruptions.

10. OOB (JGRP-377; ReliableUnicast.addMessage, removeAndDeliver, 5.4.12 and master alike): the
   application may flag a send OOB (``on_send(..., oob=True)``); the DATA carries the flag
   (``Data.oob``), and so does every copy of it: the XMIT_REQ answer, the HS resend and the answer to
   SEND_FIRST_SEQNO all send the stored message, flags and all (``SendEntry.oob`` names the seqnos
   taken by OOB sends, stored or held by a blocked thread: an OOB send blocks on a full window like
   any other). The receiver adds it like any other DATA (``win.add(seqno, oob? DUMMY_OOB_MSG : msg)``,
   non-blocking: purged, beyond capacity or held is refused) and, if the add took it, delivers it at
   once (``if(oob && added) deliverMessage``), *before* the add's ACK decision
   (``needToSendAck(entry, 1)``). Its slot holds a placeholder (the DATA with ``oob``, payload 0 and
   no first mark, as UNICAST3's decision 12): the drain (``removeMany`` with
   ``drop_oob_and_dont_loopback_msgs_filter``) moves hd over it without delivering it, and the
   delivered batch's size, which ``deliverBatch`` counts (``needToSendAck(entry, batch.size())``),
   leaves it out; a run of placeholders only is no batch at all (``removeMany`` returns null): no
   count, no ACK. So an OOB DATA counts once (on add), a regular one twice. It is acknowledged
   (cumulatively, once hd passes it) and retransmitted like any other: an OOB delivery does not free
   the sender's window, which only hd moves (a sender blocked behind a gap stays blocked until the
   gap is filled, OOB or not). A cached OOB DATA is delivered when the drain of the cache adds it,
   in the queue's arrival order (``Node.cache_order``, decision 8).
11. Batches (``up(MessageBatch)``): ``on_batch`` in ``spec/unicast4_batch.py``, with its note.
12. Messages to self (``handleDataReceivedFromSelf``): ``on_data_from_self`` in ``spec/unicast4_self.py``,
    with its note: UNICAST3's decision 26 on a FixedBuffer: the send window for oneself is the
    delivery window, a loopback frees room (a sender blocked on it goes on), and each delivered batch
    counts towards an ACK to oneself on the send entry (``SendEntry.acks_counted``), which purges nothing.
13. DONT_LOOPBACK to self (``down``/``send`` with ``remove_filter``): ``on_send(..., dont_loopback=True)``
    to oneself stores the message and sends nothing (the transport never loops it back); the add's
    remove filter and purge (``dont_loopback_added``) and the drain pass over it undelivered
    (``spec/unicast4_self.py``, with its note and the finding it leads to).

Variants (``Variant``), all off is UNICAST4 as shipped: ``drop_dont_block`` (JGRP-2873, 5.4.5),
``zero_conn_timeouts`` (JGRP-2929: both timeouts 0, as a user could set them before the warning),
``any_conn_id`` (before JGRP-2852: UNICAST3's any-different conn_id rule). ``oob_redelivers`` is a
plausible defect of decision 10, no release's (UNICAST3's variant of the same name): the window keeps
the OOB message itself, not the placeholder, and the drain delivers (and counts) it a second time, as
if ``removeAndDeliver`` had no filter for OOB messages already delivered. ``dont_loopback_delivered``
is a plausible defect of decision 13, no release's: the drain delivers a DONT_LOOPBACK message to self.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple, TypeVar

from spec.effects import Deliver, Discarded, Effect, Purged, Send, SyncRequested, WindowCreated, WindowRemoved
from spec.unicast4_self import dont_loopback_added, on_data_from_self
from spec.unicast4_state import (  # noqa: F401  (the vocabulary, re-exported for worlds and tests)
    CLOSE_BLOCKED,
    CLOSE_RECV,
    CLOSE_SEND,
    CLOSING,
    DEFAULT_CAPACITY,
    IDLE_BLOCKED,
    IDLE_RECV,
    IDLE_SEND,
    OPEN,
    SEND,
    SHORT_MAX,
    STATE_NAMES,
    SYNC_EXPIRED,
    TIMER_NAMES,
    XMIT,
    Ack,
    Close,
    Config,
    Data,
    Msg,
    Node,
    RecvEntry,
    SendDropped,
    SendEntry,
    SendFirstSeqno,
    Timer,
    Variant,
    XmitReq,
    acks_monotone,
    conn_id_purity,
    initial_node,
    no_thread_blocked,
    nothing_unacked,
    purge_covered,
    purge_is_safe,
    seqno_discipline,
    timestamps_issued,
    window_order,
    window_within_capacity,
)
from spec.unicast_common import cache_add, cache_drain, missing_requests

E = TypeVar("E")
AnyEffect = Effect | SendDropped


class Step(NamedTuple):
    node: Node
    effects: tuple[AnyEffect, ...]


def _set(entries: tuple[E, ...], peer: int, value: E) -> tuple[E, ...]:
    return entries[:peer] + (value,) + entries[peer + 1:]


def _with_send(node: Node, peer: int, entry: SendEntry | None) -> Node:
    return replace(node, send=_set(node.send, peer, entry))


def with_recv(node: Node, peer: int, entry: RecvEntry | None) -> Node:
    return replace(node, recv=_set(node.recv, peer, entry))


def has_room(cfg: Config, entry: SendEntry, seqno: int) -> bool:
    """FixedBuffer.add's edge: ``seqno`` fits iff it is at most ``capacity`` above low."""
    return seqno - entry.acked <= cfg.capacity


# ---------------------------------------------------------------------------------------------
# Application send (ReliableUnicast.down, getSenderEntry, send).
def on_send(cfg: Config, node: Node, dst: int, payload: int, oob: bool = False, dont_loopback: bool = False) -> Step:
    """An application thread sends ``payload`` to ``dst``, flagged OOB or not, DONT_LOOPBACK or not
    (decisions 1, 2, 10, 13; DONT_LOOPBACK changes something only on a send to oneself). A new send
    entry to oneself is also the window oneself's messages are delivered from (decision 12): its
    creation starts a new incarnation of that channel."""
    entry = node.send[dst]
    created: tuple[AnyEffect, ...] = ()
    if entry is None:
        entry = SendEntry(node.next_conn_id, OPEN, 0, (), (0, 0), 0, 0, ())
        node = replace(node, next_conn_id=0 if node.next_conn_id >= SHORT_MAX else node.next_conn_id + 1)
        if dst == node.me:
            created = (WindowCreated(dst, entry.conn_id, 0),)
    seqno = entry.seqno + 1
    entry = _flag(replace(entry, seqno=seqno), seqno, oob, dont_loopback and dst == node.me)
    if has_room(cfg, entry, seqno):
        step = _add_and_send(node, dst, entry, seqno, payload)
        return Step(step.node, created + step.effects)
    if cfg.dont_block and cfg.variant.drop_dont_block:
        entry = replace(entry, oob=entry.oob - {seqno}, dont_loopback=entry.dont_loopback - {seqno})
        return Step(_with_send(node, dst, entry), (*created, SendDropped(dst, seqno, payload)))
    entry = replace(entry, blocked=tuple(sorted(entry.blocked + ((seqno, payload),))))
    return Step(_with_send(node, dst, entry), created)


def _flag(entry: SendEntry, seqno: int, oob: bool, dont_loopback: bool) -> SendEntry:
    """The send entry remembering that the thread holding ``seqno`` sends OOB (decision 10) or
    DONT_LOOPBACK to oneself (decision 13)."""
    if oob:
        entry = replace(entry, oob=entry.oob | {seqno})
    if dont_loopback:
        entry = replace(entry, dont_loopback=entry.dont_loopback | {seqno})
    return entry


def stored_data(entry: SendEntry, seqno: int, first: bool) -> Data:
    """The stored message ``seqno`` of ``entry`` as sent again: its header (``first`` as the caller
    says) and its flags (decision 10). The caller checked that the slot holds a payload."""
    payload = entry.unacked[seqno - entry.acked - 1]
    assert payload is not None
    return Data(seqno, entry.conn_id, first, payload, seqno in entry.oob)


def _add_and_send(node: Node, dst: int, entry: SendEntry, seqno: int, payload: int) -> Step:
    """Store (seqno, payload) in the send window (the caller checked the room), pass it down, and
    reopen a CLOSING entry. A DONT_LOOPBACK message to oneself goes nowhere (the transport drops
    it) and its add runs the remove filter and the purge (decision 13)."""
    index = seqno - entry.acked - 1
    slots = entry.unacked + (None,) * (index + 1 - len(entry.unacked))
    slots = slots[:index] + (payload,) + slots[index + 1:]
    entry = replace(entry, unacked=slots, state=OPEN)
    if seqno in entry.dont_loopback:
        entry, purged = dont_loopback_added(node, entry)
        return Step(_with_send(node, dst, entry), purged)
    return Step(_with_send(node, dst, entry), (Send(dst, stored_data(entry, seqno, seqno == 1)),))


def _on_send_thread(cfg: Config, node: Node, dst: int, seqno: int) -> Step:
    """``Timer(SEND, dst, seqno)``: the thread blocked with ``seqno`` finds room and goes on."""
    entry = node.send[dst]
    assert entry is not None
    payload = dict(entry.blocked)[seqno]
    entry = replace(entry, blocked=tuple(t for t in entry.blocked if t[0] != seqno))
    return _add_and_send(node, dst, entry, seqno, payload)


# ---------------------------------------------------------------------------------------------
# Receiving (ReliableUnicast.up and handleUpEvent).
def on_receive(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Dispatch a message from ``src`` to its handler."""
    if isinstance(msg, Data):
        if src == node.me:
            return Step(*on_data_from_self(cfg, node, msg))  # decision 12
        return _on_data(cfg, node, src, msg)
    if isinstance(msg, Ack):
        return _on_ack(node, src, msg)
    if isinstance(msg, SendFirstSeqno):
        return _on_send_first_seqno(node, src, msg)
    if isinstance(msg, XmitReq):
        return _on_xmit_req(node, src, msg)
    return _on_close(node, src, msg)


def receive_entry(cfg: Config, node: Node, src: int, msg: Data) -> tuple[Node, RecvEntry | None, list[AnyEffect]]:
    """getReceiverEntry and compareConnIds: the entry ``msg`` goes to, or None (after a rate-limited
    SEND_FIRST_SEQNO where the first seqno is missing; for a lower conn_id, dropped at the drain):
    the caller then puts its DATA into the message cache (decision 8)."""
    entry = node.recv[src]
    if entry is not None and entry.conn_id == msg.conn_id:
        return node, entry, []
    newer = entry is None or msg.conn_id > entry.conn_id or cfg.variant.any_conn_id
    if not newer:
        return node, None, []
    if not msg.first:
        step = _request_first_seqno(node, src)
        return step.node, None, list(step.effects)
    created = RecvEntry(msg.conn_id, OPEN, msg.seqno - 1, (), False, 0)
    return node, created, [WindowCreated(src, msg.conn_id, msg.seqno - 1)]


def _on_data(cfg: Config, node: Node, src: int, msg: Data) -> Step:
    """DATA (decision 3): with a usable entry, drain the message cache (the cached DATA of the
    entry's connection added first, the others dropped), add the DATA, each add counting 1; then
    deliver the run and count it; ACKs before the batch goes up."""
    node, entry, effects = receive_entry(cfg, node, src, msg)
    if entry is None:
        return Step(cache_add(node, src, msg), tuple(effects))
    node, queued = cache_drain(node, src, entry.conn_id)  # addQueuedMessages
    for added in (*queued, msg):
        node, entry, acked = add_message(cfg, node, src, entry, added)
        effects.extend(acked)
    node, entry, delivered = remove_and_deliver(cfg, node, src, entry)
    effects.extend(delivered)
    return Step(with_recv(node, src, entry), tuple(effects))


def remove_and_deliver(cfg: Config, node: Node, src: int, entry: RecvEntry
                       ) -> tuple[Node, RecvEntry, list[AnyEffect]]:
    """removeAndDeliver: hd moves over the run from hd+1 up to the first gap; its regular DATA go
    up as one batch, counted by its size (ACK(new hd) now if due, before the batch); OOB
    placeholders are passed over and not counted, and a run of placeholders only is no batch
    (decision 10)."""
    run = 0
    while run < len(entry.buffered) and entry.buffered[run] is not None:
        run += 1
    if not run:
        return node, entry, []
    redeliver = cfg.variant.oob_redelivers
    payloads = [m.payload for m in entry.buffered[:run] if m is not None and (redeliver or not m.oob)]
    entry = replace(entry, delivered=entry.delivered + run, buffered=entry.buffered[run:])
    if not payloads:
        return node, entry, []
    effects: list[AnyEffect] = []
    entry, now = count_acks(cfg, entry, len(payloads))
    if now:
        node = replace(node, timestamper=node.timestamper + 1)
        effects.append(Send(src, Ack(entry.delivered, entry.conn_id, node.timestamper)))
    effects.extend(Deliver(src, p) for p in payloads)
    return node, entry, effects


def add_message(cfg: Config, node: Node, src: int, entry: RecvEntry, msg: Data
                 ) -> tuple[Node, RecvEntry, list[AnyEffect]]:
    """addMessage: reopen (update), add (purged, beyond capacity or held: rejected; an OOB DATA the
    add took is delivered at once), count 1 and ACK(hd) now if due (hd before this message is
    delivered in order)."""
    entry, added = add_to_buffer(cfg, replace(entry, state=OPEN), msg)
    effects: list[AnyEffect] = [Deliver(src, msg.payload)] if added and msg.oob else []
    entry, now = count_acks(cfg, entry, 1)
    if now:
        node = replace(node, timestamper=node.timestamper + 1)
        effects.append(Send(src, Ack(entry.delivered, entry.conn_id, node.timestamper)))
    return node, entry, effects


def add_to_buffer(cfg: Config, entry: RecvEntry, msg: Data) -> tuple[RecvEntry, bool]:
    """FixedBuffer.add on a receive window (never blocking): refused at or below hd, beyond
    capacity or where the slot is held; an OOB DATA is held as its placeholder (decision 10)."""
    index = msg.seqno - entry.delivered - 1
    if not 0 <= index < cfg.capacity or (index < len(entry.buffered) and entry.buffered[index] is not None):
        return entry, False
    held = Data(msg.seqno, msg.conn_id, False, 0, True) if msg.oob and not cfg.variant.oob_redelivers else msg
    padded = entry.buffered + (None,) * (index + 1 - len(entry.buffered))
    return replace(entry, buffered=padded[:index] + (held,) + padded[index + 1:]), True


def count_acks(cfg: Config, entry: RecvEntry, n: int) -> tuple[RecvEntry, bool]:
    """Entry.update(n, add_acks): True (counter reset) means send an ACK now; otherwise the counter
    grows and the pending flag is set."""
    total = entry.acks_counted + n
    if total >= cfg.threshold:
        return replace(entry, acks_counted=0), True
    return replace(entry, acks_counted=total, ack_pending=True), False


def _request_first_seqno(node: Node, peer: int) -> Step:
    """sendRequestForFirstSeqno: at most one SEND_FIRST_SEQNO to ``peer`` per sync_min_interval."""
    if peer in node.sync_sent:
        return Step(node, ())
    ts = node.timestamper + 1
    node = replace(node, sync_sent=node.sync_sent | {peer}, timestamper=ts)
    return Step(node, (Send(peer, SendFirstSeqno(ts)), SyncRequested(peer)))


def _accepts(entry: SendEntry, ts: int) -> bool:
    """updateLastTimestamp: the first timestamp is accepted, later ones only if strictly newer."""
    return entry.last_ts == 0 or ts > entry.last_ts


def _on_ack(node: Node, src: int, msg: Ack) -> Step:
    """ACK (decision 4): with the entry's conn_id and a newer timestamp, a forced purge to
    min(seqno, HS); the blocked threads may find room."""
    entry = node.send[src]
    if entry is None or entry.conn_id != msg.conn_id or not _accepts(entry, msg.ts):
        return Step(node, ())
    upto = min(msg.seqno, entry.highest_sent)
    effects: tuple[AnyEffect, ...] = ()
    entry = replace(entry, last_ts=msg.ts)
    if upto > entry.acked:
        def above(seqnos: frozenset[int]) -> frozenset[int]:
            return frozenset(s for s in seqnos if s > upto) if seqnos else seqnos
        entry = replace(entry, acked=upto, unacked=entry.unacked[upto - entry.acked:], oob=above(entry.oob),
                        dont_loopback=above(entry.dont_loopback), oob_delivered=above(entry.oob_delivered))
        effects = (Purged(src, entry.conn_id, upto),)
    return Step(_with_send(node, src, entry), effects)


def _on_send_first_seqno(node: Node, src: int, msg: SendFirstSeqno) -> Step:
    """SEND_FIRST_SEQNO(ts): with a newer timestamp, a copy of low+1 marked first, if stored."""
    entry = node.send[src]
    if entry is None or not _accepts(entry, msg.ts):
        return Step(node, ())
    entry = replace(entry, last_ts=msg.ts)
    node = _with_send(node, src, entry)
    if not entry.unacked or entry.unacked[0] is None:
        return Step(node, ())
    return Step(node, (Send(src, stored_data(entry, entry.acked + 1, True)),))


def _on_xmit_req(node: Node, src: int, msg: XmitReq) -> Step:
    """XMIT_REQ(seqnos): resend every listed seqno stored in the send window, original header."""
    entry = node.send[src]
    if entry is None:
        return Step(node, ())
    resent = []
    for s in msg.seqnos:
        if entry.acked < s <= entry.highest_sent and entry.unacked[s - entry.acked - 1] is not None:
            resent.append(Send(src, stored_data(entry, s, s == 1)))
    return Step(node, tuple(resent))


def _on_close(node: Node, src: int, msg: Close) -> Step:
    """CLOSE(conn_id): remove the receive entry for ``src`` if it has that conn_id."""
    entry = node.recv[src]
    if entry is None or entry.conn_id != msg.conn_id:
        return Step(node, ())
    return Step(with_recv(node, src, None), (WindowRemoved(src),))


# ---------------------------------------------------------------------------------------------
# Membership and the receiver-removal hook.
def on_view(cfg: Config, node: Node, members: frozenset[int]) -> Step:
    """A new view (decision 6): entries of peers that left become CLOSING, CLOSING entries of
    members reopen; nothing is discarded and no buffer closes."""
    send, recv, xmit_last = list(node.send), list(node.recv), list(node.xmit_last)
    for peer in range(cfg.members):
        state = OPEN if peer in members else CLOSING
        if peer not in members:
            xmit_last[peer] = 0
        s, r = send[peer], recv[peer]
        if s is not None and s.state != state:
            send[peer] = replace(s, state=state)
        if r is not None and r.state != state:
            recv[peer] = replace(r, state=state)
    return Step(replace(node, members=members, send=tuple(send), recv=tuple(recv), xmit_last=tuple(xmit_last)), ())


def on_remove_receiver(cfg: Config, node: Node, peer: int) -> Step:
    """removeReceiveConnection (JGroups' test hook, and conn_close_timeout on a CLOSING receive
    entry): flush every pending ACK, then drop the entry."""
    node, effects = _send_pending_acks(node)
    if node.recv[peer] is None:
        return Step(node, tuple(effects))
    return Step(with_recv(node, peer, None), (*effects, WindowRemoved(peer)))


# ---------------------------------------------------------------------------------------------
# Timers.
def enabled_timers(cfg: Config, node: Node) -> tuple[Timer, ...]:
    """The timers that can fire now, in a fixed order."""
    timers = [Timer(XMIT, -1)] if not cfg.xmit_per_connection else []
    for peer in range(cfg.members):
        if cfg.xmit_per_connection and (peer != node.me or node.send[peer] or node.recv[peer]):
            timers.append(Timer(XMIT, peer))  # oneself's only while a connection to oneself exists
        s, r = node.send[peer], node.recv[peer]
        if s is not None:
            if cfg.expiry and s.state == OPEN:
                timers.append(Timer(IDLE_BLOCKED if s.blocked else IDLE_SEND, peer))
            if cfg.closing and s.state == CLOSING:
                timers.append(Timer(CLOSE_BLOCKED if s.blocked else CLOSE_SEND, peer))
            timers.extend(Timer(SEND, peer, seqno) for seqno, _ in s.blocked if has_room(cfg, s, seqno))
        if r is not None and cfg.expiry and r.state == OPEN:
            timers.append(Timer(IDLE_RECV, peer))
        if r is not None and cfg.closing and r.state == CLOSING:
            timers.append(Timer(CLOSE_RECV, peer))
        if peer in node.sync_sent:
            timers.append(Timer(SYNC_EXPIRED, peer))
    return tuple(timers)


def on_timer(cfg: Config, node: Node, timer: Timer) -> Step:
    """Fire ``timer`` (one of ``enabled_timers``)."""
    kind, peer = timer.kind, timer.peer
    if kind == XMIT:
        return _retransmit_task(node, None if peer < 0 else peer)
    if kind == SEND:
        return _on_send_thread(cfg, node, peer, timer.seqno)
    if kind == SYNC_EXPIRED:
        return Step(replace(node, sync_sent=node.sync_sent - {peer}), ())
    if kind in (IDLE_SEND, IDLE_BLOCKED):
        sender = node.send[peer]
        assert sender is not None
        return Step(_with_send(node, peer, replace(sender, state=CLOSING)), ())
    if kind == IDLE_RECV:
        receiver = node.recv[peer]
        assert receiver is not None
        return Step(with_recv(node, peer, replace(receiver, state=CLOSING)), ())
    if kind in (CLOSE_SEND, CLOSE_BLOCKED):
        return _close_send_entry(node, peer)
    return on_remove_receiver(cfg, node, peer)  # CLOSE_RECV


def _close_send_entry(node: Node, peer: int) -> Step:
    """removeSendConnection (decision 7): CLOSE to the peer if a member; the entry is removed and
    its buffer closed: what it held and every blocked thread's message are discarded."""
    entry = node.send[peer]
    assert entry is not None
    effects: list[AnyEffect] = []
    if peer in node.members:
        effects.append(Send(peer, Close(entry.conn_id)))
    lost = tuple(p for p in entry.unacked if p is not None) + tuple(p for _, p in entry.blocked)
    if lost:
        effects.append(Discarded(peer, tuple(sorted(lost)), True))
    return Step(_with_send(node, peer, None), tuple(effects))


def _retransmit_task(node: Node, only: int | None = None) -> Step:
    """One run (decision 5): pending ACKs, previous-batch XMIT_REQs, then the HS resend; for the
    connections with peer ``only`` alone if given."""
    node, effects = _send_pending_acks(node, only)
    xmit_last, requests = missing_requests(node.recv, node.xmit_last, only)
    effects.extend(Send(peer, XmitReq(wanted)) for peer, wanted in requests)
    send = list(node.send)
    for peer, entry in enumerate(send):
        if entry is None or (only is not None and peer != only):
            continue
        mark = (entry.acked, entry.highest_sent)
        if mark[0] < mark[1] and entry.watermark == mark:
            if entry.unacked[-1] is not None and mark[1] not in entry.dont_loopback:  # decision 13
                effects.append(Send(peer, stored_data(entry, mark[1], mark[1] == 1)))
        elif entry.watermark != mark:
            send[peer] = replace(entry, watermark=mark)
    return Step(replace(node, send=tuple(send), xmit_last=xmit_last), tuple(effects))


def _send_pending_acks(node: Node, only: int | None = None) -> tuple[Node, list[AnyEffect]]:
    """sendPendingAcks: ACK(highest delivered, conn_id, new timestamp) per pending entry."""
    effects: list[AnyEffect] = []
    recv = list(node.recv)
    ts = node.timestamper
    for peer, entry in enumerate(recv):
        if entry is None or not entry.ack_pending or (only is not None and peer != only):
            continue
        ts += 1
        recv[peer] = replace(entry, ack_pending=False)
        effects.append(Send(peer, Ack(entry.delivered, entry.conn_id, ts)))
    return replace(node, recv=tuple(recv), timestamper=ts), effects
