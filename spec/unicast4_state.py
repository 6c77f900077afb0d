"""UNICAST4's vocabulary: its messages, timers, settings, variants, the state of one member and the
properties of that state.

``spec/unicast4.py`` is the documentation of the protocol and holds the handlers; this module holds
what they act on. Everything here is a value (frozen dataclasses and NamedTuples of ints, bools and
tuples; per-peer maps are tuples indexed by member number). UNICAST4 keeps UnicastHeader's five
message types, so they have UNICAST3's shapes; the entries are UNICAST3's with a fixed window: a
send entry also holds the application threads blocked on it, a receive entry its ACK counter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spec import unicast_common as common

# ---------------------------------------------------------------------------------------------
# Connection states. CLOSED entries are removed at once (their buffer closed), so never stored.
OPEN = 0
CLOSING = 1
STATE_NAMES = ("OPEN", "CLOSING")

SHORT_MAX = 32767  # Short.MAX_VALUE: getNewConnectionId wraps to 0 after it (16-bit conn_ids)
DEFAULT_CAPACITY = 2048  # UNICAST4.capacity


# ---------------------------------------------------------------------------------------------
# Messages (UnicastHeader). Payloads are abstract: the application's n-th message to a peer is n.
class Data(NamedTuple):
    seqno: int
    conn_id: int
    first: bool
    payload: int
    oob: bool = False  # the message's OOB flag (spec/unicast4.py decision 10)


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


class SendDropped(NamedTuple):
    """Observation: an application thread's message ``payload`` to ``dst`` (its seqno taken) was
    dropped, never stored: by a full window under ``drop_dont_block`` (JGRP-2873), its seqno left
    a gap nobody can fill. (Threads failed by a closing buffer are ``Discarded``.)"""

    dst: int
    seqno: int
    payload: int


# ---------------------------------------------------------------------------------------------
# Timers: the parts of the retransmit task, and the blocked application threads.
XMIT = 0  # one run of the retransmit task: pending ACKs, XMIT_REQs, HS resend
IDLE_SEND = 1  # conn_expiry_timeout elapsed on an OPEN send entry -> CLOSING
IDLE_RECV = 2  # ... on an OPEN receive entry -> CLOSING
CLOSE_SEND = 3  # conn_close_timeout elapsed on a CLOSING send entry -> CLOSED: removed, CLOSE sent
CLOSE_RECV = 4  # ... on a CLOSING receive entry -> removed
SYNC_EXPIRED = 5  # sync_min_interval elapsed since the last SEND_FIRST_SEQNO to peer
SEND = 6  # the thread blocked with ``seqno`` on the send entry to ``peer`` adds and sends
IDLE_BLOCKED = 7  # IDLE_SEND on an entry with a blocked thread (its expiry is certain: decision 9)
CLOSE_BLOCKED = 8  # CLOSE_SEND on an entry with a blocked thread (likewise)
TIMER_NAMES = ("xmit", "idle_send", "idle_recv", "close_send", "close_recv", "sync_expired", "send",
               "idle_blocked", "close_blocked")


class Timer(NamedTuple):
    kind: int
    peer: int  # -1 for XMIT (every peer) unless xmit_per_connection
    seqno: int = 0  # SEND: the seqno the blocked thread holds


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects. All off is UNICAST4 as JGroups ships it (master,
    late 2026; 5.4.12.Final differs only in the timeouts' defaults)."""

    drop_dont_block: bool = False  # JGRP-2873 (5.4.5): a DONT_BLOCK send on a full window is dropped
    zero_conn_timeouts: bool = False  # JGRP-2929: conn_expiry_timeout = conn_close_timeout = 0
    any_conn_id: bool = False  # before JGRP-2852: any different conn_id (UNICAST3's rule), not a greater one
    oob_redelivers: bool = False  # a defect (decision 10): the window keeps an OOB message, the drain redelivers it
    dont_loopback_delivered: bool = False  # a defect (decision 13): the drain delivers a DONT_LOOPBACK message to self


@dataclass(frozen=True, slots=True)
class Config:
    """What a member knows before it starts (JGroups' defaults where it has one)."""

    members: int  # members are 0 .. members-1
    variant: Variant = Variant()
    conn_expiry: bool = True  # conn_expiry_timeout > 0 (10 s; 5.4.12: 120 s)
    conn_close: bool = True  # conn_close_timeout > 0 (10 s; 5.4.12: 240 s)
    xmit_per_connection: bool = False  # the retransmit task as one input per connection (UNICAST3's)
    capacity: int = DEFAULT_CAPACITY  # slots of every window
    ack_threshold: int = 0  # <= 0: capacity // 4 (UNICAST4.init)
    first_conn_id: int = 0  # the member's last_conn_id at start (0; a model may start it near the wrap)
    dont_block: bool = False  # the application flags its sends DONT_BLOCK

    @property
    def threshold(self) -> int:
        return self.ack_threshold if self.ack_threshold > 0 else self.capacity // 4

    @property
    def expiry(self) -> bool:
        return self.conn_expiry and not self.variant.zero_conn_timeouts

    @property
    def closing(self) -> bool:
        return self.conn_close and not self.variant.zero_conn_timeouts


# ---------------------------------------------------------------------------------------------
# State of one member.
@dataclass(frozen=True, slots=True)
class SendEntry:
    """Connection to one peer, sender side (SenderEntry over a FixedBuffer at offset 0).

    The send window is (acked, highest_sent]: ``acked`` is its low (== hd: a sender never removes,
    a forced purge moves both), ``unacked`` the slots above it (a payload, or None where a thread
    holding that seqno has not added it yet, or, JGRP-2873, never will)."""

    conn_id: int
    state: int
    acked: int  # HA: low == hd of the send window; everything <= acked is purged
    unacked: tuple[int | None, ...]  # slots acked+1 .. HS
    watermark: tuple[int, int]  # (HA, HS) as read by the previous retransmit run
    last_ts: int  # newest ACK / SEND_FIRST_SEQNO timestamp accepted; 0 = none yet
    seqno: int  # the last seqno a thread took (SenderEntry.seqno - 1)
    blocked: tuple[tuple[int, int], ...]  # (seqno, payload) of the threads waiting for room, ascending
    oob: frozenset[int] = frozenset()  # the seqnos taken by OOB sends, stored unacked or held blocked (decision 10)
    # the send entry for oneself only (decisions 12, 13; empty / 0 on every other):
    dont_loopback: frozenset[int] = frozenset()  # seqnos taken by DONT_LOOPBACK sends, stored or held blocked
    oob_delivered: frozenset[int] = frozenset()  # stored OOB seqnos a loopback delivered (OOB_DELIVERED)
    acks_counted: int = 0  # acks_sent: deliverBatch's ACK counter (needToSendAck on the send entry)

    @property
    def highest_sent(self) -> int:
        return self.acked + len(self.unacked)


@dataclass(frozen=True, slots=True)
class RecvEntry:
    """Connection to one peer, receiver side (ReceiverEntry over a FixedBuffer at first seqno - 1)."""

    conn_id: int
    state: int
    delivered: int  # low == hd: delivery nulls the slots
    buffered: tuple[Data | None, ...]  # seqnos delivered+1 .. highest received; None = gap
    ack_pending: bool  # send_ack
    acks_counted: int  # acks_sent: the ACK counter of Entry.update

    @property
    def highest_received(self) -> int:
        return self.delivered + len(self.buffered)

    def missing(self) -> tuple[int, ...]:
        return tuple(self.delivered + 1 + i for i, m in enumerate(self.buffered) if m is None)


@dataclass(frozen=True, slots=True)
class Node:
    """Everything one member's UNICAST4 holds."""

    me: int
    members: frozenset[int]  # the current view
    send: tuple[SendEntry | None, ...]  # indexed by peer
    recv: tuple[RecvEntry | None, ...]  # indexed by peer
    sync_sent: frozenset[int]  # last_sync_sent: peers asked within sync_min_interval
    xmit_last: tuple[int, ...]  # xmit_task_map: highest missing seqno seen last run; 0 = none
    timestamper: int  # last timestamp issued
    next_conn_id: int  # last_conn_id: the conn_id the next send entry gets
    cache: tuple[frozenset[Data], ...] = ()  # msg_cache per sender: DATA that found no usable entry
    cache_order: tuple[tuple[Data, ...], ...] = ()  # ... its OOB DATA in arrival order; () when none


def initial_node(me: int, cfg: Config, members: frozenset[int]) -> Node:
    """A member that has just started: no connections, view ``members``, an empty message cache."""
    none = (None,) * cfg.members
    return Node(me, members, none, none, frozenset(), (0,) * cfg.members, 0, cfg.first_conn_id,
                (frozenset(),) * cfg.members)


# ---------------------------------------------------------------------------------------------
# Properties of UNICAST4 state: UNICAST3's (``spec/unicast_common.py``) and the fixed windows'.
def window_within_capacity(cfg: Config, node: Node) -> bool:
    """FixedBuffer: every window holds seqnos in (low, low + capacity] only: a send window's
    highest sent and a receive window's highest received are at most ``capacity`` above its low."""
    return (all(e is None or len(e.unacked) <= cfg.capacity for e in node.send)
            and all(r is None or len(r.buffered) <= cfg.capacity for r in node.recv))


def seqno_discipline(node: Node) -> bool:
    """Digest I2 on a send entry: the seqnos threads took are 1 .. ``seqno``, each exactly once: stored
    (or purged), or held by a blocked thread above the window; none beyond the counter."""
    for entry in node.send:
        if entry is None:
            continue
        held = [s for s, _ in entry.blocked]
        if len(set(held)) != len(held) or entry.highest_sent > entry.seqno or any(s > entry.seqno for s in held):
            return False
        for index, slot in enumerate(entry.unacked):
            if slot is not None and entry.acked + 1 + index in held:
                return False
    return True


def nothing_unacked(node: Node, peer: int) -> bool:
    """Liveness goal clause: the send entry to ``peer`` (if any) has nothing unacknowledged and no
    thread blocked on it."""
    entry = node.send[peer]
    return entry is None or (not any(s is not None for s in entry.unacked) and not entry.blocked)


def no_thread_blocked(node: Node) -> bool:
    """Liveness goal of ``senders_released``: no application thread waits on a send entry."""
    return all(e is None or not e.blocked for e in node.send)


window_order = common.window_order
conn_id_purity = common.conn_id_purity
timestamps_issued = common.timestamps_issued
acks_monotone = common.acks_monotone
purge_is_safe = common.purge_is_safe
purge_covered = common.purge_covered
