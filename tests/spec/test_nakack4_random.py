"""Random schedules of spec/nakack4.py members beyond the model checker's bounds: three founders,
capacities up to 6, up to three application threads each, atomic or not, DONT_LOOPBACK or not,
copies and ACKs lost,
duplicated and reordered at random. After every step every state property holds on every member
and pair, and every channel stays FIFO without duplicates; after a fault-free drain (every packet
delivered, every timer fired, repeatedly) every multicast is delivered everywhere and no thread
is left inside send. ``ack_threshold`` is at least 2 here: below it a lost ACK is never resent
(models/nakack4/lost-ack-threshold-0.toml)."""

from __future__ import annotations

from typing import Any, NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from spec import nakack4 as nk
from spec import reliable_fifo as fifo
from spec.effects import Deliver, Send

N = 3


class Packet(NamedTuple):
    src: int
    dst: int
    msg: Any


class Group:
    def __init__(self, cfg: nk.Config) -> None:
        self.cfg = cfg
        self.nodes = [nk.initial_node(m, cfg, frozenset(range(N))) for m in range(N)]
        self.wire: list[Packet] = []
        self.channels = {(s, r): fifo.Channel() for s in range(N) for r in range(N)}
        self.sent = [0] * N

    def apply(self, member: int, step: nk.Step) -> None:
        self.nodes[member] = step.node
        for effect in step.effects:
            if isinstance(effect, Send):
                self.wire.append(Packet(member, effect.dst, effect.msg))
            elif isinstance(effect, Deliver):
                key = (effect.src, member)
                self.channels[key] = fifo.deliver(self.channels[key], effect.payload)
        self.check()

    def send(self, member: int) -> None:
        self.sent[member] += 1
        for r in range(N):
            self.channels[member, r] = fifo.send(self.channels[member, r])
        self.apply(member, nk.on_send(self.cfg, self.nodes[member], self.sent[member]))

    def deliver(self, index: int, keep: bool = False) -> None:
        packet = self.wire[index] if keep else self.wire.pop(index)
        self.apply(packet.dst, nk.on_receive(self.cfg, self.nodes[packet.dst], packet.src, packet.msg))

    def fire(self, member: int, timer: nk.Timer) -> None:
        self.apply(member, nk.on_timer(self.cfg, self.nodes[member], timer))

    def check(self) -> None:
        cfg = self.cfg
        for node in self.nodes:
            for prop in (nk.window_order, nk.slots_hold_their_seqnos, nk.seqno_discipline, nk.ack_table_members,
                         nk.ack_min_is_min):
                assert prop(node), prop.__name__
            assert nk.window_within_capacity(cfg, node) and nk.blocks_only_when_full(cfg, node)
        for s in self.nodes:
            for r in self.nodes:
                assert nk.purge_covered(s, r) and nk.acks_truthful(s, r)
        for channel in self.channels.values():
            assert fifo.no_duplicate(channel) and fifo.in_order(channel) and fifo.delivered_was_sent(channel)

    def drain(self) -> None:
        for _ in range(60):
            while self.wire:
                self.deliver(0)
            for member in range(N):
                for timer in nk.enabled_timers(self.cfg, self.nodes[member]):
                    self.fire(member, timer)
            if not self.wire and not any(n.sending for n in self.nodes):
                for member in range(N):  # two more runs: pending ACKs, then nothing left to announce
                    self.fire(member, nk.Timer(nk.XMIT))
                if not self.wire:
                    return
        raise AssertionError("no quiescence after 60 fault-free rounds")


@settings(max_examples=300, deadline=None)
@given(capacity=st.integers(1, 6), threshold=st.integers(2, 4), atomic=st.booleans(), threads=st.integers(1, 3),
       dont_loopback=st.booleans(), schedule=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 50)), max_size=70))
def test_random_schedules_keep_every_property_and_drain(capacity: int, threshold: int, atomic: bool, threads: int,
                                                         dont_loopback: bool, schedule: list[tuple[int, int]]) -> None:
    g = Group(nk.Config(N, capacity=capacity, ack_threshold=threshold, send_atomically=atomic,
                        sender_threads=threads, dont_loopback=dont_loopback))
    for kind, pick in schedule:
        member = pick % N
        if kind == 0 and nk.can_send(g.cfg, g.nodes[member]) and g.sent[member] < 6:
            g.send(member)
        elif kind in (1, 2) and g.wire:
            g.deliver(pick % len(g.wire), keep=kind == 2 and pick % 5 == 0)  # now and then a duplicate
        elif kind == 3 and g.wire:
            packet = g.wire[pick % len(g.wire)]
            if packet.src != packet.dst:  # loopback copies are never lost (multicast world rule 3)
                g.wire.remove(packet)
        elif kind == 4:
            timers = nk.enabled_timers(g.cfg, g.nodes[member])
            if timers:
                g.fire(member, timers[pick % len(timers)])
        elif kind == 5 and len(g.wire) > 1:
            g.wire.append(g.wire.pop(pick % len(g.wire)))  # reorder
    g.drain()
    for s in range(N):
        for r in range(N):
            if s == r and dont_loopback:  # DONT_LOOPBACK: the sender never delivers its own
                own = g.nodes[s].windows[s]
                assert g.channels[s, r].delivered == 0 and own is not None and own.delivered == g.nodes[s].seqno
                continue
            assert g.channels[s, r].all_delivered(), (s, r, g.channels[s, r])
    assert not any(node.sending for node in g.nodes)
