"""Handlers for the five UNICAST2 message types (UNICAST2.up: handleDataReceived and friends).

This module owns what a member does with one *decoded* message from a peer, and nothing about
bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors the spec
function named in its docstring, statement for statement; the additions are JGroups' byte-triggered
STABLE (``max_bytes``, which the spec leaves out) and the hostile-input limits of ``Config``, each
counted in ``Stats`` when it bites:

- DATA with seqno 0 is dropped (seqnos start at 1; a window at offset -1 has no encoding).
- DATA more than ``max_receive_span`` above a window's low is dropped before it touches the entry.
- A DATA that would create receive entry number ``max_receive_entries + 1`` is dropped, unless
  the entry longest without progress has gone ``receive_evict_idle`` without (evicted).
- One XMIT_REQ, SEND_FIRST_SEQNO or STABLE makes us resend at most ``max_xmit_served`` messages
  (the first ones asked for; found without looking at the others, so the work is bounded by what
  is served, not by what is asked), and at most ``resend_factor`` times its size in bytes (or one
  message), within ``max_resend_bytes`` per peer and interval (``impl.common.ResendBudget``).
"""

from __future__ import annotations

from impl.common import P, evict_stalest, held_size, reopen_offset, resend_budget, will_hold
from impl.unicast2.codec import NO_CONN, AckMsg, DataMsg, SendFirstSeqnoMsg, StableMsg, WireMsg, XmitReqMsg
from impl.unicast2.state import Member, RecvEntry, SendEntry
from impl.window import Table, WindowSpanError


def on_message(m: Member[P], src: P, msg: WireMsg, *, now: int) -> None:
    """Dispatch one decoded message from ``src`` (spec ``on_receive``). What an answer may resend
    is bounded by the datagram's size (``resend_factor``), which the engine puts in
    ``m.answering`` first."""
    if isinstance(msg, DataMsg):
        on_data(m, src, msg, now=now)
    elif isinstance(msg, XmitReqMsg):
        on_xmit_req(m, src, msg)
    elif isinstance(msg, SendFirstSeqnoMsg):
        on_send_first_seqno(m, src, msg)
    elif isinstance(msg, StableMsg):
        on_stable(m, src, msg)
    else:
        on_ack(m, src, msg)


def same_connection(m: Member[P], entry: RecvEntry, msg: DataMsg) -> bool:
    """Spec ``same_connection``: does ``msg`` belong to ``entry``'s window? (A header without
    conn_id, in the variants, belongs to whatever window there is.)"""
    variant = m.variant
    return variant.no_conn_ids or msg.conn_id == entry.conn_id or (
        variant.conn_id_first_only and not msg.first and msg.conn_id == NO_CONN)


def on_data(m: Member[P], src: P, msg: DataMsg, *, now: int) -> None:
    """DATA (spec ``_on_data``): find or create the receive entry, add, deliver in order, and ACK
    a first DATA (new or duplicate, JGRP-1563).

    A first DATA with no entry or another conn_id opens a window just below its seqno (replacing
    the old one); a non-first one without a matching entry is dropped and answered by a
    SEND_FIRST_SEQNO (rate limited at sync_min_interval > 0: ``Member.request_first_seqno``).
    Variant no_conn_ids: a missing entry expects seqno 1.
    """
    seqno = msg.seqno
    if seqno == 0:
        m.stats.bad_seqno += 1
        return
    entry = m.recv.get(src)
    opened: int | None = None  # a new window: the highest seqno a resync knew the sender had (or 0)
    if entry is None or not same_connection(m, entry, msg):
        wanted = m.sync_wanted.get(src)
        opened = wanted[0] if wanted is not None else 0
        if m.variant.no_conn_ids:
            if seqno > m.config.max_receive_span:
                m.stats.beyond_window += 1
                return
            entry = _open_window(m, src, NO_CONN, 0, now=now)
        elif not msg.first:
            m.stats.data_without_window += 1
            m.request_first_seqno(src, seqno, now=now)
            return
        else:
            entry = _open_window(m, src, msg.conn_id, seqno - 1, now=now)
        if entry is None:
            return
    held = will_hold(entry.window, seqno)
    if held and not m.held.admits(entry.held_bytes, held_size(msg)):
        m.stats.held_bytes_full += 1
        return
    try:
        items = _add(m, src, entry, msg)
    except WindowSpanError:
        m.stats.beyond_window += 1  # only an existing window can get here: seqno - low > 1
        return
    m.held.account(entry, msg, items, held=held)
    if items:
        m.deliver_all(src, items)
        if opened is None:
            entry.stale_since = now  # progress (receive_evict_idle)
    entry.touched = now
    if msg.first and not m.variant.no_first_ack:
        m.emit(src, AckMsg(seqno, msg.conn_id))
    if opened and opened > entry.window.hr:  # the sender has more than the window got: its tail now,
        m.send_stable(src, entry)           # not a stable_interval later (sync_min_interval > 0 only)


def _add(m: Member[P], src: P, entry: RecvEntry, msg: DataMsg) -> list[DataMsg]:
    """Table.add then removeMany (spec ``_add_and_deliver``); with max_bytes, a window that has
    received that many payload bytes sends STABLE(hd, hr) in between, as JGroups does."""
    window = entry.window
    max_bytes = m.config.max_bytes
    if max_bytes == 0:
        return window.add_remove_many(msg.seqno, msg)
    if window.add(msg.seqno, msg) and msg.payload:
        entry.received_bytes += len(msg.payload)
        if entry.received_bytes >= max_bytes:
            entry.received_bytes = 0
            m.stats.stables_by_bytes += 1
            m.send_stable(src, entry)
    return window.remove_many()


def _open_window(m: Member[P], src: P, conn_id: int, offset: int, *, now: int) -> RecvEntry | None:
    """A new receive entry for ``src`` at ``offset`` (None if max_receive_entries refuses it)."""
    cfg = m.config
    old = m.recv.get(src)
    offset = reopen_offset(m, src, conn_id, offset)
    if old is None and len(m.recv) >= cfg.max_receive_entries and not _evict_stalest(m, now=now):
        m.stats.receive_table_full += 1
        return None
    if old is not None:
        m.stats.windows_replaced += 1
        m.held.release(old)
    window: Table[DataMsg] = Table(offset, msgs_per_row=cfg.xmit_table_msgs_per_row,
                                   initial_rows=cfg.xmit_table_num_rows, max_span=cfg.max_receive_span)
    entry = m.recv[src] = RecvEntry(conn_id, window, now=now)
    if m.evicted:
        m.evicted.pop(src, None)
    if old is not None:
        entry.stale_since = old.stale_since  # a new window of the same peer is no progress
    if m.sync_sent:  # a new window answers the resync asked for, if any: its table slots are free
        m.sync_sent.pop(src, None)
        m.sync_wanted.pop(src, None)
    return entry


def _evict_stalest(m: Member[P], *, now: int) -> bool:
    """Make room as the reaper does: a final STABLE, then the entry gone."""
    return evict_stalest(m, m.remove_receiver, now=now)


def on_xmit_req(m: Member[P], src: P, msg: XmitReqMsg) -> None:
    """XMIT_REQ (spec ``_on_xmit_req``): resend every listed seqno still stored, with its own
    header (no conn_id check: the request carries none)."""
    entry = m.send.get(src)
    if entry is None:
        return
    seqnos, asked = msg.between(entry.acked, entry.highest_sent, m.config.max_xmit_served)
    _served(m, asked)
    m.resend(src, entry, seqnos, resend_budget(m, entry))


def _served(m: Member[P], asked: int) -> int:
    """How many of ``asked`` resends one message may cause (max_xmit_served; the rest counted)."""
    cap = m.config.max_xmit_served
    if asked > cap:
        m.stats.xmit_seqnos_ignored += asked - cap
        return cap
    return asked


def on_send_first_seqno(m: Member[P], src: P, msg: SendFirstSeqnoMsg) -> None:
    """SEND_FIRST_SEQNO (spec ``_on_send_first_seqno``): resend every stored message up to the
    triggering seqno, the lowest as a copy marked first (JGRP-1874's storm).
    fix_sync_lowest_only: the lowest only."""
    entry = m.send.get(src)
    if entry is None or not m.accept_timestamp(entry, msg.timestamp):
        return
    lowest = entry.acked + 1
    upto = lowest if m.variant.fix_sync_lowest_only else min(msg.seqno, entry.highest_sent)
    if lowest > entry.highest_sent or upto < lowest:
        return
    upto = lowest - 1 + _served(m, upto - lowest + 1)
    m.resend(src, entry, range(lowest, upto + 1), resend_budget(m, entry), marked=lowest)


def on_stable(m: Member[P], src: P, msg: StableMsg) -> None:
    """STABLE (spec ``_on_stable``): on the same connection, purge up to hd (forced: clamped to
    the highest sent), then resend every stored message from hr up to the highest sent."""
    entry = m.send.get(src)
    if entry is None:
        m.stats.foreign_stables += 1
        return
    variant = m.variant
    no_conn = variant.no_conn_ids or (variant.conn_id_first_only and msg.conn_id == NO_CONN)
    if not no_conn and msg.conn_id != entry.conn_id:
        m.stats.foreign_stables += 1
        return
    if not m.accept_timestamp(entry, msg.timestamp):
        return
    upto = min(msg.hd, entry.highest_sent)
    if upto > entry.acked:
        entry.window.purge(upto, force=True)
    _resend_above(m, src, entry, msg.hr)


def _resend_above(m: Member[P], src: P, entry: SendEntry, hr: int) -> None:
    """The stored messages max(hr, HA + 1) .. HS, if HS > hr (a lost last message)."""
    highest = entry.highest_sent
    if highest <= hr:
        return
    start = max(hr, entry.acked + 1)
    end = start - 1 + _served(m, highest - start + 1)
    m.resend(src, entry, range(start, end + 1), resend_budget(m, entry))


def on_ack(m: Member[P], src: P, msg: AckMsg) -> None:
    """ACK (spec ``_on_ack``): the first message of the connection arrived; stop resending it."""
    entry = m.send.get(src)
    if entry is None or (msg.conn_id != entry.conn_id and not m.variant.no_conn_ids):
        m.stats.foreign_acks += 1
        return
    entry.ack_received = True
