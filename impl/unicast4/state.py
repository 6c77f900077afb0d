"""One member's mutable UNICAST4 state: its entries over fixed windows, outputs and shared helpers.

This module owns the data (``Member``: the send and receive tables, last_sync_sent, xmit_task_map,
the counters and output queues; ``SendEntry`` with its blocked sends, ``RecvEntry`` with its ACK
counter) and the small operations every handler shares: emitting a datagram, stamping and
accepting timestamps, asking for a first seqno, flushing pending ACKs, state changes (which reset
an entry's age; closing a send entry's buffer fails its blocked sends). It decides nothing about
*when* any of them happens (``receive.py``, ``tasks.py``).

Iteration order: wherever the spec walks its per-peer tuples by member number, we walk our dicts
in ``sorted`` peer order, so with peers 0..n-1 the engine emits its datagrams in the spec's order.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic

from impl.common import EngineStats, HeldBytes, P, Timestamper, claim_sync, expire_syncs, held_size, ts_newer
from impl.fixed_window import FixedBuffer
from impl.unicast4.codec import AckMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, encode
from impl.unicast4.config import Config

OPEN, CLOSING = 0, 1  # spec.unicast4.OPEN / CLOSING (a test keeps them equal); CLOSED entries are removed


class SendStatus(enum.Enum):
    """What ``Unicast4Engine.send`` did with a message."""

    SENT = "sent"  # added to the send window and passed down
    BLOCKED = "blocked"  # the window is full: held until ACKs make room (or the connection closes)
    DROPPED = "dropped"  # variant drop_dont_block: a DONT_BLOCK send on a full window, its seqno spent


@dataclass(slots=True)
class Stats(EngineStats):
    """Counters; nothing in the protocol reads them (the shared ones are ``EngineStats``')."""

    sends_blocked: int = 0  # sends that found their window full
    sends_dropped: int = 0  # DONT_BLOCK sends dropped on a full window (variant drop_dont_block)
    sends_failed: int = 0  # blocked sends failed by their connection's close (CLOSED)
    lower_conn_id: int = 0  # DATA with a lower conn_id than the receive entry's: dropped
    beyond_capacity: int = 0  # DATA more than capacity above the receive window's low: dropped
    sync_table_full: int = 0  # SEND_FIRST_SEQNO not sent: last_sync_sent full
    cached: int = 0  # DATA put in the message cache
    cache_full: int = 0  # DATA not cached: max_cached_messages or max_cache_bytes (dropped like a loss)
    batch_other_conn_id: int = 0  # DATA of a batch dropped: not of the batch's highest conn_id
    acks_sent: int = 0


class SendEntry:
    """SenderEntry: a FixedBuffer at offset 0 (HA = low = hd after a forced purge, HS = high), the
    seqno counter, the watermark, the last timestamp and the sends blocked on the window."""

    __slots__ = ("acks_counted", "blocked", "conn_id", "dont_loopback", "last_ts", "oob", "oob_delivered",
                 "resend_since", "resend_spent", "seqno", "state", "touched", "watermark", "window")

    def __init__(self, conn_id: int, capacity: int, *, now: int) -> None:
        self.conn_id, self.state, self.touched = conn_id, OPEN, now
        self.window: FixedBuffer[bytes] = FixedBuffer(capacity, 0)
        self.seqno = 0  # the last seqno a send took
        self.watermark = (0, 0)
        self.last_ts = 0
        self.blocked: dict[int, bytes] = {}  # seqno -> payload of the sends waiting for room
        self.oob: set[int] = set()  # the seqnos taken by OOB sends, stored unacked or blocked
        # the send entry for oneself only (spec decisions 12, 13; empty / 0 on every other):
        self.dont_loopback: set[int] = set()  # seqnos taken by DONT_LOOPBACK sends, stored or blocked
        self.oob_delivered: set[int] = set()  # stored OOB seqnos a loopback delivered (OOB_DELIVERED)
        self.acks_counted = 0  # deliverBatch's ACK counter on the send entry
        self.resend_since, self.resend_spent = now, 0  # max_resend_bytes: this interval's start and bytes

    @property
    def acked(self) -> int:
        return self.window.low

    @property
    def highest_sent(self) -> int:
        return self.window.high


class RecvEntry:
    """ReceiverEntry: a FixedBuffer at the first seqno - 1 holding the DATA as received."""

    __slots__ = ("ack_pending", "acks_counted", "conn_id", "held_bytes", "stale_since", "state", "touched", "window")

    def __init__(self, conn_id: int, offset: int, capacity: int, *, now: int) -> None:
        self.conn_id, self.state, self.touched = conn_id, OPEN, now
        self.stale_since = now  # no delivery beyond the creating DATA since (receive_evict_idle)
        self.window: FixedBuffer[DataMsg] = FixedBuffer(capacity, offset)
        self.ack_pending = False
        self.acks_counted = 0
        self.held_bytes = 0  # counted against max_window_bytes (impl.common.HeldBytes)

    @property
    def delivered(self) -> int:
        return self.window.hd


class Member(Generic[P]):
    """The state of one member. Handlers in ``receive`` and ``tasks`` mutate it in place."""

    def __init__(self, config: Config, members: frozenset[P], me: P | None = None) -> None:
        self.config = config
        self.variant = config.variant
        self.members = members
        self.me = me  # the local address, if known: a DATA from it takes the self path (spec decision 12)
        self.send: dict[P, SendEntry] = {}
        self.recv: dict[P, RecvEntry] = {}
        self.sync_sent: dict[P, int] = {}  # last_sync_sent: peer -> time of the last request
        self.xmit_last: dict[P, int] = {}  # xmit_task_map: highest missing seqno of the last run
        self.age_out: dict[P, int] = {}  # AgeOutCache: non-member destination -> deadline
        self.timestamper = Timestamper()
        self.next_conn_id = config.first_conn_id
        self.outbox: list[tuple[P, bytes]] = []
        self.deliveries: list[tuple[P, bytes]] = []
        self.failed: list[tuple[P, int, bytes]] = []  # (dst, seqno, payload) of sends that will never go
        self.blocked_bytes = 0  # payload bytes of all blocked sends (max_blocked_bytes)
        # msg_cache: per sender, the DATA that found no usable receive entry, one copy each by
        # (conn_id, seqno, first) (spec decision 8: one copy of each DATA; a copy marked first, the
        # answer to a SEND_FIRST_SEQNO, is another DATA); with its totals against the limits
        self.cache: dict[P, dict[tuple[int, int, bool], DataMsg]] = {}
        self.cache_count = self.cache_bytes = 0
        self.stats = Stats()
        self.held = HeldBytes(config.max_window_bytes, config.max_receive_bytes)
        self.evict_not_before = 0  # no receive entry can be stale enough to evict before this time
        self.evicted: dict[P, tuple[int, int]] = {}  # peer -> (conn_id, delivered) of an evicted window
        self.answering = (0, 0)  # the datagram being handled: its size and arrival time (resend_factor)

    # ------------------------------------------------------------------ outputs
    def emit(self, dst: P, msg: WireMsg) -> None:
        self.outbox.append((dst, encode(msg, self.config.codec_limits)))
        self.stats.datagrams_sent += 1

    def deliver(self, src: P, payload: bytes) -> None:
        self.deliveries.append((src, payload))
        self.stats.delivered += 1

    def deliver_all(self, src: P, items: list[DataMsg]) -> None:
        self.deliveries += [(src, item.payload) for item in items]
        self.stats.delivered += len(items)

    # ------------------------------------------------------------------ timestamps and syncs
    def accept_timestamp(self, entry: SendEntry, ts: int) -> bool:
        """updateLastTimestamp: the first is accepted, later ones only if newer (31-bit serial)."""
        if entry.last_ts != 0 and not ts_newer(ts, entry.last_ts):
            self.stats.stale_timestamps += 1
            return False
        entry.last_ts = ts
        return True

    def sync_active(self, peer: P, *, now: int) -> bool:
        sent = self.sync_sent.get(peer)
        return sent is not None and now - sent < self.config.sync_min_interval

    def purge_expired_syncs(self, *, now: int) -> None:
        expire_syncs(self.sync_sent, now=now, interval=self.config.sync_min_interval)

    def request_first_seqno(self, peer: P, *, now: int) -> None:
        """sendRequestForFirstSeqno: at most one SEND_FIRST_SEQNO per peer per sync_min_interval."""
        cfg = self.config
        claimed = claim_sync(self.sync_sent, peer, now=now, interval=cfg.sync_min_interval,
                             capacity=cfg.max_receive_entries)
        if claimed is None:
            self.stats.sync_table_full += 1
        elif claimed:
            self.emit(peer, SendFirstSeqnoMsg(self.timestamper.next()))

    # ------------------------------------------------------------------ ACKs
    def send_ack(self, peer: P, entry: RecvEntry) -> None:
        self.emit(peer, AckMsg(entry.delivered, entry.conn_id, self.timestamper.next()))
        self.stats.acks_sent += 1

    def count_acks(self, peer: P, entry: RecvEntry, n: int) -> None:
        """Entry.update(n, add_acks): an ACK now when the counter reaches the threshold (it resets),
        otherwise the counter grows and the ACK is left pending for the retransmit task."""
        if self.ack_due(entry, n):
            self.send_ack(peer, entry)
        else:
            entry.ack_pending = True

    def ack_due(self, entry: RecvEntry | SendEntry, n: int) -> bool:
        """The counting half of Entry.update(n, add_acks), on a receive entry or (messages to self)
        the send entry for oneself: True, the counter reset, when it reaches the threshold."""
        total = entry.acks_counted + n
        entry.acks_counted = 0 if total >= self.config.threshold else total
        return total >= self.config.threshold

    def send_pending_acks(self, only: P | None = None) -> None:
        """sendPendingAcks: ACK(highest delivered, conn_id, new timestamp) per pending entry."""
        for peer in sorted(self.recv) if only is None else [only] if only in self.recv else []:
            entry = self.recv[peer]
            if entry.ack_pending:
                entry.ack_pending = False
                self.send_ack(peer, entry)

    # ------------------------------------------------------------------ state changes
    @staticmethod
    def set_state(entry: SendEntry | RecvEntry, state: int, *, now: int) -> None:
        """Entry.state(s): a change resets the entry's age (CLOSING -> OPEN reopens the buffer,
        which never closed: only CLOSED closes it, ``remove_send``)."""
        if entry.state != state:
            entry.state, entry.touched = state, now

    def remove_send(self, peer: P) -> None:
        """removeSendConnection's CLOSED: the entry goes and its buffer closes: every blocked send
        fails (reported by ``failed_sends``), what was unacknowledged is gone."""
        entry = self.send.pop(peer)
        self.age_out.pop(peer, None)
        entry.window.close()
        for seqno in sorted(entry.blocked):
            payload = entry.blocked[seqno]
            self.failed.append((peer, seqno, payload))
            self.blocked_bytes -= len(payload)
            self.stats.sends_failed += 1
        entry.blocked.clear()
        self.stats.unacked_discarded += len(entry.window.seqnos())

    def cache_add(self, peer: P, msg: DataMsg) -> None:
        """msg_cache.add: one copy per (conn_id, seqno, first), within max_cached_messages / max_cache_bytes."""
        queue = self.cache.setdefault(peer, {})
        key = (msg.conn_id, msg.seqno, msg.first)
        if key in queue:
            return
        size = held_size(msg)
        cfg = self.config
        if self.cache_count >= cfg.max_cached_messages or self.cache_bytes + size > cfg.max_cache_bytes:
            self.stats.cache_full += 1
            if not queue:
                del self.cache[peer]
            return
        queue[key] = msg
        self.cache_count += 1
        self.cache_bytes += size
        self.stats.cached += 1

    def cache_drain(self, peer: P) -> list[DataMsg]:
        """msg_cache.drain: every DATA cached from ``peer``, the cache forgetting them: the regular ones in
        (conn_id, seqno, first) order, then the OOB ones in the order they arrived (each is delivered when
        added; spec ``cache_drain``)."""
        queue = self.cache.pop(peer, None)
        if not queue:
            return []
        self.cache_count -= len(queue)
        self.cache_bytes -= sum(held_size(m) for m in queue.values())
        regular = [queue[key] for key in sorted(queue) if not queue[key].oob]
        return regular + [m for m in queue.values() if m.oob]  # a dict keeps the first arrival's place

    def remove_recv(self, peer: P) -> None:
        self.held.release(self.recv.pop(peer))
