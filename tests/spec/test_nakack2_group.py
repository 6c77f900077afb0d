"""A hand-driven group of spec/nakack2.py members, and Hypothesis runs of it.

``Group`` holds N members, the packets in flight (a list: the test picks which one arrives, which
is lost, which is duplicated) and, per (sender, receiver), the abstract channel of
``spec/reliable_fifo`` plus the list of payloads delivered. After every step it asserts the
spec's state properties on every member (I1 window order, I2 seqno discipline, slots holding
their seqnos, the queue's bound), the delivery properties on every channel (FIFO within a window
incarnation, no duplicate, nothing unsent) and P6 (``purge_covered``) on every pair. The other
NAKACK2 test modules drive scenarios through it; this one runs random schedules.

A member's loopback copy of its own multicast is never lost here: it does not touch the network
(JGroups loops it back in the transport), and the member's own delivery depends on it.

Packets and effects are NamedTuples, and tuples of equal fields compare equal across types
(``Data(1, 1) == StablePurged(1, 1)``); ``typed`` tags every NamedTuple with its class name, and
every comparison of effects goes through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from hypothesis import given
from hypothesis import strategies as st

from spec import nakack2 as nk
from spec import reliable_fifo as fifo
from spec.effects import Deliver, Send, WindowCreated, WindowRemoved


def typed(value: object) -> object:
    """``value`` with every NamedTuple inside tagged by its class name."""
    if isinstance(value, (tuple, list)):
        items = tuple(typed(item) for item in value)
        return (type(value).__name__, *items) if hasattr(value, "_fields") else items
    return value


class Packet(NamedTuple):
    src: int
    dst: int
    msg: nk.Msg


class Group:
    """Members 0 .. n-1 with one NAKACK2 ``Config``, the wire, and what each pair delivered."""

    def __init__(self, n: int = 3, *, founders: Sequence[int] | None = None,
                 variant: nk.Variant | None = None, **settings: Any) -> None:
        self.cfg = nk.Config(n, variant=variant or nk.Variant(), **settings)
        view = frozenset(range(n) if founders is None else founders)
        self.nodes = [nk.initial_node(member, self.cfg, view) for member in range(n)]
        self.wire: list[Packet] = []
        self.sent = [0] * n  # multicasts each member's application made (payload k = k-th)
        self.channels = {(s, r): fifo.Channel() for s in range(n) for r in range(n)}
        self.log: dict[tuple[int, int], list[int]] = {(s, r): [] for s in range(n) for r in range(n)}
        self.offsets: dict[tuple[int, int], int] = {}  # (sender, receiver) -> offset of the last window created
        self.check()

    # -- stimuli -----------------------------------------------------------------------------
    def send(self, member: int, count: int = 1) -> tuple[Any, ...]:
        """``member``'s application multicasts ``count`` messages; returns the last step's effects."""
        effects: tuple[Any, ...] = ()
        for _ in range(count):
            step = nk.on_send(self.cfg, self.nodes[member], self.sent[member] + 1)
            if step.effects:
                self.sent[member] += 1
                for receiver in range(self.cfg.members):
                    self.channels[member, receiver] = fifo.send(
                        self.channels[member, receiver], dont_loopback=self.cfg.dont_loopback and receiver == member)
            effects = self.apply(member, step)
        return effects

    def take(self, match: Callable[[Packet], bool]) -> Packet:
        """Remove the oldest packet in flight that ``match`` accepts."""
        for index, packet in enumerate(self.wire):
            if match(packet):
                return self.wire.pop(index)
        raise AssertionError("no such packet in flight")

    def deliver(self, match: Callable[[Packet], bool], *, keep: bool = False) -> tuple[Any, ...]:
        """The oldest matching packet arrives (``keep``: a copy stays in flight, a duplicate)."""
        packet = self.take(match)
        if keep:
            self.wire.append(packet)
        return self.receive(packet)

    def receive(self, packet: Packet) -> tuple[Any, ...]:
        """``packet`` reaches NAKACK2 at its destination."""
        return self.apply(packet.dst, nk.on_receive(self.cfg, self.nodes[packet.dst], packet.src, packet.msg))

    def lose(self, match: Callable[[Packet], bool]) -> Packet:
        """The oldest matching packet never reaches NAKACK2 (network loss or a drop below it)."""
        packet = self.take(match)
        assert packet.src != packet.dst, "loopback copies are not lost"
        return packet

    def fire(self, member: int, kind: int) -> tuple[Any, ...]:
        timer = nk.Timer(kind)
        assert timer in nk.enabled_timers(self.cfg, self.nodes[member]), (member, nk.TIMER_NAMES[kind])
        return self.apply(member, nk.on_timer(self.cfg, self.nodes[member], timer))

    def view(self, member: int, members: Sequence[int]) -> tuple[Any, ...]:
        return self.apply(member, nk.on_view(self.cfg, self.nodes[member], frozenset(members)))

    def join(self, coordinator: int, joiner: int, members: Sequence[int]) -> tuple[Any, ...]:
        return self.apply(coordinator, nk.on_join(self.cfg, self.nodes[coordinator], joiner, frozenset(members)))

    def flush(self, limit: int = 100_000) -> None:
        """Deliver every packet in flight, oldest first, until none is left."""
        for _ in range(limit):
            if not self.wire:
                return
            self.receive(self.wire.pop(0))
        raise AssertionError("the wire never empties")

    def settle(self, rounds: int = 6) -> None:
        """Fault-free continuation: flush, every retransmit task, flush, every STABLE gossip, flush."""
        for _ in range(rounds):
            for kind in (nk.XMIT, nk.STABLE):
                self.flush()
                for member in range(self.cfg.members):
                    if nk.Timer(kind) in nk.enabled_timers(self.cfg, self.nodes[member]):
                        self.fire(member, kind)
            self.flush()

    # -- bookkeeping -------------------------------------------------------------------------
    def apply(self, member: int, step: nk.Step) -> tuple[Any, ...]:
        self.nodes[member] = step.node
        for effect in step.effects:
            if isinstance(effect, Send):
                self.wire.append(Packet(member, effect.dst, effect.msg))
            elif isinstance(effect, Deliver):
                self.channels[effect.src, member] = fifo.deliver(self.channels[effect.src, member], effect.payload)
                self.log[effect.src, member].append(effect.payload)
            elif isinstance(effect, (WindowCreated, WindowRemoved)):
                self.channels[effect.src, member] = fifo.new_incarnation(self.channels[effect.src, member])
                if isinstance(effect, WindowCreated):
                    self.offsets[effect.src, member] = effect.offset
        self.check()
        return step.effects

    def check(self) -> None:
        for node in self.nodes:
            assert nk.window_order(node), node
            assert nk.slots_hold_their_seqnos(node), node
            assert nk.seqno_discipline(node), node
            assert nk.queue_within_bound(self.cfg, node), node
        for pair, channel in self.channels.items():
            assert fifo.in_order(channel) and fifo.no_duplicate(channel) and fifo.delivered_was_sent(channel), pair
        for sender in self.nodes:
            for receiver in self.nodes:
                assert nk.purge_covered(sender, receiver), (sender.me, receiver.me)

    def window(self, member: int, sender: int) -> nk.Window:
        """``member``'s window for ``sender`` (which must exist)."""
        window = self.nodes[member].windows[sender]
        assert window is not None, (member, sender)
        return window

    def in_flight(self, match: Callable[[Packet], bool]) -> list[Packet]:
        return [p for p in self.wire if match(p)]


def to(dst: int, kind: type | None = None, src: int | None = None, seqno: int | None = None
       ) -> Callable[[Packet], bool]:
    """A packet matcher: destination, and optionally message type, source and seqno."""
    def match(p: Packet) -> bool:
        return (p.dst == dst and (kind is None or isinstance(p.msg, kind)) and (src is None or p.src == src)
                and (seqno is None or getattr(p.msg, "seqno", None) == seqno))
    return match


def same(packet: Packet) -> Callable[[Packet], bool]:
    """A matcher for this very packet object."""
    return lambda p: p is packet


# ---------------------------------------------------------------------------------------------
# Random schedules over three members.
ACTIONS = st.lists(st.tuples(st.sampled_from(["send", "deliver", "dup", "lose", "xmit", "stable"]),
                             st.integers(0, 1_000)), max_size=60)


def run_schedule(group: Group, schedule: list[tuple[str, int]], *, losses: int) -> int:
    """Play ``schedule`` on ``group``: the integer picks the member or the packet in flight;
    at most ``losses`` packets are lost, never a loopback copy nor a JoinRsp (GMS sends it
    reliably). Returns the losses left."""
    n = group.cfg.members
    for action, pick in schedule:
        if action == "send":
            group.send(pick % n)
        elif action in ("xmit", "stable"):
            kind = nk.XMIT if action == "xmit" else nk.STABLE
            if nk.Timer(kind) in nk.enabled_timers(group.cfg, group.nodes[pick % n]):
                group.fire(pick % n, kind)
        elif group.wire:
            packet = group.wire[pick % len(group.wire)]
            if action == "lose" and losses > 0 and packet.src != packet.dst and not isinstance(packet.msg, nk.JoinRsp):
                losses -= 1
                group.lose(same(packet))
            elif action != "lose":
                group.deliver(same(packet), keep=action == "dup")
    return losses


def assert_everything_delivered(group: Group) -> None:
    for (sender, receiver), payloads in group.log.items():
        assert payloads == list(range(1, group.sent[sender] + 1)), (sender, receiver, payloads)


@given(ACTIONS)
def test_with_retransmission_every_loss_is_recovered_in_order(schedule: list[tuple[str, int]]) -> None:
    """Retransmission on: whatever the order, duplication and (up to 4) losses, every member
    delivers every member's multicasts exactly once, in order, once the faults stop."""
    group = Group(3)
    run_schedule(group, schedule, losses=4)
    group.settle()
    assert_everything_delivered(group)


@given(ACTIONS)
def test_with_retransmission_off_a_lossless_network_delivers_everything(schedule: list[tuple[str, int]]) -> None:
    """Retransmission off (seed 004): the window only orders; with no loss, reordering and
    duplication still end with everything delivered exactly once, in order."""
    group = Group(3, xmit_interval=0)
    run_schedule(group, schedule, losses=0)
    group.flush()
    group.settle(rounds=2)
    assert_everything_delivered(group)


@given(st.lists(st.integers(0, 1_000), min_size=1, max_size=30), st.integers(0, 1_000))
def test_with_retransmission_off_one_loss_stops_the_window_for_good(picks: list[int], lost: int) -> None:
    """Retransmission off: a message of A lost before it reaches B's NAKACK2 is a permanent gap:
    B delivers nothing of A above it, whatever follows (the seed's requirement on the transport)."""
    group = Group(3, xmit_interval=0)
    group.send(0, 1 + len(picks) % 5)
    victim = 1 + lost % group.sent[0]
    group.lose(to(1, nk.Data, src=0, seqno=victim))
    for pick in picks:
        group.send(pick % 3)
    group.settle(rounds=3)
    assert group.log[0, 1] == list(range(1, victim))
    assert group.log[0, 2] == list(range(1, group.sent[0] + 1))
    assert nk.held_undelivered(group.nodes[1], 0) == group.sent[0] - victim


JOIN_ACTIONS = st.lists(st.tuples(st.sampled_from(["send", "deliver", "dup", "lose", "xmit", "stable", "join",
                                                   "view", "become"]), st.integers(0, 1_000)), max_size=60)


@given(JOIN_ACTIONS)
def test_a_join_during_traffic_and_losses_ends_with_everything_above_the_digest_delivered(
        schedule: list[tuple[str, int]]) -> None:
    """{A, B} multicast while C joins (A answers with its digest, A and B install {A, B, C} in any
    order and at any moment after, C becomes a server whenever it may), with up to 3 losses:
    once the faults stop, A and B deliver everything every member sent, and C every message of
    each sender above the digest's hd for it, each once and in order."""
    group, everyone = Group(3, founders=(0, 1)), (0, 1, 2)
    losses, joined, installed = 3, False, set()
    for action, pick in schedule:
        if action == "join" and not joined:
            group.join(0, 2, everyone)
            joined = True
        elif action == "view" and joined and pick % 2 not in installed:
            installed.add(pick % 2)
            group.view(pick % 2, everyone)
        elif action == "become" and nk.Timer(nk.BECOME_SERVER) in nk.enabled_timers(group.cfg, group.nodes[2]):
            group.fire(2, nk.BECOME_SERVER)
        elif action not in ("join", "view", "become"):
            losses = run_schedule(group, [(action, pick)], losses=losses)
    if not joined:
        group.join(0, 2, everyone)
    for member in {0, 1} - installed:
        group.view(member, everyone)
    group.flush()
    if nk.Timer(nk.BECOME_SERVER) in nk.enabled_timers(group.cfg, group.nodes[2]):
        group.fire(2, nk.BECOME_SERVER)
    group.settle(rounds=8)
    for (sender, receiver), payloads in group.log.items():
        first = group.offsets[sender, receiver] + 1 if receiver == 2 else 1
        assert payloads == list(range(first, group.sent[sender] + 1)), (sender, receiver, payloads)
