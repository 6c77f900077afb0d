"""Handlers for NAKACK4's messages (ReliableMulticast.up, GMS's JoinRsp as NAKACK4 reads it), the
ack counter and the AckTable.

This module owns what a member does with one *decoded* message from a peer, and nothing about
bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors the spec
function named in its docstring (``spec/nakack4.py``) statement for statement; the additions are
for hostile input only, each counted in ``Stats`` when it bites:

- An XMIT_REQ is served for at most ``max_xmit_served`` seqnos; with ``use_mcast_xmit`` a request
  for *another* sender's messages is dropped (the re-multicast would carry our address as its
  sender; the spec always asks the original sender).
- An XMIT_RSP is accepted only from the original sender it names.
- The become_server_queue holds at most ``max_queue_bytes``.
"""

from __future__ import annotations

from impl.fixed_window import AddStatus
from impl.nakack4.codec import (
    QUEUED_TYPES,
    AckMsg,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    encode,
    encode_mcast,
)
from impl.nakack4.state import ARMED, READY, STRANDED, STUCK, Member, P
from impl.wire import EncodeError


def on_message(m: Member[P], src: P, msg: WireMsg) -> None:
    """Spec ``on_receive``: NAKACK4's own types are queued while the member is not a server."""
    if not m.is_server and isinstance(msg, QUEUED_TYPES):
        queue(m, src, msg)
    elif type(msg) is McastMsg:
        on_data(m, src, msg)
    elif type(msg) is XmitRspMsg:
        if msg.sender != src:
            m.stats.xmit_rsp_foreign += 1
            return
        on_data(m, src, McastMsg(msg.seqno, msg.payload))
    elif type(msg) is NakXmitReqMsg:
        on_xmit_req(m, src, msg)
    elif type(msg) is HighestSeqnoMsg:
        on_highest_seqno(m, src, msg)
    elif type(msg) is AckMsg:
        on_ack(m, src, msg.seqno)
    else:
        assert type(msg) is JoinRspMsg
        from impl.nakack4.membership import on_join_rsp  # membership replays through this module

        on_join_rsp(m, msg)


def queue(m: Member[P], src: P, msg: WireMsg) -> None:
    """Spec ``_queue``: offer ``msg`` to the become_server_queue; a full ring refuses the newest."""
    size = m.answering_size
    if len(m.queue) >= m.config.queue_bound or m.queue_bytes + size > m.config.max_queue_bytes:
        m.stats.queue_dropped += 1
        return
    m.queue.append((src, msg, size))
    m.queue_bytes += size
    m.stats.queued += 1


def on_data(m: Member[P], sender: P, msg: McastMsg) -> None:
    """Spec ``_on_data``: dropped without a window; the own copy delivers the own window up to
    its first gap (kept until an ACK purge); another sender's message is added and its window
    delivered up to the first gap, unless its deliverer is armed or stuck. A delivered batch
    counts towards the entry's ACK, sent before the batch goes up."""
    entry = m.entries.get(sender)
    if entry is None:
        m.stats.data_without_window += 1
        return
    window = entry.window
    if sender == m.me:
        items = window.remove_many(False)
    elif entry.deliverer in (ARMED, STUCK):
        _failed_delivery(m, sender, msg)
        return
    else:
        status = window.add(msg.seqno, msg)
        items = [] if status is AddStatus.BEYOND_CAPACITY else window.remove_many(True)
        entry.deliverer = READY
        if not items:
            m.stats.old_or_duplicate += status is not AddStatus.ADDED
    if items:
        if count_acks(m, sender, len(items)):
            send_ack(m, sender, window.hd)
        m.deliver_all(sender, items)


def _failed_delivery(m: Member[P], sender: P, msg: McastMsg) -> None:
    """Spec ``_failed_delivery``: the message is added, nothing is delivered; an armed deliverer
    becomes STUCK (variant ``deliverer_stuck``) or STRANDED (the fix: ``adders`` reset)."""
    entry = m.entries[sender]
    if entry.deliverer == ARMED:
        entry.deliverer = STUCK if m.variant.deliverer_stuck else STRANDED
    entry.window.add(msg.seqno, msg)


def count_acks(m: Member[P], sender: P, count: int) -> bool:
    """Spec ``_count_acks`` (Entry.update): True (counter reset) means send an ACK now; otherwise
    the counter grows and the pending flag is set."""
    entry = m.entries[sender]
    total = entry.counted + count
    if total >= m.config.threshold:
        entry.counted = 0
        return True
    entry.counted = total
    entry.pending = True
    return False


def send_ack(m: Member[P], dst: P, seqno: int) -> None:
    m.stats.acks_sent += 1
    m.emit(dst, AckMsg(seqno))


def on_xmit_req(m: Member[P], src: P, msg: NakXmitReqMsg) -> None:
    """Spec ``_on_xmit_req``: every listed message still stored is re-multicast to the view
    (use_mcast_xmit) or sent to ``src`` as an XMIT_RSP; the others are not found."""
    sender, cfg = msg.sender, m.config
    if cfg.use_mcast_xmit and sender != m.me:
        m.stats.xmit_req_foreign += 1
        return
    entry = m.entries.get(sender)
    if entry is None:
        return
    window = entry.window
    seqnos, asked = msg.request.between(window.low, window.high, cfg.max_xmit_served)
    if asked > cfg.max_xmit_served:
        m.stats.xmit_seqnos_ignored += asked - cfg.max_xmit_served
    for seqno in seqnos:
        stored = window.get(seqno)
        if stored is None:
            continue
        try:
            if cfg.use_mcast_xmit:
                m.multicast(encode_mcast(stored.seqno, stored.payload, cfg.codec_limits), m.view)
            else:
                m.multicast(encode(XmitRspMsg(sender, stored.seqno, stored.payload), cfg.codec_limits), (src,))
        except EncodeError:  # an address and a payload at the limits: no room for the header
            m.stats.oversized_control += 1
            continue
        m.stats.xmit_served += 1


def on_highest_seqno(m: Member[P], src: P, msg: HighestSeqnoMsg) -> None:
    """Spec ``_on_highest_seqno``: ask ``src`` for the seqno if the local high is lower, and count
    it towards the ACK, ignoring whether the count says "send now" (JGRP-2874)."""
    entry = m.entries.get(src)
    if entry is None:
        return
    if msg.seqno > entry.window.high:
        m.stats.xmit_reqs_sent += 1
        m.emit(src, NakXmitReqMsg(src, XmitReqMsg((msg.seqno,))))
    if not m.variant.highest_seqno_no_ack:
        count_acks(m, src, 1)


def on_ack(m: Member[P], src: P, seqno: int) -> None:
    """Spec ``on_ack``: the AckTable takes ACK(seqno) from ``src`` (a current member's entry only,
    JGRP-2904); if its minimum rose, the own window purges to it, clamped to the own hd."""
    current = m.ack_table.get(src)
    if m.own is None or (current is None and not m.variant.ack_from_non_members):
        m.stats.acks_ignored += 1
        return
    if current is not None and seqno <= current:
        m.stats.acks_ignored += 1
        return
    m.ack_table[src] = seqno
    purge_to_min(m, table_min(m))


def table_min(m: Member[P]) -> int:
    """AckTable.computeMin: the lowest ACK of the members with an entry; the previous one if none."""
    return min(m.ack_table.values()) if m.ack_table else m.ack_min


def purge_to_min(m: Member[P], new_min: int) -> None:
    """Spec ``_purge_to_min``: record the AckTable's new minimum; if it rose, purge the own window
    to it (a purge that moves low is what wakes blocked senders: ``engine.py`` resumes them)."""
    old_min, m.ack_min = m.ack_min, new_min
    own = m.own
    if new_min <= old_min or own is None:
        return
    before = own.window.low
    if own.window.purge(new_min):
        m.stats.ack_purged += own.window.low - before
