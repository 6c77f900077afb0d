"""One member's mutable UNICAST2 state, its outputs, and the helpers every handler shares.

This module owns the data (``Member``: the send and receive tables, xmit_task_map, the
AgeOutCache, the timestamp and conn_id counters, the counters, the output queues) and the small
operations both the message handlers (``receive.py``) and the periodic tasks (``tasks.py``) use:
emitting a stored DATA with the header the spec gives it, a STABLE, stamping and accepting
timestamps, removing entries. It makes no decision of its own about *when* any of them happens.

Iteration order: wherever the spec walks its per-peer tuples by member number, we walk our dicts
in ``sorted`` peer order, so with peers 0..n-1 the engine emits its datagrams in the spec's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic

from impl.common import EngineStats, HeldBytes, P, ResendBudget, Timestamper, claim_sync, resend_all, ts_newer
from impl.unicast2.codec import NO_CONN, DataMsg, SendFirstSeqnoMsg, StableMsg, WireMsg, encode, encode_data
from impl.unicast2.config import Config
from impl.window import Table


class SendEntry:
    """SenderEntry: messages to one peer. HA = ``window.low`` (forced purges), HS = ``window.hr``."""

    __slots__ = ("ack_received", "conn_id", "last_ts", "resend_since", "resend_spent", "touched", "watermark",
                 "window")

    def __init__(self, conn_id: int, window: Table[bytes], *, now: int) -> None:
        self.conn_id = conn_id  # NO_CONN in the variant no_conn_ids
        self.window = window  # offset 0: seqno s holds the payload of the s-th message
        self.ack_received = False  # the first message was acknowledged (JGRP-1563)
        self.watermark = (0, 0)  # (HA, HS) at the previous retransmit run (fix_resend_highest)
        self.last_ts = 0  # newest accepted SEND_FIRST_SEQNO / STABLE timestamp; 0 = none yet
        self.touched = now  # last application send (the reaper's age)
        self.resend_since, self.resend_spent = now, 0  # max_resend_bytes: this interval's start and bytes

    @property
    def acked(self) -> int:
        return self.window.low

    @property
    def highest_sent(self) -> int:
        return self.window.hr


class RecvEntry:
    """ReceiverEntry: messages from one peer, window created just below the first seqno seen."""

    __slots__ = ("conn_id", "held_bytes", "last_highest", "received_bytes", "stable_count", "stale_since", "touched",
                 "window")

    def __init__(self, conn_id: int, window: Table[DataMsg], *, now: int) -> None:
        self.conn_id = conn_id
        self.window = window  # items are the DATA messages as received (for the snapshot)
        self.last_highest = 0  # hr reported by the stable task's last STABLE
        self.stable_count = 0  # STABLEs sent in a row for that hr
        self.received_bytes = 0  # payload bytes since the last byte-triggered STABLE (max_bytes)
        self.touched = now  # last DATA on this connection (the reaper's age)
        self.held_bytes = 0  # counted against max_window_bytes (impl.common.HeldBytes)
        self.stale_since = now  # no delivery beyond the creating DATA since (receive_evict_idle)

    @property
    def delivered(self) -> int:
        return self.window.hd


@dataclass(slots=True)
class Stats(EngineStats):
    """Counters; nothing in the protocol reads them (the shared ones are ``EngineStats``')."""

    foreign_stables: int = 0  # STABLE for no send entry or another conn_id: ignored
    stables_by_bytes: int = 0  # STABLEs sent because a window received max_bytes
    aged_out: int = 0  # connections to non-members removed by the AgeOutCache
    syncs_rate_limited: int = 0  # SEND_FIRST_SEQNO deferred: one went to that peer within sync_min_interval
    syncs_resent: int = 0  # SEND_FIRST_SEQNO sent again: deferred by the rate limit, or left unanswered
    sync_table_full: int = 0  # SEND_FIRST_SEQNO not sent: the rate limit's table is full


class Member(Generic[P]):
    """The state of one member. Handlers in ``receive`` and ``tasks`` mutate it in place."""

    def __init__(self, config: Config, members: frozenset[P]) -> None:
        self.config = config
        self.variant = config.variant
        self.members = members
        self.send: dict[P, SendEntry] = {}
        self.recv: dict[P, RecvEntry] = {}
        self.xmit_last: dict[P, int] = {}  # xmit_task_map: highest missing seqno of last run
        self.age_out: dict[P, int] = {}  # AgeOutCache: non-member destination -> deadline
        self.timestamper = Timestamper()
        self.next_conn_id = 0
        self.outbox: list[tuple[P, bytes]] = []
        self.deliveries: list[tuple[P, bytes]] = []
        self.stats = Stats()
        self.held = HeldBytes(config.max_window_bytes, config.max_receive_bytes)  # the byte limits
        self.evict_not_before = 0  # no receive entry can be stale enough to evict before this time
        self.evicted: dict[P, tuple[int, int]] = {}  # peer -> (conn_id, delivered) of an evicted window
        self.xmit_cursor: P | None = None  # the retransmit task's last window scanned (max_xmit_scan)
        self.answering = (0, 0)  # the datagram being handled: its size and arrival time (resend_factor)
        self.sync_sent: dict[P, int] = {}  # peer -> time of the last SEND_FIRST_SEQNO (sync_min_interval)
        self.sync_wanted: dict[P, list[int]] = {}  # peer -> [seqno, retries left]: a resync not yet answered

    # ------------------------------------------------------------------ outputs

    def emit(self, dst: P, msg: WireMsg) -> None:
        """Queue ``msg`` for ``dst``. Config validation makes every message we build encodable."""
        self.outbox.append((dst, encode(msg, self.config.codec_limits)))
        self.stats.datagrams_sent += 1

    def emit_data(self, dst: P, entry: SendEntry, seqno: int, *, first: bool) -> None:
        """Resend stored ``seqno`` (spec ``_data``): its own header, or a copy marked ``first``."""
        self.outbox.append((dst, self.stored_data(entry, seqno, first=first)))
        self.stats.datagrams_sent += 1

    def stored_data(self, entry: SendEntry, seqno: int, *, first: bool) -> bytes:
        """The datagram of stored ``seqno``. Variant conn_id_first_only: only a DATA marked first
        carries the conn_id."""
        payload = entry.window.get(seqno)
        assert payload is not None, seqno
        conn_id = entry.conn_id if first or not self.variant.conn_id_first_only else NO_CONN
        return encode_data(seqno, conn_id, first, payload, self.config.codec_limits)

    def resend(self, dst: P, entry: SendEntry, seqnos: Sequence[int], budget: ResendBudget | None,
               *, marked: int = 0) -> None:
        """Resend stored ``seqnos`` in answer to one datagram, each with its own header (``marked``:
        a seqno sent as a copy marked first), while ``budget`` admits them (``impl.common.resend_all``)."""
        resend_all(self, dst, seqnos,
                   lambda seqno: self.stored_data(entry, seqno, first=seqno == 1 or seqno == marked), budget)

    def deliver_all(self, src: P, items: list[DataMsg]) -> None:
        """Queue the payload of each of ``items`` (DATA from ``src``) for the application."""
        self.deliveries += [(src, item.payload) for item in items]
        self.stats.delivered += len(items)

    def send_stable(self, peer: P, entry: RecvEntry) -> None:
        """STABLE(hd, hr) of ``entry``'s window (spec ``_stable``): a new timestamp
        (fix_timestamps) and its conn_id (none in the variant conn_id_first_only)."""
        conn_id = NO_CONN if self.variant.conn_id_first_only else entry.conn_id
        self.emit(peer, StableMsg(entry.delivered, entry.window.hr, conn_id, self.next_timestamp()))

    # ------------------------------------------------------------------ timestamps

    def request_first_seqno(self, peer: P, seqno: int, *, now: int) -> None:
        """A DATA up to ``seqno`` from ``peer`` found no window: ask for the first seqno.

        ``sync_min_interval`` 0 is UNICAST2 as shipped (the spec): one SEND_FIRST_SEQNO per such
        DATA. Otherwise (not in UNICAST2: with the whole-range answer of JGRP-1874 two honest peers
        then amplify each other without end) at most one per peer per interval, the table of peers
        bounded by ``max_receive_entries`` like UNICAST3's last_sync_sent; a request the limit holds
        back is remembered (``sync_wanted``: the highest seqno asked for, the retries left) and sent
        by ``resync`` once the interval allows, and so is one left unanswered, ``sync_retries`` times:
        the limit delays a resync, it never loses one."""
        cfg = self.config
        if cfg.sync_min_interval == 0:
            self.emit(peer, SendFirstSeqnoMsg(seqno, self.next_timestamp()))
            return
        wanted = self.sync_wanted.get(peer)
        if wanted is None and len(self.sync_wanted) >= cfg.max_receive_entries:
            self.stats.sync_table_full += 1
            return
        claimed = claim_sync(self.sync_sent, peer, now=now, interval=cfg.sync_min_interval,
                             capacity=cfg.max_receive_entries)
        if claimed is None:
            self.stats.sync_table_full += 1
            return
        if wanted is None:
            wanted = self.sync_wanted[peer] = [seqno, cfg.sync_retries]
        else:  # the peer is still sending without a window: ask for the highest, retries afresh
            wanted[0], wanted[1] = max(wanted[0], seqno), cfg.sync_retries
        if claimed:
            self.emit(peer, SendFirstSeqnoMsg(wanted[0], self.next_timestamp()))
        else:
            self.stats.syncs_rate_limited += 1

    def resync(self, *, now: int) -> None:
        """Send each remembered SEND_FIRST_SEQNO (``request_first_seqno``) whose peer may be asked
        again (sync_min_interval since the last one), while it has retries left."""
        for peer in sorted(self.sync_wanted):
            wanted = self.sync_wanted[peer]
            last = self.sync_sent.get(peer)
            if last is not None and now - last < self.config.sync_min_interval:
                continue
            if wanted[1] == 0:
                del self.sync_wanted[peer]
                continue
            claimed = claim_sync(self.sync_sent, peer, now=now, interval=self.config.sync_min_interval,
                                 capacity=self.config.max_receive_entries)
            if claimed:  # None: the table is full of requests younger than the interval; next run
                wanted[1] -= 1
                self.stats.syncs_resent += 1
                self.emit(peer, SendFirstSeqnoMsg(wanted[0], self.next_timestamp()))

    def next_timestamp(self) -> int:
        """The timestamp for the next SEND_FIRST_SEQNO / STABLE (0, counter untouched, without
        fix_timestamps)."""
        if not self.variant.fix_timestamps:
            return 0
        return self.timestamper.next()

    def accept_timestamp(self, entry: SendEntry, ts: int) -> bool:
        """fix_timestamps: the first one accepted, later ones only if newer; records it."""
        if not self.variant.fix_timestamps:
            return True
        if entry.last_ts != 0 and not ts_newer(ts, entry.last_ts):
            self.stats.stale_timestamps += 1
            return False
        entry.last_ts = ts
        return True

    # ------------------------------------------------------------------ removal

    def remove_receiver(self, peer: P) -> None:
        """Spec ``_remove_receiver``: the final STABLE, then drop the receive entry (if any)."""
        entry = self.recv.pop(peer, None)
        if entry is not None:
            self.held.release(entry)
            self.send_stable(peer, entry)

    def remove_sender(self, peer: P) -> None:
        """Drop the send entry of ``peer`` (if any); its unacknowledged messages are gone."""
        entry = self.send.pop(peer, None)
        if entry is not None:
            self.stats.unacked_discarded += entry.highest_sent - entry.acked
        self.age_out.pop(peer, None)
