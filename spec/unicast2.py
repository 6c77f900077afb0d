"""UNICAST2 (negative acknowledgements and periodic STABLE) as an executable specification of one member.

Rules
-----
1. This module is the documentation of UNICAST2 as JGroups last shipped it (the 3.6 line, digest
   1.1 (c)); the design document (seed ``000``) is the reading it started from. It says *what one
   member does*: its state, and a handler for every input (application send, each message type,
   view change, each timer, the receiver-removal test hook). ``models/`` composes members with a
   network into a transition system.
2. State is a value (frozen dataclasses of ints, bools and tuples; per-peer maps are tuples indexed
   by member number). Handlers are pure functions ``(node, input) -> Step``.
3. Handlers return the new node and their effects as data (``spec/effects.py``): packets, deliveries
   and observations that the properties and charts use and the protocol never reads.
4. Time is abstract: each periodic task is a timer input that may arrive at any moment.

Theory of operation
-------------------
Member A sends to B on a *send entry*: a conn_id, the next seqno and the window of messages not yet
known to be stable at B. Every DATA carries (seqno, conn_id, first), first being true for seqno 1.
B keeps a *receive entry* per sender (conn_id, window). B creates it only from a DATA marked first
(and acknowledges every first DATA with an ACK, JGRP-1563); a non-first DATA with no entry or another
conn_id is dropped and answered by SEND_FIRST_SEQNO, to which A replies by resending its window up to
the triggering seqno, the lowest message marked first. Acknowledgement is negative: B asks for gaps
it already saw on the previous run of the retransmit task (XMIT_REQ), and the stable task sends
STABLE(hd, hr) so that A purges up to B's highest delivered seqno and resends what B has not
received above hr (a lost *last* message). The stable task stops repeating an unchanged hr after
``max_stable_msgs`` STABLEs. A view change removes both entries of a peer that left at once (the
receive entry after a final STABLE): unacknowledged messages are discarded.

Decisions (digest 1.1 (c2) and section 6), each with JGroups' code as the reference
-----------------------------------------------------------------------------------
1. Every DATA carries the conn_id (code since the first implementation). The design draft put it
   on the first message only: variant ``conn_id_first_only`` (seed scenario #6).
2. SEND_FIRST_SEQNO carries the triggering seqno and no conn_id; the sender answers with every
   stored message up to it, the lowest one as a copy marked first (code). The seed's rule 4 (only
   the lowest message; drop a request whose conn_id is stale) is the fix flag
   ``fix_sync_lowest_only`` (the conn_id check cannot exist: the header has no conn_id).
3. SEND_FIRST_SEQNO is not rate limited: one per non-first DATA without a matching entry.
4. STABLE(hd, hr, conn_id) with a matching conn_id purges up to hd, forced (clamped to the highest
   seqno sent); if hr is below the highest sent, the stored messages hr .. highest are resent.
5. ACK(seqno, conn_id) answers every first DATA (new or duplicate) and only sets ``ack_received``;
   until then the retransmit task resends the lowest stored message as first (JGRP-1563).
6. A retransmitted first DATA with the entry's conn_id keeps the window (seed "Issues").
7. The byte-triggered STABLE (max_bytes, 10 MB by default) is not modelled: model payloads are far
   below it. The stable task is the only periodic STABLE.
8. OOB messages, batches and the AgeOutCache for non-members (max_retransmit_time) are left out
   (digest A.5); the connection reaper (conn_expiry_timeout, off by default) is the IDLE_* timers.
9. The receiver-removal test hook sends the final STABLE first, like a view change.
10. Duplicates after a receiver-side reset are allowed (properties are per window incarnation).

Variants (flags in ``Variant``). All off is UNICAST2 as shipped, less the retransmission-list
defect of the 3.6 line (JGRP-2573, ``stale_xmit_record_asks_all``). Four flags bring back
defects UNICAST2 had before its last release, one the defect its last line (3.6) had in the list
type it shares with UNICAST3 and NAKACK2 (fixed in 5.2.0, after UNICAST2 was gone); three *fix*
flags give the defects it shipped with a twin that differs in that one thing (none was ever
released in UNICAST2: UNICAST3 fixed them instead). Each JGroups release the lockstep runs on is
the spec with its flags (``checks/jgroups/unicast2.py``):

==============================  ========================================================
``no_conn_ids``                 the original UNICAST: no connection identity (seed Motivation)
``conn_id_first_only``          conn_id on the first DATA only, none on STABLE (seed #6)
``no_first_ack``                no ACK of a first DATA, no first-message resend (JGRP-1563;
                                before 3.2.6)
``xmit_all_gaps``               every retransmit run asks for every gap it sees, none kept
                                for the next run (before JGRP-1539, 3.3.0)
``stale_xmit_record_asks_all``  a previous-batch record below the window's hd filters
                                nothing: every gap is asked for at once (JGRP-2573: 3.6's
                                SeqnoList.removeHigherThan clears nothing below its offset)
``fix_resend_highest``      resend the highest sent seqno while (HA, HS) is stalled, as
                            UNICAST3 does (fixes JGRP-1548: last message lost, STABLE capped)
``fix_timestamps``          SEND_FIRST_SEQNO and STABLE carry a timestamp; only newer
                            ones are accepted, as in UNICAST3 (fixes JGRP-1873)
``fix_sync_lowest_only``    answer SEND_FIRST_SEQNO with the lowest message only, the seed's
                            rule 4 (fixes JGRP-1874's quadratic resend)
==========================  ============================================================
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple, TypeVar

from spec import unicast_common as common
from spec.effects import (
    Deliver,
    Discarded,
    Effect,
    Purged,
    Send,
    SyncAnswered,
    SyncRequested,
    WindowCreated,
    WindowRemoved,
)
from spec.unicast_common import (  # noqa: F401  (the properties, re-exported)
    acks_monotone,
    nothing_unacked,
    purge_covered,
    purge_is_safe,
    timestamps_issued,
    window_order,
)

E = TypeVar("E")

NO_CONN = -1  # the conn_id field of a header that carries none (variants only)
MAX_CONN_ID = 2**15 - 1  # conn_ids are Java shorts: 0 .. 32767, then 0 again


# ---------------------------------------------------------------------------------------------
# Messages (Unicast2Header). Payloads are abstract: the application's n-th message to a peer is
# payload n. ``ts`` is 0 unless ``fix_timestamps``. (ACK has no timestamp even then: it changes
# nothing but ``ack_received``, and a stale one is harmless.)
class Data(NamedTuple):
    seqno: int
    conn_id: int
    first: bool
    payload: int


class XmitReq(NamedTuple):
    seqnos: tuple[int, ...]


class SendFirstSeqno(NamedTuple):
    seqno: int  # the seqno of the DATA that triggered the request
    ts: int


class Stable(NamedTuple):
    hd: int  # highest delivered
    hr: int  # highest received
    conn_id: int
    ts: int


class Ack(NamedTuple):
    seqno: int  # of the first DATA acknowledged
    conn_id: int


Msg = Data | XmitReq | SendFirstSeqno | Stable | Ack


# ---------------------------------------------------------------------------------------------
# Timers: the periodic tasks, each an input that may fire at any time.
XMIT = 0  # one run of the retransmit task: XMIT_REQs, first-message resend
STABLE = 1  # one run of the stable task: STABLE to every sender with a receive entry
IDLE_SEND = 2  # conn_expiry_timeout elapsed on the send entry to peer: removed (reaper)
IDLE_RECV = 3  # ... on the receive entry for peer: final STABLE, removed
TIMER_NAMES = ("xmit", "stable", "idle_send", "idle_recv")


class Timer(NamedTuple):
    kind: int
    peer: int  # -1 for XMIT and STABLE, which cover every peer


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches: defects from before UNICAST2's last release or of its last line, and fixes it never
    shipped."""

    no_conn_ids: bool = False  # seed Motivation: the original UNICAST, no connection identity
    conn_id_first_only: bool = False  # seed #6: conn_id on the first DATA only
    no_first_ack: bool = False  # JGRP-1563: a lone lost first message is never recovered
    xmit_all_gaps: bool = False  # before JGRP-1539: every retransmit run asks for every gap
    stale_xmit_record_asks_all: bool = False  # JGRP-2573: a record below hd filters nothing
    fix_resend_highest: bool = False  # JGRP-1548's fix (UNICAST3): resend HS while stalled
    fix_timestamps: bool = False  # JGRP-1873's fix (UNICAST3, JGRP-1875): timestamps
    fix_sync_lowest_only: bool = False  # JGRP-1874's fix (seed rule 4): resend the lowest only


@dataclass(frozen=True, slots=True)
class Config:
    """What a member knows before it starts."""

    members: int  # members are 0 .. members-1
    variant: Variant = Variant()
    max_stable_msgs: int = 5  # STABLEs sent for one unchanged hr (JGroups' default: 5)
    conn_expiry: bool = False  # conn_expiry_timeout > 0: the reaper removes idle entries
    sync_resend_bound: int = 0  # not a protocol setting: the bound sync_resend_bounded checks (0: none)


# ---------------------------------------------------------------------------------------------
# State of one member.
@dataclass(frozen=True, slots=True)
class SendEntry:
    """Connection to one peer, sender side (SenderEntry)."""

    conn_id: int
    acked: int  # HA: highest seqno purged by a STABLE
    unacked: tuple[int, ...]  # payloads of seqnos acked+1 .. HS, all still stored
    ack_received: bool  # the first message was acknowledged (JGRP-1563)
    watermark: tuple[int, int]  # (HA, HS) at the previous retransmit run (fix_resend_highest only)
    last_ts: int  # newest timestamp accepted (fix_timestamps only); 0 = none yet

    @property
    def highest_sent(self) -> int:
        return self.acked + len(self.unacked)


@dataclass(frozen=True, slots=True)
class RecvEntry:
    """Connection to one peer, receiver side (ReceiverEntry)."""

    conn_id: int
    delivered: int  # hd: highest seqno delivered; slots up to it are gone
    buffered: tuple[Data | None, ...]  # seqnos delivered+1 .. hr; None = gap
    last_highest: int  # hr reported by the last STABLE of the stable task
    stable_count: int  # STABLEs sent in a row for that hr

    @property
    def highest_received(self) -> int:
        return self.delivered + len(self.buffered)

    def missing(self) -> tuple[int, ...]:
        return tuple(self.delivered + 1 + i for i, m in enumerate(self.buffered) if m is None)


@dataclass(frozen=True, slots=True)
class Node:
    """Everything one member's UNICAST2 holds."""

    me: int
    members: frozenset[int]  # the current view
    send: tuple[SendEntry | None, ...]  # indexed by peer
    recv: tuple[RecvEntry | None, ...]  # indexed by peer
    xmit_last: tuple[int, ...]  # xmit_task_map: highest missing seqno seen last run; 0 = none
    timestamper: int  # last timestamp issued (fix_timestamps only)
    next_conn_id: int  # conn_id of the next send entry


class Step(NamedTuple):
    node: Node
    effects: tuple[Effect, ...]


def initial_node(me: int, cfg: Config, members: frozenset[int]) -> Node:
    """A member that has just started: no connections, view ``members``."""
    none = (None,) * cfg.members
    return Node(me, members, none, none, (0,) * cfg.members, 0, 0)


def _set(entries: tuple[E, ...], peer: int, value: E) -> tuple[E, ...]:
    """``entries`` with the slot of ``peer`` replaced."""
    return entries[:peer] + (value,) + entries[peer + 1 :]


def _data(cfg: Config, entry: SendEntry, seqno: int, *, first: bool) -> Data:
    """The DATA for stored ``seqno`` as sent: its own header, or a copy marked ``first``."""
    conn_id = entry.conn_id if first or not cfg.variant.conn_id_first_only else NO_CONN
    return Data(seqno, conn_id, first, entry.unacked[seqno - entry.acked - 1])


# ---------------------------------------------------------------------------------------------
# Application send (UNICAST2.down).
def on_send(cfg: Config, node: Node, dst: int, payload: int) -> Step:
    """The application sends ``payload`` to ``dst``.

    No entry: open a connection with a fresh conn_id. The message gets the next seqno, is stored
    before it is sent, and is marked first iff its seqno is 1.
    """
    entry = node.send[dst]
    next_conn_id = node.next_conn_id
    if entry is None:
        conn_id = NO_CONN if cfg.variant.no_conn_ids else next_conn_id
        entry = SendEntry(conn_id, 0, (), False, (0, 0), 0)
        if not cfg.variant.no_conn_ids:
            next_conn_id = 0 if next_conn_id == MAX_CONN_ID else next_conn_id + 1
    entry = replace(entry, unacked=entry.unacked + (payload,))
    seqno = entry.highest_sent
    node = replace(node, send=_set(node.send, dst, entry), next_conn_id=next_conn_id)
    return Step(node, (Send(dst, _data(cfg, entry, seqno, first=seqno == 1)),))


# ---------------------------------------------------------------------------------------------
# Receiving (UNICAST2.up -> handleDataReceived, handleXmitRequest, stable, ...).
def on_receive(cfg: Config, node: Node, src: int, msg: Msg) -> Step:
    """Dispatch a message from ``src`` to its handler."""
    if isinstance(msg, Data):
        return _on_data(cfg, node, src, msg)
    if isinstance(msg, XmitReq):
        return _on_xmit_req(cfg, node, src, msg)
    if isinstance(msg, SendFirstSeqno):
        return _on_send_first_seqno(cfg, node, src, msg)
    if isinstance(msg, Stable):
        return _on_stable(cfg, node, src, msg)
    return _on_ack(cfg, node, src, msg)


def same_connection(cfg: Config, entry: RecvEntry, msg: Data) -> bool:
    """Does ``msg`` belong to the window of ``entry``? (A header without conn_id, in the variants,
    belongs to whatever window there is.)"""
    return cfg.variant.no_conn_ids or msg.conn_id == entry.conn_id or (
        cfg.variant.conn_id_first_only and not msg.first and msg.conn_id == NO_CONN)


def _on_data(cfg: Config, node: Node, src: int, msg: Data) -> Step:
    """DATA: find or create the receive entry (getReceiverEntry), add, deliver in order, and ACK a
    first DATA.

    A first DATA with no entry, or with a conn_id different from the entry's, starts a new window
    just below its seqno. A non-first DATA without a matching entry is dropped and answered by a
    SEND_FIRST_SEQNO. Variant ``no_conn_ids``: a missing entry is created expecting seqno 1.
    """
    entry = node.recv[src]
    effects: list[Effect] = []
    if entry is None or not same_connection(cfg, entry, msg):
        if cfg.variant.no_conn_ids:
            entry = RecvEntry(NO_CONN, 0, (), 0, 0)
            effects.append(WindowCreated(src, NO_CONN, 0))
        elif not msg.first:
            node, ts = _next_timestamp(cfg, node)
            return Step(node, (Send(src, SendFirstSeqno(msg.seqno, ts)), SyncRequested(src)))
        else:
            entry = RecvEntry(msg.conn_id, msg.seqno - 1, (), 0, 0)
            effects.append(WindowCreated(src, msg.conn_id, msg.seqno - 1))
    hd, buffered, payloads = common.add_and_deliver(entry.delivered, entry.buffered, msg)
    entry = replace(entry, delivered=hd, buffered=buffered)
    effects.extend(Deliver(src, payload) for payload in payloads)
    node = replace(node, recv=_set(node.recv, src, entry))
    if msg.first and not cfg.variant.no_first_ack:
        effects.append(Send(src, Ack(msg.seqno, msg.conn_id)))
    return Step(node, tuple(effects))


def _next_timestamp(cfg: Config, node: Node) -> tuple[Node, int]:
    if not cfg.variant.fix_timestamps:
        return node, 0
    return replace(node, timestamper=node.timestamper + 1), node.timestamper + 1


def _accept_timestamp(cfg: Config, node: Node, peer: int, entry: SendEntry, ts: int) -> Node | None:
    """fix_timestamps: the node with ``ts`` recorded if it is the first or strictly newer, else
    None (the message is ignored). Without the fix every message is accepted."""
    if not cfg.variant.fix_timestamps:
        return node
    if entry.last_ts != 0 and ts <= entry.last_ts:
        return None
    return replace(node, send=_set(node.send, peer, replace(entry, last_ts=ts)))


def _on_xmit_req(cfg: Config, node: Node, src: int, msg: XmitReq) -> Step:
    """XMIT_REQ(seqnos): resend every listed seqno still stored, with its own header (no conn_id
    check: the request carries none)."""
    entry = node.send[src]
    if entry is None:
        return Step(node, ())
    resent = tuple(Send(src, _data(cfg, entry, s, first=s == 1))
                   for s in msg.seqnos if entry.acked < s <= entry.highest_sent)
    return Step(node, resent)


def _on_send_first_seqno(cfg: Config, node: Node, src: int, msg: SendFirstSeqno) -> Step:
    """SEND_FIRST_SEQNO(seqno): resend every stored message up to ``seqno``, the lowest as a copy
    marked first. ``fix_sync_lowest_only``: the lowest only."""
    entry = node.send[src]
    if entry is None:
        return Step(node, ())
    accepted = _accept_timestamp(cfg, node, src, entry, msg.ts)
    if accepted is None:
        return Step(node, ())
    node = accepted
    lowest = entry.acked + 1
    upto = lowest if cfg.variant.fix_sync_lowest_only else min(msg.seqno, entry.highest_sent)
    if lowest > entry.highest_sent or upto < lowest:
        return Step(node, ())
    resent = [Send(src, _data(cfg, entry, lowest, first=True))]
    resent += [Send(src, _data(cfg, entry, s, first=s == 1)) for s in range(lowest + 1, upto + 1)]
    return Step(node, (*resent, SyncAnswered(src, len(resent))))


def _on_stable(cfg: Config, node: Node, src: int, msg: Stable) -> Step:
    """STABLE(hd, hr, conn_id): on the same connection, purge up to hd (forced: clamped to the
    highest sent), then resend every stored message from hr up to the highest sent."""
    entry = node.send[src]
    if entry is None:
        return Step(node, ())
    no_conn = cfg.variant.no_conn_ids or (cfg.variant.conn_id_first_only and msg.conn_id == NO_CONN)
    if not no_conn and msg.conn_id != entry.conn_id:
        return Step(node, ())
    accepted = _accept_timestamp(cfg, node, src, entry, msg.ts)
    if accepted is None:
        return Step(node, ())
    entry = accepted.send[src]
    assert entry is not None
    effects: list[Effect] = []
    upto = min(msg.hd, entry.highest_sent)
    if upto > entry.acked:
        entry = replace(entry, acked=upto, unacked=entry.unacked[upto - entry.acked:])
        effects.append(Purged(src, entry.conn_id, upto))
    if entry.highest_sent > msg.hr:
        effects.extend(Send(src, _data(cfg, entry, s, first=s == 1))
                       for s in range(max(msg.hr, entry.acked + 1), entry.highest_sent + 1))
    return Step(replace(accepted, send=_set(accepted.send, src, entry)), tuple(effects))


def _on_ack(cfg: Config, node: Node, src: int, msg: Ack) -> Step:
    """ACK(seqno, conn_id): the first message of the connection arrived; stop resending it."""
    entry = node.send[src]
    if entry is None or (msg.conn_id != entry.conn_id and not cfg.variant.no_conn_ids):
        return Step(node, ())
    return Step(replace(node, send=_set(node.send, src, replace(entry, ack_received=True))), ())


# ---------------------------------------------------------------------------------------------
# Membership and removal.
def on_view(cfg: Config, node: Node, members: frozenset[int]) -> Step:
    """A new view: both entries of every peer that left are removed at once. The send entry's
    unacknowledged messages are discarded; the receive entry first sends a final STABLE."""
    effects: list[Effect] = []
    for peer in range(cfg.members):
        if peer in members:
            continue
        entry = node.send[peer]
        if entry is not None:
            if entry.unacked:
                effects.append(Discarded(peer, entry.unacked, False))
            node = replace(node, send=_set(node.send, peer, None))
        node, removed = _remove_receiver(cfg, node, peer)
        effects.extend(removed)
        node = replace(node, xmit_last=_set(node.xmit_last, peer, 0))
    return Step(replace(node, members=members), tuple(effects))


def on_remove_receiver(cfg: Config, node: Node, peer: int) -> Step:
    """removeReceiveConnection (the hook JGroups' tests use): final STABLE, then drop the entry."""
    node, effects = _remove_receiver(cfg, node, peer)
    return Step(node, tuple(effects))


def _remove_receiver(cfg: Config, node: Node, peer: int) -> tuple[Node, list[Effect]]:
    entry = node.recv[peer]
    if entry is None:
        return node, []
    node, stable = _stable(cfg, node, entry)
    return replace(node, recv=_set(node.recv, peer, None)), [Send(peer, stable), WindowRemoved(peer)]


def _stable(cfg: Config, node: Node, entry: RecvEntry) -> tuple[Node, Stable]:
    """STABLE(hd, hr) of ``entry``'s window, with a new timestamp (fix_timestamps) and its conn_id
    (none in the variant ``conn_id_first_only``)."""
    node, ts = _next_timestamp(cfg, node)
    conn_id = NO_CONN if cfg.variant.conn_id_first_only else entry.conn_id
    return node, Stable(entry.delivered, entry.highest_received, conn_id, ts)


# ---------------------------------------------------------------------------------------------
# Timers (the retransmit task, the stable task and the connection reaper).
def enabled_timers(cfg: Config, node: Node) -> tuple[Timer, ...]:
    """The timers that can fire now, in a fixed order."""
    timers = [Timer(XMIT, -1), Timer(STABLE, -1)]
    if cfg.conn_expiry:
        for peer in range(cfg.members):
            if node.send[peer] is not None:
                timers.append(Timer(IDLE_SEND, peer))
            if node.recv[peer] is not None:
                timers.append(Timer(IDLE_RECV, peer))
    return tuple(timers)


def on_timer(cfg: Config, node: Node, timer: Timer) -> Step:
    """Fire ``timer`` (it must be one of ``enabled_timers``)."""
    if timer.kind == XMIT:
        return _retransmit_task(cfg, node)
    if timer.kind == STABLE:
        return _stable_task(cfg, node)
    if timer.kind == IDLE_SEND:
        entry = node.send[timer.peer]
        assert entry is not None
        effects = (Discarded(timer.peer, entry.unacked, False),) if entry.unacked else ()
        return Step(replace(node, send=_set(node.send, timer.peer, None)), effects)
    return on_remove_receiver(cfg, node, timer.peer)  # IDLE_RECV: same as the hook


def _retransmit_task(cfg: Config, node: Node) -> Step:
    """One run: previous-batch XMIT_REQs (receivers), then the first-message resend (senders whose
    first message is not acknowledged) and, with ``fix_resend_highest``, the HS resend."""
    node, effects = _request_missing(cfg, node)
    send = list(node.send)
    for peer, entry in enumerate(send):
        if entry is None or not entry.unacked:
            continue
        if not entry.ack_received and not cfg.variant.no_first_ack:
            effects.append(Send(peer, _data(cfg, entry, entry.acked + 1, first=True)))
        if cfg.variant.fix_resend_highest:
            mark = (entry.acked, entry.highest_sent)
            if entry.watermark == mark:
                effects.append(Send(peer, _data(cfg, entry, mark[1], first=mark[1] == 1)))
            else:
                send[peer] = replace(entry, watermark=mark)
    return Step(replace(node, send=tuple(send)), tuple(effects))


def _request_missing(cfg: Config, node: Node) -> tuple[Node, list[Effect]]:
    """Previous-batch retransmission (JGRP-1539): XMIT_REQ for every gap already seen on the last
    run (``unicast_common.missing_requests``). ``xmit_all_gaps``: for every gap, no record kept
    (before 3.3 UNICAST2 had no xmit_task_map)."""
    if cfg.variant.xmit_all_gaps:
        requests = [(peer, e.missing()) for peer, e in enumerate(node.recv) if e is not None and e.missing()]
        return node, [Send(peer, XmitReq(wanted)) for peer, wanted in requests]
    xmit_last, requests = common.missing_requests(node.recv, node.xmit_last,
                                                  stale_asks_all=cfg.variant.stale_xmit_record_asks_all)
    effects: list[Effect] = [Send(peer, XmitReq(wanted)) for peer, wanted in requests]
    return replace(node, xmit_last=xmit_last), effects


def _stable_task(cfg: Config, node: Node) -> Step:
    """One run: STABLE(hd, hr) to every sender with a receive entry, except after
    ``max_stable_msgs`` STABLEs in a row for the same hr."""
    effects: list[Effect] = []
    recv = list(node.recv)
    for peer, entry in enumerate(recv):
        if entry is None:
            continue
        hr = entry.highest_received
        if hr == entry.last_highest:
            if entry.stable_count >= cfg.max_stable_msgs:
                continue
            recv[peer] = replace(entry, stable_count=entry.stable_count + 1)
        else:
            recv[peer] = replace(entry, last_highest=hr, stable_count=1)
        node, stable = _stable(cfg, node, entry)
        effects.append(Send(peer, stable))
    return Step(replace(node, recv=tuple(recv)), tuple(effects))


# ---------------------------------------------------------------------------------------------
# Properties of UNICAST2 state (digest section 2) are stated once for both unicast protocols in
# ``spec/unicast_common.py``: window_order (I1), timestamps_issued (I7), acks_monotone (I3),
# purge_is_safe and purge_covered (P6), nothing_unacked (the liveness goal). The delivery
# properties (FIFO, no duplicate, nothing unsent) are ``spec/reliable_fifo.py``'s.
def conn_id_purity(node: Node) -> bool:
    """I4: a receive window holds only messages whose header names its connection (or, in the
    variants, names none), each in its own slot."""
    return common.conn_id_purity(node, unnamed=NO_CONN)
