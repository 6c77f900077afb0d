"""UNICAST3 (with the receiver sync of JGRP-1875) as an executable specification of one member.

Rules
-----
1. This module is the documentation of UNICAST3. It says *what one member does*: its state, and a
   handler for every input (application send, each message type, view change, each timer, the
   receiver-removal test hook). It knows nothing of networks, budgets or other members' states:
   ``models/`` composes members with a network into a transition system.
2. State is a value: frozen dataclasses of ints, bools and tuples. Per-peer maps are tuples indexed
   by member number. Handlers are pure functions ``(node, input) -> Step`` and never mutate.
3. Every handler returns the new node and its *effects as data*: packets to send, deliveries to the
   application, and observations (window created, purge, sync request, messages discarded) that the
   properties and the trace renderer use. Observations do not influence the protocol.
4. Time is abstract: each timer of the retransmit task is an input that may arrive at any moment
   (``Timer`` kinds below). Nothing here reads a clock.

Theory of operation
-------------------
Member A sends to B on a *send entry* (conn_id, next seqno, window of unacknowledged messages).
Every DATA carries (seqno, conn_id, first), first being true for seqno 1. B keeps a *receive entry*
per sender (conn_id, window). B creates it only from a DATA marked first; a non-first DATA with no
entry or another conn_id makes B ask A for its first seqno (SEND_FIRST_SEQNO, at most one per
``sync_min_interval``), and A answers with its lowest unacknowledged message marked first. B keeps
such a DATA in its message cache and adds it once a window of its connection exists.
B acknowledges cumulatively (ACK of its highest delivered seqno, flushed by the retransmit task);
A purges up to the ACK. Lost messages are recovered in three ways: B asks for gaps it already saw
on the previous run (XMIT_REQ), A resends its highest sent message while (HA, HS) stays unchanged
(so a lost *last* message comes back), and the SEND_FIRST_SEQNO exchange (a lost *first* message).
Every ACK and SEND_FIRST_SEQNO carries a timestamp from B's counter; A accepts only strictly newer
ones, so a delayed ACK from before a receiver reset cannot purge messages the new window needs.
Entries leaving the view become CLOSING (still retransmitting), are removed after
``conn_close_timeout`` (the sender sends CLOSE), and reopen on traffic.

Decisions (digest section 6), each with JGroups' code as the reference
---------------------------------------------------------------------
1. ACK value: the receiver's highest *deliverable* seqno. Delivery happens inside the same handler
   (removeAndDeliver), so highest deliverable == highest delivered here.
2. ACK timing: every DATA received alone (new or duplicate) sets ``ack_pending``; the retransmit
   task sends one ACK per pending entry. A batch (decision 25) makes one decision: an ACK at once
   if it holds at least ``Config.ack_threshold`` DATA of the entry's connection, else pending.
3. Timestamps: ACK and SEND_FIRST_SEQNO share one ``last_ts`` per send entry; the first one is
   accepted unconditionally (0 = none yet), later ones only if strictly newer.
4. SEND_FIRST_SEQNO answer: only the lowest unacknowledged message, as a copy marked first (the
   seed's "lowest and highest" is not what the code does; the highest comes from the HS resend).
5. Rate limit: per destination, ``last_sync_sent`` holds peers asked within the last
   sync_min_interval, tracked even when no receive entry exists; its expiry is the ``SYNC_EXPIRED``
   timer.
6. Which conn_id wins: any *different* conn_id carried by a first DATA replaces the receive window
   (UNICAST3; UNICAST4 would compare them numerically).
7. Messages arriving before a usable receive entry are cached (JGRP-2327's ``MessageCache``, in
   every JGroups release we have from 5.2.12 on; 3.4.8 and 3.6.20 drop them). The code, in
   ``UNICAST3.handleDataReceived``::

       ReceiverEntry entry=getReceiverEntry(sender, seqno, first, conn_id, msg.dest());
       if(entry == null) { msg_cache.add(sender, msg); return; }
       if(!msg_cache.isEmpty()) {
           Collection<Message> queued_msgs=msg_cache.drain(sender);
           if(queued_msgs != null) addQueuedMessages(sender, entry, queued_msgs);
       }
       addMessage(entry, sender, seqno, msg);
       removeAndDeliver(entry.msgs, sender, null, 1);

   ``getReceiverEntry`` returns the entry when its conn_id is the message's; for a first DATA it
   creates the entry (replacing one of another conn_id, decision 6); for a non-first DATA without a
   matching entry it calls ``sendRequestForFirstSeqno`` (decision 5) and returns null. So such a
   DATA is put into ``msg_cache[sender]`` and nothing else happens (no ACK pending, no state
   change). Any DATA that finds or creates a usable entry first drains ``msg_cache[sender]``:
   ``addQueuedMessages`` adds each queued message whose conn_id is the entry's with ``addMessage``
   (``update(entry)``: OPEN; ``win.add(seqno, msg)``; ACK pending) and drops the others; then the
   message itself is added the same way, and one ``removeAndDeliver`` delivers what is deliverable.
   Only ``start()`` and ``stop()`` clear the cache (``msg_cache.clear()``): views, CLOSE, receiver
   removal and expiry leave it alone (a member never restarts here).

   ``Node.cache`` keeps, per sender, the *set* of DATA in JGroups' queue (``MessageCache``: a
   ``ConcurrentLinkedQueue`` per sender, unbounded, duplicates kept), and ``Node.cache_order`` the
   arrival order of its OOB DATA (first copies), the one order a drain shows. Otherwise order and
   duplicates do not change what a drain does: only non-first DATA are queued (a first DATA always gets an entry);
   ``Table.add`` refuses a seqno at most hd or already held, so of several copies of one seqno the
   first added stays, and every copy is the same message (a (conn_id, seqno) names one payload);
   nothing is delivered until every message has been added, and the window's contiguous run is the
   same whatever the order of adds; ``update`` and the pending ACK happen whatever was added, and
   the message itself is always added. ``_on_data`` adds the cached regular DATA in seqno order,
   then the cached OOB DATA in arrival order (``cache_drain``), then the message, then drains once.
   OOB DATA (decision 12) are the exception to "order does not matter": each is delivered when
   added, so they are delivered in the queue's (arrival) order, as JGroups does. (Kept as a set in
   seqno order until the JGroups lockstep showed the difference with two OOB DATA cached out of
   order.) Left out: ``ack_threshold <= 1`` (an ACK per add), as decision 2.
   The batch path (decision 25) caches a non-first DATA only while the sender has no entry at all
   (a batch of another conn_id is dropped with a SEND_FIRST_SEQNO).
   Handlers are atomic here (decision 9): in JGroups a DATA that one thread caches just after another
   thread's drain waits for the sender's next DATA. Variant ``no_message_cache`` (alias JGRP-2327)
   brings back the drop of the 3.x releases.
8. Closing: view change -> CLOSING; traffic or a view containing the peer -> OPEN; CLOSE_EXPIRED
   removes the entry (sender: CLOSE sent if the peer is a member; receiver: pending ACKs flushed
   first). CLOSE removes a receive entry with the same conn_id.
9. Sending on a CLOSED entry: entries are removed the moment they become CLOSED, so a send finds
   none and opens a new connection (the fetch/close race of the threaded code does not exist in an
   atomic model).
10. Duplicates after a receiver-side reset are possible and allowed (properties are per window
    incarnation).
11. HS resend: on a run where HA < HS and (HA, HS) equals the previous run's watermark, resend the
    message HS with its original header; repeat on every run while stalled.
12. OOB (JGRP-377): the application may flag a send OOB (``on_send(..., oob=True)``); the DATA
    carries it (``Data.oob``; JGroups keeps it in the message's flags, so every resend, the answer
    to a SEND_FIRST_SEQNO and the HS resend carry it too) and the send entry remembers which of its
    unacknowledged seqnos are OOB (``SendEntry.oob``). The receiver adds an OOB DATA like any other
    (acknowledged, retransmitted, never added twice), and delivers it at once when the add took
    it (``UNICAST3.addMessage``: ``win.add(seqno, oob? DUMMY_OOB_MSG : msg)``, then ``if(oob &&
    added) deliverMessage``), whether or not its seqno is next in line; the drain
    (``removeAndDeliver``) removes its placeholder without delivering it
    (``drop_oob_and_dont_loopback_msgs_filter`` drops ``DUMMY_OOB_MSG``). A cached OOB DATA is
    delivered when the drain of the cache adds it, not when cached. The window's slot holds a
    placeholder as JGroups' does: the DATA with ``oob`` set, payload 0 and no first mark (all a
    ``DUMMY_OOB_MSG`` in its slot tells; its conn_id is the window's). Variant ``oob_redelivers``
    (a defect, no release has it) keeps the message itself there and lets the drain deliver it again.
    Variant ``oob_keeps_message`` is 3.4.x: the slot holds the message itself (``win.add(seqno, msg)``)
    and the drain's filter (``drop_oob_msgs_filter``) passes over it: the same deliveries, another
    window content (the JGroups lockstep compares windows).
20. XMIT_REQ carries no conn_id: it is served from the current send window.
22. max_xmit_req_size (JGroups scans only that many seqnos above the highest deliverable one for
    gaps): not modelled; every gap is requested. Model windows are far smaller than the limit.
24. Time base: abstract timers (see ``Timer``); the AgeOutCache for connections to non-members
    (max_retransmit_time) is left out: idle closing covers the same ground in the models.
25. Batches (``up(MessageBatch)``): ``on_batch`` in ``spec/unicast3_batch.py``, with its note.
26. Messages to self (``handleDataReceivedFromSelf``): ``on_data_from_self`` in ``spec/unicast3_self.py``,
    with its note: the send window for oneself is the delivery window; nothing is acknowledged.
27. DONT_LOOPBACK to self (``down``: ``msgs.add(seqno, msg, dont_loopback_filter)``, then
    ``purge(getHighestDeliverable())``; 3.6 on): ``on_send(..., dont_loopback=True)`` to oneself stores
    the message and sends nothing (the transport never loops it back); ``dont_loopback_added`` and the
    drain pass over it undelivered (``spec/unicast3_self.py``, with its note and the finding it leads to).

Variants (flags in ``Variant``) bring back historical behaviour, so the checker can find the defects
of older releases: ``no_timestamps`` (JGRP-1873), ``no_hs_resend`` (JGRP-1548),
``remove_on_view_change`` (JGRP-1586), ``ack_only_new`` (JGRP-1578), ``no_sync_rate_limit``
(JGRP-1874), and ``no_message_cache`` (JGRP-2327: the 3.x releases drop what decision 7 caches).
Two more make the spec JGroups 3.4.x, as the lockstep with JGroups 3.4.8 showed
(``checks/jgroups/unicast3.py``): ``remove_without_ack_flush`` (removeReceiveConnection without
sendPendingAcks) and ``close_to_non_members`` (removeSendConnection sends CLOSE whatever the view).
And ``stale_xmit_record_asks_all`` (JGRP-2573) makes it 3.6.0 to 5.1.x, whose SeqnoList lets a
previous-batch record below the window's hd filter nothing (seen in lockstep with 3.6.20).
``oob_redelivers`` is a plausible defect of decision 12, no release's: the drain delivers an OOB
message a second time.
``oob_keeps_message`` (decision 12: the OOB message itself in its slot) and ``self_as_peer`` (decision 26:
a receive entry for oneself, ACKs to oneself) make OOB messages and messages to self 3.4.x's.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Discarded, Effect, Purged, Send, SyncRequested, WindowCreated, WindowRemoved
from spec.unicast3_self import dont_loopback_added, on_data_from_self
from spec.unicast3_state import (  # noqa: F401  (the vocabulary, re-exported for worlds and tests)
    CLOSE_RECV,
    CLOSE_SEND,
    CLOSING,
    IDLE_RECV,
    IDLE_SEND,
    OPEN,
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
    SendEntry,
    SendFirstSeqno,
    Step,
    Timer,
    Variant,
    XmitReq,
    cache_add,
    cache_drain,
    initial_node,
    set_peer,
)
from spec.unicast_common import (  # noqa: F401  (the properties, re-exported)
    acks_monotone,
    add_to_window,
    conn_id_purity,
    drain_window,
    missing_requests,
    nothing_unacked,
    purge_covered,
    purge_is_safe,
    timestamps_issued,
    window_order,
)


# ---------------------------------------------------------------------------------------------
# Application send (UNICAST3.down, getSenderEntry).
def on_send(cfg: Config, node: Node, dst: int, payload: int, oob: bool = False, dont_loopback: bool = False) -> Step:
    """The application sends ``payload`` to ``dst``, flagged OOB or not (decision 12), DONT_LOOPBACK
    or not (decision 27: on a send to oneself, stored and never looped back).

    No entry: open a connection with a fresh conn_id. CLOSING: reopen. The message gets the next
    seqno, is stored before it is sent (so a failed send is retransmitted later), and is marked
    first iff its seqno is 1. A new send entry to oneself is also the window oneself's messages are
    delivered from (decision 26): its creation starts a new incarnation of that channel.
    """
    entry = node.send[dst]
    next_conn_id = node.next_conn_id
    created: tuple[Effect, ...] = ()
    if entry is None:
        entry = SendEntry(next_conn_id, OPEN, 0, (), (0, 0), 0)
        next_conn_id += 1
        if dst == node.me and not cfg.variant.self_as_peer:  # decision 26: it is also the delivery window
            created = (WindowCreated(dst, entry.conn_id, 0),)
    seqno = entry.highest_sent + 1
    entry = replace(entry, state=OPEN, unacked=entry.unacked + (payload,),
                    oob=entry.oob | {seqno} if oob else entry.oob)
    if dont_loopback and dst == node.me and not cfg.variant.self_as_peer:  # decision 27
        entry, purged = dont_loopback_added(node, replace(entry, dont_loopback=entry.dont_loopback | {seqno}))
        node = replace(node, send=set_peer(node.send, dst, entry), next_conn_id=next_conn_id)
        return Step(node, created + purged)
    node = replace(node, send=set_peer(node.send, dst, entry), next_conn_id=next_conn_id)
    return Step(node, created + (Send(dst, _stored(entry, seqno)),))


def _stored(entry: SendEntry, seqno: int, first: bool | None = None) -> Data:
    """The stored message ``seqno`` of a send entry as it goes on the wire: its original header
    (first iff seqno 1, unless ``first`` says otherwise) and its OOB flag."""
    return Data(seqno, entry.conn_id, seqno == 1 if first is None else first,
                entry.unacked[seqno - entry.acked - 1], seqno in entry.oob)


# ---------------------------------------------------------------------------------------------
# Receiving (UNICAST3.up -> handleDataReceived, handleAckReceived, ...).
def on_receive(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Dispatch a message from ``src`` to its handler."""
    if isinstance(msg, Data):
        if src == node.me and not cfg.variant.self_as_peer:
            return on_data_from_self(cfg, node, msg)  # decision 26
        return _on_data(cfg, node, src, msg)
    if isinstance(msg, Ack):
        return _on_ack(cfg, node, src, msg)
    if isinstance(msg, SendFirstSeqno):
        return _on_send_first_seqno(cfg, node, src, msg)
    if isinstance(msg, XmitReq):
        return _on_xmit_req(node, src, msg)
    return _on_close(node, src, msg)


def _on_data(cfg: Config, node: Node, src: int, msg: Data) -> Step:
    """DATA (handleDataReceived, decisions 7 and 12): find or create the receive entry; add the
    cached DATA of its connection and the message (an OOB one delivered when added), set ACK
    pending, then deliver in order.

    A first DATA with no entry, or with a conn_id different from the entry's, starts a new window
    just below its seqno (replacing the old one). A non-first DATA without a matching entry triggers
    a (rate-limited) SEND_FIRST_SEQNO and is cached (dropped under ``no_message_cache``). Once there
    is a usable entry, the cache for ``src`` is drained: DATA of the entry's connection are added
    (in seqno order; any order adds the same, but for the order of OOB deliveries), the others dropped.
    """
    entry = node.recv[src]
    effects: list[Effect] = []
    if entry is None or entry.conn_id != msg.conn_id:
        if not msg.first:
            return _cache(cfg, node, src, msg)
        entry = RecvEntry(msg.conn_id, OPEN, msg.seqno - 1, (), False)
        effects.append(WindowCreated(src, msg.conn_id, msg.seqno - 1))
    node, queued = cache_drain(node, src, entry.conn_id)  # addQueuedMessages
    buffered, payloads = entry.buffered, []
    for added in (*queued, msg):  # addMessage each (an OOB one is delivered when added) ...
        buffered, now = add_to_window(entry.delivered, buffered, added, keep_oob_payload=cfg.variant.keeps_oob_payload)
        payloads += now
    # ... then one removeAndDeliver
    delivered, buffered, drained = drain_window(entry.delivered, buffered, redeliver_oob=cfg.variant.oob_redelivers)
    effects.extend(Deliver(src, payload) for payload in payloads + drained)
    # Every reception is acknowledged, duplicates included (JGRP-1578); the variant acks only
    # messages that delivered something new.
    ack_pending = True
    if cfg.variant.ack_only_new:
        ack_pending = entry.ack_pending or delivered > entry.delivered
    entry = RecvEntry(entry.conn_id, OPEN, delivered, buffered, ack_pending)
    node = replace(node, recv=set_peer(node.recv, src, entry))
    return Step(node, tuple(effects))


def _cache(cfg: Config, node: Node, src: int, msg: Data) -> Step:
    """A non-first DATA without a usable receive entry: getReceiverEntry asks for the first seqno
    and returns null, and the message goes into ``msg_cache[src]`` (decision 7)."""
    node, effects = request_first_seqno(cfg, node, src)
    if not cfg.variant.no_message_cache:
        node = cache_add(node, src, msg)
    return Step(node, effects)


def request_first_seqno(cfg: Config, node: Node, peer: int) -> Step:
    """sendRequestForFirstSeqno: at most one SEND_FIRST_SEQNO to ``peer`` per sync_min_interval.
    Variant ``no_sync_rate_limit`` (JGRP-1874, 3.4.x): one every time, and no last_sync_sent."""
    if cfg.variant.no_sync_rate_limit:
        node, ts = next_timestamp(cfg, node)
        return Step(node, (Send(peer, SendFirstSeqno(ts)), SyncRequested(peer)))
    if peer in node.sync_sent:
        return Step(node, ())
    node, ts = next_timestamp(cfg, node)
    node = replace(node, sync_sent=node.sync_sent | {peer})
    return Step(node, (Send(peer, SendFirstSeqno(ts)), SyncRequested(peer)))


def next_timestamp(cfg: Config, node: Node) -> tuple[Node, int]:
    if cfg.variant.no_timestamps:
        return node, 0
    return replace(node, timestamper=node.timestamper + 1), node.timestamper + 1


def _accepts_timestamp(cfg: Config, entry: SendEntry, ts: int) -> bool:
    """updateLastTimestamp: the first timestamp is accepted, later ones only if strictly newer."""
    return cfg.variant.no_timestamps or entry.last_ts == 0 or ts > entry.last_ts


def _on_ack(cfg: Config, node: Node, src: int, msg: Ack) -> Step:
    """ACK(seqno, conn_id, ts): with a matching conn_id and a newer timestamp, purge up to seqno.

    The purge is forced (HA := min(seqno, HS)): everything the receiver holds contiguously is gone
    from the sender.
    """
    entry = node.send[src]
    if entry is None or entry.conn_id != msg.conn_id or not _accepts_timestamp(cfg, entry, msg.ts):
        return Step(node, ())
    last_ts = entry.last_ts if cfg.variant.no_timestamps else msg.ts
    upto = min(msg.seqno, entry.highest_sent)
    effects: tuple[Effect, ...] = ()
    if upto > entry.acked:
        entry = replace(entry, acked=upto, unacked=entry.unacked[upto - entry.acked :],
                        oob=frozenset(s for s in entry.oob if s > upto) if entry.oob else entry.oob,
                        dont_loopback=frozenset(s for s in entry.dont_loopback if s > upto))
        effects = (Purged(src, entry.conn_id, upto),)
    entry = replace(entry, last_ts=last_ts)
    return Step(replace(node, send=set_peer(node.send, src, entry)), effects)


def _on_send_first_seqno(cfg: Config, node: Node, src: int, msg: SendFirstSeqno) -> Step:
    """SEND_FIRST_SEQNO(ts): with a newer timestamp, resend the lowest unacked message as first."""
    entry = node.send[src]
    if entry is None or not _accepts_timestamp(cfg, entry, msg.ts):
        return Step(node, ())
    if not cfg.variant.no_timestamps:
        entry = replace(entry, last_ts=msg.ts)
        node = replace(node, send=set_peer(node.send, src, entry))
    if not entry.unacked:
        return Step(node, ())
    return Step(node, (Send(src, _stored(entry, entry.acked + 1, first=True)),))


def _on_xmit_req(node: Node, src: int, msg: XmitReq) -> Step:
    """XMIT_REQ(seqnos): resend every listed seqno still stored, with its original header."""
    entry = node.send[src]
    if entry is None:
        return Step(node, ())
    resent = tuple(Send(src, _stored(entry, s)) for s in msg.seqnos if entry.acked < s <= entry.highest_sent)
    return Step(node, resent)


def _on_close(node: Node, src: int, msg: Close) -> Step:
    """CLOSE(conn_id): remove the receive entry for ``src`` if it has that conn_id."""
    entry = node.recv[src]
    if entry is None or entry.conn_id != msg.conn_id:
        return Step(node, ())
    return Step(replace(node, recv=set_peer(node.recv, src, None)), (WindowRemoved(src),))


# ---------------------------------------------------------------------------------------------
# Membership.
def on_view(cfg: Config, node: Node, members: frozenset[int]) -> Step:
    """A new view: entries of peers that left become CLOSING; CLOSING entries of members reopen.

    Variant ``remove_on_view_change`` (JGRP-1586): entries of peers that left are removed at once,
    discarding unacknowledged messages.
    """
    send, recv = list(node.send), list(node.recv)
    effects: list[Effect] = []
    xmit_last = list(node.xmit_last)
    for peer in range(cfg.members):
        s, r, member = send[peer], recv[peer], peer in members
        if not member:
            xmit_last[peer] = 0
        if cfg.variant.remove_on_view_change and not member:
            if s is not None:
                if s.unacked:
                    effects.append(Discarded(peer, s.unacked, False))
                send[peer] = None
            if r is not None:
                recv[peer] = None
                effects.append(WindowRemoved(peer))
            continue
        state = OPEN if member else CLOSING
        if s is not None and s.state != state:
            send[peer] = replace(s, state=state)
        if r is not None and r.state != state:
            recv[peer] = replace(r, state=state)
    node = replace(node, members=members, send=tuple(send), recv=tuple(recv),
                   xmit_last=tuple(xmit_last))
    return Step(node, tuple(effects))


def on_remove_receiver(cfg: Config, node: Node, peer: int) -> Step:
    """removeReceiveConnection (the hook JGroups' tests use): flush pending ACKs, drop the entry.
    Variant ``remove_without_ack_flush`` (3.4.x): the entry is dropped with its ACK pending."""
    effects: list[Effect] = []
    if not cfg.variant.remove_without_ack_flush:
        node, effects = _send_pending_acks(cfg, node)
    if node.recv[peer] is None:
        return Step(node, tuple(effects))
    node = replace(node, recv=set_peer(node.recv, peer, None))
    return Step(node, tuple(effects) + (WindowRemoved(peer),))


# ---------------------------------------------------------------------------------------------
# Timers (the retransmit task and the expiry caches).
def enabled_timers(cfg: Config, node: Node) -> tuple[Timer, ...]:
    """The timers that can fire now, in a fixed order."""
    timers = [Timer(XMIT, -1)] if not cfg.xmit_per_connection else []
    for peer in range(cfg.members):
        if cfg.xmit_per_connection and (peer != node.me or node.send[peer] or node.recv[peer]):
            timers.append(Timer(XMIT, peer))  # oneself's only while a connection to oneself exists
        s, r = node.send[peer], node.recv[peer]
        if cfg.conn_expiry and s is not None and s.state == OPEN:
            timers.append(Timer(IDLE_SEND, peer))
        if cfg.conn_expiry and r is not None and r.state == OPEN:
            timers.append(Timer(IDLE_RECV, peer))
        if cfg.conn_close and s is not None and s.state == CLOSING:
            timers.append(Timer(CLOSE_SEND, peer))
        if cfg.conn_close and r is not None and r.state == CLOSING:
            timers.append(Timer(CLOSE_RECV, peer))
        if peer in node.sync_sent:
            timers.append(Timer(SYNC_EXPIRED, peer))
    return tuple(timers)


def on_timer(cfg: Config, node: Node, timer: Timer) -> Step:
    """Fire ``timer`` (it must be one of ``enabled_timers``)."""
    peer = timer.peer
    if timer.kind == XMIT:
        return _retransmit_task(cfg, node, None if peer < 0 else peer)
    if timer.kind == SYNC_EXPIRED:
        return Step(replace(node, sync_sent=node.sync_sent - {peer}), ())
    if timer.kind == IDLE_SEND:
        sender = node.send[peer]
        assert sender is not None
        return Step(replace(node, send=set_peer(node.send, peer, replace(sender, state=CLOSING))), ())
    if timer.kind == IDLE_RECV:
        receiver = node.recv[peer]
        assert receiver is not None
        return Step(replace(node, recv=set_peer(node.recv, peer, replace(receiver, state=CLOSING))), ())
    if timer.kind == CLOSE_SEND:
        return _close_send_entry(cfg, node, peer)
    return on_remove_receiver(cfg, node, peer)  # CLOSE_RECV: same as the hook


def _close_send_entry(cfg: Config, node: Node, peer: int) -> Step:
    """conn_close_timeout expired on a CLOSING send entry: remove it; CLOSE the peer if a member
    (variant ``close_to_non_members``, 3.4.x: whether or not it is)."""
    entry = node.send[peer]
    assert entry is not None
    effects: list[Effect] = []
    if peer in node.members or cfg.variant.close_to_non_members:
        effects.append(Send(peer, Close(entry.conn_id)))
    if entry.unacked:
        effects.append(Discarded(peer, entry.unacked, True))
    return Step(replace(node, send=set_peer(node.send, peer, None)), tuple(effects))


def _retransmit_task(cfg: Config, node: Node, only: int | None = None) -> Step:
    """One run: pending ACKs, previous-batch XMIT_REQs (receivers), then HS resend (senders); for
    the connections with peer ``only`` alone if given (``Config.xmit_per_connection``)."""
    node, effects = _send_pending_acks(cfg, node, only)
    node, requests = _request_missing(cfg, node, only)
    effects.extend(requests)
    send = list(node.send)
    for peer, entry in enumerate(send):
        if entry is None or (only is not None and peer != only):
            continue
        mark = (entry.acked, entry.highest_sent)
        if mark[0] < mark[1] and entry.watermark == mark:
            if not cfg.variant.no_hs_resend and mark[1] not in entry.dont_loopback:  # decision 27: never looped back
                effects.append(Send(peer, _stored(entry, mark[1])))
        elif entry.watermark != mark:
            send[peer] = replace(entry, watermark=mark)
    return Step(replace(node, send=tuple(send)), tuple(effects))


def _send_pending_acks(cfg: Config, node: Node, only: int | None = None) -> tuple[Node, list[Effect]]:
    """sendPendingAcks: ACK(highest delivered, conn_id, new timestamp) for every pending entry
    (the one for ``only``, if given)."""
    effects: list[Effect] = []
    recv = list(node.recv)
    for peer, entry in enumerate(recv):
        if entry is None or not entry.ack_pending or (only is not None and peer != only):
            continue
        node, ts = next_timestamp(cfg, node)
        recv[peer] = replace(entry, ack_pending=False)
        effects.append(Send(peer, Ack(entry.delivered, entry.conn_id, ts)))
    return replace(node, recv=tuple(recv)), effects


def _request_missing(cfg: Config, node: Node, only: int | None = None) -> tuple[Node, list[Effect]]:
    """Previous-batch retransmission (JGRP-1539): XMIT_REQ for every gap already seen on the last
    run (``unicast_common.missing_requests``), for the receive entry of ``only`` alone if given."""
    xmit_last, requests = missing_requests(node.recv, node.xmit_last, only,
                                               stale_asks_all=cfg.variant.stale_xmit_record_asks_all)
    effects: list[Effect] = [Send(peer, XmitReq(wanted)) for peer, wanted in requests]
    return replace(node, xmit_last=xmit_last), effects


# ---------------------------------------------------------------------------------------------
# Properties of UNICAST3 state (digest section 2) are stated once for both unicast protocols in
# ``spec/unicast_common.py``: window_order (I1), conn_id_purity (I4), timestamps_issued (I7),
# acks_monotone (I3), purge_is_safe and purge_covered (P6), nothing_unacked (the liveness goal).
# The delivery properties (FIFO, no duplicate, nothing unsent) are ``spec/reliable_fifo.py``'s.
