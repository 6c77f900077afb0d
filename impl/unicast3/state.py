"""One member's mutable UNICAST3 state, its outputs, and the helpers every handler shares.

This module owns the data (``Member``: the send and receive tables, the message cache,
last_sync_sent, xmit_task_map, the AgeOutCache, the counters, the output queues) and the small
operations used by both the message handlers (``receive.py``) and the periodic task
(``tasks.py``): emitting a datagram, stamping and accepting timestamps, asking for a first seqno,
flushing pending ACKs, removing entries. It makes no decision of its own about *when* any of them happens.

Iteration order: wherever the spec walks its per-peer tuples by member number, we walk our dicts
in ``sorted`` peer order, so with peers 0..n-1 the engine emits its datagrams in the spec's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic

from impl.common import (  # noqa: F401  (P, PeerAddress re-exported)
    EngineStats,
    HeldBytes,
    P,
    PeerAddress,
    ResendBudget,
    claim_sync,
    expire_syncs,
    resend_all,
    ts_newer,
)
from impl.unicast3.cache import MessageCache
from impl.unicast3.codec import AckMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, encode, encode_data
from impl.unicast3.config import Config
from impl.unicast3.entries import Event, RecvEntry, SendEntry, Timestamper


@dataclass(slots=True)
class Stats(EngineStats):
    """Counters; nothing in the protocol reads them (the shared ones are ``EngineStats``')."""

    sync_table_full: int = 0  # SEND_FIRST_SEQNO not sent: last_sync_sent full
    syncs_rate_limited: int = 0  # SEND_FIRST_SEQNO not sent: one went to that peer within sync_min_interval
    replace_refused: int = 0  # first DATA with a new conn_id refused by min_window_replace_interval
    cached: int = 0  # DATA put in the message cache (JGRP-2327)
    cache_full: int = 0  # DATA not cached: max_cached_messages or max_cache_bytes (dropped, as in 3.x)
    cache_evicted: int = 0  # cached DATA of idle senders evicted for room (cache_evict_idle)
    cache_dropped: int = 0  # cached DATA of another connection than the window it was drained into
    cache_drained_dropped: int = 0  # cached DATA drained into its window but dropped there at a limit (span, bytes)


class Member(Generic[P]):
    """The state of one member. Handlers in ``receive`` and ``tasks`` mutate it in place."""

    def __init__(self, config: Config, members: frozenset[P], me: P | None = None) -> None:
        self.config = config
        self.variant = config.variant
        self.members = members
        self.me = me  # the local address, if known: a DATA from it takes the self path (spec decision 26)
        self.send: dict[P, SendEntry] = {}
        self.recv: dict[P, RecvEntry] = {}
        self.sync_sent: dict[P, int] = {}  # last_sync_sent: peer -> time of the last request
        self.xmit_last: dict[P, int] = {}  # xmit_task_map: highest missing seqno of last run
        self.age_out: dict[P, int] = {}  # AgeOutCache: non-member destination -> deadline
        self.stats = Stats()
        self.cache: MessageCache[P] = MessageCache(config.max_cached_messages, config.max_cache_bytes,
                                                   config.cache_evict_idle, self.stats)  # msg_cache
        self.timestamper = Timestamper()
        self.next_conn_id = 0
        self.outbox: list[tuple[P, bytes]] = []
        self.deliveries: list[tuple[P, bytes]] = []
        self.held = HeldBytes(config.max_window_bytes, config.max_receive_bytes)  # the byte limits
        self.evict_not_before = 0  # no receive entry can be stale enough to evict before this time
        self.evicted: dict[P, tuple[int, int]] = {}  # peer -> (conn_id, delivered) of an evicted window
        self.xmit_cursor: P | None = None  # the retransmit task's last window scanned (max_xmit_scan)
        self.answering = (0, 0)  # the datagram being handled: its size and arrival time (resend_factor)

    # ------------------------------------------------------------------ outputs

    def emit(self, dst: P, msg: WireMsg) -> None:
        """Queue ``msg`` for ``dst``. Config validation makes every message we build encodable."""
        self.outbox.append((dst, encode(msg, self.config.codec_limits)))
        self.stats.datagrams_sent += 1

    def resend(self, dst: P, entry: SendEntry, seqnos: Sequence[int], budget: ResendBudget | None,
               *, marked: int = 0) -> None:
        """Resend stored ``seqnos`` in answer to one datagram, each with its original header
        and OOB flag (``marked``: a seqno sent as a copy marked first), while ``budget`` admits them
        (``impl.common.resend_all``)."""
        window, conn_id, limits, oob = entry.window, entry.conn_id, self.config.codec_limits, entry.oob

        def encoded(seqno: int) -> bytes:
            payload = window.get(seqno)
            assert payload is not None, seqno
            return encode_data(seqno, conn_id, seqno == 1 or seqno == marked, payload, limits, seqno in oob)

        resend_all(self, dst, seqnos, encoded, budget)

    def deliver(self, src: P, payload: bytes) -> None:
        self.deliveries.append((src, payload))
        self.stats.delivered += 1

    def deliver_all(self, src: P, items: list[DataMsg]) -> None:
        """Queue the payload of each of ``items`` (DATA from ``src``) for the application."""
        if len(items) == 1:  # the common case, without building a list
            self.deliveries.append((src, items[0].payload))
        else:
            self.deliveries += [(src, item.payload) for item in items]
        self.stats.delivered += len(items)

    # ------------------------------------------------------------------ timestamps

    def next_timestamp(self) -> int:
        """The timestamp for the next ACK / SEND_FIRST_SEQNO (0, counter untouched, without)."""
        if self.variant.no_timestamps:
            return 0
        return self.timestamper.next()

    def accept_timestamp(self, entry: SendEntry, ts: int) -> bool:
        """updateLastTimestamp: first one accepted, later ones only if newer; records it."""
        if self.variant.no_timestamps:
            return True
        if entry.last_ts != 0 and not ts_newer(ts, entry.last_ts):
            self.stats.stale_timestamps += 1
            return False
        entry.last_ts = ts
        return True

    # ------------------------------------------------------------------ SEND_FIRST_SEQNO

    def sync_active(self, peer: P, *, now: int) -> bool:
        """True if ``peer`` was sent a SEND_FIRST_SEQNO within sync_min_interval."""
        sent = self.sync_sent.get(peer)
        return sent is not None and now - sent < self.config.sync_min_interval

    def purge_expired_syncs(self, *, now: int) -> None:
        expire_syncs(self.sync_sent, now=now, interval=self.config.sync_min_interval)

    def request_first_seqno(self, peer: P, *, now: int) -> None:
        """sendRequestForFirstSeqno: at most one SEND_FIRST_SEQNO per peer per sync_min_interval
        (``addIfAbsentOrExpired``); the no_sync_rate_limit variant sends one every time and
        remembers none (3.4.x had no last_sync_sent)."""
        cfg = self.config
        if self.variant.no_sync_rate_limit:  # 3.4.x: no last_sync_sent at all
            self.emit(peer, SendFirstSeqnoMsg(self.next_timestamp()))
            return
        claimed = claim_sync(self.sync_sent, peer, now=now, interval=cfg.sync_min_interval,
                             capacity=cfg.max_receive_entries)
        if claimed is None:
            self.stats.sync_table_full += 1
            return
        if not claimed:
            # Not lost: the sender resends its highest message every run while unacknowledged
            # (JGRP-1548), and that DATA asks again once the interval is over.
            self.stats.syncs_rate_limited += 1
            return
        self.emit(peer, SendFirstSeqnoMsg(self.next_timestamp()))

    # ------------------------------------------------------------------ ACKs and removal

    def send_pending_acks(self) -> None:
        """sendPendingAcks: ACK(highest delivered, conn_id, new timestamp) per pending entry."""
        for peer in sorted(self.recv):
            entry = self.recv[peer]
            if entry.ack_pending:
                entry.ack_pending = False
                self.emit(peer, AckMsg(entry.delivered, entry.conn_id, self.next_timestamp()))

    def remove_recv(self, peer: P, event: Event, *, now: int) -> None:
        """Remove the receive entry of ``peer`` through ``event`` (which must remove it)."""
        removed = self.recv[peer].fire(event, now=now)
        assert removed, event
        self.held.release(self.recv.pop(peer))

    def remove_send(self, peer: P, event: Event, *, now: int) -> None:
        """Remove the send entry of ``peer`` through ``event``; its unacked messages are gone."""
        entry = self.send[peer]
        removed = entry.fire(event, now=now)
        assert removed, event
        self.stats.unacked_discarded += entry.highest_sent - entry.acked
        del self.send[peer]
        self.age_out.pop(peer, None)
