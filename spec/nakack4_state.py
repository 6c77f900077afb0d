"""NAKACK4's vocabulary: its messages, timers, settings, variants, the state of one member, its
fixed window (JGroups' ``FixedBuffer`` as a value), the AckTable and the properties of that state.

``spec/nakack4.py`` is the documentation of the protocol and holds the handlers; this module holds
what they act on. Everything here is a value: frozen dataclasses and NamedTuples of ints, bools
and tuples, hashable, with per-member maps as tuples indexed by member number. NAKACK4 shares
NakAckHeader with NAKACK2, so MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO and GMS's JoinRsp are
NAKACK2's message types (``spec/nakack2_state.py``); ACK is NAKACK4's own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from spec import unicast_common as common
from spec.effects import Effect
from spec.nakack2_state import Data, Digest, HighestSeqno, JoinRsp, XmitReq, XmitRsp, set_at

NO_ENTRY = -1  # ack_table: no entry for that member


class Ack(NamedTuple):
    """ACK: the receiver's highest delivered seqno (hd) of the destination's messages (unicast)."""

    seqno: int


Msg = Data | XmitReq | XmitRsp | HighestSeqno | Ack | JoinRsp
NAKACK_TYPES = (Data, XmitReq, XmitRsp, HighestSeqno, Ack)  # what the become_server_queue holds


# ---------------------------------------------------------------------------------------------
# Observations (besides spec/effects.py's Send, Deliver, WindowCreated, WindowRemoved).
class AckPurged(NamedTuple):
    """The own window dropped every seqno <= ``upto``: every member acknowledged it."""

    upto: int


class SendDropped(NamedTuple):
    """An application thread's message ``seqno`` was dropped by a closed send window (DISCONNECT):
    its seqno stays spent (digest I2)."""

    seqno: int
    payload: int


class QueueDropped(NamedTuple):
    """The full become_server_queue refused ``msg`` from ``src`` (the newest is dropped)."""

    src: int
    msg: Msg


# ---------------------------------------------------------------------------------------------
# Timers: each periodic task or thread an input that may arrive at any moment.
XMIT = 0  # one run of the retransmit task: pending ACKs, previous-batch XMIT_REQs, HIGHEST_SEQNO
BECOME_SERVER = 1  # the BECOME_SERVER event after the join: drain the become_server_queue
SEND = 2  # the application thread holding seqno ``peer`` adds its message and passes it down
DELIVER_FAULT = 3  # a fault: the next batch of ``peer``'s messages throws while being built (JGRP-3034)
TIMER_NAMES = ("xmit", "become_server", "send", "deliver_fault")

# The single deliverer of one window (removeAndDeliver's ``adders`` counter), per sender.
READY = 0  # no delivery in progress
ARMED = 1  # the next batch creation throws (DELIVER_FAULT fired)
STUCK = 2  # before JGRP-3034's fix: the exception left ``adders`` set: nobody delivers again
STRANDED = 3  # the fix: ``adders`` reset; what the failed batch held waits in the window


class Timer(NamedTuple):
    kind: int
    peer: int = -1  # SEND: the seqno the thread holds; the others cover all members


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects or the seed's wording. All off is NAKACK4 as
    JGroups ships it late 2026 (jgroups-fixed-windows.md section 2)."""

    seed_edge: bool = False  # the seed's block/drop edge: s - low >= capacity (holds capacity - 1)
    lock_after_seqno: bool = False  # before 370770ab9 (2025-03): send_atomically took the lock after seqno++
    ack_from_non_members: bool = False  # before JGRP-2904: an ACK from a non-member re-creates its entry
    highest_seqno_no_ack: bool = False  # before JGRP-2874: HIGHEST_SEQNO neither counts towards an ACK nor loops back
    view_change_no_purge: bool = False  # before JGRP-2853/2854: a view change does not purge the own window
    drop_dont_block: bool = False  # before JGRP-2873: a DONT_BLOCK send on a full window is dropped, seqno spent
    deliverer_stuck: bool = False  # before JGRP-3034: an exception building a batch leaves ``adders`` set
    no_dont_loopback_self_ack: bool = False  # before JGRP-2829: DONT_LOOPBACK multicasts are never self-acked
    fix_deliver_stranded: bool = False  # not in JGroups: HIGHEST_SEQNO delivers what a failed batch stranded


@dataclass(frozen=True, slots=True)
class Config:
    """What a member knows before it starts; the defaults are JGroups' (fixed-windows 2) except
    ``capacity``, whose 16384 no model can fill: model files set a small one."""

    members: int  # members are 0 .. members-1
    variant: Variant = Variant()
    capacity: int = 16384
    ack_threshold: int = 0  # <= 0 means capacity // 4, as JGroups reads it
    send_atomically: bool = False
    dont_block: bool = False  # the application flags its multicasts DONT_BLOCK (JGRP-2873)
    dont_loopback: bool = False  # the application flags its multicasts DONT_LOOPBACK (JGRP-2829)
    deliver_exceptions: bool = False  # the model may inject DELIVER_FAULT (JGRP-3034)
    sender_threads: int = 1  # application threads per member that may be inside send at once
    use_mcast_xmit: bool = True  # answer an XMIT_REQ by re-multicasting the original
    become_server_queue_size: int = 50  # <= 0 means 50

    @property
    def threshold(self) -> int:
        return self.ack_threshold if self.ack_threshold > 0 else self.capacity // 4

    @property
    def queue_bound(self) -> int:
        return self.become_server_queue_size if self.become_server_queue_size > 0 else 50

    @property
    def atomic(self) -> bool:
        """Do seqno++, add and send happen under the window's lock (send_atomically, fixed)?"""
        return self.send_atomically and not self.variant.lock_after_seqno


# ---------------------------------------------------------------------------------------------
# The window (FixedBuffer, fixed-windows 1), in the shape ``spec/unicast_common`` reads.
@dataclass(frozen=True, slots=True)
class Window:
    """One member's FixedBuffer for one sender, as a value.

    ``low`` is the highest purged seqno, ``delivered`` (hd) the highest delivered. ``kept`` holds
    the delivered messages low+1 .. hd that are not purged yet: only the member's own window keeps
    them (loopback delivery does not null; a receive window nulls, so low == hd there).
    ``buffered`` holds hd+1 .. high, None for a gap. The ring of ``capacity`` slots and its fixed
    offset are representation (``impl/fixed_window.py``): valid seqnos are (low, low + capacity].
    """

    low: int
    delivered: int
    kept: tuple[Data, ...]
    buffered: tuple[Data | None, ...]

    @property
    def high(self) -> int:
        return self.delivered + len(self.buffered)

    @property
    def highest_received(self) -> int:
        return self.high

    def missing(self) -> tuple[int, ...]:
        return tuple(self.delivered + 1 + i for i, m in enumerate(self.buffered) if m is None)

    def get(self, seqno: int) -> Data | None:
        """FixedBuffer.get: the stored message ``seqno``, if low < seqno <= high and present."""
        if self.low < seqno <= self.delivered:
            return self.kept[seqno - self.low - 1]
        if self.delivered < seqno <= self.high:
            return self.buffered[seqno - self.delivered - 1]
        return None


def new_window(offset: int) -> Window:
    """A FixedBuffer created at ``offset``: it expects seqno offset+1 next."""
    return Window(offset, offset, (), ())


def beyond(cfg: Config, window: Window, seqno: int) -> bool:
    """Is ``seqno`` above the window (FixedBuffer's edge: ``> capacity``, the seed's ``>=``)?"""
    distance = seqno - window.low
    return distance >= cfg.capacity if cfg.variant.seed_edge else distance > cfg.capacity


def store(window: Window, msg: Data) -> Window:
    """Put ``msg`` in its slot (the caller checked it is above hd, within capacity and free)."""
    index = msg.seqno - window.delivered - 1
    padded = window.buffered + (None,) * (index - len(window.buffered) + 1)
    return replace(window, buffered=padded[:index] + (msg,) + padded[index + 1:])


def add_only(cfg: Config, window: Window, msg: Data) -> Window:
    """A receiver's FixedBuffer.add without the removal that would follow (the deliverer failed or
    is stuck): a seqno <= hd, already held or beyond capacity changes nothing."""
    index = msg.seqno - window.delivered - 1
    if beyond(cfg, window, msg.seqno) or index < 0 or (index < len(window.buffered)
                                                      and window.buffered[index] is not None):
        return window
    return store(window, msg._replace(payload=0) if msg.oob else msg)  # an OOB one: its placeholder (18)


def add_and_deliver(cfg: Config, window: Window, msg: Data) -> tuple[Window, list[int]]:
    """A receiver's FixedBuffer.add, then removeMany(nullify): a seqno <= low (== hd) or already
    held is rejected, one beyond capacity dropped; then delivery from hd+1 up to the first gap."""
    if beyond(cfg, window, msg.seqno):
        return window, []
    hd, buffered, payloads = common.add_and_deliver(window.delivered, window.buffered, msg)
    return Window(hd, hd, (), buffered), payloads


def deliver_held(window: Window) -> tuple[Window, list[int]]:
    """removeMany(nullify) with no message added: what a receiver's window holds from hd+1 up to
    the first gap is delivered (messages a failed batch stranded there, JGRP-3034), OOB placeholders
    passed over (decision 18)."""
    buffered, payloads, passed = window.buffered, [], 0
    while buffered and buffered[0] is not None:
        if not buffered[0].oob:
            payloads.append(buffered[0].payload)
        buffered = buffered[1:]
        passed += 1
    hd = window.delivered + passed
    return Window(hd, hd, (), buffered), payloads


def deliver_own(window: Window, delivered: frozenset[int] = frozenset()) -> tuple[Window, list[int]]:
    """removeMany without nullify on the member's own window (the loopback copy came back): every
    stored message from hd+1 up to the first gap is kept until an ACK purge and delivered, but for
    the OOB ones already ``delivered`` (OOB_DELIVERED: the filter passes them, decision 18)."""
    kept, buffered = window.kept, window.buffered
    payloads = []
    while buffered and buffered[0] is not None:
        kept += (buffered[0],)
        if buffered[0].seqno not in delivered:
            payloads.append(buffered[0].payload)
        buffered = buffered[1:]
    return Window(window.low, window.low + len(kept), kept, buffered), payloads


def skip_own(window: Window) -> Window:
    """FixedBuffer.add's remove filter on the own window (DONT_LOOPBACK): hd walks up over the
    stored messages from hd+1 to the first gap, keeping them (not delivered, not nulled)."""
    kept, buffered = window.kept, window.buffered
    while buffered and buffered[0] is not None:
        kept += (buffered[0],)
        buffered = buffered[1:]
    return Window(window.low, window.low + len(kept), kept, buffered)


def purge(window: Window, upto: int) -> Window:
    """FixedBuffer.purge(upto), non-forced: clamped to hd; drops the kept messages <= the new low."""
    upto = min(upto, window.delivered)
    if upto <= window.low:
        return window
    return Window(upto, window.delivered, window.kept[upto - window.low:], window.buffered)


# ---------------------------------------------------------------------------------------------
# State of one member.
@dataclass(frozen=True, slots=True)
class Node:
    """Everything one member's NAKACK4 holds."""

    me: int
    members: frozenset[int]  # the current view; empty until a joiner's JoinRsp
    seqno: int  # the counter: the last seqno an application thread took (the first multicast gets 1)
    windows: tuple[Window | None, ...]  # xmit_table, indexed by sender; the own entry is the send window
    acks_counted: tuple[int, ...]  # per entry: num_acks_sent, the ack counter (reset at the threshold)
    ack_pending: tuple[bool, ...]  # per entry: send_ack, an ACK the retransmit task owes the sender
    ack_table: tuple[int, ...]  # AckTable: the highest ACK from each member; NO_ENTRY = none
    ack_min: int  # AckTable.min, as last computed (an empty table keeps the previous one)
    is_server: bool  # false until VIEW_CHANGE or BECOME_SERVER: NAKACK4 messages are queued
    become_server_pending: bool  # a joiner between its JoinRsp and BECOME_SERVER
    queue: tuple[tuple[int, Msg], ...]  # become_server_queue: (src, message), oldest first
    xmit_last: tuple[int, ...]  # xmit_task_map: highest missing seqno seen last run; 0 = none
    skip_next_resend: bool  # LastSeqnoResender: an application send since the last run
    sending: tuple[tuple[int, int], ...]  # (seqno, payload) of threads that took a seqno, not yet added
    deliverer: tuple[int, ...]  # per sender: READY, ARMED, STUCK or STRANDED (the single deliverer)
    oob_sending: frozenset[int] = frozenset()  # seqnos in ``sending`` whose message is OOB (decision 18)
    oob_delivered: frozenset[int] = frozenset()  # own OOB seqnos above the own hd delivered (OOB_DELIVERED)

    @property
    def view(self) -> tuple[int, ...]:
        return tuple(sorted(self.members))


class Step(NamedTuple):
    node: Node
    effects: tuple[Effect | AckPurged | SendDropped | QueueDropped, ...]


def initial_node(me: int, cfg: Config, members: frozenset[int]) -> Node:
    """A member that has just started. A founder (in ``members``) is a server with a window at 0
    and an AckTable entry at 0 for every member. A joiner has no view, window or entry yet."""
    n = cfg.members
    founder = me in members
    windows = tuple(new_window(0) if founder and p in members else None for p in range(n))
    table = tuple(0 if founder and p in members else NO_ENTRY for p in range(n))
    return Node(me, members if founder else frozenset(), 0, windows, (0,) * n, (False,) * n, table, 0, founder,
                False, (), (0,) * n, False, (), (READY,) * n)


def digest_of(node: Node) -> Digest:
    """GET_DIGEST: (hd, high) of every window."""
    return tuple(None if w is None else (w.delivered, w.high) for w in node.windows)


def with_window(node: Node, sender: int, window: Window | None) -> Node:
    return replace(node, windows=set_at(node.windows, sender, window))


def table_min(table: tuple[int, ...], previous: int) -> int:
    """AckTable.computeMin: the lowest ACK of the members with an entry; ``previous`` if none."""
    present = [a for a in table if a != NO_ENTRY]
    return min(present) if present else previous


def room_for(cfg: Config, node: Node, seqno: int) -> bool:
    """Would the own window take ``seqno`` now (the sender's add does not block)?"""
    own = node.windows[node.me]
    return own is not None and not beyond(cfg, own, seqno)


# ---------------------------------------------------------------------------------------------
# Properties of one member's state (digest section 2). The delivery properties (per-sender FIFO,
# no duplicate, nothing unsent) are ``spec/reliable_fifo.py``'s, per (sender, receiver) pair.
def window_order(node: Node) -> bool:
    """I1: every window is well formed: low <= hd <= high and the highest slot is present; a window
    for another member keeps nothing delivered (low == hd) and has a gap right above hd (else that
    message would have been delivered), unless a failed batch left its deliverer stuck or its
    messages stranded (JGRP-3034)."""
    for sender, w in enumerate(node.windows):
        if w is None:
            continue
        if not (w.low <= w.delivered and len(w.kept) == w.delivered - w.low):
            return False
        if w.buffered and w.buffered[-1] is None:
            return False
        if sender != node.me and (w.kept or (w.buffered and w.buffered[0] is not None
                                             and node.deliverer[sender] in (READY, ARMED))):
            return False
    return True


def slots_hold_their_seqnos(node: Node) -> bool:
    """Every stored message sits in the slot of its own seqno."""
    for w in node.windows:
        if w is None:
            continue
        stored: list[tuple[int, Data | None]] = [(w.low + 1 + i, m) for i, m in enumerate(w.kept)]
        stored += [(w.delivered + 1 + i, m) for i, m in enumerate(w.buffered)]
        if any(m is not None and m.seqno != s for s, m in stored):
            return False
    return True


def window_within_capacity(cfg: Config, node: Node) -> bool:
    """I1 for FixedBuffer: no window spans more than its capacity (high - low <= capacity), so no
    message ever overwrites a live slot of the ring."""
    return all(w is None or w.high - w.low <= cfg.capacity for w in node.windows)


def blocks_only_when_full(cfg: Config, node: Node) -> bool:
    """A sender blocks only on a full window: no application thread waits for room for a seqno
    within (low, low + capacity], so a window of capacity c takes c messages before anyone blocks
    (JGroups' FixedBuffer; the MCAST seed's ``>= capacity`` blocks one message earlier)."""
    own = node.windows[node.me]
    return own is None or all(room_for(cfg, node, s) or s - own.low > cfg.capacity for s, _ in node.sending)


def seqno_discipline(node: Node) -> bool:
    """I2: every seqno the member took above its own window's low is either stored in the own
    window or held by an application thread that has not added it yet, never both, and nothing
    above the counter is stored."""
    own = node.windows[node.me]
    held = {s for s, _ in node.sending}
    if own is None:
        return not held
    stored = {s for s in range(own.low + 1, own.high + 1) if own.get(s) is not None}
    return own.high <= node.seqno and not stored & held and stored | held == set(range(own.low + 1, node.seqno + 1))


def ack_table_members(node: Node) -> bool:
    """I6: the AckTable has an entry for every member of the view and for nobody else (JGRP-2904: an
    ACK from a departed member must not re-create its entry, which would pin the minimum)."""
    if node.windows[node.me] is None:
        return True
    return all((a != NO_ENTRY) == (m in node.members) for m, a in enumerate(node.ack_table))


def ack_min_is_min(node: Node) -> bool:
    """I6: the AckTable's minimum is the lowest ACK of its entries (so it is at most each member's)."""
    present = [a for a in node.ack_table if a != NO_ENTRY]
    return not present or node.ack_min == min(present)


def deliverer_released(node: Node) -> bool:
    """Digest 1.0.3: the single deliverer of a window hands back its ``adders`` counter whenever it
    stops, so the next message of that sender finds a deliverer (JGRP-3034: an exception left it
    set, and nothing of that sender was delivered again)."""
    return STUCK not in node.deliverer


def queue_within_bound(cfg: Config, node: Node) -> bool:
    """The become_server_queue never holds more than its capacity."""
    return len(node.queue) <= cfg.queue_bound


def purge_covered(sender: Node, receiver: Node) -> bool:
    """P6 as a state invariant: while sender and receiver are in each other's views and the
    receiver has a window for the sender, the sender has purged nothing that window has not
    delivered (an ACK purge never passes what every current member delivered). Otherwise the
    window waits for a seqno that exists nowhere: it can never deliver again."""
    own = sender.windows[sender.me]
    window = receiver.windows[sender.me]
    if own is None or window is None or receiver.me == sender.me:
        return True
    if sender.me not in receiver.members or receiver.me not in sender.members:
        return True
    return window.delivered >= own.low


def acks_truthful(sender: Node, receiver: Node) -> bool:
    """I3: the sender's AckTable never credits a current member with more than its window for the
    sender delivered (an ACK carries hd, and hd never decreases within a window)."""
    window = receiver.windows[sender.me]
    acked = sender.ack_table[receiver.me]
    if window is None or acked == NO_ENTRY or receiver.me == sender.me:
        return True
    if sender.me not in receiver.members or receiver.me not in sender.members:
        return True
    return acked <= window.delivered


def purge_to_min(node: Node, new_min: int) -> Step:
    """Record the AckTable's new minimum; if it rose, purge the own window to it."""
    old_min = node.ack_min
    node = replace(node, ack_min=new_min)
    own = node.windows[node.me]
    if new_min <= old_min or own is None:
        return Step(node, ())
    purged = purge(own, new_min)
    if purged.low == own.low:
        return Step(node, ())
    return Step(with_window(node, node.me, purged), (AckPurged(purged.low),))
