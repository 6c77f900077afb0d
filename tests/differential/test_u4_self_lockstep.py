"""The UNICAST4 engine against the spec on messages to self (``models/fuzz/unicast4-lockstep-self.toml``,
spec decisions 12 and 13): the lockstep harness (checks/conform/differential.py) on seeded random
walks, what the walks reach, and the planted defects they must catch.

Invariant tested: on every walk, after every step, the engines emitted the spec's datagrams byte for
byte, delivered the same payloads in the same order and hold the spec's abstract state (the send entry
for oneself's DONT_LOOPBACK and OOB-delivered seqnos and its ACK counter included), with every member
sending itself messages, some OOB and some DONT_LOOPBACK, beside its messages to others, in windows of
two slots. The walks reach an ACK to oneself, a DONT_LOOPBACK message removed by its add and one passed
over by a drain, and a thread blocked on its own window released by a loopback. An engine that sends a
DONT_LOOPBACK message to itself, skips the add's remove filter, redelivers an OOB message in line, or
never ACKs itself must each be reported.
"""

from __future__ import annotations

import random

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import Lockstep, default_engines, random_walk
from impl.unicast4 import loopback, receive
from impl.unicast4.state import Member, SendEntry
from models.modelfile import Model, load
from models.world import AppSend, DeliverPacket
from spec import unicast4 as u4

FUZZ = MODELS_DIR / "fuzz" / "unicast4-lockstep-self.toml"
WALKS, STEPS = 40, 300


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


def test_every_member_sends_itself_messages(model: Model) -> None:
    world = model.world
    assert [(s, d) for s, d in world.pairs if s == d] == [(0, 0), (1, 1), (2, 2)]
    assert {s for s, d, _ in world.bounds.dont_loopback if s == d} == {0, 1, 2}
    assert {(s, d) for s, d, _ in world.bounds.oob if s == d} == {(0, 0), (1, 1), (2, 2)}


def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 3_000


def test_the_walks_reach_the_self_paths(model: Model) -> None:
    """The walks' seeds replayed on the spec alone: each self path is taken."""
    world = Lockstep(model, default_engines, False).world
    seen = {"ack_to_self": 0, "removed_at_add": 0, "passed_over": 0, "released": 0}
    for seed in range(WALKS):
        rng = random.Random(seed)
        state = world.init_states()[0]
        for _ in range(STEPS):
            enabled = list(world.successors(state))
            if not enabled:
                break
            action, after = enabled[rng.randrange(len(enabled))]
            _, packets, _ = world.step_effects(state, action)
            if isinstance(action, AppSend) and action.src == action.dst and not packets:
                seen["removed_at_add"] += 1
            if any(p.src == p.dst and isinstance(p.msg, u4.Ack) for p in packets):
                seen["ack_to_self"] += 1
            if isinstance(action, DeliverPacket) and action.packet.src == action.packet.dst:
                me = action.packet.dst
                entry, later = world.view(state).nodes[me].send[me], world.view(after).nodes[me].send[me]
                if entry is not None and later is not None and entry.dont_loopback - later.dont_loopback:
                    seen["passed_over"] += 1
                if entry is not None and entry.blocked and later is not None and later.acked > entry.acked:
                    seen["released"] += 1
            state = after
    assert all(seen.values()), seen


def sends_dont_loopback(m: Member[int], dst: int, entry: SendEntry, seqno: int, payload: bytes, *, now: int) -> None:
    entry.dont_loopback.discard(seqno)
    ORIGINAL_ADD(m, dst, entry, seqno, payload, now=now)


def no_remove_filter(entry: SendEntry) -> bool:
    return False


def oob_again(m: Member[int], me: int, entry: SendEntry) -> None:
    entry.oob_delivered.clear()
    ORIGINAL_DRAIN(m, me, entry)


def never_acks(m: Member[int], me: int, entry: SendEntry) -> None:
    entry.acks_counted = -10**6  # the count never reaches the threshold
    ORIGINAL_DRAIN(m, me, entry)
    if entry.acks_counted < 0:
        entry.acks_counted += 10**6


ORIGINAL_ADD = receive.add_and_send
ORIGINAL_DRAIN = loopback.drain_self
DEFECTS = {
    "dont-loopback-sent": (receive, "add_and_send", sends_dont_loopback),
    "no-remove-filter": (loopback, "dont_loopback_added", no_remove_filter),
    "oob-again-in-line": (loopback, "drain_self", oob_again),
    "never-acks-itself": (loopback, "drain_self", never_acks),
}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_planted_defects_are_caught(model: Model, defect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module, name, replacement = DEFECTS[defect]
    monkeypatch.setattr(module, name, replacement)
    found = [random_walk(model, seed, STEPS).divergence for seed in range(WALKS)]
    assert any(d is not None for d in found), defect

