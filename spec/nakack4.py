"""NAKACK4 (JGroups' ReliableMulticast over FixedBuffer: fixed windows, ACKs, blocking senders;
seed 003 "MCAST", JGRP-2780) as an executable specification of one member.

Rules
-----
1. This module is the documentation of NAKACK4. It says *what one member does*: its state and a
   handler for every input (an application multicast, the application thread that adds it, each
   message type, view change, the join's digest, each timer, DISCONNECT). It knows nothing of
   networks, budgets or other members' states: the multicast world (``models/multicast_world.py``)
   composes members with a network, as it does for NAKACK2.
2. State is a value (``spec/nakack4_state.py``: frozen dataclasses of ints, bools and tuples;
   maps per member are tuples indexed by member number). Handlers are pure ``(node, input) ->
   Step``.
3. Handlers return the new node and their effects as data: ``Send`` (one per destination: a
   multicast is one ``Send`` per member of the view, the own loopback copy included), ``Deliver``,
   and observations the protocol never reads (``WindowCreated``, ``WindowRemoved``, ``AckPurged``,
   ``SendDropped``, ``QueueDropped``).
4. Time is abstract: the retransmit task, BECOME_SERVER and each application thread's next move
   are ``Timer`` inputs that may arrive at any moment (``enabled_timers`` says which can). A
   blocked send is state: the thread's (seqno, payload) in ``Node.sending``; its ``Timer(SEND,
   seqno)`` is enabled only once the own window has room for it; DISCONNECT fails it.
5. Every name a world needs is importable from here: ``initial_node``, ``can_send``, the handlers
   ``on_send``, ``on_receive``, ``on_ack``, ``on_view``, ``on_join``, ``on_merge_digest``, ``on_disconnect``,
   ``enabled_timers``, ``on_timer``, and the state properties. The checked models, one beside
   each variant's twin, are in ``models/nakack4/`` (tests/models/test_nakack4_models.py lists
   them with their verdicts and counterexample lengths).

Theory of operation
-------------------
Every member numbers its multicasts 1, 2, 3, ... and keeps one FixedBuffer of ``capacity`` slots
per member of its view, its own included: the own one is the send window. Sending takes the next
seqno, adds the message to the own window and passes one copy to every member of the view (the
own copy comes back through the loopback and is delivered then, kept in the window). The add
*blocks* while the seqno is more than ``capacity`` above the window's low: that is NAKACK4's flow
control, which makes MFC unnecessary. A receiver adds each message to the sender's window (one
beyond capacity is dropped and retransmitted later; one at or below low, or already held, is a
duplicate) and delivers in order up to the first gap, nulling what it delivered.

Acknowledgement is positive and counted: each entry keeps an ack counter; a delivered batch of n
messages adds n, and when the counter reaches ``ack_threshold`` (capacity/4) it resets and an
ACK(hd) goes to the sender at once, otherwise the entry's *pending* flag is set and the next run
of the retransmit task sends the ACK. The sender keeps an AckTable: the highest ACK of every
current member (itself included: its own loopback delivery acks its own window). When the
minimum rises, the own window purges up to it, clamped to its own hd, and blocked senders wake.
A view change drops departed members' entries (their ACKs no longer hold the minimum back) and
adds joiners at 0 (the minimum may drop; low never moves back), then purges if the minimum rose.

Negative acknowledgement remains for loss: the retransmit task asks the original sender for every
gap already there on its previous run (XMIT_REQ), and the sender re-multicasts the original. A lost
*last* message, or a lost ACK, leaves no gap: while the own window holds anything unacknowledged
(low != high) and no application send happened since the last run, the retransmit task multicasts
HIGHEST_SEQNO(high), every run, with no cap. A receiver behind asks for that seqno; every receiver
counts the HIGHEST_SEQNO towards its ack counter (JGRP-2874), so a lost ACK is resent (unless
the threshold is 0 or 1: decision 5). NAKACK4 ignores STABLE.

Decisions (digest sections 1.6 and 6, jgroups-fixed-windows.md section 2), with JGroups' choice
-----------------------------------------------------------------------------------------------
1. The window (fixed-windows 1, 6.12): valid seqnos (low, low + capacity]; a sender's add blocks
   and a receiver's drops when ``s - low > capacity`` (the code since JGRP-2906, 5.5.0; before it,
   5.4.x's receiving thread blocked in FixedBuffer.add instead, which the lockstep with 5.4.12
   shows and ``checks/jgroups/nakack4.py`` explains: it is reachable only after a purge past a
   receiver's window, see decision 11). The seed's ``>= capacity`` is
   variant ``seed_edge``: it holds one message less, and with capacity 1 it never sends anything.
2. Seqnos and sending threads (3.11, fixed-windows 2 Send): the counter starts at 0, the first
   multicast is seqno 1. ``on_send`` is an application thread entering send: it takes the next
   seqno. With ``send_atomically`` (the fix of commit 370770ab9, 2025-03) the lock is held across
   seqno++, add and send, so the thread adds and sends in the same step unless the window is
   full; then it waits (``Node.sending``) with its seqno taken, and the lock is released while it
   waits: several blocked threads wake together and may add in either order, and a thread that
   enters send meanwhile may take the next seqno and send it first (digest 3.11 [INF];
   ``models/nakack4/send-atomically-blocked-overtaken.toml``).
   Without ``send_atomically`` (JGroups' default) or with variant ``lock_after_seqno`` (before
   the fix, the lock came after seqno++), taking the seqno and adding/sending are two steps and
   threads interleave between them: copies leave out of seqno order. ``sender_threads`` bounds
   the threads of one member inside send at once (the world offers an application multicast only
   below it). Adding and passing down are one step (the transport's queue never blocks, seed).
3. Own messages (fixed-windows 2): the loopback copy is not added again; it delivers the own
   window from hd+1 up to the first gap (removeMany without nullify; non-atomic sends can leave
   gaps in the own window) and counts towards the own entry's ack counter, whose ACK goes to the
   member itself as a unicast (a loopback packet). With ``dont_loopback`` (the application flags
   its multicasts DONT_LOOPBACK) no copy comes back: the add's remove filter walks the own hd
   over the message without delivering it, and the send counts 1 towards the own ack counter;
   when that says "send now" the member handles ACK(own hd) from itself at once (JGRP-2829),
   otherwise the pending flag makes the retransmit task send it. OOB messages: decision 18;
   batches: decision 17, ``on_batch`` in ``spec/nakack4_batch.py`` (one ACK decision per delivered batch).
4. ACK (6.1, 6.2): carries the receiver's hd for the sender, sent before the batch is passed up.
   ``Entry.update(n)``: counter := 0 if counter + n >= threshold (send now) else counter + n (set
   pending). The threshold is ``ack_threshold``, or capacity // 4 when that is <= 0, exactly as
   JGroups computes it (so capacity < 4 gives 0: every delivery acks at once).
5. HIGHEST_SEQNO (6.19, JGRP-2874): announces the own window's high (never a seqno a thread holds
   but has not added), multicast to the whole view, the sender included; skipped when high is 0,
   when low == high, and on the first run after an application send. A receiver asks for the
   seqno if its high for the sender is below it, and in every case counts 1 towards the ack
   counter, ignoring the result: hitting the threshold there resets the counter and sends
   nothing (JGroups' code; so with a threshold of 0 or 1, which capacity < 8 gives by default, a
   HIGHEST_SEQNO never produces an ACK and a lost ACK is never resent:
   ``models/nakack4/lost-ack-threshold-0.toml``; nor does a joiner whose digest already covers
   the sender's unacknowledged messages ever ack them: ``models/nakack4/join-threshold-0.toml``).
6. The AckTable (6.13, 6.14, JGRP-2904): entries for the current members only; ``ack(P, a)``
   from a non-member is ignored (variant ``ack_from_non_members``: it re-creates P's entry);
   a <= the entry changes nothing; otherwise the minimum is recomputed and, if it rose, the own
   window purges to it (non-forced: clamped to the own hd). ``adjust(view)`` keeps the members,
   adds joiners at 0 and recomputes the minimum; a table with no entry keeps the previous one.
   The clamp to the own hd never binds here: the member's own entry, which its own deliveries
   move and never past its hd, is part of the minimum.
7. Retransmit task (fixed-windows 2): for every entry in member order, a pending ACK(hd) to that
   member, then the previous-batch XMIT_REQ (``spec/unicast_common.missing_requests``, JGRP-1539)
   to the original sender, the own entry included (a gap in the own window, left by a thread not
   done yet, makes the member ask itself: not found); then LastSeqnoResender. The JGRP-2574 trim
   is moot (delivery happens in the handler). max_xmit_req_size is not modelled.
8. XMIT_REQ (6.21): every listed message still stored is re-multicast to the view
   (use_mcast_xmit, DONT_BLOCK) or sent as XMIT_RSP to the requester; the others are not found.
   The re-multicast is the stored original: a DONT_LOOPBACK message (``dont_loopback``) is not
   sent to the member itself again (the lockstep with 5.4.12 showed it).
9. The become_server_queue (6.16, JGRP-2913): every NAKACK4 message (ACK included) received
   while not a server is offered to a ring of become_server_queue_size (50); a full ring refuses
   the newest. BECOME_SERVER replays it in arrival order, in one step.
10. Views (fixed-windows 2 VIEW_CHANGE): windows of non-members dropped (never the own), a window
    at 0 for each new member with a fresh ack counter, the AckTable adjusted and the own window
    purged if the minimum rose (JGRP-2853/2854), server from now on, retransmission records of
    non-members forgotten. A view is identified by its members.
11. Join (6.15): the coordinator's GMS sends GET_DIGEST (the joiner at (0, 0)) with the view;
    the joiner's JoinRsp is SET_DIGEST (a window at hd for each sender lacking one), then
    VIEW_CHANGE, then a pending BECOME_SERVER; a second JoinRsp is ignored. NAKACK4 has no STABLE
    to suspend: nothing stops a member other than the coordinator from purging, on its
    members' ACKs, messages above the digest's hd for it before it installs the joiner's view
    (``models/nakack4/join-purge-race.toml``: the joiner's window then waits for ever).
12. DISCONNECT (``on_disconnect``, JGRP-2853/2854): the own window closes, every thread still
    holding a seqno fails (``SendDropped``: the message is dropped, its seqno spent), the counter
    returns to 0 and the table is cleared. (The multicast world's stops do not call it: a member
    that leaves acts no more; the handler is checked in tests/spec/test_nakack4_handlers.py.)
13. DONT_BLOCK (JGRP-2873): ``dont_block`` flags the application's multicasts; as shipped they
    block like any other (the fix), variant ``drop_dont_block`` drops them on a full window.
14. The single deliverer (digest 1.0.3, JGRP-3034): delivery happens in the receive handler, so
    the ``adders`` counter is state only when the model injects an exception (setting
    ``deliver_exceptions``): the fault ``Timer(DELIVER_FAULT, sender)`` arms the next batch of that
    sender's messages to throw before anything is removed (an assumption: where batch creation
    throws is not in the code or the issue; later in the batch, removed messages would be lost
    outright). That message is added, nothing is
    delivered; before the fix (variant ``deliverer_stuck``) ``adders`` stays set and no message of
    that sender is ever delivered again; with the fix it is reset, and what the window holds is
    delivered by the next removeAndDeliver, which only a message from that sender (a duplicate
    included) runs: if the exception hits the sender's last message, nothing runs it again
    (``models/nakack4/jgrp3034-fixed.toml``: the fix does not deliver a stranded last message).
    The flag ``fix_deliver_stranded`` (not in JGroups; alias ``fix:deliver-stranded``) is a
    complete fix: a HIGHEST_SEQNO, which the sender repeats while its message is unacked, runs
    removeAndDeliver on a stranded window (``models/nakack4/jgrp3034-deliver-stranded.toml``).
15. Merge (1.6 (c): as NAKACK2): ``on_merge_digest`` keeps the own window and any window whose
    hd is at least the merge digest's, and replaces the others with a window at that hd; the
    merge view that follows adjusts the AckTable like any view.
16. Left out: the ACK-batch maximum (max_batch_size 0), dynamic_buffers (JGRP-2969), JGRP-2875
    (views are not NAKACK4 messages in the world: GMS's view multicast goes through NAKACK4 and
    takes a seqno of the coordinator's; the join findings' reproductions on JGroups send it),
    the blocking receive of 5.4.x (JGRP-2906, decision 1).
18. OOB (``on_send(oob=True)``: a model's ``[oob]`` table; JGRP-379; decision 17 is in
    ``spec/nakack4_batch.py``). ReliableMulticast (5.4.12 and master) handles it as NAKACK2 does
    (``spec/nakack2.py`` decision 17):
    ``handleMessage`` (5.4.12 lines 747-774) adds an OOB message as the placeholder
    ``DUMMY_OOB_MSG`` and delivers it at once if the add took it (not beyond capacity, above hd,
    the slot free), then ``removeAndDeliver`` passes placeholders over (the filter of lines
    111-114). The flag travels in the message: the stored original keeps it, so re-multicasts and
    XMIT_RSPs carry it. ACKs: the OOB message goes up through ``deliver(msg, sender, seqno, entry)``
    (lines 892-903), which counts 1 towards the entry's ACK and, when the count says so, sends
    ``ACK(win.highestDelivered())`` *before* the removal that follows: so an OOB message counts
    exactly once (the removal's batch leaves its placeholder out, and the batch counts only what it
    delivers), and an ACK it triggers carries the hd from before the removal. The own copy
    (loopback, not added): the stored original is delivered if its transient OOB_DELIVERED can
    still be set, counting towards the own entry's ACK, then the removal from hd+1 up to the first
    gap skips it. NAKACK4's own window may hold gaps (a thread that took a seqno has not added it
    yet), so an own OOB message can be delivered while still above the own hd: the node keeps
    those seqnos (``Node.oob_delivered``, OOB_DELIVERED, dropped as hd passes them) and a thread
    holding a seqno keeps its flag (``Node.oob_sending``). With the deliverer armed or stuck
    (decision 14) an OOB message the add takes is still delivered (``deliver`` runs before
    ``removeAndDeliver``). With ``dont_loopback`` no own copy comes back: an OOB message is then a
    DONT_LOOPBACK one at its sender. master differs from 5.4.12 only in the add's blocking argument
    (``win.add(seqno, msg, null, false)``), which the receive side of decision 1 already is.

Variants (flags in ``Variant``); all off is NAKACK4 as shipped late 2026:

=============================  ==============================================================
``seed_edge``                  the seed's window edge: full when s - low >= capacity
``lock_after_seqno``           before 370770ab9: send_atomically took the lock after seqno++,
                               so concurrent senders add and send out of seqno order
``ack_from_non_members``       before JGRP-2904: an ACK from a member no longer in the view
                               re-creates its AckTable entry and pins the minimum
``highest_seqno_no_ack``       before JGRP-2874: a HIGHEST_SEQNO does not count towards the ACK
                               and is DONT_LOOPBACK, so a lost ACK is never resent
``view_change_no_purge``       before JGRP-2853/2854: a view change adjusts the AckTable but
                               does not purge, so a sender blocked on a departed member stays
                               blocked until some later ACK
``no_dont_loopback_self_ack``  before JGRP-2829: with ``dont_loopback`` a member never acks its
                               own messages, so its own AckTable entry pins the minimum
``deliverer_stuck``            before JGRP-3034: with ``deliver_exceptions``, an exception while
                               the deliverer builds a batch leaves it set: no delivery from that
                               sender ever again
``fix_deliver_stranded``       not in JGroups (a fix this spec proposes, decision 14): a
                               HIGHEST_SEQNO runs removeAndDeliver on a window a failed batch
                               left stranded, so JGRP-3034's stranded last message is delivered
``drop_dont_block``            before JGRP-2873: with ``dont_block`` (the application's
                               multicasts flagged DONT_BLOCK) a send on a full window is dropped,
                               its seqno spent: a gap nobody can fill
=============================  ==============================================================
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Effect, Send
from spec.nakack2_state import Data, Digest, HighestSeqno, JoinRsp, XmitReq, XmitRsp, set_at  # noqa: F401  (re-exported)
from spec.nakack4_membership import (  # noqa: F401  (decisions 10-12 and 15, re-exported)
    on_disconnect,
    on_join,
    on_join_rsp,
    on_merge_digest,
    on_view,
    set_digest,
)
from spec.nakack4_state import (  # noqa: F401  (the vocabulary, re-exported for worlds and tests)
    ARMED,
    BECOME_SERVER,
    DELIVER_FAULT,
    NAKACK_TYPES,
    NO_ENTRY,
    READY,
    SEND,
    STRANDED,
    STUCK,
    TIMER_NAMES,
    XMIT,
    Ack,
    AckPurged,
    Config,
    Msg,
    Node,
    QueueDropped,
    SendDropped,
    Step,
    Timer,
    Variant,
    Window,
    ack_min_is_min,
    ack_table_members,
    acks_truthful,
    add_and_deliver,
    add_only,
    beyond,
    blocks_only_when_full,
    deliver_held,
    deliver_own,
    deliverer_released,
    digest_of,
    initial_node,
    new_window,
    purge,
    purge_covered,
    purge_to_min,
    queue_within_bound,
    room_for,
    seqno_discipline,
    skip_own,
    slots_hold_their_seqnos,
    store,
    table_min,
    window_order,
    window_within_capacity,
    with_window,
)
from spec.unicast_common import add_to_window, drain_window, missing_requests

Effects = list[Effect | AckPurged | SendDropped | QueueDropped]


# ---------------------------------------------------------------------------------------------
# Application multicast: a thread takes a seqno (on_send), then adds and passes down (SEND timer).
def on_send(cfg: Config, node: Node, payload: int, oob: bool = False) -> Step:
    """An application thread multicasts ``payload``, flagged OOB or not (decision 18): it takes the
    next seqno. Atomic (decision 2): the add and the send follow in the same step if the own window
    has room, else the thread waits with its seqno. Otherwise it holds the seqno until its
    ``Timer(SEND, seqno)``. Without an own window (a joiner before its digest, or after DISCONNECT)
    the message is dropped."""
    if node.windows[node.me] is None:
        return Step(node, ())
    seqno = node.seqno + 1
    node = replace(node, seqno=seqno)
    if cfg.atomic and room_for(cfg, node, seqno):
        return _add_and_send(cfg, node, seqno, payload, oob)
    if cfg.atomic and _drops_when_full(cfg):
        return Step(replace(node, skip_next_resend=True), (SendDropped(seqno, payload),))
    if oob:
        node = replace(node, oob_sending=node.oob_sending | {seqno})
    return Step(replace(node, sending=tuple(sorted(node.sending + ((seqno, payload),)))), ())


def _drops_when_full(cfg: Config) -> bool:
    """Variant ``drop_dont_block`` with DONT_BLOCK sends: a full window drops instead of blocking."""
    return cfg.dont_block and cfg.variant.drop_dont_block


def can_send(cfg: Config, node: Node) -> bool:
    """May an application thread enter send: the member has its own window and fewer than
    ``sender_threads`` threads are inside send already."""
    return node.windows[node.me] is not None and len(node.sending) < cfg.sender_threads


def _add_and_send(cfg: Config, node: Node, seqno: int, payload: int, oob: bool = False) -> Step:
    """The own window takes (seqno, payload) (the caller checked there is room), one copy goes to
    every member of the view, and the next HIGHEST_SEQNO run is skipped. A DONT_LOOPBACK message
    (decision 3) is not sent to the member itself: the add's filter walks the own hd over it, and
    the send counts 1 towards the own ACK, which, when due, is handled at once (JGRP-2829)."""
    own = node.windows[node.me]
    assert own is not None
    data = Data(seqno, payload, oob) if oob else Data(seqno, payload)
    if not cfg.dont_loopback:
        node = replace(with_window(node, node.me, store(own, data)), skip_next_resend=True)
        return Step(node, tuple(Send(member, data) for member in node.view))
    node = replace(with_window(node, node.me, skip_own(store(own, data))), skip_next_resend=True)
    sent = tuple(Send(member, data) for member in node.view if member != node.me)
    if cfg.variant.no_dont_loopback_self_ack:
        return Step(node, sent)
    node, ack_now = _count_acks(cfg, node, node.me, 1)
    if not ack_now:
        return Step(node, sent)
    own = node.windows[node.me]
    assert own is not None
    acked = on_ack(cfg, node, node.me, own.delivered)
    return Step(acked.node, sent + acked.effects)


def _on_send_thread(cfg: Config, node: Node, seqno: int) -> Step:
    """``Timer(SEND, seqno)``: the thread holding ``seqno`` adds and sends it (enabled only once
    the own window has room: until then the thread is blocked), or, variant ``drop_dont_block``,
    drops it on a full window."""
    payload, oob = dict(node.sending)[seqno], seqno in node.oob_sending
    node = replace(node, sending=tuple(entry for entry in node.sending if entry[0] != seqno))
    if oob:
        node = replace(node, oob_sending=node.oob_sending - {seqno})
    if not room_for(cfg, node, seqno):
        return Step(replace(node, skip_next_resend=True), (SendDropped(seqno, payload),))
    return _add_and_send(cfg, node, seqno, payload, oob)


# ---------------------------------------------------------------------------------------------
# Receiving.
def on_receive(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Dispatch a message from ``src``: NAKACK4's own types are queued while not a server."""
    if isinstance(msg, NAKACK_TYPES) and not node.is_server:
        return queue_message(cfg, node, src, msg)
    if isinstance(msg, Data):
        return _on_data(cfg, node, src, msg)
    if isinstance(msg, XmitRsp):
        return _on_data(cfg, node, msg.sender, Data(msg.seqno, msg.payload, msg.oob))
    if isinstance(msg, XmitReq):
        return _on_xmit_req(cfg, node, src, msg)
    if isinstance(msg, HighestSeqno):
        return _on_highest_seqno(cfg, node, src, msg)
    if isinstance(msg, Ack):
        return on_ack(cfg, node, src, msg.seqno)
    return on_join_rsp(cfg, node, msg)


def queue_message(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Offer ``msg`` to the become_server_queue; a full ring refuses it (decision 9)."""
    if len(node.queue) < cfg.queue_bound:
        return Step(replace(node, queue=node.queue + ((src, msg),)), ())
    return Step(node, (QueueDropped(src, msg),))


def _on_data(cfg: Config, node: Node, sender: int, msg: Data) -> Step:
    """MSG from ``sender``: dropped without a window; the own copy delivers the own window;
    another sender's message is added and its window delivered up to the first gap. A delivered
    batch counts towards the entry's ACK, sent before the batch goes up (decision 4). An OOB
    message is delivered on its own first (decision 18)."""
    window = node.windows[sender]
    if window is None:
        return Step(node, ())
    effects: Effects = []
    if sender == node.me:
        if msg.oob and msg.seqno > window.delivered and msg.seqno not in node.oob_delivered and (
                stored := window.get(msg.seqno)) is not None:  # OOB_DELIVERED set now (decision 18)
            node = _deliver_one(cfg, replace(node, oob_delivered=node.oob_delivered | {msg.seqno}),
                                sender, stored.payload, effects)
        window, payloads = deliver_own(window, node.oob_delivered)
        if node.oob_delivered:
            node = replace(node, oob_delivered=frozenset(s for s in node.oob_delivered if s > window.delivered))
    elif node.deliverer[sender] in (ARMED, STUCK):
        return _failed_delivery(cfg, node, sender, msg)
    elif msg.oob:
        if beyond(cfg, window, msg.seqno):
            return Step(node, ())
        buffered, first = add_to_window(window.delivered, window.buffered, msg)
        if first:  # added: delivered at once, the ACK (if due) carrying hd before the removal
            node = _deliver_one(cfg, node, sender, first[0], effects)
        hd, buffered, payloads = drain_window(window.delivered, buffered)
        window = Window(hd, hd, (), buffered)
        node = replace(node, deliverer=set_at(node.deliverer, sender, READY))
    else:
        window, payloads = add_and_deliver(cfg, window, msg)
        node = replace(node, deliverer=set_at(node.deliverer, sender, READY))
    return deliver_batch(cfg, with_window(node, sender, window), sender, payloads, effects)


def _deliver_one(cfg: Config, node: Node, sender: int, payload: int, effects: Effects) -> Node:
    """``deliver(msg)``, an OOB message alone (decision 18): it counts 1 towards the entry's ACK,
    sent at once (with the window's hd as it is) when the count says so, then goes up."""
    node, ack_now = _count_acks(cfg, node, sender, 1)
    window = node.windows[sender]
    if ack_now and window is not None:
        effects.append(Send(sender, Ack(window.delivered)))
    effects.append(Deliver(sender, payload))
    return node


def deliver_batch(cfg: Config, node: Node, sender: int, payloads: list[int], effects: Effects) -> Step:
    """deliverBatch: a delivered batch counts towards the entry's ACK (sent at once when the count
    says so, before the batch goes up), then goes up."""
    if payloads:
        node, ack_now = _count_acks(cfg, node, sender, len(payloads))
        window = node.windows[sender]
        if ack_now and window is not None:
            effects.append(Send(sender, Ack(window.delivered)))
    effects.extend(Deliver(sender, p) for p in payloads)
    return Step(node, tuple(effects))


def _failed_delivery(cfg: Config, node: Node, sender: int, msg: Data) -> Step:
    """removeAndDeliver with its deliverer armed to throw, or stuck (decision 14): the message is
    added, nothing is delivered. The armed exception leaves ``adders`` set (variant
    ``deliverer_stuck``: STUCK, for good) or resets it (the fix: STRANDED, until the next message
    from ``sender``, a duplicate included, runs removeAndDeliver again)."""
    window = node.windows[sender]
    assert window is not None
    state = node.deliverer[sender]
    if state == ARMED:
        state = STUCK if cfg.variant.deliverer_stuck else STRANDED
    added = add_only(cfg, window, msg)
    effects: Effects = []
    if msg.oob and added != window:  # an OOB message the add took is delivered before removeAndDeliver (18)
        node = _deliver_one(cfg, node, sender, msg.payload, effects)
    node = with_window(node, sender, added)
    return Step(replace(node, deliverer=set_at(node.deliverer, sender, state)), tuple(effects))


def _count_acks(cfg: Config, node: Node, sender: int, count: int) -> tuple[Node, bool]:
    """Entry.update(count): True (counter reset) means send an ACK now; otherwise the counter grows
    and the pending flag is set."""
    total = node.acks_counted[sender] + count
    if total >= cfg.threshold:
        return replace(node, acks_counted=set_at(node.acks_counted, sender, 0)), True
    return replace(node, acks_counted=set_at(node.acks_counted, sender, total),
                   ack_pending=set_at(node.ack_pending, sender, True)), False


def _on_xmit_req(cfg: Config, node: Node, src: int, msg: XmitReq) -> Step:
    """XMIT_REQ(sender, seqnos) from ``src``: every listed message still stored is re-multicast to
    the view (use_mcast_xmit) or sent to ``src`` as an XMIT_RSP; the others are not found."""
    window = node.windows[msg.sender]
    if window is None:
        return Step(node, ())
    effects: Effects = []
    for seqno in msg.seqnos:
        stored = window.get(seqno)
        if stored is None:
            continue
        if cfg.use_mcast_xmit:  # the stored original, still DONT_LOOPBACK when the application flagged it
            effects.extend(Send(member, stored) for member in node.view
                           if member != node.me or not (cfg.dont_loopback and msg.sender == node.me))
        else:
            effects.append(Send(src, XmitRsp(msg.sender, stored.seqno, stored.payload, stored.oob)))
    return Step(node, tuple(effects))


def _on_highest_seqno(cfg: Config, node: Node, src: int, msg: HighestSeqno) -> Step:
    """HIGHEST_SEQNO(seqno) from ``src`` (decision 5): ask for it if the local high is lower, and
    count it towards the ACK, ignoring whether the count says "send now"."""
    window = node.windows[src]
    if window is None:
        return Step(node, ())
    effects: Effects = []
    if msg.seqno > window.high:
        effects.append(Send(src, XmitReq(src, (msg.seqno,))))
    if not cfg.variant.highest_seqno_no_ack:
        node, _ = _count_acks(cfg, node, src, 1)
    if cfg.variant.fix_deliver_stranded and node.deliverer[src] == STRANDED:
        window, payloads = deliver_held(window)
        node = replace(with_window(node, src, window), deliverer=set_at(node.deliverer, src, READY))
        return deliver_batch(cfg, node, src, payloads, effects)
    return Step(node, tuple(effects))


def on_ack(cfg: Config, node: Node, src: int, seqno: int) -> Step:
    """ACK(seqno) from ``src`` at the sender (decision 6): the AckTable takes it; if its minimum
    rose, the own window purges to it (clamped to the own hd) and blocked threads may go on."""
    own = node.windows[node.me]
    current = node.ack_table[src]
    if own is None or (current == NO_ENTRY and not cfg.variant.ack_from_non_members):
        return Step(node, ())
    if seqno <= current:
        return Step(node, ())
    table = set_at(node.ack_table, src, seqno)
    return purge_to_min(replace(node, ack_table=table), table_min(table, node.ack_min))


# ---------------------------------------------------------------------------------------------
# Timers (the retransmit task, BECOME_SERVER, the application threads).
def enabled_timers(cfg: Config, node: Node) -> tuple[Timer, ...]:
    """The timers that can fire now, in a fixed order: the retransmit task once the member has a
    view; BECOME_SERVER while pending; each thread holding a seqno the own window has room for."""
    timers = []
    if node.members:
        timers.append(Timer(XMIT))
    if node.become_server_pending:
        timers.append(Timer(BECOME_SERVER))
    timers.extend(Timer(SEND, seqno) for seqno, _ in node.sending
                  if room_for(cfg, node, seqno) or _drops_when_full(cfg))
    if cfg.deliver_exceptions:
        timers.extend(Timer(DELIVER_FAULT, p) for p, w in enumerate(node.windows)
                      if w is not None and p != node.me and node.deliverer[p] == READY)
    return tuple(timers)


def on_timer(cfg: Config, node: Node, timer: Timer) -> Step:
    """Fire ``timer`` (one of ``enabled_timers``)."""
    if timer.kind == XMIT:
        return _retransmit_task(cfg, node)
    if timer.kind == SEND:
        return _on_send_thread(cfg, node, timer.peer)
    if timer.kind == DELIVER_FAULT:
        return Step(replace(node, deliverer=set_at(node.deliverer, timer.peer, ARMED)), ())
    return _become_server(cfg, node)


def _retransmit_task(cfg: Config, node: Node) -> Step:
    """One run (decision 7): pending ACKs, previous-batch XMIT_REQs, then LastSeqnoResender."""
    effects: Effects = []
    pending = list(node.ack_pending)
    for peer, window in enumerate(node.windows):
        if window is not None and pending[peer]:
            pending[peer] = False
            effects.append(Send(peer, Ack(window.delivered)))
    xmit_last, requests = missing_requests(node.windows, node.xmit_last)
    effects.extend(Send(p, XmitReq(p, wanted)) for p, wanted in requests)
    node = replace(node, ack_pending=tuple(pending), xmit_last=xmit_last)
    own = node.windows[node.me]
    if node.skip_next_resend:
        node = replace(node, skip_next_resend=False)
    elif own is not None and own.high != 0 and own.low != own.high:
        effects.extend(Send(member, HighestSeqno(own.high)) for member in node.view
                       if member != node.me or not cfg.variant.highest_seqno_no_ack)
    return Step(node, tuple(effects))


def _become_server(cfg: Config, node: Node) -> Step:
    """BECOME_SERVER: a server from now on; the queue is replayed in arrival order (decision 9)."""
    queued = node.queue
    node = replace(node, is_server=True, become_server_pending=False, queue=())
    effects: Effects = []
    for src, msg in queued:
        step = on_receive(cfg, node, src, msg)
        node = step.node
        effects.extend(step.effects)
    return Step(node, tuple(effects))
