"""Handlers for NAKACK2's messages (NAKACK2.up, STABLE.up, GMS's JoinRsp as NAKACK2 reads it).

This module owns what a member does with one *decoded* message from a peer, and nothing about
bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors the spec
function named in its docstring (``spec/nakack2.py``, ``spec/nakack2_stable.py``) statement for
statement; the only additions are the hostile-input limits of ``Config``, each counted in
``Stats`` when it bites:

- A MSG more than ``max_receive_span`` above a window's low, or one that would make a window (or
  all of them) hold more than ``max_window_bytes`` (``max_receive_bytes``) undelivered, is dropped
  like a loss (retransmission brings it again once the gap below it is filled).
- The become_server_queue holds at most ``max_queue_bytes`` (also when unbounded in count).
- An XMIT_REQ is served for at most ``max_xmit_served`` seqnos, and what it makes the engine send
  (every copy of a re-multicast counted) is bounded by ``resend_factor`` and ``max_resend_bytes``.
  With ``use_mcast_xmit``, a request for *another* sender's messages is dropped: the re-multicast
  MSG would carry our address as its sender (the spec never sends one: an XMIT_REQ always goes
  to the original sender).
- An XMIT_RSP is accepted only from the original sender it names (the only member that sends
  one, as above): a member cannot inject messages in another sender's name. A STABILITY is
  accepted only from the coordinator of its view (``stable.on_stability``).
"""

from __future__ import annotations

from impl.common import ResendBudget, held_size, will_hold
from impl.nakack2.codec import (
    QUEUED_TYPES,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    StabilityMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    encode,
    encode_mcast,
)
from impl.nakack2.membership import on_join_rsp
from impl.nakack2.stable import on_stability, on_vote
from impl.nakack2.state import Member, P, RecvEntry, ResendBook
from impl.window import WindowSpanError
from impl.wire import EncodeError


def on_message(m: Member[P], src: P, msg: WireMsg) -> None:
    """Dispatch one decoded message from ``src`` (spec ``on_receive``): NAKACK2's own types are
    queued while the member is not a server."""
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
    elif type(msg) is StableMsg:
        on_vote(m, src, msg)
    elif type(msg) is StabilityMsg:
        on_stability(m, src, msg)
    else:
        assert type(msg) is JoinRspMsg
        on_join_rsp(m, msg)


def queue(m: Member[P], src: P, msg: WireMsg) -> None:
    """Spec ``queue_message``: offer ``msg`` to the become_server_queue; a full queue drops the new
    message (variant ``queue_drops_oldest``: evicts the oldest to make room)."""
    size = m.answering[0]
    bound = m.config.queue_bound()
    if m.queue_bytes + size > m.config.max_queue_bytes:
        m.stats.queue_bytes_full += 1
        return
    if bound is not None and len(m.queue) >= bound:
        m.stats.queue_dropped += 1
        if not m.variant.queue_drops_oldest:
            return
        _, _, old_size = m.queue.popleft()
        m.queue_bytes -= old_size
    m.queue.append((src, msg, size))
    m.queue_bytes += size
    m.stats.queued += 1


def on_data(m: Member[P], sender: P, msg: McastMsg) -> None:
    """Spec ``_on_data``: dropped without a window; the own copy delivers the own window up to its
    hr (the stored messages are kept until STABLE purges them; an own OOB message still above hd
    first, spec decision 17); another sender's message is added (an OOB one as a placeholder, and
    delivered at once if added) and its window delivered up to the first gap (delivered messages
    are dropped at once)."""
    if sender == m.me:
        own = m.own
        if own is None:
            m.stats.data_without_window += 1
            return
        if own.hd < own.hr:
            table = own.table
            mine = [item for s in range(own.hd + 1, own.hr + 1) if (item := table.get(s)) is not None]
            assert len(mine) == own.hr - own.hd  # the own window has no gaps
            skip = own.dont_loopback  # removeAndDeliver's filter passes over them (spec decision 15)
            first = mine[msg.seqno - own.hd - 1] if msg.oob and msg.seqno > own.hd else None
            own.hd = own.hr
            if first is not None:  # OOB_DELIVERED (decision 17): delivered first, the removal passes it
                m.deliver_all(sender, [first])
                if not m.variant.oob_redelivers:
                    skip = skip | {first.seqno}
            if skip:
                mine = [item for item in mine if item.seqno not in skip]
            if mine:
                m.deliver_all(sender, mine)
        return
    if msg.oob:
        _on_oob_data(m, sender, msg)
        return
    entry = m.recv.get(sender)
    held = _admitted(m, entry, msg)
    if entry is None or held is None:
        return
    window = entry.window
    seqno = msg.seqno
    try:
        items = window.add_remove_many(seqno, msg)
    except WindowSpanError:
        m.stats.beyond_window += 1
        return
    if not items and not held:
        m.stats.old_or_duplicate += 1
        return
    m.held.account(entry, msg, items, held=held)
    if items and not m.variant.oob_redelivers:
        items = [item for item in items if not item.oob]  # OOB placeholders: delivered when added (17)
    if items:
        m.deliver_all(sender, items)


def _admitted(m: Member[P], entry: RecvEntry | None, stored: McastMsg) -> bool | None:
    """Whether ``stored`` would take a new slot of ``entry``'s window (``will_hold``), or None when it
    is dropped first: no window for its sender, or no room under the byte limits (each counted)."""
    if entry is None:
        m.stats.data_without_window += 1
        return None
    held = will_hold(entry.window, stored.seqno)
    if held and not m.held.admits(entry.held_bytes, held_size(stored)):
        m.stats.held_bytes_full += 1
        return None
    return held


def _on_oob_data(m: Member[P], sender: P, msg: McastMsg) -> None:
    """Spec ``_on_data`` for another sender's OOB message (decision 17): added as a placeholder
    without its payload (JGroups' DUMMY_OOB_MSG; variant ``oob_redelivers``: the message itself),
    delivered at once if the window took it, then the window delivered up to the first gap,
    placeholders passed over. The same limits as any message (a placeholder held above a gap
    counts ``held_size`` of no payload)."""
    entry = m.recv.get(sender)
    seqno = msg.seqno
    stored = msg if m.variant.oob_redelivers else McastMsg(seqno, b"", True)
    held = _admitted(m, entry, stored)
    if entry is None or held is None:
        return
    window = entry.window
    try:
        added = window.add(seqno, stored)
    except WindowSpanError:
        m.stats.beyond_window += 1
        return
    if not added:
        m.stats.old_or_duplicate += 1
        return
    m.deliver_all(sender, [msg])
    items = window.remove_many()
    m.held.account(entry, stored, items, held=held)
    if not m.variant.oob_redelivers:
        items = [item for item in items if not item.oob]
    if items:
        m.deliver_all(sender, items)


def on_xmit_req(m: Member[P], src: P, msg: NakXmitReqMsg) -> None:
    """Spec ``_on_xmit_req``: every listed message still stored is re-multicast to the view
    (use_mcast_xmit) or sent to ``src`` as an XMIT_RSP; the others are not found."""
    sender = msg.sender
    cfg = m.config
    if cfg.use_mcast_xmit and sender != m.me:
        m.stats.xmit_req_foreign += 1
        return
    if sender == m.me:
        window = None if m.own is None else m.own.table
    else:
        entry = m.recv.get(sender)
        window = None if entry is None else entry.window
    if window is None:
        m.stats.xmit_req_unknown += 1
        return
    seqnos, asked = msg.request.between(window.low, window.hr, cfg.max_xmit_served)
    if asked > cfg.max_xmit_served:
        m.stats.xmit_seqnos_ignored += asked - cfg.max_xmit_served
    budget = _budget(m, src)
    for i, seqno in enumerate(seqnos):
        stored = window.get(seqno)
        if stored is None or (stored.oob and sender != m.me):  # a receive window's OOB slot: a placeholder
            continue
        try:
            if cfg.use_mcast_xmit:  # the stored original: a DONT_LOOPBACK one skips this member (decision 15)
                data = encode_mcast(stored.seqno, stored.payload, cfg.codec_limits, stored.oob)
                flagged = m.own is not None and seqno in m.own.dont_loopback
                destinations = tuple(p for p in m.view if p != m.me) if flagged else m.view
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
    """The resend budget of the datagram being answered (None: resend_factor 0, no bound)."""
    cfg = m.config
    if cfg.resend_factor == 0:
        return None
    key: P | None = src if src in m.members else None
    book = m.books.get(key)
    if book is None:
        book = m.books[key] = ResendBook()
    size, now = m.answering
    return ResendBudget(m.budget_settings, book, size, now=now)


def on_highest_seqno(m: Member[P], src: P, msg: HighestSeqnoMsg) -> None:
    """Spec ``_on_highest_seqno``: if the local hr for ``src`` is lower, ask ``src`` for that one
    seqno."""
    hr = m.window_hr(src)
    if hr is None or msg.seqno <= hr:
        return
    m.emit(src, XmitReqMsg((msg.seqno,)))
