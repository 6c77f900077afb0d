"""NAKACK2 (JGroups' negative-ack reliable multicast, with STABLE's purging) as an executable
specification of one member, with and without retransmission (seed 004, JGRP-2675).

Rules
-----
1. This module is the documentation of NAKACK2. It says *what one member does*: its state and a
   handler for every input (application multicast, each message type, view change, the join's
   digest, each timer). It knows nothing of networks, budgets or other members' states: a world
   (``models/``) composes members with a network into a transition system.
2. State is a value (``spec/nakack2_state.py``: frozen dataclasses of ints, bools and tuples; maps
   per member are tuples indexed by member number). Handlers are pure ``(node, input) -> Step``.
3. Handlers return the new node and their effects as data: ``Send`` (one per destination: a
   multicast is one ``Send`` per member of the sender's view, its own copy included, as JGroups
   loops it back, unless it is DONT_LOOPBACK: decision 15), ``Deliver``, and observations the
   protocol never reads (``WindowCreated`` and ``WindowRemoved`` from ``spec/effects.py``, whose
   conn_id is always 0: NAKACK2 has none; ``StablePurged``, ``QueueDropped``).
4. Time is abstract: the retransmit task, STABLE's gossip and BECOME_SERVER are ``Timer`` inputs
   that may arrive at any moment. Nothing here reads a clock; ``xmit_interval`` only says
   whether the retransmit task exists (> 0) or not (<= 0).
5. The module is split in three: this one (handlers), ``spec/nakack2_state.py`` (messages,
   settings, variants, state, the window and the state properties) and ``spec/nakack2_stable.py``
   (STABLE's round). Every name a world needs is importable from here: ``initial_node``, the
   handlers ``on_send``, ``on_receive``, ``on_view``, ``on_join``, ``on_merge_digest``,
   ``enabled_timers`` and ``on_timer``, and the state properties ``window_order``,
   ``slots_hold_their_seqnos``, ``seqno_discipline``, ``queue_within_bound``, ``purge_covered``
   and ``held_undelivered`` (the window growth).

Theory of operation
-------------------
Every member numbers its multicasts 1, 2, 3, ... (its *counter*) and keeps one window (JGroups'
``Table``) per member of its view, its own included: its own window is its send window, holding
what it sent until STABLE says everybody delivered it. A multicast is stored in the own window,
then sent to every member of the view; the sender delivers its own copy when the loopback copy
comes back up. A receiver adds each message to the sender's window and delivers from the window's
highest delivered seqno (hd) upward, in order, up to the first gap; delivered messages of other
senders are dropped at once (``discard_delivered_msgs``). Acknowledgement is negative: the
retransmit task asks the original sender for every gap that was already there on the previous run
(XMIT_REQ); the sender answers by re-multicasting the original (``use_mcast_xmit``, the default)
or with a unicast XMIT_RSP. A lost *last* message leaves no gap to see, so the retransmit task
also multicasts HIGHEST_SEQNO(counter), at most ``resend_last_seqno_max_times`` times per value and
not on a run that follows an application send; a receiver whose highest received seqno is lower
asks for it. After that, STABLE is the backstop: every member sends its digest (hd, hr per
sender) to the coordinator; once every member of the view voted, the coordinator multicasts
STABILITY with the merged digest (min hd, max hr); every member (the coordinator at once) asks
for the *previous* digest's hr if its own hr is still below it (JGRP-2678), and purges each
window up to the stable hd. STABLE is the only way anything is ever purged.

A joiner is not a server: it queues every NAKACK2 message it receives (the become_server_queue)
until it has its windows. The coordinator suspends STABLE (so nothing above the digest it hands
out is purged), sends the joiner its digest with the view, and resumes STABLE when the view is
installed. The joiner creates a window per member at the digest's hd (SET_DIGEST), installs the
view (windows at 0 for members the digest did not name) and, on BECOME_SERVER, replays its queue
in order: messages at or below a window's hd are dropped, the rest fill the windows. A message
the full queue dropped is a gap that only retransmission can fill.

With ``xmit_interval <= 0`` (seed 004, digest 1.5) NAKACK2 keeps its windows for *ordering only*:
seqnos are still assigned, windows still deliver in order and STABLE still purges, but there is
no retransmit task (no XMIT_REQ, no HIGHEST_SEQNO), ``stable()`` triggers no retransmission, and
the become_server_queue is unbounded (the seed's solution, JGroups' code from JGRP-2675 on). The
transport below must then never drop a message: any drop between the transport and NAKACK2 is a
permanent gap, and the window for that sender delivers nothing more and grows for ever. That is a
requirement on the world, not something this member can check.

Decisions (digest section 6 and the NAKACK2 flows of 1.4 (c), (c2)), with JGroups' choice
----------------------------------------------------------------------------------------
1. Seqnos and the counter (6, 5.1): the counter starts at 0, the first multicast is seqno 1. A
   seqno is assigned, stored and sent in one step (the model is atomic: JGRP-2780's reordering
   of concurrent senders, 3.11, does not arise; the wire still reorders), so the counter always
   equals the own window's hr.
2. Own messages (1.4 (c)): stored at send time; the loopback copy is not added again but makes
   the member deliver its own window up to hr (removeMany without nullify: own messages are kept
   until STABLE purges them). A member with no own window (a joiner before its digest) drops its
   application's multicasts, as JGroups drops a send without a table.
3. Receiving (1.4 (c)): a message from a sender without a window is dropped (non-member). Every
   delivered message of another sender is nulled at once (discard_delivered_msgs=true, so low ==
   hd in those windows); ``Table.add`` rejects a seqno <= hd or already held.
4. Retransmission target (6.21): XMIT_REQ goes by unicast to the original sender; the answer is a
   re-multicast of the original to the responder's view (use_mcast_xmit=true, which also repairs
   other receivers), or an XMIT_RSP to the requester (false), handled as the original MSG.
   use_mcast_xmit_req and xmit_from_random_member (deprecated and ignored since JGRP-2985) are
   left out.
5. Which gaps are requested (6.22, 1.0.2): the previous-batch rule of JGRP-1539, shared with the
   unicast specs (``spec/unicast_common.missing_requests``). max_xmit_req_size (1024) is not
   modelled: model windows are far smaller. The JGRP-2574 trim is moot: delivery happens in the
   handler, so nothing requested is ever deliverable. 3.6.0 to 5.1.x ask for every gap when the
   previous run's record is below hd (JGRP-2573, the bitset SeqnoList of 3.6.0 shared with
   UNICAST3; fixed in 5.2.0): variant ``stale_xmit_record_asks_all``.
6. HIGHEST_SEQNO (6.19, JGRP-1904): announces the *counter* (equal to hr here, decision 1), is
   multicast to the view without the sender itself (DONT_LOOPBACK), and is skipped when the
   counter is 0, on the first run after an application send, and once the same value was
   announced resend_last_seqno_max_times (1) times. A receiver whose hr for the sender is below
   the value asks for that one seqno (``retransmit(seqno, seqno)``); the seqnos between become
   gaps for the retransmit task.
7. The become_server_queue (6.16): bounded at become_server_queue_size (50; <= 0 reads as 10);
   when full, the *newest* message is dropped (ArrayBlockingQueue.offer, JGroups' code since the
   JGRP-2675 commit). The seed's correction ("BoundedList drops the oldest") describes the code
   the seed was written against: variant ``queue_drops_oldest``. Retransmission off: unbounded.
   Every NAKACK2 message type is queued (MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO); STABLE's and
   GMS's messages are not NAKACK2's.
8. BECOME_SERVER (1.4 (c)): replays the queue in arrival order through the receive handler, in one
   step (JGroups re-injects through the thread pool, in any order; the window restores the order
   and drops duplicates and seqnos <= hd, so the order does not matter to what is delivered).
9. Views (1.4 (c), I5): VIEW_CHANGE drops the windows of non-members (never the own window),
   creates a window at 0 for each member lacking one, makes the member a server, and forgets the
   retransmission records of non-members. A view is identified by its members (the model has
   no view ids: STABLE compares member sets; a view that leaves and readmits the same members
   is indistinguishable from the old one).
10. STABLE's round (``spec/nakack2_stable.py``; fixed-windows 4, STABLE.java): the gossip task of
    each member sends its digest (hd, hr for the members of its view) to the coordinator (the
    lowest member number of its view), unless STABLE is suspended or the digest lacks a member of
    the view; the coordinator merges its own digest at once. A vote counts only if it names the
    coordinator's own view, is the voter's first this round and STABLE is not suspended; the
    merge is min hd, max hr per sender (a vote without an entry for a sender leaves it as it
    was). When every member voted, a new round starts, STABILITY(view, merged) goes to every
    other member of the view (JGroups multicasts it unreliably with DONT_LOOPBACK) and the
    coordinator passes the digest to its own NAKACK2 at once. A view change starts a new round
    too. Before 5.1.6 (variant ``stable_vote_to_self``) the coordinator's vote is a packet to
    itself and STABILITY loops back to it (a copy it ignores); before 4.0 STABILITY left from a
    timer task due in 1 ms (``stability_delay`` 0), which the model sends at once.
11. STABILITY at a member (fixed-windows 4): ignored while suspended, when it is the member's own
    or when it names another view; otherwise a new round, then, per sender P: with retransmission
    on, XMIT_REQ(previous digest's hr) to P if that is above the local hr for P, then the
    digest's hr is remembered (JGRP-2678's fix); purge to the stable hd, non-forced (clamped to
    the local hd). desired_avg_gossip and max_bytes only set the pace.
12. Join (1.4 (c2), 6.15): the coordinator's GMS suspends STABLE, takes GET_DIGEST with the joiner
    at (0, 0), and sends it with the view (``on_join``); STABLE resumes when the coordinator
    installs its next view (GMS resumes after casting the view; STABLE's max_suspend_time resume
    task is left out). The joiner's JoinRsp is SET_DIGEST (a window at hd for every sender lacking
    one; an existing window is never touched or removed), then VIEW_CHANGE, then a pending
    BECOME_SERVER. A second JoinRsp is ignored, and so is one that comes after the joiner
    installed a view by itself (its windows then start at 0; GMS never installs a view at a
    member that has not joined, so a world must not either).
13. Merge (1.4 (c)): ``on_merge_digest`` keeps the own window and any window whose hd is at
    least the merge digest's, and replaces the others with a window at that hd. OVERWRITE_DIGEST,
    DISCONNECT and reconnects (JGRP-2720) are left out: a member that leaves stops.
14. Left out (digest A.5): the non-member warning suppression, compaction and resizing
    (representation only), thread pools. The "xmit_interval changeable at runtime" wish of seed 004
    was never implemented (6.17). DONT_LOOPBACK is decision 15, batches 16, OOB 17.
15. DONT_LOOPBACK (``Config.dont_loopback``: the application flags every multicast, NAKACK4's key,
    ``spec/nakack4.py`` decision 3; or ``on_send(dont_loopback=True)`` flags one: a model's
    ``[dont_loopback]`` table). JGroups 5.4.12, NAKACK2.java: ``send`` (lines 802-808) adds the
    message to the own table with ``dont_loopback_filter`` (lines 155-156: DONT_LOOPBACK,
    DUMMY_OOB_MSG or OOB_DELIVERED), and ``Table._add`` (Table.java 571-597) then walks hd from
    hd+1 over the consecutive stored messages the filter accepts, without nulling them: when every
    earlier own message was delivered, the own hd, and with it the digest's entry for the member
    itself and so STABLE's purge of the own window, pass the message at the send (``skip_own``).
    Otherwise hd+1 holds a plain own message whose loopback copy is still to come; that copy's
    ``removeAndDeliver`` (lines 905-929) removes from hd+1 to hr and its filter (lines 150-153)
    keeps the member's own DONT_LOOPBACK messages out of the delivered batch while hd passes them.
    ``Node.dont_loopback`` is the messages' transient flag: the own seqnos sent so, still stored.
    The transport loops no copy back, so the member sends no ``Send`` to itself and never
    delivers its own message. A re-multicast answering an XMIT_REQ (``sendXmitRsp``, line 1037:
    ``resend`` of the stored original) keeps the transient flag, so it does not reach the member
    itself either; an XMIT_RSP copy goes to the requester, never the member. DONT_LOOPBACK is a
    *transient* flag (BaseMessage.java line 25): it is never marshalled, so receivers cannot tell
    and handle the message as any other. History: the releases before 3.5 (3.2.5, 3.4.8) have no
    DONT_LOOPBACK at all; 3.6.20 has the same send and filters, except that its
    ``dont_loopback_filter`` accepts DONT_LOOPBACK alone (5.2.12 on: also DUMMY_OOB_MSG and
    OOB_DELIVERED), a difference only OOB messages and concurrent removal could show, neither of
    which this spec has. No release of NAKACK2 shipped DONT_LOOPBACK without the filters, so there
    is no defect variant for it (NAKACK4's JGRP-2829 is about its ACK, which NAKACK2 does not have).
16. Batches (``up(MessageBatch)``, ``handleMessageBatch``): ``on_batch``, in ``spec/nakack2_batch.py``
    with its note (control messages of a batch first, its MSGs added in one go, one removal).
17. OOB (``on_send(oob=True)``: a model's ``[oob]`` table; JGRP-379). JGroups 5.4.12 and master,
    NAKACK2.java ``handleMessage`` (lines 840-866): a receiver adds an OOB message as the
    placeholder ``DUMMY_OOB_MSG`` (``buf.add(seqno, oob? DUMMY_OOB_MSG : msg)``) and, if the add
    took it (above hd, slot free), delivers the message at once, whatever lies below it; then
    ``removeAndDeliver`` (lines 905-939) removes from hd+1 to the first gap and its filter (lines
    150-153) passes over the placeholder without delivering it. So an OOB message is delivered
    once, possibly before earlier ones; it still fills its slot, so hd and hr (the digest, STABLE's
    purge, the retransmit task's gaps) and the in-order stream pass over it as over any other. The
    flag travels in the message (a marshalled flag, not transient): the sender stores the original
    with it, so a re-multicast (``sendXmitRsp``, use_mcast_xmit) and an XMIT_RSP (``msg.copy``) carry
    it, and ``handleXmitRsp`` hands the copy to ``handleMessage`` as an OOB message again; a copy
    queued before BECOME_SERVER is handled the same way when replayed. The sender's own copy
    (``loopback``) is not added; ``buf.get(seqno)`` reads the stored original and delivers it if
    its transient OOB_DELIVERED flag can be set (``setFlagIfAbsent``), then removeAndDeliver
    delivers the own window from hd+1 to hr, the filter setting OOB_DELIVERED on each OOB message
    it takes and passing over those already set. Every own message from hd+1 to hr is stored, so
    one removal always ends at hr: an own OOB message is OOB_DELIVERED exactly when it is at or
    below the own hd, which is what ``_on_data`` reads (no state of its own). The send's remove
    filter for DONT_LOOPBACK (``dont_loopback_filter``, decision 15) also accepts DUMMY_OOB_MSG and
    OOB_DELIVERED messages; it runs only when the new message is hd+1 (every earlier own message
    delivered), so neither ever lies in its path in the own window. An OOB and DONT_LOOPBACK
    multicast is therefore exactly a DONT_LOOPBACK one at its sender (never delivered there: the
    removal filter's ``setFlagIfAbsent`` runs but the DONT_LOOPBACK clause drops it) and an OOB one
    at the others. History: 3.6.20 and 5.2.12 handle OOB the same way (the placeholder, the
    delivery on add, OOB_DELIVERED on the loopback; only the send filter's flags differ, decision
    15); 3.2.5 (and 3.4.8) store the OOB message itself and mark it OOB_DELIVERED when delivering
    it, and the removal skips a marked one: the same deliveries. Variant ``oob_redelivers`` (a
    defect, no release has it: the placeholder keeps the message and the removal filter lacks the
    OOB clause, JGRP-379's double delivery) delivers an OOB message a second time when the removal
    reaches it, at receivers and at its sender.

Variants (flags in ``Variant``); all off is NAKACK2 as shipped with JGRP-2675's fix:

===============================  ==============================================================
``bounded_queue_no_xmit``        JGRP-2675: with xmit_interval <= 0 the become_server_queue stays
                                 bounded; a joiner's window keeps a permanent gap (digest 3.10)
``queue_drops_oldest``           the BoundedList of before JGRP-2675: a full queue evicts its
                                 oldest message instead of refusing the newest (seed's correction)
``stable_xmit_current_hr``       before JGRP-2678: STABILITY makes a member ask for the *current*
                                 digest's hr at once, even when that message is still in flight
``xmit_all_gaps``                before JGRP-1539: every retransmit run requests every gap it
                                 sees, including messages still in flight
``stable_vote_to_self``          before 5.1.6 (commit 605ea5b3e): the coordinator's STABLE vote is
                                 a packet to itself, and its STABILITY a copy to itself (ignored)
``stale_xmit_record_asks_all``   JGRP-2573 (3.6.0 to 5.1.x): a previous-batch record below the
                                 window's hd filters nothing, so every gap is asked for at once
``oob_redelivers``               a plausible defect (decision 17, no release): the removal delivers
                                 an OOB message again (the placeholder keeps it)
===============================  ==============================================================
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Effect, Send, WindowCreated, WindowRemoved
from spec.nakack2_stable import (
    forget,
    on_stability,
    on_vote,
    reset_round,
    stable,  # noqa: F401  (NAKACK2.stable(digest), re-exported)
    stable_task,
)
from spec.nakack2_state import (  # noqa: F401  (the vocabulary, re-exported for worlds and tests)
    BECOME_SERVER,
    NAKACK_TYPES,
    NO_ENTRY,
    STABLE,
    TIMER_NAMES,
    XMIT,
    Config,
    Data,
    Digest,
    HighestSeqno,
    JoinRsp,
    Msg,
    Node,
    QueueDropped,
    Stability,
    StablePurged,
    StableVote,
    Step,
    Timer,
    Variant,
    Window,
    XmitReq,
    XmitRsp,
    add_and_deliver,
    deliver_own,
    digest_of,
    held_undelivered,
    initial_node,
    new_window,
    purge,
    purge_covered,
    queue_bound,
    queue_within_bound,
    seqno_discipline,
    set_at,
    skip_own,
    slots_hold_their_seqnos,
    window_order,
    with_window,
)
from spec.unicast_common import missing_requests


# ---------------------------------------------------------------------------------------------
# Application multicast (NAKACK2.down -> send).
def on_send(cfg: Config, node: Node, payload: int, dont_loopback: bool = False, oob: bool = False) -> Step:
    """The application multicasts ``payload``: the next seqno, stored in the own window, one copy
    to every member of the view (the own copy included), and the next HIGHEST_SEQNO run skipped
    (with resend_last_seqno off JGroups has no LastSeqnoResender, so nothing is recorded). A
    DONT_LOOPBACK multicast (decision 15: ``cfg.dont_loopback`` or ``dont_loopback``) walks the own hd over
    it when hd is just below it, and sends no copy to the member itself. An OOB multicast (decision 17)
    carries its flag in every copy and in the own window. Without an own window (a joiner before its
    digest) the message is dropped (decision 2)."""
    own = node.windows[node.me]
    if own is None:
        return Step(node, ())
    data = Data(node.seqno + 1, payload, oob) if oob else Data(node.seqno + 1, payload)
    flagged = cfg.dont_loopback or dont_loopback
    if flagged:
        node = replace(node, dont_loopback=node.dont_loopback | {data.seqno})
    if flagged and own.delivered == node.seqno:  # decision 15: the add's remove filter from hd+1
        own = skip_own(replace(own, buffered=own.buffered + (data,)))
    else:
        own = replace(own, buffered=own.buffered + (data,))
    node = replace(with_window(node, node.me, own), seqno=data.seqno,
                   skip_next_resend=node.skip_next_resend or cfg.resend_last_seqno)
    return Step(node, tuple(Send(member, data) for member in node.view if member != node.me or not flagged))


# ---------------------------------------------------------------------------------------------
# Receiving (NAKACK2.up and STABLE.up).
def on_receive(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Dispatch a message from ``src``: NAKACK2's own types are queued while not a server."""
    if isinstance(msg, NAKACK_TYPES) and not node.is_server:
        return queue_message(cfg, node, src, msg)
    if isinstance(msg, Data):
        return _on_data(cfg, node, src, msg)
    if isinstance(msg, XmitRsp):
        return _on_data(cfg, node, msg.sender, Data(msg.seqno, msg.payload, msg.oob))
    if isinstance(msg, XmitReq):
        return _on_xmit_req(cfg, node, src, msg)
    if isinstance(msg, HighestSeqno):
        return _on_highest_seqno(node, src, msg)
    if isinstance(msg, StableVote):
        return on_vote(cfg, node, src, msg)
    if isinstance(msg, Stability):
        return on_stability(cfg, node, src, msg)
    return _on_join_rsp(cfg, node, msg)


def queue_message(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Offer ``msg`` to the become_server_queue; a full queue drops the new message (or, variant
    ``queue_drops_oldest``, evicts the oldest one to make room)."""
    bound = queue_bound(cfg)
    if bound is None or len(node.queue) < bound:
        return Step(replace(node, queue=node.queue + ((src, msg),)), ())
    if not cfg.variant.queue_drops_oldest:
        return Step(node, (QueueDropped(src, msg),))
    (old_src, old_msg), rest = node.queue[0], node.queue[1:]
    return Step(replace(node, queue=rest + ((src, msg),)), (QueueDropped(old_src, old_msg),))


def _on_data(cfg: Config, node: Node, sender: int, msg: Data) -> Step:
    """MSG from ``sender``: dropped without a window; the own copy delivers the own window (an own
    OOB message still above hd first, decision 17); another sender's message is added (an OOB one
    delivered when added, held as a placeholder) and its window delivered up to the first gap."""
    window = node.windows[sender]
    if window is None:
        return Step(node, ())
    if sender == node.me:  # removeAndDeliver's filter passes over own DONT_LOOPBACK messages (15)
        flagged = node.dont_loopback
        first = []
        if msg.oob and msg.seqno > window.delivered and (stored := window.get(msg.seqno)) is not None:
            first = [stored.payload]  # decision 17: OOB_DELIVERED set, the removal passes over it
            if not cfg.variant.oob_redelivers:
                flagged = flagged | {msg.seqno}
        payloads = first + [m.payload for m in window.buffered if m is not None and m.seqno not in flagged]
        window, _ = deliver_own(window)
    else:
        window, payloads = add_and_deliver(window, msg, cfg.variant.oob_redelivers)
    return Step(with_window(node, sender, window), tuple(Deliver(sender, p) for p in payloads))


def _on_xmit_req(cfg: Config, node: Node, src: int, msg: XmitReq) -> Step:
    """XMIT_REQ(sender, seqnos) from ``src``: every listed message still stored is re-multicast to
    the view (use_mcast_xmit) or sent to ``src`` as an XMIT_RSP; the others are not found."""
    window = node.windows[msg.sender]
    if window is None:
        return Step(node, ())
    effects: list[Effect] = []
    for seqno in msg.seqnos:
        stored = window.get(seqno)
        if stored is None:
            continue
        if cfg.use_mcast_xmit:  # the stored original, still DONT_LOOPBACK when its sender flagged it (15)
            effects.extend(Send(member, stored) for member in node.view if member != node.me
                           or not (msg.sender == node.me and seqno in node.dont_loopback))
        else:
            effects.append(Send(src, XmitRsp(msg.sender, stored.seqno, stored.payload, stored.oob)))
    return Step(node, tuple(effects))


def _on_highest_seqno(node: Node, src: int, msg: HighestSeqno) -> Step:
    """HIGHEST_SEQNO(seqno) from ``src``: if the local hr for ``src`` is lower, ask for that seqno."""
    window = node.windows[src]
    if window is None or msg.seqno <= window.highest_received:
        return Step(node, ())
    return Step(node, (Send(src, XmitReq(src, (msg.seqno,))),))


# ---------------------------------------------------------------------------------------------
# Membership: views, the join, merges.
def on_view(cfg: Config, node: Node, members: frozenset[int]) -> Step:
    """VIEW_CHANGE (decision 9): windows of non-members dropped (never the own), a window at 0 for
    each new member, server from now on, retransmission records of non-members forgotten; STABLE
    starts a new round and, at the coordinator, resumes after a join (decision 12)."""
    effects: list[Effect] = []
    windows = list(node.windows)
    xmit_last = list(node.xmit_last)
    for peer in range(cfg.members):
        if peer in members and windows[peer] is None:
            windows[peer] = new_window(0)
            effects.append(WindowCreated(peer, 0, 0))
        elif peer not in members and peer != node.me:
            if windows[peer] is not None:
                windows[peer] = None
                effects.append(WindowRemoved(peer))
            xmit_last[peer] = 0
            node = forget(node, peer)
    node = replace(node, members=members, windows=tuple(windows), xmit_last=tuple(xmit_last),
                   is_server=True, stable_suspended=False)
    return Step(reset_round(node), tuple(effects))


def on_join(cfg: Config, node: Node, joiner: int, view: frozenset[int]) -> Step:
    """The coordinator's GMS admits ``joiner`` into ``view``: STABLE suspended, and JoinRsp with
    the view and GET_DIGEST (the joiner at (0, 0)) sent to the joiner (decision 12)."""
    digest = set_at(digest_of(node), joiner, (0, 0))
    node = reset_round(replace(node, stable_suspended=True))
    return Step(node, (Send(joiner, JoinRsp(tuple(sorted(view)), digest)),))


def _on_join_rsp(cfg: Config, node: Node, msg: JoinRsp) -> Step:
    """JoinRsp at the joiner: SET_DIGEST, then VIEW_CHANGE; BECOME_SERVER is now pending. Ignored
    once the member has its own window (a duplicate or late JoinRsp)."""
    if node.windows[node.me] is not None:
        return Step(node, ())
    node, created = set_digest(node, msg.digest)
    step = on_view(cfg, node, frozenset(msg.view))
    return Step(replace(step.node, become_server_pending=True), (*created, *step.effects))


def set_digest(node: Node, digest: Digest) -> tuple[Node, list[Effect]]:
    """SET_DIGEST: a window at hd for every sender the digest names and this member has no window
    for; existing windows are never touched or removed."""
    effects: list[Effect] = []
    windows = list(node.windows)
    for sender, entry in enumerate(digest):
        if entry is not None and windows[sender] is None:
            windows[sender] = new_window(entry[0])
            effects.append(WindowCreated(sender, 0, entry[0]))
    return replace(node, windows=tuple(windows)), effects


def on_merge_digest(cfg: Config, node: Node, digest: Digest) -> Step:
    """MERGE_DIGEST (decision 13): keep the own window and every window at or above the digest's
    hd; replace the others by a window at that hd."""
    effects: list[Effect] = []
    windows = list(node.windows)
    for sender, entry in enumerate(digest):
        window = windows[sender]
        if entry is None or sender == node.me or (window is not None and window.delivered >= entry[0]):
            continue
        if window is not None:
            effects.append(WindowRemoved(sender))
        windows[sender] = new_window(entry[0])
        effects.append(WindowCreated(sender, 0, entry[0]))
    return Step(replace(node, windows=tuple(windows)), tuple(effects))


# ---------------------------------------------------------------------------------------------
# Timers (the retransmit task, STABLE's gossip, BECOME_SERVER).
def enabled_timers(cfg: Config, node: Node) -> tuple[Timer, ...]:
    """The timers that can fire now, in a fixed order: the retransmit task only with
    retransmission on; STABLE's gossip once the member is in its own view; BECOME_SERVER while
    pending."""
    timers = []
    if cfg.retransmission:
        timers.append(Timer(XMIT))
    if node.me in node.members:
        timers.append(Timer(STABLE))
    if node.become_server_pending:
        timers.append(Timer(BECOME_SERVER))
    return tuple(timers)


def on_timer(cfg: Config, node: Node, timer: Timer) -> Step:
    """Fire ``timer`` (one of ``enabled_timers``)."""
    if timer.kind == XMIT:
        return _retransmit_task(cfg, node)
    if timer.kind == STABLE:
        return stable_task(cfg, node)
    return _become_server(cfg, node)


def _retransmit_task(cfg: Config, node: Node) -> Step:
    """One run: XMIT_REQs for the gaps of every window, then LastSeqnoResender."""
    if cfg.variant.xmit_all_gaps:
        requests = [(p, w.missing()) for p, w in enumerate(node.windows) if w is not None and w.missing()]
    else:
        xmit_last, requests = missing_requests(node.windows, node.xmit_last,
                                               stale_asks_all=cfg.variant.stale_xmit_record_asks_all)
        node = replace(node, xmit_last=xmit_last)
    effects: list[Effect] = [Send(p, XmitReq(p, wanted)) for p, wanted in requests]
    if cfg.resend_last_seqno:
        node, announced = _resend_last_seqno(cfg, node)
        effects.extend(announced)
    return Step(node, tuple(effects))


def _resend_last_seqno(cfg: Config, node: Node) -> tuple[Node, list[Effect]]:
    """LastSeqnoResender.execute(counter) (decision 6)."""
    counter = node.seqno
    if counter == 0:
        return node, []
    if node.skip_next_resend:
        return replace(node, skip_next_resend=False), []
    if counter == node.last_seqno_resent and node.num_resends >= cfg.resend_last_seqno_max_times:
        return node, []
    if counter > node.last_seqno_resent:
        node = replace(node, last_seqno_resent=counter, num_resends=1)
    else:
        node = replace(node, num_resends=node.num_resends + 1)
    highest = HighestSeqno(counter)
    return node, [Send(member, highest) for member in node.view if member != node.me]


def _become_server(cfg: Config, node: Node) -> Step:
    """BECOME_SERVER: a server from now on; the queue is replayed in arrival order (decision 8)."""
    queued = node.queue
    node = replace(node, is_server=True, become_server_pending=False, queue=())
    effects: list[Effect | StablePurged | QueueDropped] = []
    for src, msg in queued:
        step = on_receive(cfg, node, src, msg)
        node = step.node
        effects.extend(step.effects)
    return Step(node, tuple(effects))
