"""One member's mutable NAKACK2 state, its outputs, and the helpers every handler shares.

This module owns the data (``Member``: the own window, the receive windows, the counter, the
become_server_queue, the retransmission records, LastSeqnoResender, STABLE's round, the counters,
the output queues) and the small operations both the message handlers (``receive.py``) and the
time- and membership-driven work (``tasks.py``) use: emitting a datagram or a multicast, the
digest, the windows by sender. It makes no decision of its own about *when* any of them happens.

Windows: the own window (``OwnWindow``) is a ``Table`` holding every own message not purged yet
(low < seqno <= counter, all present) plus ``hd``, the highest own message delivered (the
loopback); a purge is a forced ``Table.purge`` clamped to ``hd``. A receive window
(``RecvEntry``) is a ``Table`` from which delivered messages are removed at once (low == hd, as
``discard_delivered_msgs``). Items are the decoded ``McastMsg``.

Iteration order: wherever the spec walks its per-member tuples by member number, we walk members
in ``address_key`` order (ints by value), so with members 0..n-1 the engine emits its datagrams in
the spec's order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic

from impl.common import EngineStats, HeldBytes, P
from impl.nakack2.codec import McastMsg, NakXmitReqMsg, WireMsg, XmitReqMsg, address_key, encode
from impl.nakack2.config import Config
from impl.window import Table
from impl.wire import CodecLimits, EncodeError

NO_ENTRY = -1  # stable_xmit: no previous STABLE digest named this member (the spec's NO_ENTRY)


@dataclass(slots=True)
class Stats(EngineStats):
    """Counters; nothing in the protocol reads them (the shared ones are ``EngineStats``')."""

    multicasts: int = 0  # application multicasts accepted
    send_without_window: int = 0  # multicast dropped: no own window yet (a joiner before its digest)
    old_or_duplicate: int = 0  # MSG at or below hd, or already held: dropped by the window
    queued: int = 0  # NAKACK2 messages put in the become_server_queue
    queue_dropped: int = 0  # ... dropped by a full queue (the newest, or the oldest: variant)
    queue_bytes_full: int = 0  # ... dropped because the queue would pass max_queue_bytes
    xmit_reqs_sent: int = 0  # XMIT_REQ datagrams sent (retransmit task, HIGHEST_SEQNO, STABLE)
    xmit_served: int = 0  # messages resent in answer to XMIT_REQs (one per message, not per copy)
    xmit_req_foreign: int = 0  # XMIT_REQ for another sender's messages with use_mcast_xmit: dropped
    xmit_rsp_foreign: int = 0  # XMIT_RSP not from the original sender it names: dropped
    xmit_req_unknown: int = 0  # XMIT_REQ for a sender we have no window for: ignored
    highest_seqno_sent: int = 0  # HIGHEST_SEQNO multicasts (one per run, not per copy)
    stable_votes_sent: int = 0  # STABLE votes sent to (or merged at) the coordinator
    votes_ignored: int = 0  # votes not for this coordinator's view / round / not a member
    stability_sent: int = 0  # STABILITY multicasts (one per round)
    stability_ignored: int = 0  # STABILITY for another view, while suspended, our own, not the coordinator's
    stable_purged: int = 0  # own messages purged by STABLE
    join_rsp_ignored: int = 0  # a JOIN_RSP after the member had its own window
    oversized_control: int = 0  # a STABLE/STABILITY/JOIN_RSP too large for one datagram: not sent
    send_window_full: int = 0  # multicast refused: max_send_window own messages unpurged


class OwnWindow:
    """The member's own window: its send window until STABLE purges (see the module docstring)."""

    __slots__ = ("bytes", "dont_loopback", "hd", "table")

    def __init__(self, offset: int, config: Config) -> None:
        self.table: Table[McastMsg] = Table(offset, msgs_per_row=config.xmit_table_msgs_per_row,
                                            initial_rows=config.xmit_table_num_rows,
                                            max_span=config.max_send_window)
        self.hd = offset
        self.bytes = 0  # payload bytes of the messages kept (max_send_bytes)
        self.dont_loopback: set[int] = set()  # seqnos of the kept messages sent DONT_LOOPBACK

    def add(self, msg: McastMsg) -> None:
        self.table.add(msg.seqno, msg)
        self.bytes += len(msg.payload)

    @property
    def low(self) -> int:
        return self.table.low

    @property
    def hr(self) -> int:
        return self.table.hr

    def get(self, seqno: int) -> McastMsg | None:
        return self.table.get(seqno)

    def purge(self, upto: int) -> int:
        """Purge up to ``upto`` clamped to hd; returns how many messages were dropped."""
        upto = min(upto, self.hd)
        before = self.table.low
        if upto <= before:
            return 0
        table = self.table
        self.bytes -= sum(len(item.payload) for s in range(before + 1, upto + 1) if (item := table.get(s)) is not None)
        table.purge(upto, force=True)
        if self.dont_loopback:
            self.dont_loopback = {s for s in self.dont_loopback if s > table.low}
        return table.low - before


class RecvEntry:
    """A receive window for one other member, with the bytes it holds undelivered."""

    __slots__ = ("held_bytes", "window")

    def __init__(self, offset: int, config: Config) -> None:
        self.window: Table[McastMsg] = Table(offset, msgs_per_row=config.xmit_table_msgs_per_row,
                                             initial_rows=config.xmit_table_num_rows,
                                             max_span=config.max_receive_span)
        self.held_bytes = 0


class ResendBook:
    """What one requester made the engine resend within the current xmit_interval
    (``impl.common.ResendBudget`` reads and writes these two fields)."""

    __slots__ = ("resend_since", "resend_spent")

    def __init__(self) -> None:
        self.resend_since = -(1 << 62)
        self.resend_spent = 0


@dataclass(frozen=True, slots=True)
class BudgetSettings:
    """What ``impl.common.ResendBudget`` reads from a config: ``Config``'s, except that the period
    of ``max_resend_bytes`` is ``DEFAULT_RESEND_PERIOD`` when xmit_interval <= 0 (no retransmit
    task: its own period would make the per-interval bound a per-datagram one)."""

    xmit_interval: int
    resend_factor: int
    max_resend_bytes: int
    codec_limits: CodecLimits

    @classmethod
    def of(cls, config: Config) -> BudgetSettings:
        period = config.xmit_interval if config.retransmission else DEFAULT_RESEND_PERIOD
        return cls(period, config.resend_factor, config.max_resend_bytes, config.codec_limits)


DEFAULT_RESEND_PERIOD = 1000  # ms: JGroups' default xmit_interval


class Member(Generic[P]):
    """The state of one member. Handlers in ``receive`` and ``tasks`` mutate it in place."""

    def __init__(self, config: Config, me: P, members: frozenset[P]) -> None:
        self.config = config
        self.variant = config.variant
        self.me = me
        founder = me in members
        self.members: frozenset[P] = members if founder else frozenset()
        self.view: tuple[P, ...] = tuple(sorted(self.members, key=address_key))
        self.seqno = 0  # the counter: the last seqno assigned
        self.own: OwnWindow | None = OwnWindow(0, config) if founder else None
        self.recv: dict[P, RecvEntry] = {p: RecvEntry(0, config) for p in self.view if p != me} if founder else {}
        self.is_server = founder
        self.become_server_pending = False
        self.queue: deque[tuple[P, WireMsg, int]] = deque()  # (src, message, datagram size)
        self.queue_bytes = 0
        self.xmit_last: dict[P, int] = {}  # xmit_task_map (the spec's 0 = absent)
        self.xmit_cursor: P | None = None  # impl.common.request_missing's round robin
        self.stable_xmit: dict[P, int] = {}  # stable_xmit_map (the spec's NO_ENTRY = absent)
        self.last_seqno_resent = 0
        self.num_resends = 0
        self.skip_next_resend = False
        self.votes: set[P] = set()
        self.merged: dict[P, tuple[int, int]] = {}
        self.stable_suspended = False
        self.books: dict[P | None, ResendBook] = {}  # per requester (None: every non-member)
        self.budget_settings = BudgetSettings.of(config)
        self.answering = (0, 0)  # the datagram being handled: its size and arrival time
        self.outbox: list[tuple[P, bytes]] = []
        self.deliveries: list[tuple[P, bytes]] = []
        self.stats = Stats()
        self.held = HeldBytes(config.max_window_bytes, config.max_receive_bytes)

    # ------------------------------------------------------------------ membership

    @property
    def coordinator(self) -> P:
        """The coordinator of this member's view: its first member (``address_key`` order)."""
        return self.view[0]

    def set_members(self, members: frozenset[P]) -> None:
        self.members = members
        self.view = tuple(sorted(members, key=address_key))

    def window_hr(self, sender: P) -> int | None:
        """hr of the window for ``sender`` (None: no window)."""
        if sender == self.me:
            return None if self.own is None else self.own.hr
        entry = self.recv.get(sender)
        return None if entry is None else entry.window.hr

    def digest(self) -> dict[P, tuple[int, int]]:
        """GET_DIGEST: (hd, hr) of every window."""
        out = {p: (e.window.hd, e.window.hr) for p, e in self.recv.items()}
        if self.own is not None:
            out[self.me] = (self.own.hd, self.own.hr)
        return out

    def reset_round(self) -> None:
        """resetDigest: a new STABLE round, no vote merged yet."""
        self.votes = set()
        self.merged = {}

    # ------------------------------------------------------------------ outputs

    def emit(self, dst: P, msg: WireMsg | XmitReqMsg) -> bool:
        """Queue ``msg`` for ``dst``. A bare ``XmitReqMsg`` (``impl.common.request_missing``'s) asks
        ``dst`` for its own messages. A control message too large for one datagram (a huge view) is
        not sent and counted; False then."""
        if isinstance(msg, XmitReqMsg):
            msg = NakXmitReqMsg(dst, msg)  # P is int | str (checked at start)
        if isinstance(msg, NakXmitReqMsg):
            self.stats.xmit_reqs_sent += 1
        try:
            data = encode(msg, self.config.codec_limits, self.config.max_members)
        except EncodeError:
            self.stats.oversized_control += 1
            return False
        self.outbox.append((dst, data))
        self.stats.datagrams_sent += 1
        return True

    def multicast(self, data: bytes, destinations: Iterable[P]) -> None:
        """Queue the datagram ``data`` once for each of ``destinations``."""
        out = self.outbox
        n = len(out)
        out.extend((dst, data) for dst in destinations)
        self.stats.datagrams_sent += len(out) - n

    def deliver_all(self, src: P, items: list[McastMsg]) -> None:
        if len(items) == 1:
            self.deliveries.append((src, items[0].payload))
        else:
            self.deliveries += [(src, item.payload) for item in items]
        self.stats.delivered += len(items)
