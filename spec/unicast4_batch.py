"""UNICAST4's batch input: a receive of several DATA of one sender as one input (``up(MessageBatch)``).

This module owns ``on_batch`` and the decision it implements (decision 11 of ``spec/unicast4.py``);
the single-message path, the state and the other handlers are ``spec/unicast4.py``'s, whose helpers
it uses (the model's adapter, ``models/protocols/unicast4.py``, calls it for a batch).

Decision 11: batches (``ReliableUnicast.up(MessageBatch)`` and ``handleBatchReceived``; 5.4.12 and
master have the same code). As for UNICAST3 (``spec/unicast3_batch.py``), the transport hands a
bundle up as its OOB batch and its regular batch, so every DATA of a batch has the batch's OOB flag.
The code, DATA only::

    for(Message msg: batch) {
        highest_conn_id=max(hdr.conn_id, highest_conn_id);
        lowest_seqno / first_seqno: of the DATA with the lowest seqno (the first such in the batch)
        msgs.computeIfAbsent(hdr.conn_id, ...).add(new LongTuple<>(hdr.seqno(), msg));
    }
    List<LongTuple<Message>> list=msgs.get(highest_conn_id);
    if(msgs.size() > 1) { msgs.keySet().retainAll(List.of(highest_conn_id));
                          lowest_seqno, first_seqno=getLowestSeqno(id, list); }
    ReceiverEntry entry=getReceiverEntry(sender, lowest_seqno, first_seqno, highest_conn_id, ...);
    if(entry == null) { for(tuple: list) msg_cache.add(sender, tuple.getVal2()); return; }
    Collection<Message> queued_msgs=msg_cache.drain(sender);     // if the cache is not empty
    if(queued_msgs != null) addQueuedMessages(sender, entry, queued_msgs);
    handleBatchReceived(entry, sender, list, batch.mode() == OOB, batch.dest());

and ``handleBatchReceived``: ``buf.add(msgs, oob, oob? DUMMY_OOB_MSG : null)`` (every DATA in one
go, never blocking; in an OOB batch those not added are removed from the list), ``update(entry,
batch_size)`` (CLOSING -> OPEN; no ACK count), ``entry.sendAck()`` (the pending flag, always), then
the added DATA of an OOB batch go up as one OOB batch through ``deliverBatch`` (which counts its
size: ``needToSendAck(entry, n)``, ACK(hd) now if due, hd before the drain), then one
``removeAndDeliver`` (``spec/unicast4.py``'s ``remove_and_deliver``: the regular DATA of the run
counted by their number). So, unlike the single path and unlike UNICAST3's batch:

- the DATA of the highest conn_id in the batch are kept, those of any other conn_id dropped with no
  SEND_FIRST_SEQNO; the connection is decided once, by the batch's lowest seqno and its first
  mark (``compareConnIds`` as decision 3): a batch whose lowest DATA is not first and finds no
  entry of its conn_id is cached whole (after a rate-limited SEND_FIRST_SEQNO), even if a later
  DATA in it is first;
- the batch's adds are not counted: its regular DATA count once, when delivered in order, its OOB
  ones once, when delivered on receipt; the ACK is pending after every batch (the retransmit task
  sends it) unless a count reached ``ack_threshold`` and sent it at once;
- the cached DATA drained into the entry are each ``addMessage``'d first (each counts 1, may ACK, an
  OOB one is delivered when added), as in the single path.

Effects are in JGroups' order: the window creation or the SEND_FIRST_SEQNO, the cache drain's
deliveries and ACKs, the OOB batch's ACK and deliveries, the in-order run's ACK and deliveries.
Left out: control messages in a batch (the world batches DATA only; JGroups handles each of them
at once, as a single message) and batches from self (``handleBatchFromSelf``: a world with
messages to self has no batches, decision 12).
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Send
from spec.unicast4 import (
    AnyEffect,
    Step,
    add_message,
    add_to_buffer,
    count_acks,
    receive_entry,
    remove_and_deliver,
    with_recv,
)
from spec.unicast4_state import OPEN, Ack, Config, Data, Node, RecvEntry
from spec.unicast_common import cache_add, cache_drain


def on_batch(cfg: Config, node: Node, src: int, msgs: tuple[Data, ...]) -> Step:
    """``up(MessageBatch)`` of the DATA ``msgs`` from ``src``, in the batch's order, all with the
    batch's OOB flag (decision 11)."""
    if not msgs:
        return Step(node, ())
    if any(m.oob != msgs[0].oob for m in msgs):
        raise ValueError("on_batch: a batch's DATA all carry its mode (the transport splits OOB from regular)")
    highest = max(m.conn_id for m in msgs)
    ours = tuple(m for m in msgs if m.conn_id == highest)  # retainAll(highest_conn_id)
    lowest = ours[0]
    for m in ours[1:]:  # getLowestSeqno: the first DATA with the lowest seqno
        if m.seqno < lowest.seqno:
            lowest = m
    node, entry, found = receive_entry(cfg, node, src, lowest)
    effects: list[AnyEffect] = list(found)
    if entry is None:  # every DATA of the list goes into the cache, in the batch's order
        for m in ours:
            node = cache_add(node, src, m)
        return Step(node, tuple(effects))
    node, queued = cache_drain(node, src, entry.conn_id)  # addQueuedMessages
    for m in queued:
        node, entry, acked = add_message(cfg, node, src, entry, m)
        effects.extend(acked)
    node, entry, received = batch_received(cfg, node, src, entry, ours)
    effects.extend(received)
    node, entry, delivered = remove_and_deliver(cfg, node, src, entry)
    effects.extend(delivered)
    return Step(with_recv(node, src, entry), tuple(effects))


def batch_received(cfg: Config, node: Node, src: int, entry: RecvEntry, ours: tuple[Data, ...]
                    ) -> tuple[Node, RecvEntry, list[AnyEffect]]:
    """handleBatchReceived up to its removeAndDeliver: every DATA added in one go (uncounted),
    CLOSING -> OPEN, the ACK pending; the added DATA of an OOB batch delivered as one batch, counted
    (ACK(hd) now if due, before they go up)."""
    oob_batch: list[int] = []
    for m in ours:
        entry, added = add_to_buffer(cfg, entry, m)
        if added and m.oob:
            oob_batch.append(m.payload)
    entry = replace(entry, state=OPEN, ack_pending=True)
    effects: list[AnyEffect] = []
    if oob_batch:
        entry, now = count_acks(cfg, entry, len(oob_batch))
        if now:
            node = replace(node, timestamper=node.timestamper + 1)
            effects.append(Send(src, Ack(entry.delivered, entry.conn_id, node.timestamper)))
        effects.extend(Deliver(src, p) for p in oob_batch)
    return node, entry, effects
