"""UNICAST3's batch input: a receive of several DATA of one sender as one input (``up(MessageBatch)``).

This module owns ``on_batch`` and the decision it implements (decision 25 of ``spec/unicast3.py``);
the single-message path, the state and the other handlers are ``spec/unicast3.py``'s, whose private
helpers it uses (it is that module's second half, split off for size; the model's adapter,
``models/protocols/unicast3.py``, calls it for a batch).

Decision 25: batches (``UNICAST3.up(MessageBatch)`` and ``handleBatchReceived``, 5.4.12; 3.6.20 has
the same code without the message cache). The transport hands a received bundle up as at most two
batches, its OOB messages and its regular ones (``Util.readMessageBatch``; ``TP.handleMessageBatch``
passes the OOB batch up first); a batch's mode is its first message's (``MessageBatch.determineMode``),
so every DATA of a batch has the batch's OOB flag, as ``on_batch`` requires. The code, DATA only::

    ReceiverEntry entry=recv_table.get(sender);
    for(Message msg: batch) {
        msgs.computeIfAbsent(hdr.conn_id, ...).add(new LongTuple<>(hdr.seqno(), msg));
        if(hdr.first)
            entry=getReceiverEntry(sender, hdr.seqno(), hdr.first, hdr.connId(), batch.dest());
        else if(entry == null)
            msg_cache.add(sender, msg);
    }
    if(entry == null) sendRequestForFirstSeqno(sender, batch.dest());
    else {
        Collection<Message> queued_msgs=msg_cache.drain(sender);   // if the cache is not empty
        if(queued_msgs != null) addQueuedMessages(sender, entry, queued_msgs);
        if(msgs.keySet().retainAll(Collections.singletonList(entry.connId())))
            sendRequestForFirstSeqno(sender, batch.dest());
        List<LongTuple<Message>> list=msgs.get(entry.connId());
        if(list != null && !list.isEmpty()) handleBatchReceived(entry, sender, list, oob, batch.dest());
    }

and ``handleBatchReceived``: ``win.add(msgs, oob, oob? DUMMY_OOB_MSG : null)`` (all in one go; in
an OOB batch the messages not added are removed from the list), ``update(entry, batch_size)``
(CLOSING -> OPEN), then ONE acknowledgement decision for the batch::

    if(batch_size >= ack_threshold)
        sendAck(sender, win.getHighestDeliverable(), entry.connId(), original_dest);
    else
        entry.sendAck();    // pending, for the retransmit task

then the added messages of an OOB batch are delivered as one OOB batch, and one
``removeAndDeliver`` delivers the in-order run as one batch (the spec's deliveries are the batch's
messages in order: delivery order is that of the single path). So, unlike the single path:

- a non-first DATA is cached only while the sender has *no* receive entry at all; one whose conn_id
  differs from the entry's is dropped, and the batch sends one (rate-limited) SEND_FIRST_SEQNO;
- a first DATA anywhere in the batch creates (or replaces) the entry before any DATA is added, so
  the non-first DATA before it in the batch are added too (from the cache, where they went);
- ``batch_size`` counts the batch's DATA of the entry's connection, duplicates included, before the
  add (the cached DATA added with it do not count); the immediate ACK carries the highest
  deliverable seqno after the adds, which is the highest delivered after the drain (decision 1),
  and it leaves the pending flag as it was (``sendAck`` is the protocol's, not the entry's: cached
  DATA added by ``addMessage`` may have set it);
- the queued (cached) DATA are added one by one with ``addMessage`` (an OOB one delivered when
  added), before the batch; if the batch has no DATA of the entry's connection nothing is drained
  (unreachable with atomic handlers: a cache holds DATA of the entry's connection only while no
  entry of it exists, and the DATA that creates one drains it).

Effects are in JGroups' order: the SEND_FIRST_SEQNO or window creation, the deliveries of cached OOB
DATA, the immediate ACK, the OOB batch, the in-order run. Variant ``no_message_cache`` (3.x) caches
and drains nothing, as 3.6.20's ``up(MessageBatch)``. ``ack_threshold`` (``Config``) is JGroups'
(default 100); values below 2 (an ACK per single message, ``addMessage``'s ``ack_threshold <= 1``)
are not modelled. Left out: control messages in a batch (the world batches DATA only: JGroups
handles an ACK, XMIT_REQ, SEND_FIRST_SEQNO or CLOSE of a batch at once, as a single message) and
batches from self.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Effect, Send, WindowCreated
from spec.unicast3 import OPEN, Ack, Config, Data, Node, RecvEntry, Step, next_timestamp, request_first_seqno, set_peer
from spec.unicast3_state import cache_add, cache_drain
from spec.unicast_common import add_to_window, drain_window


def on_batch(cfg: Config, node: Node, src: int, msgs: tuple[Data, ...]) -> Step:
    """``up(MessageBatch)`` of the DATA ``msgs`` from ``src``, in the batch's order, all with the
    batch's OOB flag (decision 25)."""
    if not msgs:
        return Step(node, ())
    if any(m.oob != msgs[0].oob for m in msgs):
        raise ValueError("on_batch: a batch's DATA all carry its mode (the transport splits OOB from regular)")
    entry, effects = node.recv[src], list[Effect]()
    caching = not cfg.variant.no_message_cache
    conn_ids: list[int] = []  # msgs' keys, in first-seen order (a LinkedHashMap)
    for m in msgs:
        if m.conn_id not in conn_ids:
            conn_ids.append(m.conn_id)
        if m.first:
            if entry is None or entry.conn_id != m.conn_id:  # getReceiverEntry creates or replaces
                entry = RecvEntry(m.conn_id, OPEN, m.seqno - 1, (), False)
                effects.append(WindowCreated(src, m.conn_id, m.seqno - 1))
        elif entry is None and caching:
            node = cache_add(node, src, m)
    if entry is None:
        node, asked = request_first_seqno(cfg, node, src)
        return Step(node, tuple(effects) + asked)
    node = replace(node, recv=set_peer(node.recv, src, entry))
    if conn_ids != [entry.conn_id]:  # retainAll removed another connection's DATA
        node, asked = request_first_seqno(cfg, node, src)
        effects.extend(asked)
    ours = tuple(m for m in msgs if m.conn_id == entry.conn_id)
    queued: list[Data] = []
    if caching:
        node, queued = cache_drain(node, src, entry.conn_id)
    if not ours:
        return _added_only(cfg, node, src, entry, queued, effects)
    return _batch_received(cfg, node, src, entry, queued, ours, effects)


def _added_only(cfg: Config, node: Node, src: int, entry: RecvEntry, queued: list[Data],
                effects: list[Effect]) -> Step:
    """The cache drained into ``entry`` by ``addQueuedMessages`` with no batch of its connection:
    added (OOB ones delivered), ACK pending, nothing drained."""
    buffered = entry.buffered
    for m in queued:
        buffered, now = add_to_window(entry.delivered, buffered, m, keep_oob_payload=cfg.variant.keeps_oob_payload)
        effects.extend(Deliver(src, p) for p in now)
    if queued:
        entry = replace(entry, state=OPEN, buffered=buffered,
                        ack_pending=entry.ack_pending or not cfg.variant.ack_only_new)
    return Step(replace(node, recv=set_peer(node.recv, src, entry)), tuple(effects))


def _batch_received(cfg: Config, node: Node, src: int, entry: RecvEntry, queued: list[Data],
                    ours: tuple[Data, ...], effects: list[Effect]) -> Step:
    """``addQueuedMessages`` then ``handleBatchReceived``: every DATA added, one ACK decision, the
    OOB batch, one drain."""
    redeliver, keep = cfg.variant.oob_redelivers, cfg.variant.keeps_oob_payload
    buffered, pending = entry.buffered, entry.ack_pending
    for m in queued:  # addMessage each: an OOB one is delivered when added, ACK pending
        buffered, now = add_to_window(entry.delivered, buffered, m, keep_oob_payload=keep)
        effects.extend(Deliver(src, p) for p in now)
        pending = pending or not cfg.variant.ack_only_new
    oob_batch: list[int] = []
    for m in ours:  # win.add(list, ...): all at once, the OOB ones delivered after the ACK decision
        buffered, now = add_to_window(entry.delivered, buffered, m, keep_oob_payload=keep)
        oob_batch += now
    delivered, buffered, drained = drain_window(entry.delivered, buffered, redeliver_oob=redeliver)
    if len(ours) >= cfg.ack_threshold:
        node, ts = next_timestamp(cfg, node)
        effects.append(Send(src, Ack(delivered, entry.conn_id, ts)))
    elif not cfg.variant.ack_only_new:
        pending = True
    else:  # JGRP-1578's variant: only a batch that delivered something new is acknowledged
        pending = pending or delivered > entry.delivered
    effects.extend(Deliver(src, p) for p in oob_batch + drained)
    entry = RecvEntry(entry.conn_id, OPEN, delivered, buffered, pending)
    return Step(replace(node, recv=set_peer(node.recv, src, entry)), tuple(effects))
