"""Hand-driven scenarios of spec/unicast3.py: two members, every step chosen by the test.

Style of h11's ``test_state.py`` and aioquic's virtual-clock tests: nothing is random and nothing is
explored. ``TwoMembers`` holds member A (0) and B (1), the packets in flight and the abstract channels
of ``spec/reliable_fifo``; the test delivers or drops chosen packets, fires chosen timers (only ones
the spec says are enabled), installs views and calls the receiver-removal hook, and asserts the
effects and the relevant entries after every step.

Each scenario names its source: seed UNICAST2 scenarios (#1-#9, digest 3.1), seed UNICAST3,
seed JGRP-1875 (receiver sync), and the JIRA issues of digest section 3. Where the spec departs
from JGroups' code (the digest's reference), the test states the code's behaviour and is marked
``xfail(strict=True, reason="SPEC DEVIATION: ...")``.

Packets and effects are NamedTuples, and tuples of equal fields compare equal across types
(``Close(1) == SendFirstSeqno(1)``, ``Purged(1, 0, 3) == Ack(1, 0, 3)``). Every step therefore
returns ``Exactly``, a tuple whose ``==`` also compares the classes.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from spec import reliable_fifo as fifo
from spec import unicast3 as u3
from spec.unicast3 import (
    CLOSE_RECV,
    CLOSE_SEND,
    CLOSING,
    IDLE_RECV,
    IDLE_SEND,
    OPEN,
    SYNC_EXPIRED,
    XMIT,
    Ack,
    Close,
    Config,
    Data,
    Deliver,
    Discarded,
    Effect,
    Msg,
    Node,
    Purged,
    RecvEntry,
    Send,
    SendEntry,
    SendFirstSeqno,
    Step,
    SyncRequested,
    Timer,
    Variant,
    WindowCreated,
    WindowRemoved,
    XmitReq,
)

A, B = 0, 1
BOTH = frozenset({A, B})
ONLY_A = frozenset({A})
ONLY_B = frozenset({B})


# ---------------------------------------------------------------------------------------------
# The two-member harness.
def _typed(value: object) -> object:
    """``value`` with every NamedTuple inside tagged by its class name."""
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


class TwoMembers:
    """Members A and B with one UNICAST3 ``Config``, the wire, and the abstract A->B / B->A channels.

    After every step it checks the spec's state invariants (I1 window order, I4 conn-id purity,
    I3 ack monotonicity, I7 timestamps issued) and records, rather than asserts, the properties a
    historical defect breaks (P6 at each purge, P6/P7 ``purge_covered`` on each state), so the
    variant tests can show them failing.
    """

    def __init__(self, variant: Variant | None = None) -> None:
        self.cfg = Config(members=2, variant=variant or Variant())
        self.nodes = [u3.initial_node(member, self.cfg, BOTH) for member in (A, B)]
        self.wire: list[Packet] = []
        self.channels = [fifo.Channel(), fifo.Channel()]  # indexed by the sending member
        self.unsafe_purges: list[Purged] = []  # Purged effects that broke purge_is_safe
        self.uncovered_steps = 0  # steps after which purge_covered(A, B) was false

    @property
    def a(self) -> Node:
        return self.nodes[A]

    @property
    def b(self) -> Node:
        return self.nodes[B]

    def sender(self) -> SendEntry:
        """A's send entry for B, which must exist."""
        entry = self.a.send[B]
        assert entry is not None
        return entry

    def receiver(self) -> RecvEntry:
        """B's receive entry for A, which must exist."""
        entry = self.b.recv[A]
        assert entry is not None
        return entry

    def ack_round(self) -> Ack:
        """B's retransmit task sends exactly one (pending) ACK, and A receives it."""
        effects = self.xmit(B)
        assert len(effects) == 1
        send = effects[0]
        assert isinstance(send, Send) and isinstance(send.msg, Ack)
        self.deliver(B, send.msg)
        return send.msg

    def channel(self, src: int) -> fifo.Channel:
        """The abstract channel from ``src`` to the other member."""
        return self.channels[src]

    def in_flight(self) -> Exactly:
        return Exactly(self.wire)

    def timers(self, member: int) -> frozenset[int]:
        """Kinds of the timers enabled at ``member`` (with two members the peer is always the other)."""
        return frozenset(timer.kind for timer in u3.enabled_timers(self.cfg, self.nodes[member]))

    # -- stimuli --------------------------------------------------------------------------------
    def send(self, src: int, payload: int) -> Exactly:
        """The application of ``src`` sends ``payload`` (which must be its next one) to the other."""
        self.channels[src] = fifo.send(self.channels[src])
        assert payload == self.channels[src].sent, "payload n is the n-th message of the pair"
        return self._apply(src, u3.on_send(self.cfg, self.nodes[src], 1 - src, payload))

    def deliver(self, src: int, msg: Msg) -> Exactly:
        """The network hands ``msg`` (in flight from ``src``) to the other member."""
        self._take(src, msg)
        dst = 1 - src
        return self._apply(dst, u3.on_receive(self.cfg, self.nodes[dst], src, msg))

    def drop(self, src: int, msg: Msg) -> None:
        """The network loses ``msg`` (in flight from ``src``)."""
        self._take(src, msg)

    def timer(self, member: int, kind: int) -> Exactly:
        """Fire a timer of ``member``; it must be enabled."""
        timer = Timer(kind, -1 if kind == XMIT else 1 - member)
        assert timer in u3.enabled_timers(self.cfg, self.nodes[member]), f"{timer} not enabled"
        return self._apply(member, u3.on_timer(self.cfg, self.nodes[member], timer))

    def xmit(self, member: int) -> Exactly:
        """One run of ``member``'s retransmit task."""
        return self.timer(member, XMIT)

    def view(self, member: int, members: frozenset[int]) -> Exactly:
        return self._apply(member, u3.on_view(self.cfg, self.nodes[member], members))

    def remove_receiver(self, member: int) -> Exactly:
        """removeReceiveConnection: ``member`` drops its receive entry for the other member."""
        return self._apply(member, u3.on_remove_receiver(self.cfg, self.nodes[member], 1 - member))

    # -- plumbing -------------------------------------------------------------------------------
    def _take(self, src: int, msg: Msg) -> None:
        for index, packet in enumerate(self.wire):
            if packet.src == src and type(packet.msg) is type(msg) and packet.msg == msg:
                del self.wire[index]
                return
        raise AssertionError(f"{type(msg).__name__}{msg} from {src} is not in flight: {self.wire}")

    def _apply(self, member: int, step: Step) -> Exactly:
        old, node = self.nodes[member], step.node
        self.nodes[member] = node
        assert u3.window_order(node)
        assert u3.conn_id_purity(node)
        assert u3.acks_monotone(old, node)
        assert u3.timestamps_issued(self.a, self.b) and u3.timestamps_issued(self.b, self.a)
        for effect in step.effects:
            self._observe(member, effect)
        assert u3.purge_covered(self.b, self.a), "B never sends to A in these scenarios"
        if not u3.purge_covered(self.a, self.b):
            self.uncovered_steps += 1
        return Exactly(step.effects)

    def _observe(self, member: int, effect: Effect) -> None:
        if isinstance(effect, Send):
            assert effect.dst == 1 - member
            self.wire.append(Packet(member, effect.dst, effect.msg))
        elif isinstance(effect, Deliver):
            self.channels[effect.src] = fifo.deliver(self.channels[effect.src], effect.payload)
        elif isinstance(effect, WindowCreated | WindowRemoved):
            self.channels[effect.src] = fifo.new_incarnation(self.channels[effect.src])
        elif isinstance(effect, Purged):
            if not u3.purge_is_safe(self.nodes[effect.dst], member, effect):
                self.unsafe_purges.append(effect)
        elif isinstance(effect, Discarded) and effect.flushed:
            self.channels[member] = fifo.excuse(self.channels[member], effect.payloads)


def snd(conn_id: int, acked: int, unacked: tuple[int, ...], *, watermark: tuple[int, int] = (0, 0),
        last_ts: int = 0, state: int = OPEN) -> SendEntry:
    """A send entry; ``unacked`` are the payloads of seqnos acked+1 ..."""
    return SendEntry(conn_id=conn_id, state=state, acked=acked, unacked=unacked, watermark=watermark,
                     last_ts=last_ts)


def rcv(conn_id: int, delivered: int, buffered: tuple[Data | None, ...] = (), *, ack_pending: bool,
        state: int = OPEN) -> RecvEntry:
    """A receive entry; ``buffered`` holds seqnos delivered+1 ... (None = gap)."""
    return RecvEntry(conn_id=conn_id, state=state, delivered=delivered, buffered=buffered,
                     ack_pending=ack_pending)


def data(seqno: int, *, conn: int = 0, payload: int | None = None, first: bool | None = None) -> Data:
    """DATA as the sender stores it: payload n at seqno n and first iff seqno 1, unless overridden
    (a SEND_FIRST_SEQNO answer is marked first; a reopened connection renumbers from 1)."""
    return Data(seqno, conn, seqno == 1 if first is None else first, seqno if payload is None else payload)


def assert_safe(s: TwoMembers) -> None:
    """A->B broke no delivery clause (FIFO and no duplicate per incarnation, nothing unsent) and no
    purge ever removed what B's current window still needed."""
    channel = s.channel(A)
    assert fifo.no_duplicate(channel) and fifo.in_order(channel) and fifo.delivered_was_sent(channel)
    assert s.unsafe_purges == [] and s.uncovered_steps == 0


def test_exactly_tells_message_types_apart() -> None:
    """The harness's own premise: plain tuple equality confuses messages of different types."""
    assert Close(1) == SendFirstSeqno(1)
    assert Exactly((Send(B, Close(1)),)) != (Send(B, SendFirstSeqno(1)),)
    assert Exactly((Purged(B, 0, 3),)) != (Ack(B, 0, 3),)
    assert Exactly((Send(B, Close(1)),)) == (Send(B, Close(1)),)


# ---------------------------------------------------------------------------------------------
# Scenarios.
def test_normal_one_way_delivery_cumulative_ack_and_purge() -> None:
    """Seed U2 #1/#2, seed UNICAST3 "Design": A opens a connection (conn_id 0, #1 first) and sends
    #1..#3; B creates its window from the first message, buffers #3 that overtook #2, delivers in
    order, and its retransmit task sends one cumulative ACK(3); A purges everything up to 3 and the
    HS resend stays quiet because HA == HS."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.a.send[B] == snd(0, 0, (1,))
    assert (s.a.next_conn_id, s.a.recv[B], s.b.recv[A]) == (1, None, None)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.send(A, 3) == (Send(B, data(3)),)
    assert s.a.send[B] == snd(0, 0, (1, 2, 3))
    assert s.a.next_conn_id == 1  # one connection, one conn_id

    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.b.recv[A] == rcv(0, 1, ack_pending=True)
    assert s.deliver(A, data(3)) == ()  # overtook #2: buffered behind a gap
    assert s.b.recv[A] == rcv(0, 1, (None, data(3)), ack_pending=True)
    assert s.receiver().missing() == (2,)
    assert s.deliver(A, data(2)) == (Deliver(A, 2), Deliver(A, 3))
    assert s.b.recv[A] == rcv(0, 3, ack_pending=True)

    assert s.xmit(A) == ()  # no ACK yet: the first run only records the watermark (HA, HS)
    assert s.a.send[B] == snd(0, 0, (1, 2, 3), watermark=(0, 3))

    assert s.xmit(B) == (Send(A, Ack(3, 0, 1)),)  # one cumulative ACK for three receptions
    assert s.b.recv[A] == rcv(0, 3, ack_pending=False)
    assert s.b.timestamper == 1
    assert s.xmit(B) == ()  # nothing pending, no gap

    assert s.deliver(B, Ack(3, 0, 1)) == (Purged(B, 0, 3),)
    assert s.a.send[B] == snd(0, 3, (), watermark=(0, 3), last_ts=1)
    assert s.xmit(A) == ()
    assert s.a.send[B] == snd(0, 3, (), watermark=(3, 3), last_ts=1)
    assert s.xmit(A) == ()  # HA == HS: nothing to resend, ever
    assert s.in_flight() == ()

    assert_safe(s)
    assert s.channel(A).all_delivered()


def test_both_sides_close_retransmit_while_closing_then_remove_and_reopen_fresh() -> None:
    """Seed U2 #3 and #7 the UNICAST3 way (seed UNICAST3 "Connection establishment", digest 1.2 (e)):
    a partition makes A install {A} and B install {B}. Both entries become CLOSING, nothing is
    discarded and A keeps retransmitting its unacked #2 (HS resend) until B has it; DATA reopens
    B's CLOSING entry. The close timers then remove both entries: no CLOSE, since B is not in A's
    view. After the merge A opens a fresh connection (conn_id 1, #1 first). Finally A's idle entry
    is closed while B *is* a member, so A sends CLOSE(1) and B drops its window."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    s.drop(A, data(2))
    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)
    assert s.deliver(B, Ack(1, 0, 1)) == (Purged(B, 0, 1),)
    assert s.a.send[B] == snd(0, 1, (2,), last_ts=1)

    # Partition: each side installs a view without the other.
    assert s.view(A, ONLY_A) == ()
    assert s.a.send[B] == snd(0, 1, (2,), last_ts=1, state=CLOSING)  # kept, not discarded
    assert s.timers(A) == {XMIT, CLOSE_SEND}
    assert s.view(B, ONLY_B) == ()
    assert s.b.recv[A] == rcv(0, 1, state=CLOSING, ack_pending=False)
    assert s.timers(B) == {XMIT, CLOSE_RECV}

    # Retransmission continues on the CLOSING entry.
    assert s.xmit(A) == ()
    assert s.a.send[B] == snd(0, 1, (2,), watermark=(1, 2), last_ts=1, state=CLOSING)
    assert s.xmit(A) == (Send(B, data(2)),)
    assert s.sender().state == CLOSING
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.b.recv[A] == rcv(0, 2, ack_pending=True)  # DATA reopened it (update(): CLOSING -> OPEN)
    assert s.timers(B) == {XMIT, IDLE_RECV}
    assert s.xmit(B) == (Send(A, Ack(2, 0, 2)),)  # B acks a non-member: no membership check
    assert s.deliver(B, Ack(2, 0, 2)) == (Purged(B, 0, 2),)
    assert s.a.send[B] == snd(0, 2, (), watermark=(1, 2), last_ts=2, state=CLOSING)

    # conn_close_timeout: both entries are removed. A sends no CLOSE (B is not in A's view).
    assert s.timer(A, CLOSE_SEND) == ()
    assert s.a.send[B] is None
    assert s.timers(A) == {XMIT}
    assert s.timer(B, IDLE_RECV) == ()
    assert s.b.recv[A] == rcv(0, 2, state=CLOSING, ack_pending=False)
    assert s.timer(B, CLOSE_RECV) == (WindowRemoved(A),)
    assert s.b.recv[A] is None
    assert s.timers(B) == {XMIT}

    # Merge (#7): both see {A, B}; traffic opens a fresh connection.
    assert s.view(A, BOTH) == ()
    assert s.view(B, BOTH) == ()
    assert s.send(A, 3) == (Send(B, data(1, conn=1, payload=3)),)
    assert s.a.send[B] == snd(1, 0, (3,))
    assert s.a.next_conn_id == 2
    assert s.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3))
    assert s.b.recv[A] == rcv(1, 1, ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(1, 1, 3)),)
    assert s.deliver(B, Ack(1, 1, 3)) == (Purged(B, 1, 1),)
    assert s.a.send[B] == snd(1, 1, (), last_ts=3)

    # Idle closing while B is a member: the removal sends CLOSE(conn_id), which removes B's window.
    assert s.timer(A, IDLE_SEND) == ()
    assert s.a.send[B] == snd(1, 1, (), last_ts=3, state=CLOSING)
    assert s.timer(A, CLOSE_SEND) == (Send(B, Close(1)),)
    assert s.a.send[B] is None
    assert s.deliver(A, Close(1)) == (WindowRemoved(A),)
    assert s.b.recv[A] is None

    assert_safe(s)
    assert s.channel(A).all_delivered()
    assert s.in_flight() == ()


def test_send_reopens_closing_entry_and_view_or_data_reopens_receiver() -> None:
    """Seed UNICAST3 "Sending a message: if the state is CLOSING, set it to OPEN"; digest 1.2 (e):
    a send on a CLOSING entry reopens it with the same conn_id and the next seqno (not first); DATA
    reopens a CLOSING receive entry, and so does a view that contains the peer again."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.ack_round() == Ack(1, 0, 1)
    assert s.a.send[B] == snd(0, 1, (), last_ts=1)

    assert s.view(A, ONLY_A) == ()
    assert s.view(B, ONLY_B) == ()
    assert s.sender().state == CLOSING and s.receiver().state == CLOSING

    assert s.send(A, 2) == (Send(B, data(2)),)  # same connection, seqno 2, not first
    assert s.a.send[B] == snd(0, 1, (2,), last_ts=1)  # OPEN again
    assert s.a.next_conn_id == 1
    assert s.timers(A) == {XMIT, IDLE_SEND}

    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.b.recv[A] == rcv(0, 2, ack_pending=True)  # OPEN again

    assert s.timer(B, IDLE_RECV) == ()
    assert s.b.recv[A] == rcv(0, 2, state=CLOSING, ack_pending=True)
    assert s.view(B, BOTH) == ()  # the peer is a member again
    assert s.b.recv[A] == rcv(0, 2, ack_pending=True)
    assert s.timers(B) == {XMIT, IDLE_RECV}

    assert_safe(s)
    assert s.channel(A).all_delivered()


@pytest.mark.parametrize("how", ["view_without_peer", "idle_close_lost"])
def test_sender_closes_unilaterally_then_sends_again(how: str) -> None:
    """Seed U2 #4 and #8 (A: {A}, B: {A, B}): A's send entry goes CLOSING and its close timer
    removes it, while B keeps its receive window (conn_id 0, delivered up to #2), either because A
    sends no CLOSE to a non-member or because the CLOSE is lost. A's next send opens a new
    connection: conn_id 1, seqno 1, first. B sees a first DATA with a different conn_id and
    replaces its window (UNICAST3 replaces on *any* different conn_id, decision 6)."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.xmit(B) == (Send(A, Ack(2, 0, 1)),)
    assert s.deliver(B, Ack(2, 0, 1)) == (Purged(B, 0, 2),)
    assert s.a.send[B] == snd(0, 2, (), last_ts=1)

    if how == "view_without_peer":
        assert s.view(A, ONLY_A) == ()
        assert s.a.send[B] == snd(0, 2, (), last_ts=1, state=CLOSING)
        assert s.timer(A, CLOSE_SEND) == ()  # B is not in A's view: no CLOSE
    else:
        assert s.timer(A, IDLE_SEND) == ()
        assert s.a.send[B] == snd(0, 2, (), last_ts=1, state=CLOSING)
        assert s.timer(A, CLOSE_SEND) == (Send(B, Close(0)),)
        s.drop(A, Close(0))
    assert s.a.send[B] is None
    assert s.b.recv[A] == rcv(0, 2, ack_pending=False)  # B keeps its window

    assert s.send(A, 3) == (Send(B, data(1, conn=1, payload=3)),)
    assert s.a.send[B] == snd(1, 0, (3,))  # new conn_id, seqnos restart, last_ts reset
    assert s.a.next_conn_id == 2
    assert s.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3))
    assert s.b.recv[A] == rcv(1, 1, ack_pending=True)  # replaced, adopted conn_id 1

    assert s.send(A, 4) == (Send(B, data(2, conn=1, payload=4)),)
    assert s.deliver(A, data(2, conn=1, payload=4)) == (Deliver(A, 4),)
    assert s.xmit(B) == (Send(A, Ack(2, 1, 2)),)
    assert s.deliver(B, Ack(2, 1, 2)) == (Purged(B, 1, 2),)
    assert s.a.send[B] == snd(1, 2, (), last_ts=2)

    assert_safe(s)
    assert s.channel(A).all_delivered()


@pytest.mark.parametrize("cached", [True, False], ids=["as-shipped", "no-message-cache"])
def test_seed6_reopened_connection_loses_its_first_message(cached: bool) -> None:
    """Seed U2 #6 (the defect of "conn_id only on the first message") does not happen: every DATA
    carries its conn_id. A reopens (conn_id 1) and #1 is lost; #2 reaches B, whose window is still
    on conn_id 0. B neither stores nor acks it in that window (so A purges nothing) but asks for the
    first seqno; A answers with #1 marked first and B replaces its window. As shipped, #2 waited in
    B's message cache and is delivered with #1 (decision 7); without the cache (3.x) it was dropped
    and comes back by the HS resend."""
    s = TwoMembers(Variant(no_message_cache=not cached))
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.ack_round() == Ack(2, 0, 1)
    assert s.view(A, ONLY_A) == ()
    assert s.timer(A, CLOSE_SEND) == ()  # A's connection is gone, B's window stays
    assert s.view(A, BOTH) == ()
    assert s.a.send[B] is None and s.b.recv[A] == rcv(0, 2, ack_pending=False)

    assert s.send(A, 3) == (Send(B, data(1, conn=1, payload=3)),)
    assert s.send(A, 4) == (Send(B, data(2, conn=1, payload=4)),)
    s.drop(A, data(1, conn=1, payload=3))
    assert s.deliver(A, data(2, conn=1, payload=4)) == (Send(A, SendFirstSeqno(2)), SyncRequested(A))
    assert s.b.recv[A] == rcv(0, 2, ack_pending=False)  # untouched: not stored, not acked
    assert s.b.sync_sent == {A}
    assert s.b.cache[A] == ({data(2, conn=1, payload=4)} if cached else frozenset())

    assert s.deliver(B, SendFirstSeqno(2)) == (Send(B, data(1, conn=1, payload=3)),)
    assert s.a.send[B] == snd(1, 0, (3, 4), last_ts=2)
    if cached:  # the cached #2 is of the new window's connection: added, and delivered with #1
        assert s.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3), Deliver(A, 4))
        assert (s.b.recv[A], s.b.cache[A]) == (rcv(1, 2, ack_pending=True), frozenset())
    else:
        assert s.deliver(A, data(1, conn=1, payload=3)) == (WindowCreated(A, 1, 0), Deliver(A, 3))
        assert s.b.recv[A] == rcv(1, 1, ack_pending=True)
        assert s.xmit(A) == ()
        assert s.xmit(A) == (Send(B, data(2, conn=1, payload=4)),)
        assert s.deliver(A, data(2, conn=1, payload=4)) == (Deliver(A, 4),)
    assert s.xmit(B) == (Send(A, Ack(2, 1, 3)),)
    assert s.deliver(B, Ack(2, 1, 3)) == (Purged(B, 1, 2),)
    assert s.a.send[B] == snd(1, 2, (), watermark=(0, 0) if cached else (0, 2), last_ts=3)

    assert_safe(s)
    assert s.channel(A).all_delivered()


def test_receiver_closes_unilaterally_sync_with_rate_limit() -> None:
    """Seed U2 #5/#9 (A: {A, B}, B: {B}) with the JGRP-1875 receiver sync (seed 002, digest 3.7/3.8):
    B removes its window for A (the removeReceiveConnection hook; in #9 a view {B} and the close
    timeout do it) while A keeps its connection with #3 unacked. A's next message #4 is not first:
    B drops it and sends SEND_FIRST_SEQNO(ts). #5 arrives before sync_min_interval has elapsed:
    dropped, and no second SEND_FIRST_SEQNO (JGRP-1874). A resends only its lowest unacked
    message, #3, marked first (decision 4); B creates its window just below it. #4 and #5 come back
    through the HS resend and a previous-batch XMIT_REQ. Once the SYNC_EXPIRED timer fired, a later
    mismatch asks again. Without the message cache, as JGroups 3.6.20 (the first release with
    JGRP-1875) did; as shipped, #4 and #5 wait in the cache instead
    (``test_messages_before_the_first_are_cached_and_drained``)."""
    s = TwoMembers(Variant(no_message_cache=True))
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    s.drop(A, data(3))
    assert s.xmit(B) == (Send(A, Ack(2, 0, 1)),)
    assert s.deliver(B, Ack(2, 0, 1)) == (Purged(B, 0, 2),)
    assert s.a.send[B] == snd(0, 2, (3,), last_ts=1)

    assert s.remove_receiver(B) == (WindowRemoved(A),)  # nothing pending to flush
    assert s.b.recv[A] is None
    assert s.a.send[B] == snd(0, 2, (3,), last_ts=1)  # A knows nothing of it

    assert s.send(A, 4) == (Send(B, data(4)),)
    assert s.deliver(A, data(4)) == (Send(A, SendFirstSeqno(2)), SyncRequested(A))
    assert (s.b.recv[A], s.b.cache[A]) == (None, frozenset())  # #4 dropped (no message cache)
    assert (s.b.sync_sent, s.b.timestamper) == ({A}, 2)
    assert SYNC_EXPIRED in s.timers(B)

    assert s.send(A, 5) == (Send(B, data(5)),)
    assert s.deliver(A, data(5)) == ()  # rate limited: no second SEND_FIRST_SEQNO
    assert (s.b.sync_sent, s.b.timestamper, s.b.recv[A]) == ({A}, 2, None)

    assert s.deliver(B, SendFirstSeqno(2)) == (Send(B, data(3, first=True)),)
    assert s.a.send[B] == snd(0, 2, (3, 4, 5), last_ts=2)  # the stored #3 keeps first=False
    assert s.deliver(A, data(3, first=True)) == (WindowCreated(A, 0, 2), Deliver(A, 3))
    assert s.b.recv[A] == rcv(0, 3, ack_pending=True)

    # #4 and #5 were dropped at B: the HS resend brings #5, the gap brings #4.
    assert s.xmit(A) == ()
    assert s.sender().watermark == (2, 5)
    assert s.xmit(A) == (Send(B, data(5)),)
    assert s.deliver(A, data(5)) == ()
    assert s.b.recv[A] == rcv(0, 3, (None, data(5)), ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(3, 0, 3)),)  # gap seen for the first time: no XMIT_REQ yet
    assert s.b.xmit_last[A] == 4
    assert s.deliver(B, Ack(3, 0, 3)) == (Purged(B, 0, 3),)
    assert s.xmit(B) == (Send(A, XmitReq((4,))),)
    assert s.deliver(B, XmitReq((4,))) == (Send(B, data(4)),)
    assert s.deliver(A, data(4)) == (Deliver(A, 4), Deliver(A, 5))
    assert s.xmit(B) == (Send(A, Ack(5, 0, 4)),)
    assert s.deliver(B, Ack(5, 0, 4)) == (Purged(B, 0, 5),)
    assert s.a.send[B] == snd(0, 5, (), watermark=(2, 5), last_ts=4)

    # sync_min_interval elapses; a new reset asks again.
    assert s.timer(B, SYNC_EXPIRED) == ()
    assert s.b.sync_sent == frozenset()
    assert SYNC_EXPIRED not in s.timers(B)
    assert s.remove_receiver(B) == (WindowRemoved(A),)
    assert s.send(A, 6) == (Send(B, data(6)),)
    assert s.deliver(A, data(6)) == (Send(A, SendFirstSeqno(5)), SyncRequested(A))

    assert_safe(s)  # two incarnations, each in order
    assert s.channel(A).delivered == 0b11111


def test_without_sync_rate_limit_every_mismatch_asks_again() -> None:
    """JGRP-1874 (digest 3.7), Variant(no_sync_rate_limit=True): one SEND_FIRST_SEQNO per non-first
    message from a sender B has no window for."""
    s = TwoMembers(Variant(no_sync_rate_limit=True))
    assert s.send(A, 1) == (Send(B, data(1)),)
    s.drop(A, data(1))
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.send(A, 3) == (Send(B, data(3)),)
    assert s.deliver(A, data(2)) == (Send(A, SendFirstSeqno(1)), SyncRequested(A))
    assert s.deliver(A, data(3)) == (Send(A, SendFirstSeqno(2)), SyncRequested(A))
    assert s.b.timestamper == 2
    assert_safe(s)


def test_messages_before_the_first_are_cached_and_drained() -> None:
    """Digest 1.2 (c) handleDataReceived steps 2-3 (decision 7, JGRP-2327): a non-first DATA with no
    receive entry is put into msg_cache[A]; when the SEND_FIRST_SEQNO answer creates the window, the
    cached #4 and #5 (same conn_id) are added before removeAndDeliver, so #3, #4, #5 are delivered at
    once, and nothing needs retransmitting."""
    s = TwoMembers()
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    s.drop(A, data(3))
    assert s.ack_round() == Ack(2, 0, 1)
    assert s.remove_receiver(B) == (WindowRemoved(A),)
    assert s.send(A, 4) == (Send(B, data(4)),)
    assert s.send(A, 5) == (Send(B, data(5)),)
    assert s.deliver(A, data(4)) == (Send(A, SendFirstSeqno(2)), SyncRequested(A))
    assert s.deliver(A, data(5)) == ()
    assert (s.b.recv[A], s.b.cache[A]) == (None, {data(4), data(5)})  # cached, nothing acked
    assert s.deliver(B, SendFirstSeqno(2)) == (Send(B, data(3, first=True)),)
    assert s.deliver(A, data(3, first=True)) == (WindowCreated(A, 0, 2), Deliver(A, 3), Deliver(A, 4),
                                                 Deliver(A, 5))
    assert (s.b.recv[A], s.b.cache[A]) == (rcv(0, 5, ack_pending=True), frozenset())
    assert s.ack_round() == Ack(5, 0, 3)
    assert s.a.send[B] == snd(0, 5, (), last_ts=3)
    assert_safe(s)
    assert s.channel(A).all_delivered()


def test_first_message_lost_recovered_by_hs_resend() -> None:
    """JGRP-1563 (digest 3.2), UNICAST3 analogue: A's only message #1 is lost, so B has no entry and
    sees nothing to ask for. A's retransmit task records (HA, HS) = (0, 1) on its first run and, as
    it is unchanged on the second run, resends #1 with its original header (first=true); B creates
    its window from it."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    s.drop(A, data(1))
    assert s.xmit(B) == ()  # B has nothing to ack or ask for
    assert s.b.recv[A] is None

    assert s.xmit(A) == ()  # first run after the send: records the stall
    assert s.a.send[B] == snd(0, 0, (1,), watermark=(0, 1))
    assert s.xmit(A) == (Send(B, data(1)),)  # second run: (HA, HS) unchanged -> resend HS
    assert s.a.send[B] == snd(0, 0, (1,), watermark=(0, 1))

    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.b.recv[A] == rcv(0, 1, ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)
    assert s.deliver(B, Ack(1, 0, 1)) == (Purged(B, 0, 1),)
    assert s.xmit(A) == ()
    assert s.a.send[B] == snd(0, 1, (), watermark=(1, 1), last_ts=1)
    assert s.channel(A).all_delivered()
    assert_safe(s)


@pytest.mark.parametrize("cached", [True, False], ids=["as-shipped", "no-message-cache"])
def test_first_message_lost_with_later_traffic_recovered_by_sync(cached: bool) -> None:
    """JGRP-1563 with further traffic (digest P4: "the first message ... SEND_FIRST_SEQNO"): #1 is
    lost and #2 arrives; B has no entry and #2 is not first, so B asks; A answers with #1 marked
    first. As shipped, #2 waited in the message cache and is delivered with #1 (JGRP-2327, the
    models' ``jgrp2327-message-cache``); without the cache it comes back by the HS resend."""
    s = TwoMembers(Variant(no_message_cache=not cached))
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    s.drop(A, data(1))
    assert s.deliver(A, data(2)) == (Send(A, SendFirstSeqno(1)), SyncRequested(A))
    assert s.b.recv[A] is None
    assert s.deliver(B, SendFirstSeqno(1)) == (Send(B, data(1)),)
    assert s.a.send[B] == snd(0, 0, (1, 2), last_ts=1)
    if cached:
        assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1), Deliver(A, 2))
    else:
        assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
        assert s.xmit(A) == ()
        assert s.xmit(A) == (Send(B, data(2)),)
        assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.b.recv[A] == rcv(0, 2, ack_pending=True)
    assert s.channel(A).all_delivered()
    assert_safe(s)


def _last_message_lost(s: TwoMembers) -> None:
    """A sends #1..#3; #3 is lost; B delivers #1, #2, sees no gap, and acks 2."""
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    s.drop(A, data(3))
    assert s.b.recv[A] == rcv(0, 2, ack_pending=True)
    assert s.receiver().missing() == ()
    assert s.xmit(B) == (Send(A, Ack(2, 0, 1)),)  # no gap: no XMIT_REQ, now or ever
    assert s.b.xmit_last[A] == 0
    assert s.deliver(B, Ack(2, 0, 1)) == (Purged(B, 0, 2),)
    assert s.a.send[B] == snd(0, 2, (3,), last_ts=1)


def test_last_message_lost_recovered_by_hs_resend() -> None:
    """JGRP-1548 (digest 3.3), fixed by seed UNICAST3's HS resend: (HA, HS) = (2, 3) is read on one
    run; unchanged on the next, so #3 is resent, and again on every run while stalled (decision
    11). B delivers it and the ACK stops the resends."""
    s = TwoMembers()
    _last_message_lost(s)
    assert s.xmit(A) == ()
    assert s.a.send[B] == snd(0, 2, (3,), watermark=(2, 3), last_ts=1)
    assert s.xmit(A) == (Send(B, data(3)),)
    s.drop(A, data(3))
    assert s.xmit(A) == (Send(B, data(3)),)  # still stalled: resent on every run
    assert s.a.send[B] == snd(0, 2, (3,), watermark=(2, 3), last_ts=1)
    assert s.deliver(A, data(3)) == (Deliver(A, 3),)
    assert s.xmit(B) == (Send(A, Ack(3, 0, 2)),)
    assert s.deliver(B, Ack(3, 0, 2)) == (Purged(B, 0, 3),)
    assert s.xmit(A) == ()
    assert s.a.send[B] == snd(0, 3, (), watermark=(3, 3), last_ts=2)
    assert s.channel(A).all_delivered()
    assert_safe(s)


def test_last_message_lost_never_resent_without_hs_resend() -> None:
    """JGRP-1548 brought back, Variant(no_hs_resend=True): nobody ever notices #3 is missing; B has
    no gap to request and A never resends, however often the retransmit tasks run."""
    s = TwoMembers(Variant(no_hs_resend=True))
    _last_message_lost(s)
    for _ in range(5):
        assert s.xmit(A) == ()
        assert s.xmit(B) == ()
    assert s.a.send[B] == snd(0, 2, (3,), watermark=(2, 3), last_ts=1)
    assert s.b.recv[A] == rcv(0, 2, ack_pending=False)
    assert s.in_flight() == ()
    assert not s.channel(A).all_delivered()
    assert_safe(s)


def _receiver_reset_with_delayed_ack(s: TwoMembers, ts: list[int]) -> None:
    """Digest 3.6 steps 1-6 on a small scale. A sends #1..#3, B delivers them and its ACK(3) is
    delayed (left in flight); B removes its window; A's #4 (not first) makes B ask for the first
    seqno (and waits in B's message cache, unless the variant has none); A (nothing acked) answers
    with #1 marked first and B opens a new window at 1, holding the cached #4.
    ``ts`` are the timestamps the ACK and the SEND_FIRST_SEQNO carry."""
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.deliver(A, data(3)) == (Deliver(A, 3),)
    assert s.b.recv[A] == rcv(0, 3, ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(3, 0, ts[0])),)  # ... delayed in the network
    assert s.remove_receiver(B) == (WindowRemoved(A),)
    assert s.send(A, 4) == (Send(B, data(4)),)
    assert s.deliver(A, data(4)) == (Send(A, SendFirstSeqno(ts[1])), SyncRequested(A))
    assert s.deliver(B, SendFirstSeqno(ts[1])) == (Send(B, data(1)),)
    assert s.a.send[B] == snd(0, 0, (1, 2, 3, 4), last_ts=ts[1])
    # The new incarnation re-delivers #1 (allowed across incarnations, P2 caveat).
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    held = () if s.cfg.variant.no_message_cache else (None, None, data(4))
    assert s.b.recv[A] == rcv(0, 1, held, ack_pending=True)


def test_delayed_ack_after_receiver_reset_is_dropped_by_timestamp() -> None:
    """JGRP-1873 fixed by JGRP-1875 (seed 002, digest 3.8 replay): the stale ACK(3, ts=1) reaches A
    after SEND_FIRST_SEQNO(ts=2) was accepted; 1 is not newer than 2, so A drops it and purges
    nothing. B's new window needs #2, #3 and #4; all are still stored and come back (HS resend,
    then a previous-batch XMIT_REQ)."""
    s = TwoMembers()
    _receiver_reset_with_delayed_ack(s, [1, 2])
    assert s.deliver(B, Ack(3, 0, 1)) == ()  # stale: dropped
    assert s.a.send[B] == snd(0, 0, (1, 2, 3, 4), last_ts=2)

    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(4)),)
    assert s.deliver(A, data(4)) == ()
    assert s.b.recv[A] == rcv(0, 1, (None, None, data(4)), ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(1, 0, 3)),)
    assert s.deliver(B, Ack(1, 0, 3)) == (Purged(B, 0, 1),)  # ts 3 is newer: accepted
    assert s.xmit(B) == (Send(A, XmitReq((2, 3))),)
    assert s.deliver(B, XmitReq((2, 3))) == (Send(B, data(2)), Send(B, data(3)))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.deliver(A, data(3)) == (Deliver(A, 3), Deliver(A, 4))
    assert s.xmit(B) == (Send(A, Ack(4, 0, 4)),)
    assert s.deliver(B, Ack(4, 0, 4)) == (Purged(B, 0, 4),)
    assert s.a.send[B] == snd(0, 4, (), watermark=(0, 4), last_ts=4)

    assert_safe(s)
    assert s.channel(A).all_delivered()


def test_delayed_ack_without_timestamps_purges_what_the_new_window_needs() -> None:
    """JGRP-1873 brought back, Variant(no_timestamps=True) (digest 3.6 steps 7-9): the stale ACK(3)
    is accepted (same conn_id) and A purges #1..#3, although B's new window has delivered only #1.
    B gets #4 by the HS resend and asks for #2, #3 forever; A no longer has them. B is stuck and
    both retransmission loops never end (L + R). Without the message cache, as in 3.4.8, the
    release with the defect (the cache would only bring #4 earlier)."""
    s = TwoMembers(Variant(no_timestamps=True, no_message_cache=True))
    _receiver_reset_with_delayed_ack(s, [0, 0])
    assert s.deliver(B, Ack(3, 0, 0)) == (Purged(B, 0, 3),)  # the spurious purge
    assert s.a.send[B] == snd(0, 3, (4,))
    assert s.unsafe_purges == [Purged(B, 0, 3)]
    assert s.uncovered_steps == 1
    assert not u3.purge_covered(s.a, s.b)  # B's window waits for seqnos that exist nowhere

    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(4)),)
    assert s.deliver(A, data(4)) == ()
    assert s.b.recv[A] == rcv(0, 1, (None, None, data(4)), ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(1, 0, 0)),)
    assert s.deliver(B, Ack(1, 0, 0)) == ()  # below HA: nothing to purge
    assert s.xmit(B) == (Send(A, XmitReq((2, 3))),)
    assert s.deliver(B, XmitReq((2, 3))) == ()  # #2 and #3 are gone
    for _ in range(3):
        assert s.xmit(A) == (Send(B, data(4)),)  # HA 3 < HS 4, stalled
        assert s.deliver(A, data(4)) == ()  # duplicate
        assert s.xmit(B) == (Send(A, Ack(1, 0, 0)), Send(A, XmitReq((2, 3))))  # re-ack, ask again
        assert s.deliver(B, Ack(1, 0, 0)) == ()
        assert s.deliver(B, XmitReq((2, 3))) == ()
    assert s.b.recv[A] == rcv(0, 1, (None, None, data(4)), ack_pending=False)
    assert s.a.send[B] == snd(0, 3, (4,), watermark=(3, 4))
    assert not s.channel(A).all_delivered()
    assert s.unsafe_purges == [Purged(B, 0, 3)]
    assert s.uncovered_steps > 1  # every state since the purge


def _ack_lost(s: TwoMembers) -> None:
    """A sends #1, B delivers it and its ACK(1) is lost; A's HS resend brings a duplicate #1."""
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)
    s.drop(B, Ack(1, 0, 1))
    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(1)),)
    assert s.deliver(A, data(1)) == ()  # same conn_id: the window is kept, the duplicate rejected


def test_duplicate_after_lost_ack_is_reacked() -> None:
    """JGRP-1578 (digest 3.12, decision 2): every DATA received sets ack_pending, duplicates
    included, so the re-ACK stops A's retransmissions."""
    s = TwoMembers()
    _ack_lost(s)
    assert s.b.recv[A] == rcv(0, 1, ack_pending=True)
    assert s.xmit(B) == (Send(A, Ack(1, 0, 2)),)
    assert s.deliver(B, Ack(1, 0, 2)) == (Purged(B, 0, 1),)
    assert s.a.send[B] == snd(0, 1, (), watermark=(0, 1), last_ts=2)
    assert s.xmit(A) == ()
    assert s.xmit(A) == ()
    assert_safe(s)


def test_duplicate_not_reacked_with_ack_only_new() -> None:
    """JGRP-1578 brought back, Variant(ack_only_new=True): the duplicate delivers nothing new, so
    no ACK is pending; A resends #1 on every run forever."""
    s = TwoMembers(Variant(ack_only_new=True))
    _ack_lost(s)
    assert s.b.recv[A] == rcv(0, 1, ack_pending=False)
    for _ in range(3):
        assert s.xmit(B) == ()
        assert s.xmit(A) == (Send(B, data(1)),)
        assert s.deliver(A, data(1)) == ()
    assert s.a.send[B] == snd(0, 0, (1,), watermark=(0, 1))
    assert_safe(s)


def _peer_leaves_with_unacked(s: TwoMembers) -> None:
    """A sends #1, #2 (e.g. final replies to B); #2 is lost; B acks 1."""
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    s.drop(A, data(2))
    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)
    assert s.deliver(B, Ack(1, 0, 1)) == (Purged(B, 0, 1),)
    assert s.a.send[B] == snd(0, 1, (2,), last_ts=1)


def test_view_change_keeps_unacked_and_retransmits() -> None:
    """JGRP-1586 fixed (digest 3.5, P11): A installs a view without B (B leaving or falsely
    suspected, still alive). The send entry only becomes CLOSING; #2 is kept and the HS resend
    delivers it."""
    s = TwoMembers()
    _peer_leaves_with_unacked(s)
    assert s.view(A, ONLY_A) == ()
    assert s.a.send[B] == snd(0, 1, (2,), last_ts=1, state=CLOSING)
    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(2)),)
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.xmit(B) == (Send(A, Ack(2, 0, 2)),)
    assert s.deliver(B, Ack(2, 0, 2)) == (Purged(B, 0, 2),)
    assert s.a.send[B] == snd(0, 2, (), watermark=(1, 2), last_ts=2, state=CLOSING)
    assert s.channel(A).all_delivered()
    assert_safe(s)


def test_view_change_removes_unacked_with_remove_on_view_change() -> None:
    """JGRP-1586 brought back, Variant(remove_on_view_change=True) (UNICAST2 behaviour): the view
    change removes the entry at once and discards #2 without a grace period (not excused)."""
    s = TwoMembers(Variant(remove_on_view_change=True))
    _peer_leaves_with_unacked(s)
    assert s.view(A, ONLY_A) == (Discarded(B, (2,), False),)
    assert s.a.send[B] is None
    for _ in range(3):
        assert s.xmit(A) == ()
    assert s.in_flight() == ()
    assert s.b.recv[A] == rcv(0, 1, ack_pending=False)
    assert s.channel(A).excused == 0
    assert not s.channel(A).all_delivered()
    assert_safe(s)


def test_close_timeout_discards_what_is_still_unacked() -> None:
    """Digest P11 and 1.2 (e): if #2 is still unacked when conn_close_timeout expires on the CLOSING
    entry, it is removed with its messages; that is the grace period's end, so #2 is excused."""
    s = TwoMembers()
    _peer_leaves_with_unacked(s)
    assert s.view(A, ONLY_A) == ()
    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(2)),)
    s.drop(A, data(2))
    assert s.timer(A, CLOSE_SEND) == (Discarded(B, (2,), True),)
    assert s.a.send[B] is None
    assert s.xmit(A) == ()
    assert s.channel(A).excused == 0b10
    assert s.channel(A).all_delivered()
    assert_safe(s)


def test_gap_requested_only_on_the_run_after_it_was_seen() -> None:
    """JGRP-1539 previous-batch retransmission (digest 1.0.2): a gap is asked for only if it already
    existed on the previous run of the retransmit task. #2 goes missing; the first run only records
    it (xmit_last = 2); the next run asks for #2 but not for #4, which went missing meanwhile; the
    run after that asks for both."""
    s = TwoMembers()
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    s.drop(A, data(2))
    assert s.deliver(A, data(3)) == ()
    assert s.b.recv[A] == rcv(0, 1, (None, data(3)), ack_pending=True)

    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)  # gap seen: recorded, not requested
    assert s.b.xmit_last[A] == 2
    assert s.deliver(B, Ack(1, 0, 1)) == (Purged(B, 0, 1),)

    assert s.send(A, 4) == (Send(B, data(4)),)
    assert s.send(A, 5) == (Send(B, data(5)),)
    s.drop(A, data(4))
    assert s.deliver(A, data(5)) == ()
    assert s.b.recv[A] == rcv(0, 1, (None, data(3), None, data(5)), ack_pending=True)
    assert s.receiver().missing() == (2, 4)

    assert s.xmit(B) == (Send(A, Ack(1, 0, 2)), Send(A, XmitReq((2,))))  # 4 is new: not yet
    assert s.b.xmit_last[A] == 4
    assert s.deliver(B, Ack(1, 0, 2)) == ()  # nothing new to purge
    s.drop(B, XmitReq((2,)))

    assert s.xmit(B) == (Send(A, XmitReq((2, 4))),)
    assert s.b.xmit_last[A] == 4
    assert s.deliver(B, XmitReq((2, 4))) == (Send(B, data(2)), Send(B, data(4)))
    assert s.deliver(A, data(2)) == (Deliver(A, 2), Deliver(A, 3))
    assert s.deliver(A, data(4)) == (Deliver(A, 4), Deliver(A, 5))
    assert s.b.recv[A] == rcv(0, 5, ack_pending=True)

    assert s.xmit(B) == (Send(A, Ack(5, 0, 3)),)
    assert s.b.xmit_last[A] == 0  # no gap: forgotten
    assert s.deliver(B, Ack(5, 0, 3)) == (Purged(B, 0, 5),)
    assert_safe(s)
    assert s.channel(A).all_delivered()


def test_xmit_last_survives_window_removal() -> None:
    """Digest 1.0.2 / UNICAST3.triggerXmit: ``for (target, entry) in recv_table: ... else
    xmit_task_map.remove(target)``. A closes its connection while B is a member (CLOSE) with B's
    gap at #2 recorded. B's next retransmit run leaves the record alone; A's new connection has a
    gap at #2 again, and B requests it on its first run, without the previous-batch delay."""
    s = TwoMembers()
    for payload in (1, 2, 3):
        assert s.send(A, payload) == (Send(B, data(payload)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    s.drop(A, data(2))
    assert s.deliver(A, data(3)) == ()
    assert s.xmit(B) == (Send(A, Ack(1, 0, 1)),)
    assert s.b.xmit_last[A] == 2
    assert s.deliver(B, Ack(1, 0, 1)) == (Purged(B, 0, 1),)
    assert s.timer(A, IDLE_SEND) == ()
    assert s.timer(A, CLOSE_SEND) == (Send(B, Close(0)), Discarded(B, (2, 3), True))
    assert s.deliver(A, Close(0)) == (WindowRemoved(A),)
    assert s.b.xmit_last[A] == 2

    assert s.xmit(B) == ()
    assert s.b.xmit_last[A] == 2  # JGroups: not visited, kept

    assert s.send(A, 4) == (Send(B, data(1, conn=1, payload=4)),)
    assert s.send(A, 5) == (Send(B, data(2, conn=1, payload=5)),)
    assert s.send(A, 6) == (Send(B, data(3, conn=1, payload=6)),)
    assert s.deliver(A, data(1, conn=1, payload=4)) == (WindowCreated(A, 1, 0), Deliver(A, 4))
    s.drop(A, data(2, conn=1, payload=5))
    assert s.deliver(A, data(3, conn=1, payload=6)) == ()
    assert s.xmit(B) == (Send(A, Ack(1, 1, 2)), Send(A, XmitReq((2,))))


@pytest.mark.parametrize("entry_removed", [True, False])
def test_receiver_reset_after_lost_ack_duplicates_or_reacks(entry_removed: bool) -> None:
    """Digest 3.8 residual (b), UNICAST_Test.testDuplicateMessageDelivery: B delivered #1..#3 but
    its ACK(3) is lost (A has HA 2); B's entry goes CLOSING. 4a (short conn_close_timeout): the
    entry is removed; the HS resend of #3 (not first) makes B ask, A resends #3 as first and B
    delivers #3 a second time, in a new incarnation. 4b (entry still CLOSING): #3 reopens it, is
    rejected as a duplicate and merely re-acked: exactly one delivery."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.send(A, 2) == (Send(B, data(2)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.deliver(A, data(2)) == (Deliver(A, 2),)
    assert s.ack_round() == Ack(2, 0, 1)
    assert s.send(A, 3) == (Send(B, data(3)),)
    assert s.deliver(A, data(3)) == (Deliver(A, 3),)
    assert s.xmit(B) == (Send(A, Ack(3, 0, 2)),)
    s.drop(B, Ack(3, 0, 2))
    assert s.timer(B, IDLE_RECV) == ()
    assert s.b.recv[A] == rcv(0, 3, state=CLOSING, ack_pending=False)
    if entry_removed:
        assert s.timer(B, CLOSE_RECV) == (WindowRemoved(A),)

    assert s.xmit(A) == ()
    assert s.xmit(A) == (Send(B, data(3)),)
    if entry_removed:
        assert s.deliver(A, data(3)) == (Send(A, SendFirstSeqno(3)), SyncRequested(A))
        assert s.deliver(B, SendFirstSeqno(3)) == (Send(B, data(3, first=True)),)
        assert s.deliver(A, data(3, first=True)) == (WindowCreated(A, 0, 2), Deliver(A, 3))
        ack = Ack(3, 0, 4)
    else:
        assert s.deliver(A, data(3)) == ()
        ack = Ack(3, 0, 3)
    assert s.b.recv[A] == rcv(0, 3, ack_pending=True)
    assert s.xmit(B) == (Send(A, ack),)
    assert s.deliver(B, ack) == (Purged(B, 0, 3),)
    assert s.a.send[B] == snd(0, 3, (), watermark=(2, 3), last_ts=ack.ts)

    assert_safe(s)  # a re-delivery in a new incarnation is not a violation
    assert s.channel(A).all_delivered()


def test_close_with_another_conn_id_is_ignored() -> None:
    """Digest 1.2 (c) CLOSE(c): only a receive entry with conn_id c is removed; a late CLOSE of an
    old connection leaves the current window alone."""
    s = TwoMembers()
    assert s.send(A, 1) == (Send(B, data(1)),)
    assert s.deliver(A, data(1)) == (WindowCreated(A, 0, 0), Deliver(A, 1))
    assert s.ack_round() == Ack(1, 0, 1)
    assert s.timer(A, IDLE_SEND) == ()
    assert s.timer(A, CLOSE_SEND) == (Send(B, Close(0)),)
    assert s.send(A, 2) == (Send(B, data(1, conn=1, payload=2)),)  # overtakes the CLOSE(0)
    assert s.deliver(A, data(1, conn=1, payload=2)) == (WindowCreated(A, 1, 0), Deliver(A, 2))
    assert s.deliver(A, Close(0)) == ()
    assert s.b.recv[A] == rcv(1, 1, ack_pending=True)
    assert_safe(s)
