"""UNICAST4's messages to self and DONT_LOOPBACK to self (decisions 12 and 13 of ``spec/unicast4.py``).

This module owns what the send entry for oneself does besides sending: a DATA from oneself
(``on_data_from_self``), the drain of that window (``drain_self``) and a DONT_LOOPBACK message added
to it (``dont_loopback_added``). ``spec/unicast4.py`` calls them; they return plain tuples, so this
module needs only the vocabulary (``spec/unicast4_state.py``).

12. Messages to self (``ReliableUnicast.handleDataReceivedFromSelf``, 5.4.12 and master alike) are
    UNICAST3's (``spec/unicast3_self.py``, decision 26) on a FixedBuffer: a send to oneself is
    stored in the send entry for oneself (a seqno, blocking on a full window like any send), the
    transport loops it back, and a DATA whose sender is the local address works on that *send*
    entry::

        Entry entry=send_table.get(sender);
        if(entry == null || entry.state() == State.CLOSED) { log.warn(...); return; }
        update(entry, 1);                                  // CLOSING -> OPEN
        if(msg.isFlagSet(OOB)) {
            msg=win.get(seqno);
            if(msg != null && msg.isFlagSet(OOB) && msg.setFlagIfAbsent(OOB_DELIVERED))
                deliverMessage(msg, sender, seqno);        // not counted
        }
        removeAndDeliver(entry, sender, null, 1);

    No conn_id is compared (a loopback of an older connection drains the current one), nothing is
    added. ``removeAndDeliver`` takes the run from hd + 1 up to the first empty slot with
    ``drop_oob_and_dont_loopback_msgs_filter``: a regular message is delivered, an OOB one not yet
    delivered is marked and delivered in line, an OOB one already delivered and a DONT_LOOPBACK one
    (decision 13) are removed undelivered. Unlike UNICAST3's window, a FixedBuffer send window can
    hold an empty slot (a thread blocked with that seqno while a later one was stored: decision 2),
    so the run can stop short of HS, and an OOB message above the gap delivered early keeps its
    OOB_DELIVERED mark until a later drain passes it (``SendEntry.oob_delivered``). Two differences
    from UNICAST3, both FixedBuffer's and ``deliverBatch``'s:

    - the drain nulls the slots it removes, so low := hd: the window frees room, and every thread
      blocked on a full window to oneself may go on (``buffer_full.signalAll``): a loopback releases
      a sender blocked on its own window (here: ``acked`` moves, and ``Timer(SEND)`` is enabled).
    - ``deliverBatch`` counts the delivered batch towards the ACK *on the send entry*
      (``needToSendAck(entry, batch.size())``, UNICAST4's counter ``acks_sent``, here
      ``SendEntry.acks_counted``): at ``ack_threshold`` the counter resets and an ACK(hd, conn_id,
      new timestamp) goes to oneself at once, before the batch goes up; below it the entry's pending
      flag is set, which no retransmit run reads (``triggerXmit`` walks the receive table only), so
      the spec keeps no such flag. The ACK to oneself is a packet like any (the transport loops it
      back); receiving it is decision 4's ``handleAckReceived`` on the send entry for oneself: with
      its conn_id and a newer timestamp it is accepted (``last_ts``) and purges with force up to
      its seqno, which is at or below the window's low by then (it carried hd after the drain, and
      low only grows), so it purges nothing: its only effect is the accepted timestamp.

    The OOB message delivered at once is ``deliverMessage``'s, uncounted; a run of OOB-delivered
    or DONT_LOOPBACK messages only is no batch (no count). A lost loopback comes back by the HS
    resend (decision 5) if the highest sent message is one the transport loops back. Batches from
    self (``handleBatchFromSelf``) are not modelled: a world with messages to self has no batches.

13. DONT_LOOPBACK to self (``ReliableUnicast.down`` and ``send``; UNICAST3 the same since 3.6): the
    message takes a seqno and is stored like any (``addToSendBuffer(buf, seqno, msg, remove_filter)``)
    and passed down, but the transport never loops a DONT_LOOPBACK message back
    (``BaseBundler.loopbackUnlessDontLoopbackIsSet``; 3.6's ``TP.send``), nor any copy of it (the HS
    resend sends the stored message, flag and all): it never reaches the network, and the spec
    sends nothing for it. Its add runs the window's ``remove_filter`` (DONT_LOOPBACK, DUMMY_OOB_MSG
    or OOB_DELIVERED) from hd + 1: hd moves over the run of such messages that starts there, then
    ``buf.purge(buf.getHighestDeliverable())`` (not forced: capped at hd) moves low to hd. So:

    - stored right above everything delivered, it is removed at once, undelivered (with any
      OOB-delivered messages after it), and the room it frees may release a blocked sender;
    - stored above a message whose loopback has not been handled yet, it stays in the window until
      the next loopback's drain passes over it (removed, not delivered) and holds a slot till then;
    - as the highest sent message it is what the HS resend sends, and that copy is dropped by the
      transport too: if the loopback of an earlier message was lost, nothing brings it back, and
      that message waits for the next message to oneself that is looped back (a JGroups finding:
      ``models/unicast4/dont-loopback-lost-loopback.toml``, UNICAST3's twin in ``models/unicast3``).

    A DONT_LOOPBACK flag on a send to another member changes nothing in UNICAST3/4 (the flag is
    transient, the bundler loops back only messages to oneself); the worlds accept it on "A->A" only.
    Variant ``dont_loopback_delivered`` is a plausible defect, no release's: the drain's filter lacks
    its DONT_LOOPBACK clause, so the next loopback delivers the message to its sender.
"""

from __future__ import annotations

from dataclasses import replace

from spec.effects import Deliver, Effect, Purged, Send
from spec.unicast4_state import OPEN, Ack, Config, Data, Node, SendEntry


def on_data_from_self(cfg: Config, node: Node, msg: Data) -> tuple[Node, tuple[Effect, ...]]:
    """DATA from oneself (decision 12): no send entry for oneself, dropped; else touched (CLOSING
    -> OPEN), an OOB message stored and not yet delivered goes up at once, then the drain."""
    me = node.me
    entry = node.send[me]
    if entry is None:
        return node, ()
    entry = replace(entry, state=OPEN)
    effects: list[Effect] = []
    index = msg.seqno - entry.acked - 1
    if msg.oob and 0 <= index < len(entry.unacked):
        payload = entry.unacked[index]
        if payload is not None and msg.seqno in entry.oob and msg.seqno not in entry.oob_delivered:
            effects.append(Deliver(me, payload))
            entry = replace(entry, oob_delivered=entry.oob_delivered | {msg.seqno})
    node, entry, drained = drain_self(cfg, node, entry)
    return _with_self(node, entry), (*effects, *drained)


def drain_self(cfg: Config, node: Node, entry: SendEntry) -> tuple[Node, SendEntry, list[Effect]]:
    """removeAndDeliver on the send window for oneself: the run from acked + 1 up to the first
    empty slot removed (low := hd); its regular messages and its OOB ones not yet delivered go up as
    one batch, counted on the send entry (ACK to oneself now if due, before the batch)."""
    run = 0
    while run < len(entry.unacked) and entry.unacked[run] is not None:
        run += 1
    if not run:
        return node, entry, []
    payloads = []
    for offset in range(run):
        seqno = entry.acked + 1 + offset
        if seqno in entry.dont_loopback and not cfg.variant.dont_loopback_delivered:
            continue
        if seqno in entry.oob and seqno in entry.oob_delivered:
            continue
        payloads.append(entry.unacked[offset])
    entry = _removed_to(entry, entry.acked + run)
    effects: list[Effect] = []
    if payloads:
        total = entry.acks_counted + len(payloads)
        if total >= cfg.threshold:
            node = replace(node, timestamper=node.timestamper + 1)
            entry = replace(entry, acks_counted=0)
            effects.append(Send(node.me, Ack(entry.acked, entry.conn_id, node.timestamper)))
        else:
            entry = replace(entry, acks_counted=total)
        effects.extend(Deliver(node.me, p) for p in payloads if p is not None)
    effects.append(Purged(node.me, entry.conn_id, entry.acked))
    return node, entry, effects


def dont_loopback_added(node: Node, entry: SendEntry) -> tuple[SendEntry, tuple[Effect, ...]]:
    """The remove filter of a DONT_LOOPBACK add to the window for oneself, and its purge (decision
    13): low moves over the stored DONT_LOOPBACK and OOB-delivered messages from acked + 1 on."""
    run = 0
    while run < len(entry.unacked) and entry.unacked[run] is not None:
        seqno = entry.acked + 1 + run
        if seqno not in entry.dont_loopback and not (seqno in entry.oob and seqno in entry.oob_delivered):
            break
        run += 1
    if not run:
        return entry, ()
    entry = _removed_to(entry, entry.acked + run)
    return entry, (Purged(node.me, entry.conn_id, entry.acked),)


def _removed_to(entry: SendEntry, upto: int) -> SendEntry:
    """The window for oneself with everything up to ``upto`` removed (low = hd = ``upto``), the
    marks of the removed seqnos forgotten."""
    def above(seqnos: frozenset[int]) -> frozenset[int]:
        return frozenset(s for s in seqnos if s > upto) if seqnos else seqnos
    return replace(entry, acked=upto, unacked=entry.unacked[upto - entry.acked:], oob=above(entry.oob),
                   dont_loopback=above(entry.dont_loopback), oob_delivered=above(entry.oob_delivered))


def _with_self(node: Node, entry: SendEntry) -> Node:
    me = node.me
    return replace(node, send=node.send[:me] + (entry,) + node.send[me + 1:])
