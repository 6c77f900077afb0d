"""Lockstep agreement with spec/nakack2.py: seeded random walks drive spec members and engines.

Invariant tested: after every step (application multicast, delivery / loss / duplication of any
packet in flight, any enabled spec timer, a join answered by the coordinator, a view installed,
with retransmission on or off and with every variant), the engine emitted exactly the datagrams
the spec member sent (same order, same messages after mapping payload n to ``spec_payload(n)``),
delivered the same payloads, has the same enabled timers, and its ``snapshot`` equals the view of
the spec member (``checks.conform.nakack2.view_of_spec_node``, the mapping of
``impl/nakack2/snapshot.py``'s table). Timers are fired with ``fire_timer`` at a constant ``now``;
real durations are far away.
A smoke version of the differential harness (checks/conform), small enough for the fast tier.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from checks.conform.nakack2 import view_of_spec_node, wire_digest, wire_message
from impl.nakack2 import Config, Nakack2Engine, Variant, spec_payload, tasks
from impl.nakack2.codec import (
    decode,
    encode,
)
from spec import nakack2 as n2
from spec.effects import Deliver, Send

FAR = 10**9
wire = wire_message  # the harness's mapping (checks/conform/nakack2.py): spec message -> codec message


class Lockstep:
    """n spec members (0 .. n-2 founders, n-1 a joiner) and n engines, one list of packets in flight."""

    def __init__(self, n: int, variant: Variant, xmit_interval: int, use_mcast_xmit: bool, queue_size: int) -> None:
        self.n = n
        self.cfg = n2.Config(members=n, variant=n2.Variant(**dataclasses.asdict(variant)),
                             xmit_interval=xmit_interval, use_mcast_xmit=use_mcast_xmit,
                             become_server_queue_size=queue_size)
        founders = frozenset(range(n - 1))
        self.nodes = [n2.initial_node(i, self.cfg, founders) for i in range(n)]
        ecfg = Config(variant=variant, xmit_interval=FAR if xmit_interval > 0 else 0, stable_interval=FAR,
                      use_mcast_xmit=use_mcast_xmit, become_server_queue_size=queue_size, resend_factor=0)
        self.engines = [Nakack2Engine[int](ecfg, me=i, members=founders, now=0) for i in range(n)]
        self.flight: list[tuple[int, int, n2.Msg]] = []  # src, dst, spec msg
        self.payload = 0
        self.delivered = 0
        self.joined = False

    def apply(self, me: int, step: n2.Step) -> None:
        """Install the spec step of member ``me`` and check the engine did the same."""
        self.nodes[me] = step.node
        engine = self.engines[me]
        sent = [(e.dst, e.msg) for e in step.effects if isinstance(e, Send)]
        got = [(dst, decode(data)) for dst, data in engine.datagrams_to_send()]
        assert got == [(d, wire(msg)) for d, msg in sent]
        self.flight.extend((me, d, msg) for d, msg in sent)
        delivered = [(e.src, spec_payload(e.payload)) for e in step.effects if isinstance(e, Deliver)]
        assert engine.deliveries() == delivered
        self.delivered += len(delivered)
        assert engine.snapshot() == view_of_spec_node(self.nodes[me])
        assert engine.enabled_timers() == tuple(t.kind for t in n2.enabled_timers(self.cfg, self.nodes[me]))
        engine.check_invariants()

    def random_step(self, rng: random.Random) -> None:
        choice = rng.random()
        me = rng.randrange(self.n)
        node = self.nodes[me]
        if choice < 0.2 or not self.flight:
            self.payload += 1
            self.engines[me].multicast(spec_payload(self.payload), now=0)
            self.apply(me, n2.on_send(self.cfg, node, self.payload))
        elif choice < 0.6:
            i = rng.randrange(len(self.flight))
            src, dst, msg = self.flight[i] if rng.random() < 0.1 else self.flight.pop(i)  # 10%: duplicate
            self.engines[dst].received(src, _encode(msg), now=0)
            self.apply(dst, n2.on_receive(self.cfg, self.nodes[dst], src, msg))
        elif choice < 0.7:
            self.flight.pop(rng.randrange(len(self.flight)))
        elif choice < 0.95:
            timers = n2.enabled_timers(self.cfg, node)
            if timers:
                timer = rng.choice(timers)
                self.engines[me].fire_timer(timer.kind, now=0)
                self.apply(me, n2.on_timer(self.cfg, node, timer))
        else:
            self.membership_step(rng)

    def membership_step(self, rng: random.Random) -> None:
        """The coordinator (0) admits the joiner once; afterwards a founder installs the new view,
        or (rarely) a view without one member (a leave, or the member left out of its own view),
        or merges another member's digest (MERGE_DIGEST)."""
        everyone = frozenset(range(self.n))
        joiner = self.n - 1
        if not self.joined:
            self.joined = True
            self.engines[0].answer_join(joiner, everyone, now=0)
            self.apply(0, n2.on_join(self.cfg, self.nodes[0], joiner, everyone))
            return
        me = rng.randrange(self.n - 1)
        choice = rng.random()
        if choice < 0.15:
            view = everyone - {rng.randrange(self.n)}
        elif choice < 0.3:
            digest = n2.digest_of(self.nodes[rng.randrange(self.n)])
            self.engines[me].merge_digest(wire_digest(digest), now=0)
            self.apply(me, n2.on_merge_digest(self.cfg, self.nodes[me], digest))
            return
        else:
            view = everyone
        if self.nodes[me].members != view:
            self.engines[me].install_view(view, now=0)
            self.apply(me, n2.on_view(self.cfg, self.nodes[me], view))


def _encode(msg: n2.Msg) -> bytes:
    return encode(wire(msg))


VARIANTS = [Variant(), *(Variant(**{f.name: True}) for f in dataclasses.fields(Variant))]


@pytest.mark.parametrize("xmit_interval", [1000, 0])
@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(k for k, x in dataclasses.asdict(v).items() if x)
                         or "fixed")
def test_random_walks_agree_with_the_spec(variant: Variant, xmit_interval: int) -> None:
    for seed in range(12):
        rng = random.Random(seed)
        lock = Lockstep(4, variant, xmit_interval, use_mcast_xmit=seed % 2 == 0, queue_size=2 + seed % 3)
        for _ in range(250):
            lock.random_step(rng)
    assert lock.delivered > 0


def test_variant_flags_match_the_spec() -> None:
    assert [f.name for f in dataclasses.fields(Variant)] == [f.name for f in dataclasses.fields(n2.Variant)]
    assert (tasks.XMIT, tasks.STABLE, tasks.BECOME_SERVER) == (n2.XMIT, n2.STABLE, n2.BECOME_SERVER)
    assert tasks.TIMER_NAMES == n2.TIMER_NAMES
