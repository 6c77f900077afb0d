"""Handlers for NAKACK4's messages (ReliableMulticast.up, GMS's JoinRsp as NAKACK4 reads it); the
ack counter and the AckTable they feed are ``acks.py``'s.

This module owns what a member does with one *decoded* message from a peer, and nothing about
bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors the spec
function named in its docstring (``spec/nakack4.py``) statement for statement; the additions are
for hostile input only, each counted in ``Stats`` when it bites:

- An XMIT_REQ is served for at most ``max_xmit_served`` seqnos, and what it makes the engine send
  (every copy of a re-multicast counted) is bounded by ``resend_factor`` and ``max_resend_bytes``
  (``impl.common.ResendBudget``, as NAKACK2's); with ``use_mcast_xmit`` a request
  for *another* sender's messages is dropped (the re-multicast would carry our address as its
  sender; the spec always asks the original sender).
- An XMIT_RSP is accepted only from the original sender it names.
- The become_server_queue holds at most ``max_queue_bytes``.
- A receive window holds at most ``max_held_bytes`` undelivered, all of them ``max_receive_bytes``
  (``impl.common.HeldBytes``): a message that would pass either is dropped like a loss.
"""

from __future__ import annotations

from impl.common import ResendBudget, held_size
from impl.fixed_window import MAX_SEQNO, AddStatus
from impl.nakack2.state import ResendBook
from impl.nakack4.acks import count_acks, on_ack, send_ack
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
from impl.nakack4.membership import on_join_rsp
from impl.nakack4.state import ARMED, READY, STRANDED, STUCK, Entry, Member, P
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
        on_data(m, src, McastMsg(msg.seqno, msg.payload, msg.oob))
    elif type(msg) is NakXmitReqMsg:
        on_xmit_req(m, src, msg)
    elif type(msg) is HighestSeqnoMsg:
        on_highest_seqno(m, src, msg)
    elif type(msg) is AckMsg:
        on_ack(m, src, msg.seqno)
    else:
        assert type(msg) is JoinRspMsg
        on_join_rsp(m, msg)


def queue(m: Member[P], src: P, msg: WireMsg) -> None:
    """Spec ``queue_message``: offer ``msg`` to the become_server_queue; a full ring refuses the newest."""
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
        done = m.oob_delivered
        if msg.oob and msg.seqno > window.hd and msg.seqno not in done and (
                original := window.get(msg.seqno)) is not None:  # OOB_DELIVERED set now (decision 18)
            done.add(msg.seqno)
            _deliver_one(m, sender, entry, original)
        items = window.remove_many(False)
        if done:
            items = [item for item in items if item.seqno not in done]
            m.oob_delivered = {s for s in done if s > window.hd}
    elif entry.deliverer in (ARMED, STUCK):
        failed_delivery(m, sender, msg)
        return
    elif msg.oob:
        _on_oob_data(m, sender, entry, msg)
        return
    else:
        held = will_hold_entry(entry, msg.seqno, busy=False)
        if held and not m.held.admits(entry.held_bytes, held_size(msg)):
            m.stats.held_bytes_full += 1
            return
        status = window.add(msg.seqno, msg)
        items = [] if status is AddStatus.BEYOND_CAPACITY else window.remove_many(True)
        # Counted by what happened: after a failed batch, what looked held may be delivered at once.
        stored = held and status is AddStatus.ADDED and all(item is not msg for item in items)
        m.held.account(entry, msg, items, held=stored)
        entry.deliverer = READY
        if not items:
            m.stats.old_or_duplicate += status is not AddStatus.ADDED
        elif any(item.oob for item in items):  # OOB placeholders: delivered when added (decision 18)
            items = [item for item in items if not item.oob]
    if items:
        if count_acks(m, sender, len(items)):
            send_ack(m, sender, window.hd)
        m.deliver_all(sender, items)


def _deliver_one(m: Member[P], sender: P, entry: Entry, msg: McastMsg) -> None:
    """Spec ``_deliver_one``: an OOB message goes up alone, counting 1 towards the entry's ACK, sent
    at once (with the window's hd as it is, before any removal) when due."""
    if count_acks(m, sender, 1):
        send_ack(m, sender, entry.window.hd)
    m.deliver_all(sender, [msg])


def _on_oob_data(m: Member[P], sender: P, entry: Entry, msg: McastMsg) -> None:
    """Spec ``_on_data`` for another sender's OOB message (decision 18): added as a payload-free
    placeholder (DUMMY_OOB_MSG), delivered at once if the window took it, then the window delivered
    up to the first gap, placeholders passed over; the limits as for any message."""
    window = entry.window
    placeholder = McastMsg(msg.seqno, b"", True)
    held = will_hold_entry(entry, msg.seqno, busy=False)
    if held and not m.held.admits(entry.held_bytes, held_size(placeholder)):
        m.stats.held_bytes_full += 1
        return
    status = window.add(msg.seqno, placeholder)
    entry.deliverer = READY
    if status is AddStatus.ADDED:
        _deliver_one(m, sender, entry, msg)
    elif status is not AddStatus.BEYOND_CAPACITY:
        m.stats.old_or_duplicate += 1
    items = [] if status is AddStatus.BEYOND_CAPACITY else window.remove_many(True)
    stored = held and status is AddStatus.ADDED and all(item is not placeholder for item in items)
    m.held.account(entry, placeholder, items, held=stored)
    items = [item for item in items if not item.oob]
    if items:
        if count_acks(m, sender, len(items)):
            send_ack(m, sender, window.hd)
        m.deliver_all(sender, items)


def failed_delivery(m: Member[P], sender: P, msg: McastMsg) -> None:
    """Spec ``failed_delivery``: the message is added, nothing is delivered; an armed deliverer
    becomes STUCK (variant ``deliverer_stuck``) or STRANDED (the fix: ``adders`` reset)."""
    entry = m.entries[sender]
    if entry.deliverer == ARMED:
        entry.deliverer = STUCK if m.variant.deliverer_stuck else STRANDED
    stored = McastMsg(msg.seqno, b"", True) if msg.oob else msg  # an OOB one: its placeholder (18)
    held = will_hold_entry(entry, msg.seqno, busy=True)
    if held and not m.held.admits(entry.held_bytes, held_size(stored)):
        m.stats.held_bytes_full += 1
        return
    added = entry.window.add(msg.seqno, stored) is AddStatus.ADDED
    m.held.account(entry, stored, [], held=held)
    if added and msg.oob:  # delivered before removeAndDeliver, which fails or is stuck
        _deliver_one(m, sender, entry, msg)


def will_hold_entry(entry: Entry, seqno: int, *, busy: bool) -> bool:
    """Would adding ``seqno`` to ``entry``'s receive window store it undelivered? Above a gap, or
    anywhere while the deliverer is busy (``busy``: the batch that would take it failed)."""
    window = entry.window
    return (window.hd + (0 if busy else 1) < seqno <= MAX_SEQNO and not window.full_for(seqno)
            and window.get(seqno) is None)


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
    budget = _budget(m, src)
    for i, seqno in enumerate(seqnos):
        stored = window.get(seqno)
        if stored is None or (stored.oob and sender != m.me):  # a receive window's OOB slot: a placeholder
            continue
        try:
            if cfg.use_mcast_xmit:  # the stored original: DONT_LOOPBACK still holds for it (spec decision 8)
                data = encode_mcast(stored.seqno, stored.payload, cfg.codec_limits, stored.oob)
                destinations = tuple(p for p in m.view if p != m.me) if cfg.dont_loopback else m.view
            else:
                rsp = XmitRspMsg(sender, stored.seqno, stored.payload, stored.oob)
                data, destinations = encode(rsp, cfg.codec_limits), (src,)
        except EncodeError:  # an address and a payload at the limits: no room for the header
            m.stats.oversized_control += 1
            continue
        if budget is not None and not budget.take(len(destinations) * len(data)):
            m.stats.resends_throttled += len(seqnos) - i
            return
        m.stats.xmit_served += 1
        m.multicast(data, destinations)


def _budget(m: Member[P], src: P) -> ResendBudget | None:
    """The resend budget of the datagram being answered (None: resend_factor 0, no bound); one book
    per member, one for all non-members."""
    if m.config.resend_factor == 0:
        return None
    key: P | None = src if src in m.members else None
    book = m.books.get(key)
    if book is None:
        book = m.books[key] = ResendBook()
    return ResendBudget(m.config, book, m.answering_size, now=m.answering_now)


def on_highest_seqno(m: Member[P], src: P, msg: HighestSeqnoMsg) -> None:
    """Spec ``_on_highest_seqno``: ask ``src`` for the seqno if the local high is lower, and count
    it towards the ACK, ignoring whether the count says "send now" (JGRP-2874); with
    ``fix_deliver_stranded``, deliver what a failed batch stranded."""
    entry = m.entries.get(src)
    if entry is None:
        return
    if msg.seqno > entry.window.high:
        m.stats.xmit_reqs_sent += 1
        m.emit(src, NakXmitReqMsg(src, XmitReqMsg((msg.seqno,))))
    if not m.variant.highest_seqno_no_ack:
        count_acks(m, src, 1)
    if m.variant.fix_deliver_stranded and entry.deliverer == STRANDED:
        entry.deliverer = READY
        items = entry.window.remove_many(True)
        m.held.account(entry, None, items, held=False)
        items = [item for item in items if not item.oob]  # OOB placeholders (decision 18)
        if items:
            if count_acks(m, src, len(items)):
                send_ack(m, src, entry.window.hd)
            m.deliver_all(src, items)
