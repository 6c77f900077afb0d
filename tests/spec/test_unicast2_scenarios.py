"""Hand-driven scenarios of spec/unicast2.py: two members, every step chosen by the test.

The style of ``test_unicast3_scenarios.py``: nothing is random and nothing is explored. ``Pair`` holds
member A (0) and B (1), the packets in flight and the abstract channels of ``spec/reliable_fifo``;
the test delivers or drops chosen packets, fires chosen timers (only ones the spec says are
enabled), installs views and calls the receiver-removal hook, and asserts the effects and the
entries after every step.

Each test names its source: the seed's UNICAST2 scenarios (#1-#9 and its Motivation) and the
digest's UNICAST2 rules (1.1 (c): SEND_FIRST_SEQNO answered with the whole range, the first copy
marked first; STABLE's forced purge and resend from hr; the max_stable_msgs cap; the first-message
ACK and resend of JGRP-1563; the conn_id rules), with the variants that bring back the defects.
Effects are NamedTuples, and tuples of equal fields compare equal across types, so every step
returns ``Exactly``, a tuple whose ``==`` also compares the classes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import pytest

from spec import reliable_fifo as fifo
from spec import unicast2 as u2
from spec.unicast2 import (
    IDLE_RECV,
    IDLE_SEND,
    MAX_CONN_ID,
    NO_CONN,
    STABLE,
    XMIT,
    Ack,
    Config,
    Data,
    Deliver,
    Discarded,
    Msg,
    Node,
    Purged,
    RecvEntry,
    Send,
    SendEntry,
    SendFirstSeqno,
    Stable,
    Step,
    SyncAnswered,
    SyncRequested,
    Timer,
    Variant,
    WindowCreated,
    WindowRemoved,
    XmitReq,
)

A, B = 0, 1
BOTH = frozenset({A, B})


def _typed(value: object) -> object:
    if isinstance(value, tuple):
        items = tuple(_typed(item) for item in value)
        return (type(value).__name__, *items) if hasattr(value, "_fields") else items
    return value


class Exactly(tuple[object, ...]):
    """A tuple whose equality also compares the classes of the NamedTuples inside it."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple) and _typed(tuple(self)) == _typed(tuple(other))

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(_typed(tuple(self)))


class Packet(NamedTuple):
    src: int
    dst: int
    msg: Msg


class Pair:
    """Members A and B with one UNICAST2 ``Config``, the wire, and the abstract channels. After
    every step it checks I1, I4, I3 and I7, and records (rather than asserts) the purges that broke
    P6 and the steps after which ``purge_covered`` was false, so defect tests can show them."""

    def __init__(self, variant: Variant | None = None, *, max_stable_msgs: int = 5, conn_expiry: bool = False) -> None:
        self.cfg = Config(members=2, variant=variant or Variant(), max_stable_msgs=max_stable_msgs,
                          conn_expiry=conn_expiry)
        self.nodes = [u2.initial_node(member, self.cfg, BOTH) for member in (A, B)]
        self.wire: list[Packet] = []
        self.channels = [fifo.Channel(), fifo.Channel()]  # indexed by the sending member
        self.unsafe_purges: list[Purged] = []
        self.uncovered_steps = 0

    @property
    def a(self) -> Node:
        return self.nodes[A]

    @property
    def b(self) -> Node:
        return self.nodes[B]

    def sender(self) -> SendEntry:
        entry = self.a.send[B]
        assert entry is not None
        return entry

    def receiver(self) -> RecvEntry:
        entry = self.b.recv[A]
        assert entry is not None
        return entry

    def send(self, src: int, payload: int) -> Exactly:
        self.channels[src] = fifo.send(self.channels[src])
        assert payload == self.channels[src].sent, "payload n is the n-th message of the pair"
        return self._apply(src, u2.on_send(self.cfg, self.nodes[src], 1 - src, payload))

    def deliver(self, src: int, msg: Msg) -> Exactly:
        self._take(src, msg)
        return self._apply(1 - src, u2.on_receive(self.cfg, self.nodes[1 - src], src, msg))

    def drop(self, src: int, msg: Msg) -> None:
        self._take(src, msg)

    def timer(self, member: int, kind: int) -> Exactly:
        timer = Timer(kind, -1 if kind in (XMIT, STABLE) else 1 - member)
        assert timer in u2.enabled_timers(self.cfg, self.nodes[member]), f"{timer} not enabled"
        return self._apply(member, u2.on_timer(self.cfg, self.nodes[member], timer))

    def view(self, member: int, members: frozenset[int]) -> Exactly:
        return self._apply(member, u2.on_view(self.cfg, self.nodes[member], members))

    def remove_receiver(self, member: int) -> Exactly:
        return self._apply(member, u2.on_remove_receiver(self.cfg, self.nodes[member], 1 - member))

    def in_flight(self) -> Exactly:
        return Exactly(self.wire)

    def _take(self, src: int, msg: Msg) -> None:
        for index, packet in enumerate(self.wire):
            if packet.src == src and type(packet.msg) is type(msg) and packet.msg == msg:
                del self.wire[index]
                return
        raise AssertionError(f"{type(msg).__name__}{msg} from {src} is not in flight: {self.wire}")

    def _apply(self, member: int, step: Step) -> Exactly:
        old, node = self.nodes[member], step.node
        self.nodes[member] = node
        assert u2.window_order(node) and u2.conn_id_purity(node) and u2.acks_monotone(old, node)
        assert u2.timestamps_issued(self.a, self.b) and u2.timestamps_issued(self.b, self.a)
        for effect in step.effects:
            if isinstance(effect, Send):
                self.wire.append(Packet(member, effect.dst, effect.msg))
            elif isinstance(effect, Deliver):
                self.channels[effect.src] = fifo.deliver(self.channels[effect.src], effect.payload)
            elif isinstance(effect, WindowCreated | WindowRemoved):
                self.channels[effect.src] = fifo.new_incarnation(self.channels[effect.src])
            elif isinstance(effect, Purged) and not u2.purge_is_safe(self.nodes[effect.dst], member, effect):
                self.unsafe_purges.append(effect)
        if not u2.purge_covered(self.a, self.b):
            self.uncovered_steps += 1
        return Exactly(step.effects)


def data(seqno: int, *, conn: int = 0, payload: int | None = None, first: bool | None = None) -> Data:
    """DATA as stored: payload n at seqno n and first iff seqno 1, unless overridden."""
    return Data(seqno, conn, seqno == 1 if first is None else first, seqno if payload is None else payload)


def snd(conn_id: int, acked: int, unacked: tuple[int, ...], *, ack_received: bool = False,
        watermark: tuple[int, int] = (0, 0), last_ts: int = 0) -> SendEntry:
    return SendEntry(conn_id, acked, unacked, ack_received, watermark, last_ts)


def rcv(conn_id: int, delivered: int, buffered: tuple[Data | None, ...] = (), *, last_highest: int = 0,
        stable_count: int = 0) -> RecvEntry:
    return RecvEntry(conn_id, delivered, buffered, last_highest, stable_count)


def assert_safe(p: Pair) -> None:
    channel = p.channels[A]
    assert fifo.no_duplicate(channel) and fifo.in_order(channel) and fifo.delivered_was_sent(channel)
    assert p.unsafe_purges == [] and p.uncovered_steps == 0


def opened(p: Pair, count: int) -> None:
    """A sends #1..#count, B receives them in order and A receives the first message's ACK."""
    sent = [p.send(A, n)[0] for n in range(1, count + 1)]
    for effect in sent:
        assert isinstance(effect, Send)
        p.deliver(A, effect.msg)
    ack = next(packet.msg for packet in p.wire if isinstance(packet.msg, Ack))
    p.deliver(B, ack)
    assert p.sender().ack_received and p.receiver().delivered == count


# ---------------------------------------------------------------------------------------------
# Seed scenarios #1 and #2; the conn_id counter.
def test_seed_1_2_open_accept_ack_stable_purge() -> None:
    """#1: no entry, so A creates one with conn_id 0 and sends #1 first; #2 carries the conn_id and
    is not first. #2: B creates its window at the first message's seqno and adopts the conn_id; the
    first message is ACKed (JGRP-1563); B's STABLE(hd, hr) makes A purge (forced) up to hd."""
    p = Pair()
    assert p.send(A, 1) == (Send(B, data(1)),)
    assert p.a.send[B] == snd(0, 0, (1,)) and p.a.next_conn_id == 1
    assert p.send(A, 2) == (Send(B, data(2)),)
    assert p.deliver(A, data(2)) == (Send(A, SendFirstSeqno(2, 0)), SyncRequested(A))  # no entry: dropped
    assert p.b.recv[A] is None
    assert p.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1), Send(A, Ack(1, 0)))
    assert p.b.recv[A] == rcv(0, 1)
    assert p.deliver(B, Ack(1, 0)) == ()
    assert p.a.send[B] == snd(0, 0, (1, 2), ack_received=True)
    # A answers the SEND_FIRST_SEQNO(2): its whole window up to #2, the lowest as a first copy
    assert p.deliver(B, SendFirstSeqno(2, 0)) == (Send(B, data(1)), Send(B, data(2)), SyncAnswered(B, 2))
    assert p.deliver(A, data(2)) == (Deliver(A, 2),)
    assert p.deliver(A, data(1)) == (Send(A, Ack(1, 0)),)  # a duplicate first message: ACKed again
    assert p.timer(B, STABLE) == (Send(A, Stable(2, 2, 0, 0)),)
    assert p.deliver(B, Stable(2, 2, 0, 0)) == (Purged(B, 0, 2),)
    assert p.a.send[B] == snd(0, 2, (), ack_received=True)
    assert_safe(p)
    assert p.channels[A].all_delivered()


def test_seed_issue_retransmitted_first_message_keeps_the_window() -> None:
    """The seed's "Issues": a retransmitted first message with the window's conn_id must not reset
    a window that already holds later messages (it is ACKed again, JGRP-1563: even a duplicate)."""
    p = Pair()
    p.send(A, 1)
    p.send(A, 2)
    p.send(A, 3)
    p.deliver(A, data(1))
    p.deliver(A, data(3))
    assert p.b.recv[A] == rcv(0, 1, (None, data(3)))
    assert p.timer(A, XMIT) == (Send(B, data(1)),)  # first message not acknowledged yet: resent
    assert p.deliver(A, data(1)) == (Send(A, Ack(1, 0)),)
    assert p.b.recv[A] == rcv(0, 1, (None, data(3)))  # kept, with #3
    assert p.deliver(A, data(2)) == (Deliver(A, 2), Deliver(A, 3))
    assert_safe(p)


def test_conn_ids_count_up_and_wrap_like_a_java_short() -> None:
    p = Pair()
    p.nodes[A] = Node(A, BOTH, (None, None), (None, None), (0, 0), 0, MAX_CONN_ID)
    assert p.send(A, 1) == (Send(B, data(1, conn=MAX_CONN_ID)),)
    assert p.a.next_conn_id == 0


# ---------------------------------------------------------------------------------------------
# Closing: #3 (both), #4/#8 (sender), #5/#9 (receiver).
def test_seed_3_view_change_removes_both_entries_and_discards_unacked() -> None:
    """#3 / JGRP-1586: a view without the peer removes the send entry at once (what is unacked is
    discarded, not flushed) and the receive entry after a final STABLE."""
    p = Pair()
    p.send(B, 1)
    p.deliver(B, data(1))
    p.send(A, 1)
    p.drop(A, data(1))
    assert p.view(A, frozenset({A})) == (Discarded(B, (1,), False), Send(B, Stable(1, 1, 0, 0)), WindowRemoved(B))
    assert p.a.send == (None, None) and p.a.recv == (None, None) and p.a.members == frozenset({A})
    assert p.timer(A, XMIT) == ()  # nothing left to retransmit: #1 is gone for good
    p.view(A, BOTH)
    assert p.send(A, 2) == (Send(B, data(1, conn=1, payload=2)),)  # a fresh connection


@pytest.mark.parametrize("how", ["view", "reaper"])
def test_seed_4_8_sender_reopens_and_receiver_replaces_its_window(how: str) -> None:
    """#4 (A closes unilaterally, here by its reaper) and #8 (A: {A}, B: {A, B}): A's new entry has
    a new conn_id and starts at #1; B's recv-conn-id does not match a first message, so B creates a
    new window at the message's seqno and adopts the conn_id."""
    p = Pair(conn_expiry=how == "reaper")
    opened(p, 2)
    if how == "view":
        p.view(A, frozenset({A}))
        p.view(A, BOTH)
    else:
        assert p.timer(A, IDLE_SEND) == (Discarded(B, (1, 2), False),)
    assert p.a.send[B] is None
    assert p.send(A, 3) == (Send(B, data(1, conn=1, payload=3)),)
    assert p.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3), Send(A, Ack(1, 1)))
    assert p.b.recv[A] == rcv(1, 1)
    assert_safe(p)


def test_seed_5_receiver_closes_then_resyncs_through_send_first_seqno() -> None:
    """#5: B removes its window (final STABLE first); A's next message is not first, so B drops it
    and asks for the first seqno; A resends from its lowest stored message, marked first; B opens a
    window there. Messages B delivered before the reset are delivered again (digest P2)."""
    p = Pair()
    opened(p, 1)
    assert p.remove_receiver(B) == (Send(A, Stable(1, 1, 0, 0)), WindowRemoved(A))
    p.send(A, 2)
    assert p.deliver(A, data(2)) == (Send(A, SendFirstSeqno(2, 0)), SyncRequested(A))
    assert p.deliver(B, SendFirstSeqno(2, 0)) == (Send(B, data(1)), Send(B, data(2)), SyncAnswered(B, 2))
    assert p.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1), Send(A, Ack(1, 0)))
    assert p.deliver(A, data(2)) == (Deliver(A, 2),)
    # the final STABLE, late: it purges #1 (covered: the new window delivered it) and, A's hr (2)
    # being above the STABLE's hr (1), resends from #2 up
    assert p.deliver(B, Stable(1, 1, 0, 0)) == (Purged(B, 0, 1), Send(B, data(2)))
    assert_safe(p)


def test_seed_9_send_first_seqno_after_a_purge_starts_the_window_higher() -> None:
    """#9: B's view drops its window; the final STABLE purges #1 first; A's #2 makes B ask; A's
    lowest stored message is #2, sent as a first copy: B's window starts at #2."""
    p = Pair()
    opened(p, 1)
    assert p.view(B, frozenset({B})) == (Send(A, Stable(1, 1, 0, 0)), WindowRemoved(A))
    assert p.deliver(B, Stable(1, 1, 0, 0)) == (Purged(B, 0, 1),)
    p.send(A, 2)
    p.deliver(A, data(2))
    assert p.deliver(B, SendFirstSeqno(2, 0)) == (Send(B, data(2, first=True)), SyncAnswered(B, 1))
    assert p.deliver(A, data(2, first=True)) == (WindowCreated(A, 0, 1), Deliver(A, 2), Send(A, Ack(2, 0)))
    assert p.b.recv[A] == rcv(0, 2)
    assert_safe(p)


# ---------------------------------------------------------------------------------------------
# SEND_FIRST_SEQNO (JGRP-1874), STABLE, the cap, the first-message ACK (JGRP-1563).
def test_send_first_seqno_answer_is_the_stored_range_up_to_the_seqno() -> None:
    """Digest 1.1 (c): every present message in [low+1 .. s], the lowest as a first copy; a seqno
    above the highest sent is clamped; with no send entry the request is ignored. fix:JGRP-1874
    (the seed's rule 4): the lowest only."""
    p = Pair()
    for n in (1, 2, 3, 4):
        p.send(A, n)
    p.nodes[A] = replace(p.a, send=(None, replace(p.sender(), acked=1, unacked=(2, 3, 4))))
    step = u2.on_receive(p.cfg, p.a, B, SendFirstSeqno(3, 0))
    assert Exactly(step.effects) == (Send(B, data(2, first=True)), Send(B, data(3)), SyncAnswered(B, 2))
    step = u2.on_receive(p.cfg, p.a, B, SendFirstSeqno(9, 0))
    assert Exactly(step.effects) == (Send(B, data(2, first=True)), Send(B, data(3)), Send(B, data(4)),
                                     SyncAnswered(B, 3))
    assert u2.on_receive(p.cfg, p.b, A, SendFirstSeqno(3, 0)).effects == ()  # B has no send entry
    fixed = Config(2, Variant(fix_sync_lowest_only=True))
    step = u2.on_receive(fixed, p.a, B, SendFirstSeqno(4, 0))
    assert Exactly(step.effects) == (Send(B, data(2, first=True)), SyncAnswered(B, 1))


def test_stable_forced_purge_and_resend_from_hr() -> None:
    """STABLE(hd, hr, conn_id): purge up to hd, clamped to the highest sent; then resend every stored
    message from hr (inclusive, as JGroups does) to the highest sent. Another conn_id, or no entry:
    ignored."""
    p = Pair()
    for n in (1, 2, 3):
        p.send(A, n)
    step = u2.on_receive(p.cfg, p.a, B, Stable(1, 1, 0, 0))
    assert Exactly(step.effects) == (Purged(B, 0, 1), Send(B, data(2)), Send(B, data(3)))
    assert step.node.send[B] == snd(0, 1, (2, 3))
    step = u2.on_receive(p.cfg, p.a, B, Stable(9, 9, 0, 0))  # hd above the highest sent: clamped
    assert Exactly(step.effects) == (Purged(B, 0, 3),) and step.node.send[B] == snd(0, 3, ())
    assert u2.on_receive(p.cfg, p.a, B, Stable(3, 3, 7, 0)).node == p.a  # another connection
    assert u2.on_receive(p.cfg, p.b, A, Stable(3, 3, 0, 0)).effects == ()  # no send entry


def test_stable_task_stops_after_max_stable_msgs_for_an_unchanged_hr() -> None:
    """JGRP-1548's cap: one STABLE per run while hr changes; after max_stable_msgs STABLEs for the
    same hr, none, even when hd moves (a gap filled later is never reported: the model's
    stable-cap-never-purges)."""
    p = Pair(max_stable_msgs=2)
    for n in (1, 2, 3):
        p.send(A, n)
    p.deliver(A, data(1))
    p.deliver(A, data(3))
    assert p.timer(B, STABLE) == (Send(A, Stable(1, 3, 0, 0)),)
    assert p.timer(B, STABLE) == (Send(A, Stable(1, 3, 0, 0)),)
    assert p.receiver() == rcv(0, 1, (None, data(3)), last_highest=3, stable_count=2)
    assert p.timer(B, STABLE) == ()
    assert p.deliver(A, data(2)) == (Deliver(A, 2), Deliver(A, 3))
    assert p.timer(B, STABLE) == ()  # hd is 3 now, hr is still 3: nothing tells A
    p.send(A, 4)
    p.deliver(A, data(4))
    assert p.timer(B, STABLE) == (Send(A, Stable(4, 4, 0, 0)),)  # a new hr resets the count


def test_first_message_resend_until_acked_and_jgrp1563_without_it() -> None:
    """JGRP-1563: the retransmit task resends the lowest stored message, marked first, until the ACK
    of the first message (with the entry's conn_id) arrives; after a purge that is a first copy of
    a later seqno. Variant JGRP-1563: no ACK, no resend -- a lone lost first message is lost."""
    p = Pair()
    p.send(A, 1)
    p.drop(A, data(1))
    assert p.timer(A, XMIT) == (Send(B, data(1)),)
    assert p.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1), Send(A, Ack(1, 0)))
    assert u2.on_receive(p.cfg, p.a, B, Ack(1, 7)).node == p.a  # another connection's ACK: ignored
    assert p.deliver(B, Ack(1, 0)) == () and p.sender().ack_received
    assert p.timer(A, XMIT) == ()
    p.nodes[A] = replace(p.a, send=(None, snd(0, 1, (2,))))  # purged #1, ACK not yet received
    assert p.timer(A, XMIT) == (Send(B, data(2, first=True)),)

    q = Pair(Variant(no_first_ack=True))
    q.send(A, 1)
    q.drop(A, data(1))
    assert q.timer(A, XMIT) == ()
    assert u2.on_receive(q.cfg, q.b, A, data(1)).effects == (WindowCreated(A, 0, 0), Deliver(A, 1))


def test_xmit_req_previous_batch_and_resend_with_own_headers() -> None:
    """Digest 1.0.2: a gap is asked for on the run after the one that saw it; XMIT_REQ is served from
    the current window, no conn_id check."""
    p = Pair()
    for n in (1, 2, 3):
        p.send(A, n)
    p.deliver(A, data(1))
    p.drop(A, data(2))
    p.deliver(A, data(3))
    assert p.timer(B, XMIT) == () and p.b.xmit_last == (3 - 1, 0)
    assert p.timer(B, XMIT) == (Send(A, XmitReq((2,))),)
    assert p.deliver(B, XmitReq((2,))) == (Send(B, data(2)),)
    assert p.deliver(A, data(2)) == (Deliver(A, 2), Deliver(A, 3))
    assert p.timer(B, XMIT) == () and p.b.xmit_last == (0, 0)


def test_jgrp1539_before_it_every_run_asks_for_every_gap() -> None:
    """xmit_all_gaps (JGroups before 3.3): the first run that sees a gap asks for it, and no record
    is kept."""
    p = Pair(Variant(xmit_all_gaps=True))
    for n in (1, 2, 3):
        p.send(A, n)
    p.deliver(A, data(1))
    p.deliver(A, data(3))
    assert p.timer(B, XMIT) == (Send(A, XmitReq((2,))),) and p.b.xmit_last == (0, 0)
    assert p.timer(B, XMIT) == (Send(A, XmitReq((2,))),) and p.b.xmit_last == (0, 0)


@pytest.mark.parametrize("stale", [False, True])
def test_jgrp2573_a_record_below_hd_filters_nothing(stale: bool) -> None:
    """Gap #2 is recorded by one run and filled by the original; gap #4 then appears above hd (3),
    which the record (2) is below. The previous-batch rule waits one run before asking for #4;
    stale_xmit_record_asks_all (JGroups 3.6 to 5.1) asks at once."""
    p = Pair(Variant(stale_xmit_record_asks_all=stale))
    for n in (1, 2, 3, 4, 5):
        p.send(A, n)
    p.deliver(A, data(1))
    p.deliver(A, data(3))
    assert p.timer(B, XMIT) == () and p.b.xmit_last == (2, 0)
    p.deliver(A, data(2))
    p.deliver(A, data(5))
    assert p.timer(B, XMIT) == ((Send(A, XmitReq((4,))),) if stale else ()) and p.b.xmit_last == (4, 0)
    assert p.timer(B, XMIT) == (Send(A, XmitReq((4,))),)


def test_reaper_timers_exist_only_with_conn_expiry() -> None:
    p = Pair()
    opened(p, 1)
    assert {t.kind for t in u2.enabled_timers(p.cfg, p.b)} == {XMIT, STABLE}
    q = Pair(conn_expiry=True)
    opened(q, 1)
    assert {t.kind for t in u2.enabled_timers(q.cfg, q.a)} == {XMIT, STABLE, IDLE_SEND}
    assert q.timer(B, IDLE_RECV) == (Send(A, Stable(1, 1, 0, 0)), WindowRemoved(A))


# ---------------------------------------------------------------------------------------------
# conn_id rules and the variants that drop them.
def test_non_first_data_with_another_conn_id_is_dropped_and_asks() -> None:
    """#6 as JGroups resolved it: a non-first DATA whose conn_id is not the window's never enters it."""
    p = Pair()
    opened(p, 2)
    step = u2.on_receive(p.cfg, p.b, A, data(2, conn=1, payload=3))
    assert Exactly(step.effects) == (Send(A, SendFirstSeqno(2, 0)), SyncRequested(A))
    assert step.node == p.b


def test_seed_6_conn_id_on_first_message_only() -> None:
    """#6, variant "scenario-6": A reopens, sends #1 (first, new conn_id) and #2 (no conn_id); #1 is
    delayed; B takes #2 for part of the old connection (its window is ahead: it discards #2) and
    its STABLE, which carries no conn_id either, makes A purge #1 and #2; then #1 arrives and B opens
    a window at #1 that waits for #2 forever."""
    p = Pair(Variant(conn_id_first_only=True))
    opened(p, 2)
    p.view(A, frozenset({A}))
    p.view(A, BOTH)
    assert p.send(A, 3) == (Send(B, data(1, conn=1, payload=3)),)
    assert p.send(A, 4) == (Send(B, Data(2, NO_CONN, False, 4)),)
    assert p.deliver(A, Data(2, NO_CONN, False, 4)) == ()  # the old window is past #2: discarded
    assert p.timer(B, STABLE) == (Send(A, Stable(2, 2, NO_CONN, 0)),)
    assert p.deliver(B, Stable(2, 2, NO_CONN, 0)) == (Purged(B, 1, 2),)  # "A removes #2"
    assert p.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3), Send(A, Ack(1, 1)))
    assert p.receiver() == rcv(1, 1) and p.sender() == snd(1, 2, ())
    assert not u2.purge_covered(p.a, p.b)  # #2 exists nowhere any more
    assert p.uncovered_steps == 1


def test_seed_6_mirror_old_first_message_resets_the_new_window() -> None:
    """As shipped, the seed's fix still lets the delayed first message of the OLD connection reset
    B's window (any different conn_id on a first message does); a STABLE of the earlier window then
    purges what the current one needs (models/unicast2/scenario-6-lost-first-message.toml)."""
    p = Pair()
    p.send(A, 1)  # old connection, conn_id 0: its #1 stays in flight
    p.view(A, frozenset({A}))
    p.send(A, 2)
    p.send(A, 3)
    p.deliver(A, data(1, conn=1, payload=2))
    p.deliver(A, data(2, conn=1, payload=3))
    assert p.timer(A, XMIT) == (Send(B, data(1, conn=1, payload=2)),)  # ACK still on its way
    assert p.timer(B, STABLE) == (Send(A, Stable(2, 2, 1, 0)),)
    assert p.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1), Send(A, Ack(1, 0)))
    assert p.deliver(A, data(1, conn=1, payload=2))[0] == WindowCreated(A, 1, 0)
    assert p.deliver(B, Stable(2, 2, 1, 0)) == (Purged(B, 1, 2),)
    assert p.unsafe_purges == [Purged(B, 1, 2)]


def test_motivation_without_conn_ids_b_stores_and_never_delivers() -> None:
    """The seed's Motivation, variant "UNICAST": B's view clears its state for A, A keeps its own;
    A's next message (#3 here, #25 in the seed) opens a window at B that expects #1, which A has
    purged on B's final STABLE: B stores #3 and never delivers it."""
    p = Pair(Variant(no_conn_ids=True))
    opened(p, 2)
    assert p.view(B, frozenset({B})) == (Send(A, Stable(2, 2, NO_CONN, 0)), WindowRemoved(A))
    assert p.deliver(B, Stable(2, 2, NO_CONN, 0)) == (Purged(B, NO_CONN, 2),)
    p.view(B, BOTH)
    assert p.send(A, 3) == (Send(B, Data(3, NO_CONN, False, 3)),)
    assert p.deliver(A, Data(3, NO_CONN, False, 3)) == (WindowCreated(A, NO_CONN, 0),)
    assert p.receiver() == rcv(NO_CONN, 0, (None, None, Data(3, NO_CONN, False, 3)))
    assert not u2.purge_covered(p.a, p.b)


def test_motivation_without_conn_ids_a_discards_b_s_new_first_message() -> None:
    """... and the reverse: B's send entry was cleared too, so B starts again at #1; A's window for
    B is past #1 and discards it as a duplicate (the seed: "the first 6 messages from B are
    discarded at A")."""
    p = Pair(Variant(no_conn_ids=True))
    p.send(B, 1)
    p.deliver(B, Data(1, NO_CONN, True, 1))
    p.view(B, frozenset({B}))
    assert p.send(B, 2) == (Send(A, Data(1, NO_CONN, True, 2)),)
    assert p.deliver(B, Data(1, NO_CONN, True, 2)) == (Send(B, Ack(1, NO_CONN)),)  # not delivered
    assert p.a.recv[B] == rcv(NO_CONN, 1)


# ---------------------------------------------------------------------------------------------
# JGRP-1873 and the timestamp fix.
def jgrp1873(variant: Variant) -> Pair:
    """B delivers #1, #2 and removes its window (STABLE(2) delayed); A sends #3; B asks; A resends
    #1 (first), #2, #3; B opens a window at #1."""
    p = Pair(variant)
    opened(p, 2)
    p.remove_receiver(B)
    p.send(A, 3)
    sfs = p.deliver(A, data(3))[0]
    assert isinstance(sfs, Send) and isinstance(sfs.msg, SendFirstSeqno)
    p.deliver(B, sfs.msg)
    p.deliver(A, data(1))
    return p


def test_jgrp1873_stale_stable_purges_what_the_new_window_needs() -> None:
    p = jgrp1873(Variant())
    assert p.deliver(B, Stable(2, 2, 0, 0)) == (Purged(B, 0, 2), Send(B, data(3)))
    assert p.unsafe_purges == [Purged(B, 0, 2)]


def test_jgrp1873_fixed_by_timestamps() -> None:
    """fix:JGRP-1873: STABLE and SEND_FIRST_SEQNO carry the receiver's timestamps; the final STABLE
    (ts 1) is older than the SEND_FIRST_SEQNO (ts 2) A accepted, so it is ignored."""
    p = jgrp1873(Variant(fix_timestamps=True))
    assert p.sender().last_ts == 2 and p.b.timestamper == 2
    assert p.deliver(B, Stable(2, 2, 0, 1)) == ()
    assert p.sender().acked == 0
    assert_safe(p)


def test_jgrp1873_fix_is_not_enough_with_a_lost_first_ack() -> None:
    """The model's finding: the first-message resend reopens B's window without any timestamped
    SEND_FIRST_SEQNO, so the stale STABLE is still the newest timestamp A knows."""
    p = Pair(Variant(fix_timestamps=True))
    p.send(A, 1)
    p.send(A, 2)
    p.deliver(A, data(1))
    p.deliver(A, data(2))
    p.drop(B, Ack(1, 0))
    assert p.remove_receiver(B) == (Send(A, Stable(2, 2, 0, 1)), WindowRemoved(A))
    assert p.timer(A, XMIT) == (Send(B, data(1)),)
    assert p.deliver(A, data(1))[0] == WindowCreated(A, 0, 0)
    assert p.deliver(B, Stable(2, 2, 0, 1)) == (Purged(B, 0, 2),)
    assert p.unsafe_purges == [Purged(B, 0, 2)]


def test_jgrp1548_fix_resends_the_highest_sent_while_stalled() -> None:
    """fix:JGRP-1548 (UNICAST3's rule): the first run records (HA, HS); a run that finds it
    unchanged resends HS."""
    p = Pair(Variant(fix_resend_highest=True))
    opened(p, 1)
    p.send(A, 2)
    p.drop(A, data(2))
    assert p.timer(A, XMIT) == ()
    assert p.sender().watermark == (0, 2)
    assert p.timer(A, XMIT) == (Send(B, data(2)),)
    q = Pair()  # as shipped: nothing
    opened(q, 1)
    q.send(A, 2)
    q.drop(A, data(2))
    assert q.timer(A, XMIT) == () and q.timer(A, XMIT) == ()
