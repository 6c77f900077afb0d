"""Handlers for the five UNICAST3 message types (UNICAST3.up: handleDataReceived and friends).

This module owns what a member does with one *decoded* message from a peer, and nothing about
bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors the
spec function named in its docstring, statement for statement; the only additions are the
hostile-input limits of ``Config``, each counted in ``Stats`` when it bites:

- DATA with seqno 0 is dropped (seqnos start at 1; the spec never produces 0, and a window at
  offset -1 would make us ACK -1, which has no encoding).
- DATA more than ``max_receive_span`` above a window's low is dropped before it touches the entry.
- A first DATA that would create receive entry number ``max_receive_entries + 1``, or replace a
  window younger than ``min_window_replace_interval``, is dropped.
- A non-first DATA without a usable receive entry is cached only within ``max_cached_messages``
  and ``max_cache_bytes`` (``cache.py``; beyond them it is dropped, as the 3.x releases drop it).
- An XMIT_REQ is served for at most ``max_xmit_served`` seqnos (found without looking at the
  others, so the work is bounded by what is served, not by what is asked).
- The answer to an XMIT_REQ or SEND_FIRST_SEQNO resends at most ``resend_factor`` times the
  request's size in bytes (or one message), within ``max_resend_bytes`` per peer and interval
  (``impl.common.ResendBudget``).
"""

from __future__ import annotations

from impl.common import evict_stalest, held_size, reopen_offset, resend_budget, will_hold
from impl.unicast3.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg
from impl.unicast3.entries import Event, RecvEntry, SendEntry
from impl.unicast3.state import Member, P
from impl.window import Table, WindowSpanError


def on_message(m: Member[P], src: P, msg: WireMsg, *, now: int) -> None:
    """Dispatch one decoded message from ``src`` (spec ``on_receive``). What an answer may resend
    is bounded by the datagram's size (``resend_factor``), which the engine puts in
    ``m.answering`` first."""
    if isinstance(msg, DataMsg):
        on_data(m, src, msg, now=now)
    elif isinstance(msg, AckMsg):
        on_ack(m, src, msg)
    elif isinstance(msg, SendFirstSeqnoMsg):
        on_send_first_seqno(m, src, msg)
    elif isinstance(msg, XmitReqMsg):
        on_xmit_req(m, src, msg)
    else:
        on_close(m, src, msg, now=now)


def on_data(m: Member[P], src: P, msg: DataMsg, *, now: int) -> None:
    """DATA (spec ``_on_data``): find or create the receive entry; add the cached DATA of its
    connection and the message, ACK pending, deliver.

    A first DATA with no entry or another conn_id opens a window just below its seqno (replacing
    the old one); a non-first one without a matching entry triggers a rate-limited
    SEND_FIRST_SEQNO and goes into the message cache (dropped under ``no_message_cache``). A DATA
    with a usable entry first drains the cache of ``src``: its connection's DATA are added, the
    others dropped (addQueuedMessages).
    """
    seqno = msg.seqno
    if seqno == 0:
        m.stats.bad_seqno += 1
        return
    if src == m.me and not m.variant.self_as_peer:
        on_data_from_self(m, msg, now=now)
        return
    opened = False  # a window this DATA created: its delivery is no progress (receive_evict_idle)
    entry = m.recv.get(src)
    if entry is None or entry.conn_id != msg.conn_id:
        if not msg.first:
            m.stats.data_without_window += 1
            m.request_first_seqno(src, now=now)
            if not m.variant.no_message_cache:
                m.cache.add(src, msg, now=now)
            return
        entry = _open_window(m, src, msg, now=now)
        if entry is None:
            return
        opened = True
    queued = _drain_cache(m, src, entry)
    if not queued and not msg.oob:
        _add(m, src, entry, msg, now=now, opened=opened)  # the common case
        return
    hd = entry.window.hd
    delivered = False
    for added in (*queued, msg):  # addMessage each (an OOB one is delivered when added) ...
        delivered = _add_only(m, src, entry, added, now=now, cached=added is not msg) or delivered
    items = entry.window.remove_many()  # ... then one removeAndDeliver
    if items:
        m.held.account(entry, items[0], items, held=False)  # items[0] (at hd + 1) was never held
        delivered = _deliver_drained(m, src, items) or delivered
    if delivered and not opened:
        entry.stale_since = now  # progress (receive_evict_idle)
    if m.variant.ack_only_new:
        entry.ack_pending = entry.ack_pending or entry.window.hd > hd


def _drain_cache(m: Member[P], src: P, entry: RecvEntry) -> list[DataMsg]:
    """msg_cache.drain(src), then addQueuedMessages' filter: the cached DATA of ``entry``'s connection
    (in seqno order), the others dropped and counted."""
    queued: list[DataMsg] = []
    if src in m.cache:
        for cached in m.cache.drain(src):
            if cached.conn_id == entry.conn_id:
                queued.append(cached)
            else:
                m.stats.cache_dropped += 1
    return queued


def _add_only(m: Member[P], src: P, entry: RecvEntry, msg: DataMsg, *, now: int, cached: bool) -> bool:
    """addMessage without the drain (spec ``add_to_window``): ``msg`` into ``entry``'s window (an
    OOB one as a placeholder without its payload, JGroups' DUMMY_OOB_MSG, and delivered at once if
    the window took it), ACK pending. A ``cached`` DATA that a limit drops is counted apart
    (``cache_drained_dropped``, as in ``_add``). Returns whether it delivered something."""
    window = entry.window
    seqno = msg.seqno
    keep = m.variant.oob_redelivers or m.variant.oob_keeps_message
    stored = msg if not msg.oob or keep else DataMsg(seqno, msg.conn_id, msg.first, b"", True)
    held = will_hold(window, seqno)
    if held and not m.held.admits(entry.held_bytes, held_size(stored)):
        if cached:
            m.stats.cache_drained_dropped += 1
        else:
            m.stats.held_bytes_full += 1
        return False
    try:
        added = window.add(seqno, stored)
    except WindowSpanError:
        if cached:
            m.stats.cache_drained_dropped += 1
        else:
            m.stats.beyond_window += 1
        return False
    if added and held:
        m.held.account(entry, stored, [], held=True)
    if not m.variant.ack_only_new:
        entry.ack_pending = True
    entry.touch(now=now)
    if added and msg.oob:
        m.deliver(src, msg.payload)
        return True
    return False


def _deliver_drained(m: Member[P], src: P, items: list[DataMsg]) -> bool:
    """Deliver what the drain removed, OOB placeholders passed over (variant ``oob_redelivers``:
    delivered again). Returns whether it delivered something."""
    if not m.variant.oob_redelivers:
        items = [item for item in items if not item.oob]
    if items:
        m.deliver_all(src, items)
    return bool(items)


def _add(m: Member[P], src: P, entry: RecvEntry, msg: DataMsg, *, now: int, opened: bool) -> None:
    """addMessage, then removeAndDeliver, for a DATA that is neither OOB nor draining the message
    cache (``on_data``'s common case; the others go through ``_add_only``): ``msg`` into ``entry``'s
    window, what it completes delivered, ACK pending. What a window just ``opened`` delivers is no
    progress for receive_evict_idle."""
    window = entry.window
    seqno = msg.seqno
    held = will_hold(window, seqno)
    if held and not m.held.admits(entry.held_bytes, held_size(msg)):
        m.stats.held_bytes_full += 1
        return
    try:
        items = window.add_remove_many(seqno, msg)  # msg is not OOB: on_data takes those elsewhere
    except WindowSpanError:
        m.stats.beyond_window += 1  # not a new window's first DATA (seqno - low = 1): a later one
        return
    m.held.account(entry, msg, items, held=held)
    if items and _deliver_drained(m, src, items):
        if not opened:
            entry.stale_since = now  # progress (receive_evict_idle)
    # Every reception is acknowledged, duplicates included (JGRP-1578); the variant acks only
    # receptions that delivered something new.
    if m.variant.ack_only_new:
        entry.ack_pending = entry.ack_pending or bool(items)
    else:
        entry.ack_pending = True
    entry.touch(now=now)


def _open_window(m: Member[P], src: P, msg: DataMsg, *, now: int) -> RecvEntry | None:
    """A new receive entry for ``src`` at ``msg.seqno - 1`` (None if a limit refuses it)."""
    cfg = m.config
    old = m.recv.get(src)
    offset = reopen_offset(m, src, msg.conn_id, msg.seqno - 1)
    if old is None and len(m.recv) >= cfg.max_receive_entries and not _evict_stalest(m, now=now):
        m.stats.receive_table_full += 1
        return None
    if old is not None:
        if now - old.created < cfg.min_window_replace_interval:
            m.stats.replace_refused += 1
            return None
        m.stats.windows_replaced += 1
        m.held.release(old)
    window: Table[DataMsg] = Table(
        offset,
        msgs_per_row=cfg.xmit_table_msgs_per_row,
        initial_rows=cfg.xmit_table_num_rows,
        max_span=cfg.max_receive_span,
    )
    entry = RecvEntry(msg.conn_id, window, now=now)
    if old is not None:
        entry.stale_since = old.stale_since  # a new window of the same peer is no progress
    if m.evicted:
        m.evicted.pop(src, None)
    m.recv[src] = entry
    return entry


def _evict_stalest(m: Member[P], *, now: int) -> bool:
    """Make room as ``remove_receive_connection`` would: pending ACKs flushed, then the entry gone."""

    def remove(peer: P) -> None:
        m.send_pending_acks()
        m.remove_recv(peer, Event.REMOVE, now=now)

    return evict_stalest(m, remove, now=now)


def on_data_from_self(m: Member[P], msg: DataMsg, *, now: int) -> None:
    """DATA from oneself (spec ``on_data_from_self``, decision 26): the send window for oneself is
    the delivery window. No entry: dropped. Else the entry is touched (CLOSING -> OPEN), an OOB
    message still stored is delivered at once, then every stored message (HA + 1 .. HS: no gaps, each
    was stored when sent) is delivered in order but for that one, and purged: nothing is acknowledged."""
    me = m.me
    entry = m.send.get(me) if me is not None else None
    if entry is None or me is None:
        m.stats.data_without_window += 1
        return
    entry.touch(now=now)
    window, seqno = entry.window, msg.seqno
    early = msg.oob and window.hd < seqno <= window.hr and seqno in entry.oob
    if early:
        m.deliver(me, window.get(seqno) or b"")
    for stored in range(window.hd + 1, window.hr + 1):
        if not (early and stored == seqno) and stored not in entry.dont_loopback:  # decision 27: never delivered
            m.deliver(me, window.get(stored) or b"")
    if window.hr > window.hd:
        window.purge(window.hr, force=True)
    entry.oob.clear()
    entry.dont_loopback.clear()


def dont_loopback_added(entry: SendEntry) -> None:
    """Spec ``dont_loopback_added`` (decision 27): after a DONT_LOOPBACK add to the window for
    oneself, HA moves over the DONT_LOOPBACK messages from HA + 1 on (removed, never delivered)."""
    window = entry.window
    upto = window.hd
    while upto < window.hr and upto + 1 in entry.dont_loopback:
        upto += 1
    if upto > window.hd:
        window.purge(upto, force=True)
        entry.oob = {s for s in entry.oob if s > upto}
        entry.dont_loopback = {s for s in entry.dont_loopback if s > upto}


def on_ack(m: Member[P], src: P, msg: AckMsg) -> None:
    """ACK (spec ``_on_ack``): matching conn_id and newer timestamp -> forced purge to the seqno."""
    entry = m.send.get(src)
    if entry is None or entry.conn_id != msg.conn_id:
        m.stats.foreign_acks += 1
        return
    if not m.accept_timestamp(entry, msg.timestamp):
        return
    upto = min(msg.seqno, entry.highest_sent)
    if upto > entry.acked:
        entry.window.purge(upto, force=True)
        if entry.oob:
            entry.oob = {seqno for seqno in entry.oob if seqno > upto}
        if entry.dont_loopback:
            entry.dont_loopback = {seqno for seqno in entry.dont_loopback if seqno > upto}


def on_send_first_seqno(m: Member[P], src: P, msg: SendFirstSeqnoMsg) -> None:
    """SEND_FIRST_SEQNO (spec ``_on_send_first_seqno``): resend the lowest unacked as first."""
    entry = m.send.get(src)
    if entry is None or not m.accept_timestamp(entry, msg.timestamp):
        return
    if entry.acked == entry.highest_sent:
        return  # nothing unacknowledged
    lowest = entry.acked + 1
    m.resend(src, entry, (lowest,), resend_budget(m, entry), marked=lowest)


def on_xmit_req(m: Member[P], src: P, msg: XmitReqMsg) -> None:
    """XMIT_REQ (spec ``_on_xmit_req``): resend every listed seqno still stored, original header.

    No conn_id check (decision 20): served from the current send window.
    """
    entry = m.send.get(src)
    if entry is None:
        return
    cap = m.config.max_xmit_served
    seqnos, asked = msg.between(entry.acked, entry.highest_sent, cap)
    if asked > cap:
        m.stats.xmit_seqnos_ignored += asked - cap
    m.resend(src, entry, seqnos, resend_budget(m, entry))


def on_close(m: Member[P], src: P, msg: CloseMsg, *, now: int) -> None:
    """CLOSE (spec ``_on_close``): remove the receive entry of ``src`` if it has that conn_id."""
    entry = m.recv.get(src)
    if entry is not None and entry.conn_id == msg.conn_id:
        m.remove_recv(src, Event.CLOSE_MSG, now=now)


def on_batch(m: Member[P], src: P, msgs: list[DataMsg], *, now: int) -> None:
    """A batch of DATA from ``src``, all of one mode (spec ``on_batch``, decision 25: JGroups'
    ``up(MessageBatch)`` and ``handleBatchReceived``).

    A first DATA anywhere in the batch finds or creates the entry; a non-first one is cached only
    while ``src`` has no entry at all; another connection's DATA are dropped with one rate-limited
    SEND_FIRST_SEQNO. With an entry, the cache is drained into it (``addQueuedMessages``), then the
    batch's DATA of its connection are added, one ACK decision made (at once if there are at least
    ``ack_threshold`` of them, else pending) and the in-order run delivered. The limits of ``on_data``
    apply to every DATA (a refused first DATA leaves the entry as it was)."""
    caching = not m.variant.no_message_cache
    entry = m.recv.get(src)
    conn_ids: list[int] = []
    kept: list[DataMsg] = []
    opened = False  # a window this batch created: its deliveries are no progress (receive_evict_idle)
    for msg in msgs:
        if msg.seqno == 0:
            m.stats.bad_seqno += 1
            continue
        kept.append(msg)
        if msg.conn_id not in conn_ids:
            conn_ids.append(msg.conn_id)
        if msg.first:
            if entry is None or entry.conn_id != msg.conn_id:
                made = _open_window(m, src, msg, now=now)
                entry, opened = (entry, opened) if made is None else (made, True)
        elif entry is None:
            m.stats.data_without_window += 1
            if caching:
                m.cache.add(src, msg, now=now)
    if not kept:
        return
    if entry is None:
        m.request_first_seqno(src, now=now)
        return
    if conn_ids != [entry.conn_id]:  # retainAll dropped another connection's DATA
        m.stats.data_without_window += sum(1 for msg in kept if msg.conn_id != entry.conn_id)
        m.request_first_seqno(src, now=now)
    queued = _drain_cache(m, src, entry) if caching else []
    for added in queued:  # addQueuedMessages: addMessage each (an OOB one delivered when added)
        _add_only(m, src, entry, added, now=now, cached=True)
    ours = [msg for msg in kept if msg.conn_id == entry.conn_id]
    if ours:
        _batch_received(m, src, entry, ours, now=now, opened=opened)


def _batch_received(m: Member[P], src: P, entry: RecvEntry, ours: list[DataMsg], *, now: int, opened: bool) -> None:
    """handleBatchReceived: every DATA added (the OOB ones delivered as added), one ACK decision,
    then one drain (spec ``_batch_received``)."""
    hd, pending = entry.window.hd, entry.ack_pending
    delivered = False
    for msg in ours:
        delivered = _add_only(m, src, entry, msg, now=now, cached=False) or delivered
    entry.touch(now=now)  # update(entry, batch_size), whatever was added
    items = entry.window.remove_many()
    if items:
        m.held.account(entry, items[0], items, held=False)  # items[0] (at hd + 1) was never held
        delivered = _deliver_drained(m, src, items) or delivered
    if delivered and not opened:
        entry.stale_since = now  # progress (receive_evict_idle)
    if len(ours) >= m.config.ack_threshold:
        entry.ack_pending = pending  # sendAck is the protocol's: the entry's flag stays as it was
        m.emit(src, AckMsg(entry.window.hd, entry.conn_id, m.next_timestamp()))
    elif m.variant.ack_only_new:
        entry.ack_pending = pending or entry.window.hd > hd
    else:
        entry.ack_pending = True
