"""Lockstep agreement with spec/unicast3.py: seeded random walks drive spec members and engines.

Invariant tested: after every step (application send, delivery / loss / duplication of any packet
in flight, any enabled spec timer, view change, receiver removal), the engines emitted exactly the
datagrams the spec members sent (same order, same bytes after mapping payload n to
``spec_payload(n)``), delivered the same payloads, and their ``snapshot`` equals
``view_of_spec_node`` of the spec member. Timers are fired with ``fire_timer`` at a constant
``now``; sync_min_interval and the connection timeouts are far away, so only fired timers act.
This is a smoke version of the differential harness, small enough for the fast tier.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from checks.conform.unicast3 import view_of_spec_node
from checks.conform.unicast3 import wire_message as wire
from impl.unicast3 import Config, Unicast3Engine, Variant, spec_payload
from impl.unicast3.codec import WireMsg, decode, encode
from spec import unicast3 as u3

FAR = 10**9


class Lockstep:
    """n spec members and n engines, one shared list of packets in flight."""

    def __init__(self, n: int, variant: Variant) -> None:
        self.n = n
        self.cfg = u3.Config(members=n, variant=u3.Variant(**dataclasses.asdict(variant)))
        everyone = frozenset(range(n))
        self.nodes = [u3.initial_node(i, self.cfg, everyone) for i in range(n)]
        ecfg = Config(variant=variant, sync_min_interval=FAR, conn_expiry_timeout=FAR, conn_close_timeout=FAR)
        self.engines = [Unicast3Engine[int](ecfg, members=everyone, now=0) for _ in range(n)]
        self.flight: list[tuple[int, int, WireMsg, u3.Msg]] = []  # src, dst, engine msg, spec msg
        self.payload = 0
        self.delivered = 0

    def apply(self, me: int, step: u3.Step) -> None:
        """Install the spec step of member ``me`` and check the engine did the same."""
        self.nodes[me] = step.node
        engine = self.engines[me]
        sent = [(e.dst, wire(e.msg), e.msg) for e in step.effects if isinstance(e, u3.Send)]
        got = [(dst, decode(data)) for dst, data in engine.datagrams_to_send()]
        assert got == [(d, w) for d, w, _ in sent]
        self.flight.extend((me, d, w, s) for d, w, s in sent)
        delivered = [(e.src, spec_payload(e.payload)) for e in step.effects if isinstance(e, u3.Deliver)]
        assert engine.deliveries() == delivered
        self.delivered += len(delivered)
        assert engine.snapshot(now=0) == view_of_spec_node(self.nodes[me])

    def random_step(self, rng: random.Random) -> None:
        choice = rng.random()
        me = rng.randrange(self.n)
        if choice < 0.2 or not self.flight:
            peer = rng.choice([p for p in range(self.n) if p != me])
            self.payload += 1
            self.engines[me].send(peer, spec_payload(self.payload), now=0)
            self.apply(me, u3.on_send(self.cfg, self.nodes[me], peer, self.payload))
        elif choice < 0.65:
            i = rng.randrange(len(self.flight))
            src, dst, msg, smsg = self.flight[i] if rng.random() < 0.1 else self.flight.pop(i)  # 10% duplicate
            self.engines[dst].received(src, encode(msg), now=0)
            self.apply(dst, u3.on_receive(self.cfg, self.nodes[dst], src, smsg))
        elif choice < 0.75:
            self.flight.pop(rng.randrange(len(self.flight)))  # loss
        elif choice < 0.95:
            timer = rng.choice(u3.enabled_timers(self.cfg, self.nodes[me]))
            self.engines[me].fire_timer(timer.kind, None if timer.peer < 0 else timer.peer, now=0)
            self.apply(me, u3.on_timer(self.cfg, self.nodes[me], timer))
        elif choice < 0.98:
            members = frozenset({me} | {p for p in range(self.n) if rng.random() < 0.7})
            self.engines[me].install_view(members, now=0)
            self.apply(me, u3.on_view(self.cfg, self.nodes[me], members))
        else:
            peer = rng.choice([p for p in range(self.n) if p != me])
            self.engines[me].remove_receive_connection(peer)
            self.apply(me, u3.on_remove_receiver(self.cfg, self.nodes[me], peer))
        del self.flight[40:]  # keep the network small: the excess is lost


VARIANTS = [
    Variant(),
    Variant(no_timestamps=True),
    Variant(no_hs_resend=True),
    Variant(remove_on_view_change=True),
    Variant(ack_only_new=True),
    Variant(no_sync_rate_limit=True),
]


def _name(v: Variant) -> str:
    return "-".join(k for k in v.__slots__ if getattr(v, k)) or "default"


@pytest.mark.parametrize("variant", VARIANTS, ids=_name)
@pytest.mark.parametrize("n", [2, 3])
def test_engine_agrees_with_spec_on_random_walks(variant: Variant, n: int) -> None:
    delivered = 0
    for seed in range(12):
        rng = random.Random(seed * 1000 + n)
        world = Lockstep(n, variant)
        for _ in range(400):
            world.random_step(rng)
        delivered += world.delivered
    assert delivered > 100  # not vacuous: messages did get through
