"""Handlers for UNICAST4's five message types (ReliableUnicast.up: handleDataReceived and friends),
a batch of DATA (up(MessageBatch)), and the application's send (down, send) with its blocked sends.

This module owns what a member does with one *decoded* message and with one application send;
nothing about bytes (``engine.py`` decodes) or time-driven work (``tasks.py``). Each handler mirrors
the spec function named in its docstring; the only additions are the hostile-input limits of
``Config``, each counted in ``Stats`` when it bites, each acting like a loss:

- DATA with seqno 0 is dropped (seqnos start at 1).
- A first DATA that would create receive entry number ``max_receive_entries + 1`` is dropped,
  unless the entry longest without progress can be evicted (``receive_evict_idle``,
  ``impl.common.evict_stalest``: by progress, not by touch; what an evicted window delivered is
  never delivered again).
- A DATA that would be held undelivered past ``max_window_bytes`` / ``max_receive_bytes`` is
  dropped before it is counted towards the ACK.
- An XMIT_REQ is served for at most ``max_xmit_served`` seqnos; an answer resends at most
  ``resend_factor`` times the request's size (``impl.common.ResendBudget``).
"""

from __future__ import annotations

from collections.abc import Sequence

from impl.common import (
    LocalProtocolError,
    SendWindowFull,
    evict_stalest,
    held_size,
    next_conn_id,
    reopen_offset,
    resend_all,
    resend_budget,
)
from impl.fixed_window import MAX_SEQNO, AddStatus
from impl.unicast4 import loopback
from impl.unicast4.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg, encode_data
from impl.unicast4.state import OPEN, Member, P, RecvEntry, SendEntry, SendStatus


# ---------------------------------------------------------------------------------------------
# The application's send (spec on_send, _add_and_send, _on_send_thread).
def send(m: Member[P], dst: P, payload: bytes, *, now: int, oob: bool = False,
         dont_loopback: bool = False) -> tuple[int, SendStatus]:
    """Spec ``on_send``: take the entry's next seqno (opening a connection if there is none); add
    and send it if the window has room, else hold it blocked, or (variant drop_dont_block with
    DONT_BLOCK) drop it; an OOB send's seqno, and a DONT_LOOPBACK send's to oneself, is remembered
    while stored or blocked. Limits and an unencodable payload raise before any state changes."""
    cfg = m.config
    entry = m.send.get(dst)
    seqno = 1 if entry is None else entry.seqno + 1
    conn_id = m.next_conn_id if entry is None else entry.conn_id
    if seqno > MAX_SEQNO:
        raise LocalProtocolError(f"send to {dst!r}: seqno {seqno} beyond 2**63 - 1")
    try:
        encode_data(seqno, conn_id, seqno == 1, payload, cfg.codec_limits)
    except ValueError as exc:  # EncodeError: too big for codec_limits
        raise LocalProtocolError(f"send to {dst!r}: {exc}") from exc
    full = entry is not None and entry.window.full_for(seqno)
    if full and not cfg.drops_when_full:
        if sum(len(e.blocked) for e in m.send.values()) >= cfg.max_blocked_sends:
            raise SendWindowFull(f"send to {dst!r}: {cfg.max_blocked_sends} sends blocked (max_blocked_sends)")
        if m.blocked_bytes + len(payload) > cfg.max_blocked_bytes:
            raise SendWindowFull(f"send to {dst!r}: blocked sends would hold more than {cfg.max_blocked_bytes} "
                                 "bytes (max_blocked_bytes)")
    if entry is None:
        entry = m.send[dst] = SendEntry(m.next_conn_id, cfg.capacity, now=now)
        m.next_conn_id = next_conn_id(m.next_conn_id)
        if cfg.max_retransmit_time > 0 and dst not in m.members:
            m.age_out.setdefault(dst, now + cfg.max_retransmit_time)
    entry.seqno = seqno
    if cfg.drops_when_full and full:
        m.stats.sends_blocked += 1
        entry.window.num_blockings += 1
        m.stats.sends_dropped += 1
        return seqno, SendStatus.DROPPED
    if oob:
        entry.oob.add(seqno)
    if dont_loopback and dst == m.me:  # spec decision 13: stored, never looped back
        entry.dont_loopback.add(seqno)
    if not full:
        add_and_send(m, dst, entry, seqno, payload, now=now)
        return seqno, SendStatus.SENT
    m.stats.sends_blocked += 1
    entry.window.num_blockings += 1
    entry.blocked[seqno] = payload
    m.blocked_bytes += len(payload)
    return seqno, SendStatus.BLOCKED


def add_and_send(m: Member[P], dst: P, entry: SendEntry, seqno: int, payload: bytes, *, now: int) -> None:
    """Spec ``_add_and_send``: store, pass down, reopen a CLOSING entry, refresh its age. A
    DONT_LOOPBACK message to oneself goes nowhere (the transport never loops it back); its add's
    remove filter and purge may free room (spec decision 13)."""
    status = entry.window.add(seqno, payload, block=True)
    assert status is AddStatus.ADDED, status
    m.set_state(entry, OPEN, now=now)
    entry.touched = now
    if seqno in entry.dont_loopback:
        if loopback.dont_loopback_added(entry) and entry.blocked:
            resume(m, dst, entry, now=now)
        return
    m.outbox.append((dst, encode_data(seqno, entry.conn_id, seqno == 1, payload, m.config.codec_limits,
                                      seqno in entry.oob)))
    m.stats.datagrams_sent += 1


def resume(m: Member[P], dst: P, entry: SendEntry, *, now: int) -> None:
    """The blocked sends of ``entry`` that now have room wake and go on, in seqno order (when the
    engine resumes them itself: ``Config.resume_blocked_sends``)."""
    if not m.config.resume_blocked_sends:
        return
    for seqno in sorted(entry.blocked):
        if seqno not in entry.blocked:  # sent by a resume nested in this one (a DONT_LOOPBACK add's purge)
            continue
        if entry.window.full_for(seqno):
            return
        send_blocked(m, dst, seqno, now=now)


def send_blocked(m: Member[P], dst: P, seqno: int, *, now: int) -> None:
    """Spec ``_on_send_thread``: the send blocked with ``seqno`` (it has room) is added and sent."""
    entry = m.send[dst]
    payload = entry.blocked.pop(seqno)
    m.blocked_bytes -= len(payload)
    add_and_send(m, dst, entry, seqno, payload, now=now)


# ---------------------------------------------------------------------------------------------
# Messages (spec on_receive).
def on_message(m: Member[P], src: P, msg: WireMsg, *, now: int) -> None:
    """Dispatch one decoded message from ``src``."""
    if isinstance(msg, DataMsg):
        on_data(m, src, msg, now=now)
    elif isinstance(msg, AckMsg):
        on_ack(m, src, msg, now=now)
    elif isinstance(msg, SendFirstSeqnoMsg):
        on_send_first_seqno(m, src, msg)
    elif isinstance(msg, XmitReqMsg):
        on_xmit_req(m, src, msg)
    else:
        on_close(m, src, msg)


def _receive_entry(m: Member[P], src: P, msg: DataMsg, *, now: int,
                   cached: Sequence[DataMsg] = ()) -> RecvEntry | None:
    """Spec ``receive_entry`` (getReceiverEntry, compareConnIds): the entry ``msg`` goes to, or None
    (then ``msg``, or the batch's DATA ``cached``, go into the message cache)."""
    entry = m.recv.get(src)
    if entry is not None and entry.conn_id == msg.conn_id:
        return entry
    if entry is not None and msg.conn_id < entry.conn_id and not m.variant.any_conn_id:
        m.stats.lower_conn_id += 1  # cached, and dropped for the mismatch at the next drain
        for queued in cached or (msg,):
            m.cache_add(src, queued)
        return None
    if not msg.first:
        m.stats.data_without_window += 1
        m.request_first_seqno(src, now=now)
        for queued in cached or (msg,):
            m.cache_add(src, queued)
        return None
    offset = reopen_offset(m, src, msg.conn_id, msg.seqno - 1)
    if entry is None and len(m.recv) >= m.config.max_receive_entries and not _evict_stalest(m, now=now):
        m.stats.receive_table_full += 1
        return None
    if entry is not None:
        m.stats.windows_replaced += 1
        m.remove_recv(src)
    created = m.recv[src] = RecvEntry(msg.conn_id, offset, m.config.capacity, now=now)
    if entry is not None:
        created.stale_since = entry.stale_since  # a new window of the same peer is no progress
    if m.evicted:
        m.evicted.pop(src, None)
    return created


def _evict_stalest(m: Member[P], *, now: int) -> bool:
    def remove(peer: P) -> None:
        m.send_pending_acks()
        m.remove_recv(peer)

    return evict_stalest(m, remove, now=now)


def on_data(m: Member[P], src: P, msg: DataMsg, *, now: int) -> None:
    """Spec ``_on_data``: find the entry (or cache the DATA), drain the cache (the cached DATA of the
    entry's connection added first), add the DATA, each add counting 1; deliver the run and count
    it; every ACK goes before the batch it acknowledges is delivered."""
    if msg.seqno == 0:
        m.stats.bad_seqno += 1
        return
    if m.me is not None and src == m.me:  # spec decision 12: the send window for oneself delivers
        drained = loopback.on_data_from_self(m, src, msg, now=now)
        if drained is not None and drained.blocked:
            resume(m, src, drained, now=now)
        return
    before = m.recv.get(src)
    entry = _receive_entry(m, src, msg, now=now)
    if entry is None:
        return
    for added in (*_drain_cache(m, src, entry), msg):
        _add_message(m, src, entry, added, now=now)
    _remove_and_deliver(m, src, entry, before, now=now)


def _drain_cache(m: Member[P], src: P, entry: RecvEntry) -> list[DataMsg]:
    """addQueuedMessages: the cached DATA of ``entry``'s connection (the others are dropped)."""
    return [q for q in m.cache_drain(src) if q.conn_id == entry.conn_id] if src in m.cache else []


def _remove_and_deliver(m: Member[P], src: P, entry: RecvEntry, before: RecvEntry | None, *, now: int) -> None:
    """Spec ``remove_and_deliver``: hd moves over the run; its regular DATA are counted and
    delivered (the ACK, if due, first), OOB placeholders passed over (variant oob_redelivers:
    delivered again)."""
    items = entry.window.remove_many(True)
    if not items:
        return
    if entry.held_bytes:  # some of them had been held above a gap: count what is still held
        still = sum(held_size(d) for d in map(entry.window.get, entry.window.seqnos()) if d is not None)
        m.held.total += still - entry.held_bytes
        entry.held_bytes = still
    if entry is before:
        entry.stale_since = now  # hd moved: progress (receive_evict_idle); a window's creating DATA is none
    if not m.variant.oob_redelivers:
        items = [d for d in items if not d.oob]
    if items:
        m.count_acks(src, entry, len(items))
        m.deliver_all(src, items)


def _add_message(m: Member[P], src: P, entry: RecvEntry, msg: DataMsg, *, now: int) -> None:
    """addMessage: reopen, add (a DATA that would be held past the byte limits is dropped like a
    loss, before it counts; an OOB one the window took is delivered at once), count 1."""
    if _add(m, src, entry, msg, now=now) is not None:
        m.count_acks(src, entry, 1)


def _add(m: Member[P], src: P, entry: RecvEntry, msg: DataMsg, *, now: int) -> bool | None:
    """Reopen and add ``msg`` (an OOB DATA as its placeholder, JGroups' DUMMY_OOB_MSG, delivered at
    once if the window took it): whether the window took it, or None if a byte limit dropped it
    (like a loss: nothing changes)."""
    window = entry.window
    stored = msg if not msg.oob or m.variant.oob_redelivers else DataMsg(msg.seqno, msg.conn_id, False, b"", True)
    # stored above a gap, undelivered (a receive window's low is its hd)
    held = msg.seqno > window.hd + 1 and not window.full_for(msg.seqno) and window.get(msg.seqno) is None
    size = held_size(stored)
    if held and not m.held.admits(entry.held_bytes, size):
        m.stats.held_bytes_full += 1  # as if lost: retransmission brings it again
        return None
    m.set_state(entry, OPEN, now=now)
    entry.touched = now
    status = window.add(msg.seqno, stored)
    if status is AddStatus.BEYOND_CAPACITY:
        m.stats.beyond_capacity += 1
    if held and status is AddStatus.ADDED:
        entry.held_bytes += size
        m.held.total += size
    if status is AddStatus.ADDED and msg.oob:
        m.deliver(src, msg.payload)
    return status is AddStatus.ADDED


def on_batch(m: Member[P], src: P, batch: list[DataMsg], *, now: int) -> None:
    """Spec ``on_batch`` (up(MessageBatch), handleBatchReceived): DATA of one OOB mode from ``src``.
    The highest conn_id's DATA are kept (the others dropped), the connection decided by the lowest
    seqno's (cached whole if none); the cache drained first (each add counted); then every DATA
    added in one go, uncounted, the ACK pending; an OOB batch's added DATA delivered and counted at
    once; one drain."""
    data = [d for d in batch if d.seqno != 0]
    m.stats.bad_seqno += len(batch) - len(data)
    if not data:
        return
    highest = max(d.conn_id for d in data)
    ours = [d for d in data if d.conn_id == highest]
    m.stats.batch_other_conn_id += len(data) - len(ours)
    lowest = ours[0]
    for d in ours:  # getLowestSeqno: the first DATA with the lowest seqno
        if d.seqno < lowest.seqno:
            lowest = d
    before = m.recv.get(src)
    entry = _receive_entry(m, src, lowest, now=now, cached=ours)
    if entry is None:
        return
    for added in _drain_cache(m, src, entry):
        _add_message(m, src, entry, added, now=now)
    oob_batch = [d for d in ours if _add(m, src, entry, d, now=now) and d.oob]
    m.set_state(entry, OPEN, now=now)
    entry.touched = now
    entry.ack_pending = True
    if oob_batch:
        m.count_acks(src, entry, len(oob_batch))
    _remove_and_deliver(m, src, entry, before, now=now)


def on_ack(m: Member[P], src: P, msg: AckMsg, *, now: int) -> None:
    """Spec ``_on_ack``: the entry's conn_id and a newer timestamp, then a forced purge; the blocked
    sends may go on."""
    entry = m.send.get(src)
    if entry is None or entry.conn_id != msg.conn_id:
        m.stats.foreign_acks += 1
        return
    if not m.accept_timestamp(entry, msg.timestamp):
        return
    purged = entry.window.purge(msg.seqno, force=True)
    if purged:
        loopback.forget_below(entry)
    if purged and entry.blocked:
        resume(m, src, entry, now=now)


def on_send_first_seqno(m: Member[P], src: P, msg: SendFirstSeqnoMsg) -> None:
    """Spec ``_on_send_first_seqno``: a copy of low+1 marked first, if stored."""
    entry = m.send.get(src)
    if entry is None or not m.accept_timestamp(entry, msg.timestamp):
        return
    lowest = entry.window.low + 1
    if entry.window.get(lowest) is not None:
        _resend(m, src, entry, [lowest], marked=lowest)


def on_xmit_req(m: Member[P], src: P, msg: XmitReqMsg) -> None:
    """Spec ``_on_xmit_req``: every listed seqno stored in the current send window, original header."""
    entry = m.send.get(src)
    if entry is None:
        return
    cap = m.config.max_xmit_served
    seqnos, asked = msg.between(entry.acked, entry.highest_sent, cap)
    if asked > cap:
        m.stats.xmit_seqnos_ignored += asked - cap
    _resend(m, src, entry, [s for s in seqnos if entry.window.get(s) is not None])


def _resend(m: Member[P], dst: P, entry: SendEntry, seqnos: list[int], *, marked: int = 0) -> None:
    window, conn_id, limits = entry.window, entry.conn_id, m.config.codec_limits

    def encoded(seqno: int) -> bytes:
        payload = window.get(seqno)
        assert payload is not None, seqno
        return encode_data(seqno, conn_id, seqno == 1 or seqno == marked, payload, limits, seqno in entry.oob)

    resend_all(m, dst, seqnos, encoded, resend_budget(m, entry))


def on_close(m: Member[P], src: P, msg: CloseMsg) -> None:
    """Spec ``_on_close``: remove the receive entry of ``src`` if it has that conn_id."""
    entry = m.recv.get(src)
    if entry is not None and entry.conn_id == msg.conn_id:
        m.remove_recv(src)
