"""NAKACK4's batch input: a receive of several NAKACK4 messages of one sender as one input
(``up(MessageBatch)``).

This module owns ``on_batch`` and decision 17 (numbered after ``spec/nakack4.py``'s 16, whose
decision 3 points here); the single-message path, the state and the other handlers are
``spec/nakack4.py``'s, whose private helpers it uses (it is that module's continuation, split off
for size; the multicast world's adapter calls it from here).

Decision 17: batches (JGroups 5.4.12 and the 5.6.0 snapshot, the same code: ``ReliableMulticast.up(
MessageBatch)`` lines 587-646, ``handleMessageBatch`` lines 777-808, ``removeAndDeliver`` 815-851,
``deliverBatch`` 905-925, ``NAKACK4.handleAck``). As for NAKACK2 (``spec/nakack2_batch.py``), a batch
from the transport holds OOB control messages (XMIT_REQ, HIGHEST_SEQNO, ACK: lines 1256 and 1362,
``NAKACK4.sendAck``) or regular ones (MSG, XMIT_RSP), and ``on_batch`` also takes a whole bundle, its
control messages first. NAKACK4 walks the batch of one sender once, in order, with one more type::

    if(!is_server) { queueMessage(msg, hdr.seqno); it.remove(); continue; }
    case MSG:           break;
    case XMIT_REQ:      it.remove(); handleXmitReq(...); break;
    case XMIT_RSP:      it.replace(msgFromXmitRsp(msg, hdr)); break;
    case HIGHEST_SEQNO: it.remove(); handleHighestSeqno(mb.sender(), hdr.seqno); break;
    case ACK:           it.remove(); highest_ack=Math.max(highest_ack, hdr.seqno); break;
    ...
    if(highest_ack > 0) handleAck(mb.sender(), highest_ack);
    if(!mb.isEmpty()) handleMessageBatch(mb);

So:

- ACKs: one ``handleAck`` with the batch's highest ACK, after the walk (after the batch's XMIT_REQs
  and HIGHEST_SEQNOs) and before its MSGs are added. The AckTable keeps the highest ACK of each
  member, so this is what the ACKs one by one leave; a blocked sender wakes on the purge it makes
  (its ``Timer(SEND)`` is enabled once the own window has room), as after a single ACK.
- HIGHEST_SEQNO: handled in the walk, one by one (each asks if the local high is lower and counts 1
  towards the ACK counter, decision 5), before a bundle's MSGs are added.
- MSGs (an XMIT_RSP as the MSG it carries, in the window of the batch's sender: see NAKACK2's note):
  ``win.add(mb, SEQNO_GETTER, true, null)``, every MSG in one go (FixedBuffer.add, each as a single
  add: at or below hd or held refused, beyond capacity dropped, decision 1); the loopback batch adds
  nothing; a non-member's MSGs are dropped. Then one ``removeAndDeliver``: the window from hd+1 up to
  the first gap (``max_batch_size`` 0, JGroups' default: one removal takes the whole run) is one
  delivered batch, and ``deliverBatch`` makes ONE acknowledgement decision for it:
  ``needToSendAck(entry, batch.size())`` (``Entry.update``: counter + size >= ack_threshold sends
  ACK(hd) at once and resets the counter, otherwise the counter grows and the ACK is pending). This
  is where batches differ from single receptions: MSGs 1, 2, 3 received one by one with a threshold
  of 2 make ACK(2) at once and leave 3 pending; received as one batch they make ACK(3) at once and
  leave nothing pending (``models/nakack4/batch-immediate-ack.toml``).
- The deliverer armed to throw or stuck (decision 14): the MSGs are added, nothing is delivered,
  exactly as for a single MSG.

Not a server: every message is queued, in the batch's order (decision 9), as single ones. The batch's
own ``removeAndDeliver`` is skipped while another thread delivers the sender's messages (``adders``);
handlers are atomic here, so it always runs. OOB batches are not modelled (decision 16).
"""

from __future__ import annotations

from dataclasses import replace

from spec.nakack4 import (
    ARMED,
    NAKACK_TYPES,
    READY,
    STRANDED,
    STUCK,
    Ack,
    Data,
    Effects,
    HighestSeqno,
    Msg,
    Node,
    Step,
    Window,
    XmitReq,
    XmitRsp,
    add_only,
    beyond,
    deliver_batch,
    deliver_own,
    on_ack,
    on_receive,
    queue_message,
    set_at,
    with_window,
)
from spec.nakack4_state import Config
from spec.unicast_common import add_to_window, drain_window


def on_batch(cfg: Config, node: Node, src: int, msgs: tuple[Msg, ...]) -> Step:
    """``up(MessageBatch)`` of the NAKACK4 messages ``msgs`` from ``src``, in the batch's order
    (decision 17): queued while not a server; else XMIT_REQs and HIGHEST_SEQNOs handled in the walk,
    then one ACK (the highest), then every MSG added in one go, one removal and one ACK decision."""
    if any(not isinstance(m, NAKACK_TYPES) for m in msgs):
        raise ValueError("on_batch: a batch holds NAKACK4 messages only (MSG, XMIT_REQ, XMIT_RSP, "
                         "HIGHEST_SEQNO, ACK)")
    effects: Effects = []
    data: list[Data] = []
    highest_ack = 0
    for msg in msgs:
        if not node.is_server:
            step = queue_message(cfg, node, src, msg)
        elif isinstance(msg, Data):
            data.append(msg)
            continue
        elif isinstance(msg, XmitRsp):  # msgFromXmitRsp: a MSG now, added to mb.sender()'s window
            data.append(Data(msg.seqno, msg.payload))
            continue
        elif isinstance(msg, Ack):
            highest_ack = max(highest_ack, msg.seqno)
            continue
        else:  # XMIT_REQ or HIGHEST_SEQNO: handled in the walk
            assert isinstance(msg, (XmitReq, HighestSeqno))
            step = on_receive(cfg, node, src, msg)
        node = step.node
        effects.extend(step.effects)
    if highest_ack > 0:
        step = on_ack(cfg, node, src, highest_ack)
        node = step.node
        effects.extend(step.effects)
    if not data:
        return Step(node, tuple(effects))
    return _message_batch(cfg, node, src, data, effects)


def _message_batch(cfg: Config, node: Node, src: int, data: list[Data], effects: Effects) -> Step:
    """``handleMessageBatch``: a non-member's MSGs dropped; the loopback batch delivers the own
    window; another sender's MSGs all added, then one removal whose batch counts once towards the
    ACK (``deliverBatch``), or, the deliverer failing (decision 14), added only."""
    window = node.windows[src]
    if window is None:
        return Step(node, tuple(effects))
    if src == node.me:
        window, payloads = deliver_own(window)
    elif node.deliverer[src] in (ARMED, STUCK):
        for m in data:
            window = add_only(cfg, window, m)
        state = node.deliverer[src]
        if state == ARMED:  # as _failed_delivery: stuck for good (deliverer_stuck) or stranded (the fix)
            state = STUCK if cfg.variant.deliverer_stuck else STRANDED
        return Step(_set_deliverer(with_window(node, src, window), src, state), tuple(effects))
    else:
        buffered = window.buffered
        for m in data:
            if not beyond(cfg, window, m.seqno):
                buffered, _ = add_to_window(window.delivered, buffered, m)
        hd, buffered, payloads = drain_window(window.delivered, buffered)
        window = Window(hd, hd, (), buffered)
        node = _set_deliverer(node, src, READY)
    return deliver_batch(cfg, with_window(node, src, window), src, payloads, effects)


def _set_deliverer(node: Node, src: int, state: int) -> Node:
    return replace(node, deliverer=set_at(node.deliverer, src, state))
