"""NAKACK2's vocabulary: its messages, timers, settings, variants, the state of one member, the
receive window (JGroups' ``Table``) and the properties of that state.

``spec/nakack2.py`` is the documentation of the protocol and holds the handlers; this module holds
what they act on, so that the STABLE handlers (``spec/nakack2_stable.py``) can share it without an
import circle. Everything here is a value: frozen dataclasses and NamedTuples of ints, bools and
tuples, hashable, with per-member maps as tuples indexed by member number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple, TypeVar

from spec import unicast_common as common
from spec.effects import Effect

E = TypeVar("E")

NO_ENTRY = -1  # stable_xmit: no previous STABLE digest named this member


# ---------------------------------------------------------------------------------------------
# Messages. NakAckHeader2 types MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO (digest 1.4 (b)); STABLE's
# gossip and stability messages (StableHeader); and GMS's JoinRsp as far as NAKACK2 reads it.
# Payloads are abstract: the sender's application's n-th multicast is payload n.
class Data(NamedTuple):
    """MSG: a multicast with its seqno (one copy to every member of the sender's view) and its OOB
    flag (``spec/nakack2.py`` decision 17; a receiver's placeholder for a delivered OOB message is
    the Data with ``oob`` set and payload 0, as JGroups' DUMMY_OOB_MSG tells nothing more)."""

    seqno: int
    payload: int
    oob: bool = False


class XmitReq(NamedTuple):
    """XMIT_REQ: retransmit ``seqnos`` of ``sender`` (the original sender) to the requester."""

    sender: int
    seqnos: tuple[int, ...]


class XmitRsp(NamedTuple):
    """XMIT_RSP: a unicast copy of ``sender``'s message ``seqno`` (``use_mcast_xmit`` off), with the
    original's OOB flag (decision 17)."""

    sender: int
    seqno: int
    payload: int
    oob: bool = False


class HighestSeqno(NamedTuple):
    """HIGHEST_SEQNO: the sender's seqno counter (multicast, not to the sender itself)."""

    seqno: int


Digest = tuple[tuple[int, int] | None, ...]
"""Per member (indexed by member number): (hd, hr) of a window for it, or None (no entry)."""


class StableVote(NamedTuple):
    """STABLE gossip: a member's digest, sent to the coordinator of its view ``view``."""

    view: tuple[int, ...]
    digest: Digest


class Stability(NamedTuple):
    """STABILITY: the merged digest (min hd, max hr) of one round, multicast by the coordinator."""

    view: tuple[int, ...]
    digest: Digest


class JoinRsp(NamedTuple):
    """GMS's answer to a joiner: the view to install and the coordinator's digest (the joiner at
    (0, 0))."""

    view: tuple[int, ...]
    digest: Digest


Msg = Data | XmitReq | XmitRsp | HighestSeqno | StableVote | Stability | JoinRsp
NAKACK_TYPES = (Data, XmitReq, XmitRsp, HighestSeqno)  # what the become_server_queue holds


# ---------------------------------------------------------------------------------------------
# Observations (besides spec/effects.py's Send, Deliver, WindowCreated, WindowRemoved).
class StablePurged(NamedTuple):
    """The window for ``sender`` dropped every seqno <= ``upto`` (a STABLE purge)."""

    sender: int
    upto: int


class QueueDropped(NamedTuple):
    """The full become_server_queue dropped ``msg`` from ``src`` (the new one or the oldest)."""

    src: int
    msg: Msg


# ---------------------------------------------------------------------------------------------
# Timers: each periodic task or event an input that may arrive at any moment.
XMIT = 0  # one run of the retransmit task: previous-batch XMIT_REQs, then LastSeqnoResender
STABLE = 1  # one run of STABLE's gossip: the member's digest to its coordinator
BECOME_SERVER = 2  # the BECOME_SERVER event after the join: drain the become_server_queue
TIMER_NAMES = ("xmit", "stable", "become_server")


class Timer(NamedTuple):
    kind: int
    peer: int = -1  # every NAKACK2 timer covers all members


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects. All off is NAKACK2 as JGroups shipped it with
    JGRP-2675 (the last version that had the no-retransmission mode, digest [SRC-NR])."""

    bounded_queue_no_xmit: bool = False  # JGRP-2675: the queue stays bounded with xmit_interval <= 0
    queue_drops_oldest: bool = False  # before JGRP-2675: BoundedList evicts the oldest when full
    stable_xmit_current_hr: bool = False  # before JGRP-2678: STABLE asks for the current digest's hr
    xmit_all_gaps: bool = False  # before JGRP-1539: every run requests every gap it sees
    stable_vote_to_self: bool = False  # before 5.1.6: STABLE's vote and STABILITY copy to self are packets
    stale_xmit_record_asks_all: bool = False  # JGRP-2573 (3.6-5.1): a record below hd filters nothing
    oob_redelivers: bool = False  # a defect (decision 17): the removal delivers an OOB message again


@dataclass(frozen=True, slots=True)
class Config:
    """What a member knows before it starts; the defaults are JGroups' (digest 1.4 (d))."""

    members: int  # members are 0 .. members-1
    variant: Variant = Variant()
    xmit_interval: int = 1000  # ms; only its sign matters (time is abstract): <= 0 = no retransmission
    use_mcast_xmit: bool = True  # answer an XMIT_REQ by re-multicasting the original
    resend_last_seqno: bool = True  # LastSeqnoResender runs in the retransmit task
    resend_last_seqno_max_times: int = 1  # HIGHEST_SEQNOs per unchanged counter value
    become_server_queue_size: int = 50  # <= 0 means 10, as JGroups reads it
    dont_loopback: bool = False  # the application flags its multicasts DONT_LOOPBACK (decision 15)

    @property
    def retransmission(self) -> bool:
        return self.xmit_interval > 0


def queue_bound(cfg: Config) -> int | None:
    """The become_server_queue's capacity, None if unbounded (retransmission off, seed 004)."""
    if not cfg.retransmission and not cfg.variant.bounded_queue_no_xmit:
        return None
    return cfg.become_server_queue_size if cfg.become_server_queue_size > 0 else 10


# ---------------------------------------------------------------------------------------------
# The window (Table, digest 1.0.1), in the shape ``spec/unicast_common`` reads.
@dataclass(frozen=True, slots=True)
class Window:
    """One member's Table for one sender.

    ``low`` is the highest purged seqno, ``delivered`` (hd) the highest delivered. ``kept`` holds
    the delivered messages low+1 .. hd that are not purged yet: only the member's own window keeps
    them (discard_delivered_msgs: a receiver nulls a message when it delivers it, so low == hd in
    every other window). ``buffered`` holds hd+1 .. hr, None for a gap.
    """

    low: int
    delivered: int
    kept: tuple[Data, ...]
    buffered: tuple[Data | None, ...]

    @property
    def highest_received(self) -> int:
        return self.delivered + len(self.buffered)

    def missing(self) -> tuple[int, ...]:
        return tuple(self.delivered + 1 + i for i, m in enumerate(self.buffered) if m is None)

    def get(self, seqno: int) -> Data | None:
        """Table.get: the stored message ``seqno``, if low < seqno <= hr and it is present."""
        if self.low < seqno <= self.delivered:
            return self.kept[seqno - self.low - 1]
        if self.delivered < seqno <= self.highest_received:
            return self.buffered[seqno - self.delivered - 1]
        return None


def new_window(offset: int) -> Window:
    """A Table created at ``offset``: it expects seqno offset+1 next."""
    return Window(offset, offset, (), ())


def add_and_deliver(window: Window, msg: Data, redeliver_oob: bool = False) -> tuple[Window, list[int]]:
    """A receiver's Table.add then removeMany(nullify): reject a seqno <= hd or already held, then
    deliver from hd+1 up to the first gap. An OOB message the add takes is delivered first and held
    as a placeholder the removal passes over (decision 17; ``redeliver_oob``: the defect that
    delivers it again). Returns the window and the payloads delivered."""
    hd, buffered, payloads = common.add_and_deliver(window.delivered, window.buffered, msg,
                                                    redeliver_oob=redeliver_oob)
    return Window(hd, hd, (), buffered), payloads


def deliver_own(window: Window) -> tuple[Window, list[int]]:
    """removeMany without nullify on the member's own window: every stored message above hd is
    delivered (the own window has no gaps) and kept until a STABLE purge."""
    payloads = [m.payload for m in window.buffered if m is not None]
    kept = window.kept + tuple(m for m in window.buffered if m is not None)
    return Window(window.low, window.highest_received, kept, ()), payloads


def skip_own(window: Window) -> Window:
    """Table.add's remove filter on the own window (a DONT_LOOPBACK send, decision 15): hd walks up
    over the stored messages from hd+1 to the first gap, keeping them (not delivered, not nulled)."""
    stored = 0
    while stored < len(window.buffered) and window.buffered[stored] is not None:
        stored += 1
    if not stored:
        return window
    kept = window.kept + tuple(m for m in window.buffered[:stored] if m is not None)
    return Window(window.low, window.delivered + stored, kept, window.buffered[stored:])


def purge(window: Window, upto: int) -> Window:
    """Table.purge(upto), non-forced: clamped to hd; drops the kept messages <= the new low."""
    upto = min(upto, window.delivered)
    if upto <= window.low:
        return window
    return Window(upto, window.delivered, window.kept[upto - window.low:], window.buffered)


# ---------------------------------------------------------------------------------------------
# State of one member.
@dataclass(frozen=True, slots=True)
class Node:
    """Everything one member's NAKACK2 (and, as far as NAKACK2 needs it, STABLE) holds."""

    me: int
    members: frozenset[int]  # the current view; empty until a joiner's JoinRsp
    seqno: int  # the counter: the last seqno this member assigned (the first multicast gets 1)
    windows: tuple[Window | None, ...]  # xmit_table, indexed by sender; the own entry is the send window
    is_server: bool  # false until VIEW_CHANGE or BECOME_SERVER: NAKACK2 messages are queued
    become_server_pending: bool  # a joiner between its JoinRsp and BECOME_SERVER
    queue: tuple[tuple[int, Msg], ...]  # become_server_queue: (src, message), oldest first
    xmit_last: tuple[int, ...]  # xmit_task_map: highest missing seqno seen last run; 0 = none
    stable_xmit: tuple[int, ...]  # stable_xmit_map: hr of the previous STABLE digest; NO_ENTRY = none
    last_seqno_resent: int  # LastSeqnoResender: the counter value last announced
    num_resends: int  # ... and how often
    skip_next_resend: bool  # ... an application send since the last run: skip one run
    votes: frozenset[int]  # coordinator: members whose digest this round has merged
    merged: Digest  # coordinator: min hd, max hr of this round's votes (None: no vote named him)
    stable_suspended: bool  # coordinator: STABLE suspended by GMS during a join
    dont_loopback: frozenset[int] = frozenset()  # own seqnos still stored that were sent DONT_LOOPBACK
    # (decision 15: the message's transient flag, which the removal filter and the transport read)

    @property
    def view(self) -> tuple[int, ...]:
        return tuple(sorted(self.members))

    @property
    def coordinator(self) -> int:
        """The coordinator of this member's view (the view's first member: the lowest number)."""
        return min(self.members)


class Step(NamedTuple):
    node: Node
    effects: tuple[Effect | StablePurged | QueueDropped, ...]


def initial_node(me: int, cfg: Config, members: frozenset[int]) -> Node:
    """A member that has just started. If it is in ``members`` it is one of the group's founders:
    a server with a window at 0 for every member. Otherwise it is a joiner that has not received
    its JoinRsp yet: no view, no window, not a server (NAKACK2 messages go to the queue)."""
    n = cfg.members
    founder = me in members
    windows = tuple(new_window(0) if founder and p in members else None for p in range(n))
    return Node(me, members if founder else frozenset(), 0, windows, founder, False, (), (0,) * n,
                (NO_ENTRY,) * n, 0, 0, False, frozenset(), (None,) * n, False)


def set_at(entries: tuple[E, ...], index: int, value: E) -> tuple[E, ...]:
    """``entries`` with the slot ``index`` replaced."""
    return entries[:index] + (value,) + entries[index + 1 :]


def digest_of(node: Node) -> Digest:
    """GET_DIGEST: (hd, hr) of every window."""
    return tuple(None if w is None else (w.delivered, w.highest_received) for w in node.windows)


# ---------------------------------------------------------------------------------------------
# Properties of one member's state (digest section 2). The delivery properties (per-sender FIFO,
# no duplicate, nothing unsent) are ``spec/reliable_fifo.py``'s, per (sender, receiver) pair.
def window_order(node: Node) -> bool:
    """I1: every window is well formed: low <= hd <= hr, the highest received slot is present,
    and a window for another member keeps nothing delivered (low == hd) and has a gap right
    above hd (else that message would have been delivered)."""
    for sender, w in enumerate(node.windows):
        if w is None:
            continue
        if not (w.low <= w.delivered and len(w.kept) == w.delivered - w.low):
            return False
        if w.buffered and w.buffered[-1] is None:
            return False
        if sender != node.me and (w.kept or (w.buffered and w.buffered[0] is not None)):
            return False
    return True


def slots_hold_their_seqnos(node: Node) -> bool:
    """I4 for NAKACK2: every stored message sits in the slot of its own seqno."""
    for w in node.windows:
        if w is None:
            continue
        stored: list[tuple[int, Data | None]] = [(w.low + 1 + i, m) for i, m in enumerate(w.kept)]
        stored += [(w.delivered + 1 + i, m) for i, m in enumerate(w.buffered)]
        if any(m is not None and m.seqno != s for s, m in stored):
            return False
    return True


def seqno_discipline(node: Node) -> bool:
    """I2: a member's own window holds exactly the seqnos low+1 .. counter, without a gap (every
    seqno it assigned is stored or purged)."""
    own = node.windows[node.me]
    if own is None:
        return node.seqno == 0
    return own.highest_received == node.seqno and None not in own.buffered


def queue_within_bound(cfg: Config, node: Node) -> bool:
    """The become_server_queue never holds more than its capacity (when it has one)."""
    bound = queue_bound(cfg)
    return bound is None or len(node.queue) <= bound


def held_undelivered(node: Node, sender: int) -> int:
    """How many messages of ``sender`` the window holds above a gap (the window's growth that
    JGRP-2675 makes unbounded); 0 without a window."""
    w = node.windows[sender]
    return 0 if w is None else sum(m is not None for m in w.buffered)


def purge_covered(sender: Node, receiver: Node) -> bool:
    """P6 as a state invariant: while sender and receiver are in each other's views and the
    receiver has a window for the sender, the sender has purged nothing that window has not
    delivered (a STABLE never purges past what every member delivered). Otherwise the window
    waits for a seqno that exists nowhere: it can never deliver again."""
    own = sender.windows[sender.me]
    window = receiver.windows[sender.me]
    if own is None or window is None or receiver.me == sender.me:
        return True
    if sender.me not in receiver.members or receiver.me not in sender.members:
        return True
    return window.delivered >= own.low


def with_window(node: Node, sender: int, window: Window | None) -> Node:
    return replace(node, windows=set_at(node.windows, sender, window))
