"""What every sans-IO engine shares: errors, peer addresses, wrap-around counters, the spec payload
mapping and the one-line ``Config`` errors.

This module owns no protocol behaviour. ``impl/unicast3`` and ``impl/unicast2`` import these names
(and ``impl/unicast3`` re-exports them under its old module paths).

- ``EngineStats``: the counters every engine keeps.
- Errors: ``ProtocolError`` is abstract; ``LocalProtocolError`` is the caller's misuse (the only
  kind an engine raises: whatever a peer sends is dropped and counted, never raised).
- Counters that wrap like the wire formats require (digest 5.1, 5.2): timestamps in
  1 .. 2**31 - 1 with serial-number comparison, conn_ids in 0 .. 32767.
- Resends in answer to a peer's datagram: ``ResendBudget`` and ``resend_all`` (the amplification
  bound, ``resend_factor`` and ``max_resend_bytes`` of both engines' ``Config``).
- Payloads: the specs' payloads are ints (the n-th message to a peer is payload n); engines carry
  bytes. Tests and the harnesses send ``spec_payload(n)`` and read deliveries with
  ``payload_number``.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from impl.window import Table
from impl.wire import MAX_CONN_ID, MAX_TIMESTAMP, DecodeError


# ---------------------------------------------------------------------------------------------
# Errors.
class ProtocolError(Exception):
    """Base of the engines' errors; never raised for anything a peer sends (that is dropped)."""

    def __init__(self, message: str) -> None:
        if type(self) is ProtocolError:
            raise TypeError("ProtocolError is abstract; raise LocalProtocolError or a subclass")
        super().__init__(message)


class LocalProtocolError(ProtocolError):
    """The caller misused the engine (bad argument, time going backwards, illegal hook call)."""


class SendWindowFull(LocalProtocolError):
    """``send`` would exceed ``Config.max_send_window`` unacknowledged messages to one peer."""


# ---------------------------------------------------------------------------------------------
# Peer addresses.
class PeerAddress(Protocol):
    """What a peer address must be: hashable (dict key) and ordered (deterministic iteration)."""

    def __hash__(self) -> int: ...
    def __lt__(self, other: Any, /) -> bool: ...


P = TypeVar("P", bound=PeerAddress)


class MemberOutputs(Generic[P]):
    """What an engine's caller drains and reads, the same for the multicast engines: ``self._m``
    (the engine's member state) holds the ``outbox`` and ``deliveries`` lists of (peer, bytes),
    ``me`` and ``members``."""

    _m: Any

    def datagrams_to_send(self) -> list[tuple[P, bytes]]:
        """Datagrams queued since the last call, oldest first, as (destination, bytes)."""
        out: list[tuple[P, bytes]] = self._m.outbox
        self._m.outbox = []
        return out

    def deliveries(self) -> list[tuple[P, bytes]]:
        """Messages for the application since the last call, in delivery order, as (sender, payload)."""
        out: list[tuple[P, bytes]] = self._m.deliveries
        self._m.deliveries = []
        return out

    @property
    def me(self) -> P:
        me: P = self._m.me
        return me

    @property
    def members(self) -> frozenset[P]:
        members: frozenset[P] = self._m.members
        return members


def check_time(now: object, last: int | None) -> int:
    """``now`` if it is an int not before ``last`` (None: the first reading), else
    ``LocalProtocolError``: engines only ever subtract two readings of the caller's clock."""
    if type(now) is not int:
        raise LocalProtocolError(f"now must be an int (milliseconds), got {now!r}")
    if last is not None and now < last:
        raise LocalProtocolError(f"time went backwards: now={now} after {last}")
    return now


# ---------------------------------------------------------------------------------------------
# Counters that wrap.
TS_MODULUS = MAX_TIMESTAMP + 1  # 2**31: timestamps live in 0 .. 2**31 - 1
_TS_HALF = TS_MODULUS // 2


def ts_newer(ts: int, last: int) -> bool:
    """Serial-number comparison in 31 bits (RFC 1982, digest 5.2): ``ts`` is after ``last``.

    Equals ``ts > last`` (the specs' comparison) while the two are less than 2**30 apart and no
    wrap lies between them; across a wrap, a small new value is still newer than a large old one.
    """
    return 0 < (ts - last) % TS_MODULUS < _TS_HALF


@dataclass(slots=True)
class Timestamper:
    """The per-engine timestamp counter: 1, 2, ..., 2**31 - 1, 1, ...

    0 is skipped when wrapping because a ``last_ts`` of 0 means "no timestamp yet" (accept any).
    """

    last: int = 0

    def next(self) -> int:
        self.last = self.last % MAX_TIMESTAMP + 1
        return self.last


def next_conn_id(conn_id: int) -> int:
    """The conn_id after ``conn_id``: +1, wrapping to 0 after 32767 (digest 5.1)."""
    return 0 if conn_id >= MAX_CONN_ID else conn_id + 1


# ---------------------------------------------------------------------------------------------
# Counters every engine keeps (each engine's ``Stats`` adds its own).
@dataclass(slots=True)
class EngineStats:
    """Counters; nothing in a protocol reads them."""

    datagrams_received: int = 0
    datagrams_sent: int = 0
    delivered: int = 0
    malformed: int = 0  # codec DecodeError: dropped
    bad_seqno: int = 0  # DATA with seqno 0 (seqnos start at 1): dropped
    beyond_window: int = 0  # DATA more than max_receive_span above the window's low: dropped
    data_without_window: int = 0  # non-first DATA, no matching receive entry (UNICAST3 caches it, UNICAST2 drops it)
    receive_table_full: int = 0  # first DATA refused: max_receive_entries reached
    windows_replaced: int = 0  # first DATA with a different conn_id replaced a window
    stale_timestamps: int = 0  # a timestamped message not newer than last_ts: ignored
    foreign_acks: int = 0  # ACK for no send entry or another conn_id: ignored
    xmit_seqnos_ignored: int = 0  # resends asked for beyond max_xmit_served
    unacked_discarded: int = 0  # messages dropped with a removed send entry
    held_bytes_full: int = 0  # DATA dropped: max_window_bytes or max_receive_bytes would be passed
    receive_evicted: int = 0  # receive entries evicted for a new sender (receive_evict_idle)
    xmit_scans_deferred: int = 0  # retransmit runs that left windows for the next run (max_xmit_scan)
    resends_throttled: int = 0  # resends not sent: resend_factor or max_resend_bytes (the rest of the answer)


# ---------------------------------------------------------------------------------------------
# Bytes held undelivered by the receive windows (the byte limits).
HELD_OVERHEAD = 128  # bytes a held message costs beyond its payload (its header, object and slot; measured ~131)


def held_size(msg: Any) -> int:
    """What a DATA held in a receive window counts against the byte limits."""
    return len(msg.payload) + HELD_OVERHEAD


class HeldBytes:
    """The payload bytes all receive windows of one engine hold undelivered (stored above a gap),
    against two limits: per window and in all. Each window's own count is kept on its entry
    (``held_bytes``); this holds the total, which a removed window gives back (``release``)."""

    __slots__ = ("per_window", "total", "total_limit")

    def __init__(self, per_window: int, total_limit: int) -> None:
        self.per_window, self.total_limit, self.total = per_window, total_limit, 0

    def admits(self, window_held: int, size: int) -> bool:
        return window_held + size <= self.per_window and self.total + size <= self.total_limit

    def account(self, entry: Any, msg: Any, items: list[Any], *, held: bool) -> None:
        """``msg`` was added to ``entry``'s window and ``items`` delivered: ``held`` says ``msg``
        was stored undelivered (``will_hold``); every delivered item but ``msg`` had been held
        (``msg`` None: every one of ``items`` had been)."""
        if not held and (not items or (len(items) == 1 and items[0] is msg)):  # the in-order case: nothing held
            return
        change = held_size(msg) if held else 0
        change -= sum(held_size(item) for item in items if item is not msg)
        entry.held_bytes += change
        self.total += change

    def release(self, entry: Any) -> None:
        """A receive entry is gone (removed or replaced): what it held is freed."""
        self.total -= entry.held_bytes
        entry.held_bytes = 0


def evict_stalest(m: Any, remove: Callable[[Any], None], *, now: int) -> bool:
    """``receive_evict_idle`` (UNICAST2, UNICAST3, UNICAST4): ``remove`` the receive entry whose window has gone
    longest without progress, if that is this long. Progress is a delivery beyond the DATA that
    created the window (``stale_since``: creation, or the last such delivery); duplicates, resends
    and a replacement of the window (a first DATA with another conn_id keeps the old entry's
    ``stale_since``) are no progress, so a busy attacker cannot keep its entries young by touching
    them, only by delivering new messages as an honest peer would. Entries only grow younger, so
    after a look that found none, none can be before ``m.evict_not_before``: a full table costs one
    scan per eviction time, not one per refused DATA.

    The evicted window's (conn_id, delivered) is remembered (``m.evicted``, at most
    max_receive_entries, oldest forgotten first): a window the same connection opens again starts
    at what was delivered (``reopen_offset``), so what the evicted window delivered is never
    delivered twice, even if the sender never heard of the eviction (its ACK or final STABLE lost)
    and resends from its lowest unacknowledged message."""
    idle = m.config.receive_evict_idle
    if idle == 0 or now < m.evict_not_before:
        return False
    peer = min(m.recv, key=lambda p: m.recv[p].stale_since)
    entry = m.recv[peer]
    if now - entry.stale_since < idle:
        m.evict_not_before = entry.stale_since + idle
        return False
    evicted = m.evicted
    evicted.pop(peer, None)
    if len(evicted) >= m.config.max_receive_entries:
        del evicted[next(iter(evicted))]
    evicted[peer] = (entry.conn_id, entry.delivered)
    remove(peer)
    m.stats.receive_evicted += 1
    return True


def reopen_offset(m: Any, src: Any, conn_id: int, offset: int) -> int:
    """The offset of a new receive window for ``src``'s connection ``conn_id`` that would start at
    ``offset``: at least what an evicted window of that connection delivered (``evict_stalest``).
    Read before making room (which may forget it); the caller forgets it once the window exists."""
    gone = m.evicted.get(src) if m.evicted else None
    return max(offset, gone[1]) if gone is not None and gone[0] == conn_id else offset


def claim_sync(sync_sent: dict[Any, int], peer: Any, *, now: int, interval: int, capacity: int) -> bool | None:
    """The SEND_FIRST_SEQNO rate limit of both engines (UNICAST3's last_sync_sent): True when
    ``peer`` may be asked now (recorded in ``sync_sent``), False when it was asked within
    ``interval``, None when the table already holds ``capacity`` peers none of which has expired."""
    last = sync_sent.get(peer)
    if last is not None and now - last < interval:
        return False
    if last is None and len(sync_sent) >= capacity:
        expire_syncs(sync_sent, now=now, interval=interval)
        if len(sync_sent) >= capacity:
            return None
    sync_sent[peer] = now
    return True


def expire_syncs(sync_sent: dict[Any, int], *, now: int, interval: int) -> None:
    """Forget the peers asked ``interval`` or longer ago."""
    for peer in [p for p, sent in sync_sent.items() if now - sent >= interval]:
        del sync_sent[peer]


def will_hold(window: Any, seqno: int) -> bool:
    """Would adding DATA ``seqno`` to ``window`` (a ``Table``) store it undelivered?"""
    return bool(seqno > window.hd + 1 and window.get(seqno) is None)


# ---------------------------------------------------------------------------------------------
# The previous-batch retransmission of both protocols, with its work bounded.
def request_missing(m: Any, make_request: Callable[[tuple[int, ...]], Any], *, stale_asks_all: bool = False) -> None:
    """Previous-batch retransmission (JGRP-1539, the specs' ``_request_missing``): ask only for
    gaps that were already there on the last run. Gaps are looked for in the first
    ``max_xmit_req_size`` seqnos above the highest deliverable one (JGroups' getMissing).
    ``stale_asks_all`` (JGRP-2573, ``spec/unicast_common.missing_requests``): a record below the
    window's hd filters nothing.

    Work per run is bounded (not in JGroups): the windows are scanned in peer order, starting after
    the one the last run stopped at, until ``max_xmit_scan`` seqnos are used up (the first window of
    a run is always scanned); the rest wait for the next run (``xmit_scans_deferred``). While the
    budget is not used up, every window is scanned every run in peer order, as the spec does."""
    cfg = m.config
    peers = sorted(m.recv)
    start = 0 if m.xmit_cursor is None else bisect_right(peers, m.xmit_cursor)
    budget = cfg.max_xmit_scan
    m.xmit_cursor = None
    for peer in peers[start:] + peers[:start]:
        window = m.recv[peer].window
        span = min(cfg.max_xmit_req_size, max(window.hr - window.hd - 1, 0))
        if span > budget and budget < cfg.max_xmit_scan:
            m.stats.xmit_scans_deferred += 1
            return
        budget -= span
        m.xmit_cursor = peer
        stale = stale_asks_all and m.xmit_last.get(peer, window.hd) < window.hd
        _request_previous_batch(m, peer, window.missing(cfg.max_xmit_req_size), make_request, stale)
    m.xmit_cursor = None  # a whole round: the next run starts at the first peer again


def _request_previous_batch(m: Any, peer: Any, missing: list[int],
                            make_request: Callable[[tuple[int, ...]], Any], stale: bool) -> None:
    if not missing:
        m.xmit_last.pop(peer, None)
        return
    highest, last = missing[-1], m.xmit_last.get(peer)
    if last is None:
        m.xmit_last[peer] = highest
        return
    wanted = missing if stale else missing[: bisect_right(missing, last)]
    m.xmit_last[peer] = max(last, highest)
    if wanted:
        m.emit(peer, make_request(tuple(wanted)))


# ---------------------------------------------------------------------------------------------
# Resends in answer to one datagram: the amplification bound (not in JGroups).
class ResendBudget:
    """What one datagram from a peer may make the engine resend to it: the larger of
    ``resend_factor`` times the datagram's size and one maximal datagram (``codec_limits``'
    max_datagram, what a single message may take anyway: so any request can be answered with one
    message of any size), and all of it within the peer's ``max_resend_bytes`` per
    ``xmit_interval``, counted on the peer's send entry (``resend_since``, ``resend_spent``). So one
    datagram of ``size`` bytes makes the engine resend at most max(resend_factor * size,
    max_datagram) bytes, and a flood of them at most ``max_resend_bytes`` per interval and peer."""

    __slots__ = ("entry", "left", "room")

    def __init__(self, cfg: Any, entry: Any, size: int, *, now: int) -> None:
        if now - entry.resend_since >= cfg.xmit_interval:
            entry.resend_since, entry.resend_spent = now, 0
        self.entry = entry
        self.left = max(cfg.resend_factor * size, cfg.codec_limits.max_datagram)
        self.room = cfg.max_resend_bytes

    def take(self, nbytes: int) -> bool:
        """May a resend of ``nbytes`` go? If so it is counted against both limits."""
        entry = self.entry
        if nbytes > self.left or entry.resend_spent + nbytes > self.room:
            return False
        self.left -= nbytes
        entry.resend_spent += nbytes
        return True


def resend_budget(m: Any, entry: Any) -> ResendBudget | None:
    """The budget of an answer to the datagram ``m`` is handling (``m.answering``: its size and
    arrival time), resent on send entry ``entry``; None when ``resend_factor`` is 0 (no limit:
    JGroups, and the lockstep harness)."""
    cfg = m.config
    if cfg.resend_factor == 0:
        return None
    size, now = m.answering
    return ResendBudget(cfg, entry, size, now=now)


def resend_all(m: Any, dst: Any, seqnos: Sequence[int], encoded: Callable[[int], bytes],
               budget: ResendBudget | None) -> None:
    """Queue ``encoded(seqno)`` for ``dst`` for each of ``seqnos`` in order while ``budget`` admits
    it; the first one refused and all after it are counted in ``resends_throttled`` (the protocol
    asks again: XMIT_REQ every retransmit run, UNICAST2's STABLE and SEND_FIRST_SEQNO likewise)."""
    for i, seqno in enumerate(seqnos):
        data = encoded(seqno)
        if budget is not None and not budget.take(len(data)):
            m.stats.resends_throttled += len(seqnos) - i
            return
        m.outbox.append((dst, data))
        m.stats.datagrams_sent += 1


# ---------------------------------------------------------------------------------------------
# Payloads.
def spec_payload(n: int) -> bytes:
    """The engine payload standing for the spec's payload ``n`` (0 <= n < 2**64)."""
    return n.to_bytes(8, "big")


def payload_number(payload: bytes) -> int:
    """Inverse of ``spec_payload``."""
    if len(payload) != 8:
        raise ValueError(f"not a spec payload: {payload!r} (expected 8 bytes)")
    return int.from_bytes(payload, "big")


def stored_payloads(window: Table[bytes], low: int, high: int) -> tuple[bytes, ...]:
    """The payloads at low+1 .. high of a send window (all present there): a snapshot's unacked."""
    out = []
    for seqno in range(low + 1, high + 1):
        item = window.get(seqno)
        assert item is not None
        out.append(item)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Config validation: one line per error, "Config.<field>: expected ..., got ...".
def reject_field(name: str, expected: str, value: object) -> None:
    raise ValueError(f"Config.{name}: expected {expected}, got {value!r}")


def require_field(cfg: object, name: str, ok: bool, expected: str) -> None:
    if not ok:
        reject_field(name, expected, getattr(cfg, name))


def require_ints(cfg: object, names: list[str]) -> None:
    """Every field in ``names`` is an int (not a bool)."""
    for name in names:
        value = getattr(cfg, name)
        if type(value) is not int:
            reject_field(name, "an int (milliseconds or a count)", value)


# -- a bundle of unicast datagrams (UNICAST3's and UNICAST4's ``received_batch``) --------------------
BYTES_LIKE = (bytes, bytearray, memoryview)


def bundle_items(datagrams: Iterable[Any]) -> list[Any]:
    """The datagrams of a ``received_batch`` call, every one checked before anything changes: a
    non-bytes one is the caller's misuse (``LocalProtocolError``)."""
    items = list(datagrams)
    for data in items:
        if not isinstance(data, BYTES_LIKE):
            raise LocalProtocolError(f"received_batch: each datagram must be bytes, got {type(data).__name__}")
    return items


def receive_bundle(m: Any, src: Any, items: Sequence[Any], *, now: int, decode: Callable[[Any], Any],
                   data_type: type[Any], on_message: Callable[..., None], on_batch: Callable[..., None]) -> None:
    """A unicast bundle as JGroups' transport hands it up: malformed datagrams counted and dropped,
    control messages handled at once, in order, as single ones, and the DATA received as at most two
    batches, the OOB ones first, then the regular ones (``TP.handleMessageBatch``'s split)."""
    batches: tuple[list[Any], list[Any]] = ([], [])  # OOB, regular
    for data in items:
        m.stats.datagrams_received += 1
        try:
            msg = decode(data)
        except DecodeError:
            m.stats.malformed += 1
            continue
        if type(msg) is data_type:
            batches[0 if msg.oob else 1].append(msg)
        else:
            m.answering = (len(data), now)
            on_message(m, src, msg, now=now)
    for batch in batches:
        if batch:
            on_batch(m, src, batch, now=now)
