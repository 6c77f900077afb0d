"""UNICAST3's vocabulary: one member's state (``Node`` and its entries), the messages, the timers,
the configuration and the variants. ``spec/unicast3.py`` (the handlers, and the documentation of the
protocol: read it first) re-exports all of it; the batch and self paths (``spec/unicast3_batch.py``,
``spec/unicast3_self.py``) import it from here, so that the handlers can call them without an import
circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from spec.effects import Effect
from spec.unicast_common import cache_add, cache_drain  # noqa: F401  (decision 7, shared with UNICAST4)

E = TypeVar("E")

# ---------------------------------------------------------------------------------------------
# Connection states (digest 1.2 (e)). CLOSED entries are removed at once, so never stored.
OPEN = 0
CLOSING = 1
STATE_NAMES = ("OPEN", "CLOSING")


# ---------------------------------------------------------------------------------------------
# Messages (UnicastHeader3). Payloads are abstract: the application's n-th message to a peer is
# payload n. Plain NamedTuples: hashable, ordered, cheap.
class Data(NamedTuple):
    seqno: int
    conn_id: int
    first: bool
    payload: int
    oob: bool = False  # the message's OOB flag (decision 12)


class Ack(NamedTuple):
    seqno: int
    conn_id: int
    ts: int


class SendFirstSeqno(NamedTuple):
    ts: int


class XmitReq(NamedTuple):
    seqnos: tuple[int, ...]


class Close(NamedTuple):
    conn_id: int


Msg = Data | Ack | SendFirstSeqno | XmitReq | Close


# ---------------------------------------------------------------------------------------------
# Effects (``spec/effects.py``, shared by the unicast specs): Send, Deliver, WindowCreated,
# WindowRemoved, Purged, SyncRequested, Discarded.


# ---------------------------------------------------------------------------------------------
# Timers: the parts of the retransmit task, each an input that may fire at any time.
XMIT = 0  # one run of the retransmit task: pending ACKs, XMIT_REQs, HS resend
IDLE_SEND = 1  # conn_expiry_timeout elapsed on an OPEN send entry -> CLOSING
IDLE_RECV = 2  # ... on an OPEN receive entry -> CLOSING
CLOSE_SEND = 3  # conn_close_timeout elapsed on a CLOSING send entry -> removed, CLOSE sent
CLOSE_RECV = 4  # ... on a CLOSING receive entry -> removed
SYNC_EXPIRED = 5  # sync_min_interval elapsed since the last SEND_FIRST_SEQNO to peer
TIMER_NAMES = ("xmit", "idle_send", "idle_recv", "close_send", "close_recv", "sync_expired")


class Timer(NamedTuple):
    kind: int
    peer: int  # -1 for XMIT, which covers every peer


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical behaviour. All off is UNICAST3 as JGroups ships it."""

    no_timestamps: bool = False  # JGRP-1873: ACK / SEND_FIRST_SEQNO carry no timestamp
    no_hs_resend: bool = False  # JGRP-1548: a lost last message is never resent
    remove_on_view_change: bool = False  # JGRP-1586: entries removed at once, unacked lost
    ack_only_new: bool = False  # JGRP-1578: duplicates are not re-acknowledged
    no_sync_rate_limit: bool = False  # JGRP-1874: one SEND_FIRST_SEQNO per non-first message, none remembered
    no_message_cache: bool = False  # JGRP-2327: DATA without a usable receive entry is dropped (3.x)
    # Two more ways in which 3.4.x (before JGRP-1875's redesign; JGroups 3.4.8 in lockstep shows them)
    # differs from the releases after it:
    remove_without_ack_flush: bool = False  # removeReceiveConnection drops the window, pending ACKs unsent
    close_to_non_members: bool = False  # a send entry's removal sends CLOSE to a peer outside the view too
    # JGRP-2573 (3.6.0 to 5.1.x: SeqnoList.removeHigherThan clears nothing below its offset): a
    # previous-batch record below the window's highest delivered seqno filters nothing
    stale_xmit_record_asks_all: bool = False
    oob_redelivers: bool = False  # a defect (decision 12): the drain delivers an OOB message again
    self_as_peer: bool = False  # 3.4.x (decision 26): a DATA to self goes through a receive entry, ACKed
    oob_keeps_message: bool = False  # 3.4.x (decision 12): an OOB DATA's slot holds the message, not a placeholder

    @property
    def keeps_oob_payload(self) -> bool:
        """Whether an OOB DATA's window slot holds the message itself (decision 12)."""
        return self.oob_redelivers or self.oob_keeps_message


@dataclass(frozen=True, slots=True)
class Config:
    """What a member knows before it starts."""

    members: int  # members are 0 .. members-1
    variant: Variant = Variant()
    conn_expiry: bool = True  # conn_expiry_timeout > 0: idle entries become CLOSING
    conn_close: bool = True  # conn_close_timeout > 0: CLOSING entries are removed
    # The retransmit task as one input per connection (``Timer(XMIT, peer)``) instead of one for all.
    # JGroups runs the task on the timer thread while other threads handle messages, taking each
    # entry's lock in turn, so a run may interleave with handlers between two connections; one
    # input per connection allows those interleavings (a superset of the runs of one input for
    # all) and makes the connections of a member independent for partial-order reduction.
    xmit_per_connection: bool = False
    ack_threshold: int = 100  # a batch of at least this many DATA is acknowledged at once (decision 25)


# ---------------------------------------------------------------------------------------------
# State of one member.
@dataclass(frozen=True, slots=True)
class SendEntry:
    """Connection to one peer, sender side (SenderEntry)."""

    conn_id: int
    state: int
    acked: int  # HA: highest acknowledged seqno; everything <= acked is purged
    unacked: tuple[int, ...]  # payloads of seqnos acked+1 .. HS, all still stored
    watermark: tuple[int, int]  # (HA, HS) as read by the previous retransmit run
    last_ts: int  # newest ACK / SEND_FIRST_SEQNO timestamp accepted; 0 = none yet
    oob: frozenset[int] = frozenset()  # the unacked seqnos sent OOB (decision 12)
    dont_loopback: frozenset[int] = frozenset()  # the entry for oneself: its DONT_LOOPBACK seqnos (decision 27)

    @property
    def highest_sent(self) -> int:
        return self.acked + len(self.unacked)


@dataclass(frozen=True, slots=True)
class RecvEntry:
    """Connection to one peer, receiver side (ReceiverEntry)."""

    conn_id: int
    state: int
    delivered: int  # highest seqno delivered; slots up to it are gone
    buffered: tuple[Data | None, ...]  # seqnos delivered+1 .. highest received; None = gap
    ack_pending: bool

    @property
    def highest_received(self) -> int:
        return self.delivered + len(self.buffered)

    def missing(self) -> tuple[int, ...]:
        return tuple(self.delivered + 1 + i for i, m in enumerate(self.buffered) if m is None)


@dataclass(frozen=True, slots=True)
class Node:
    """Everything one member's UNICAST3 holds."""

    me: int
    members: frozenset[int]  # the current view
    send: tuple[SendEntry | None, ...]  # indexed by peer
    recv: tuple[RecvEntry | None, ...]  # indexed by peer
    cache: tuple[frozenset[Data], ...]  # msg_cache, indexed by peer: its DATA awaiting a receive entry
    sync_sent: frozenset[int]  # last_sync_sent: peers asked within sync_min_interval
    xmit_last: tuple[int, ...]  # xmit_task_map: highest missing seqno seen last run; 0 = none
    timestamper: int  # last timestamp issued
    next_conn_id: int  # conn_id of the next send entry
    # msg_cache's OOB DATA per sender in the order they arrived (first copies), the one order a drain
    # shows (decision 7); () while no OOB DATA is cached, so a world without OOB keeps its states
    cache_order: tuple[tuple[Data, ...], ...] = ()


class Step(NamedTuple):
    node: Node
    effects: tuple[Effect, ...]


def initial_node(me: int, cfg: Config, members: frozenset[int]) -> Node:
    """A member that has just started: no connections, view ``members``."""
    none = (None,) * cfg.members
    return Node(me, members, none, none, (frozenset(),) * cfg.members, frozenset(), (0,) * cfg.members, 0, 0)


def set_peer(entries: tuple[E, ...], peer: int, value: E) -> tuple[E, ...]:
    """``entries`` with the slot of ``peer`` replaced."""
    return entries[:peer] + (value,) + entries[peer + 1 :]
