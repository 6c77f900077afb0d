"""NAKACK2's batch input: a receive of several NAKACK2 messages of one sender as one input
(``up(MessageBatch)``).

This module owns ``on_batch`` and the decision it implements (decision 16 of ``spec/nakack2.py``);
the single-message path, the state and the other handlers are ``spec/nakack2.py``'s, whose private
helpers it uses (the multicast world's adapter calls it from here).

Decision 16: batches (JGroups 5.4.12, ``NAKACK2.up(MessageBatch)`` lines 683-735 and
``handleMessageBatch`` lines 869-899; 5.2.12 and the 5.6.0 snapshot have the same code). The
transport hands a received bundle up as a batch of one sender (``mb.sender()``); NAKACK2 walks it
once, in order::

    if(!is_server) { queueMessage(msg, hdr.seqno); it.remove(); continue; }
    switch(hdr.type) {
        case MSG:           break;                                   // stays in the batch
        case XMIT_REQ:      it.remove(); handleXmitReq(msg.getSrc(), missing, hdr.sender); break;
        case XMIT_RSP:      it.replace(msgFromXmitRsp(msg, hdr)); break;  // now a MSG, same place
        case HIGHEST_SEQNO: it.remove(); handleHighestSeqno(mb.sender(), hdr.seqno); break;
    }
    if(!mb.isEmpty()) handleMessageBatch(mb);

and ``handleMessageBatch``: no table for ``mb.sender()`` drops every message (non-member); the
loopback case (the sender is the member itself) adds nothing; otherwise ``buf.add(mb, SEQNO_GETTER,
true, null)`` adds every MSG in one go (``Table.add`` refuses a seqno at or below hd or already
held, as a single add); then one ``removeAndDeliver`` (lines 905-940) delivers the window from hd+1
up to the first gap as one batch (the own window: up to hr, without nulling, its DONT_LOOPBACK
messages filtered out, decision 15). What the transport hands up: its bundler puts a sender's
messages for one destination in one bundle, and the receiver splits a bundle into its OOB batch,
passed up first, and its regular one (``TP.handleMessageBatch``). XMIT_REQ and HIGHEST_SEQNO are sent
OOB (lines 1334 and 1445), MSG and XMIT_RSP are not, so a batch from the transport holds control
messages or MSGs, never both; ``on_batch`` also takes a whole bundle (the engines' ``received_batch``),
whose control messages it handles first, as the transport's order does. So:

- the batch's XMIT_REQs and HIGHEST_SEQNOs are handled *before* any of its MSGs is added, in the
  batch's order: a HIGHEST_SEQNO bundled with the MSG it announces asks for that MSG (the answer is
  a duplicate, dropped). A MessageBatch mixing them is not what JGroups' transport makes: its mode is
  its first message's (``determineMode``), and an OOB first message makes the MSGs OOB (delivered at
  once, out of order), as the JGroups lockstep showed before the world split its batches by OOB flag;
- an XMIT_RSP goes into the window of the batch's sender, not of the original sender it names
  (``msgFromXmitRsp`` keeps the header's sender, ``handleMessageBatch`` reads ``mb.sender()``): the
  same window here, since an XMIT_REQ always goes to the original sender (decision 4), which alone
  answers it;
- the MSGs are delivered by one removal: the deliveries are those of the MSGs received one by one
  in any order (in seqno order, up to the first gap), and nothing observable sits between them.

Not a server: every message is queued, in the batch's order, exactly as single ones are. 3.6.20's
``up(MessageBatch)`` differs in form only: it removes every NAKACK2 message from the batch and
collects MSGs and XMIT_RSPs in a list (``handleMessages``), handling XMIT_REQs and HIGHEST_SEQNOs in
the walk as 5.x does; the outcome is the same, so there is no variant. The batch's own
``removeAndDeliver`` is skipped when another thread is already delivering that sender's messages
(the ``adders`` counter, JGRP-829); handlers are atomic here, so it always runs. Messages that are
not NAKACK2's (STABLE's votes and STABILITY, GMS's JoinRsp) pass up the stack after NAKACK2's: the
world never batches them (``models/multicast_batch.py``), so ``on_batch`` refuses them. OOB batches
are not modelled (no OOB multicasts in this spec: decision 14).
"""

from __future__ import annotations

from spec.effects import Deliver, Effect
from spec.nakack2 import (
    NAKACK_TYPES,
    Data,
    HighestSeqno,
    Msg,
    Node,
    QueueDropped,
    StablePurged,
    Step,
    Window,
    XmitReq,
    XmitRsp,
    deliver_own,
    on_receive,
    queue_message,
    with_window,
)
from spec.nakack2_state import Config
from spec.unicast_common import add_to_window, drain_window


def on_batch(cfg: Config, node: Node, src: int, msgs: tuple[Msg, ...]) -> Step:
    """``up(MessageBatch)`` of the NAKACK2 messages ``msgs`` from ``src``, in the batch's order
    (decision 16): queued while not a server; else XMIT_REQs and HIGHEST_SEQNOs handled in the walk,
    then every MSG (an XMIT_RSP as the MSG it carries) added in one go and one removal."""
    if any(not isinstance(m, NAKACK_TYPES) for m in msgs):
        raise ValueError("on_batch: a batch holds NAKACK2 messages only (MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO)")
    effects: list[Effect | StablePurged | QueueDropped] = []
    data: list[Data] = []
    for msg in msgs:
        if not node.is_server:
            step = queue_message(cfg, node, src, msg)
        elif isinstance(msg, Data):
            data.append(msg)
            continue
        elif isinstance(msg, XmitRsp):  # msgFromXmitRsp: a MSG now, added to mb.sender()'s window
            data.append(Data(msg.seqno, msg.payload))
            continue
        else:  # XMIT_REQ or HIGHEST_SEQNO: handled in the walk, before the batch's MSGs
            assert isinstance(msg, (HighestSeqno, XmitReq))
            step = on_receive(cfg, node, src, msg)
        node = step.node
        effects.extend(step.effects)
    if not data:
        return Step(node, tuple(effects))
    return _message_batch(node, src, data, effects)


def _message_batch(node: Node, src: int, data: list[Data], effects: list[Effect | StablePurged | QueueDropped]
                   ) -> Step:
    """``handleMessageBatch``: a non-member's MSGs dropped; the loopback batch delivers the own
    window (nothing added); another sender's MSGs all added, then one removal."""
    window = node.windows[src]
    if window is None:
        return Step(node, tuple(effects))
    if src == node.me:  # loopback: the same removal as a single own copy's (decisions 2 and 15)
        flagged = node.dont_loopback
        payloads = [m.payload for m in window.buffered if m is not None and m.seqno not in flagged]
        window, _ = deliver_own(window)
    else:
        buffered = window.buffered
        for m in data:
            buffered, _ = add_to_window(window.delivered, buffered, m)
        hd, buffered, payloads = drain_window(window.delivered, buffered)
        window = Window(hd, hd, (), buffered)
    effects.extend(Deliver(src, p) for p in payloads)
    return Step(with_window(node, src, window), tuple(effects))
