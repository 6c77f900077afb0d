"""The NAKACK2 and NAKACK4 engines against their specs on batches (``models/fuzz/nakack2-lockstep-batch.toml``,
``nakack4-lockstep-batch.toml``; spec decisions 16 and 17): the lockstep harness
(checks/conform/differential.py) on seeded random walks, and the planted defects it must catch.

Invariant tested: on every walk, after every step (batch deliveries among them: MSGs, XMIT_RSPs,
HIGHEST_SEQNOs, XMIT_REQs and ACKs, loopback batches), the engines emitted the spec's datagrams
byte for byte, delivered the same payloads in the same order and hold the spec's abstract state (the ACK
counters and pending flags among it). A NAKACK2 batch whose removal takes no more messages than the
batch brought, and a NAKACK4 batch that counts each delivered message towards the ACK on its own, must
each be reported as a divergence.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.nakack2 import batch as batch2
from impl.nakack4 import batch as batch4
from models.modelfile import load
from models.world import DeliverBatch

N2 = MODELS_DIR / "fuzz" / "nakack2-lockstep-batch.toml"
N4 = MODELS_DIR / "fuzz" / "nakack4-lockstep-batch.toml"
ORIGINAL2 = batch2.on_batch
WALKS, STEPS = 30, 300


def batches_taken(path: Path, seed: int) -> int:
    """The batch deliveries ``random_walk`` takes with ``seed`` (the same draws on the same enabled lists)."""
    world = load(path).world
    rng, state, count = random.Random(seed), world.init_states()[0], 0
    for _ in range(STEPS):
        enabled = list(world.successors(state)) if world.within_bounds(state) else []
        if not enabled:
            break
        action, state = enabled[rng.randrange(len(enabled))]
        count += type(action) is DeliverBatch
    return count


@pytest.mark.parametrize("path", [N2, N4], ids=["nakack2", "nakack4"])
def test_engine_agrees_with_spec_on_random_walks(path: Path) -> None:
    model = load(path)
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 4_000 and sum(batches_taken(path, seed) for seed in range(5)) > 10


def removal_capped(m: Any, sender: Any, batch: list[Any]) -> None:
    """NAKACK2, planted: the batch's removal takes at most as many messages as the batch brought, so
    messages held above a gap the batch filled stay undelivered."""
    entry = m.recv.get(sender)
    if sender == m.me or entry is None:
        ORIGINAL2(m, sender, batch)
        return
    for msg in batch:
        entry.window.add(msg.seqno, msg)
    items = entry.window.remove_many(len(batch))
    if items:
        m.deliver_all(sender, items)


def ack_per_message(m: Any, sender: Any, batch: list[Any]) -> None:
    """NAKACK4, planted: each MSG of the batch received alone (one ACK decision per message)."""
    from impl.nakack4.receive import on_data
    for msg in batch:
        on_data(m, sender, msg)


@pytest.mark.parametrize("owner, name, defect, path", [
    (batch2, "on_batch", removal_capped, N2), (batch4, "on_batch", ack_per_message, N4)],
    ids=["nakack2-removal-capped", "nakack4-ack-per-message"])
def test_a_planted_defect_diverges(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, defect: Any,
                                   path: Path) -> None:
    monkeypatch.setattr(owner, name, defect)
    model = load(path)
    found = next((seed for seed in range(300) if random_walk(model, seed, STEPS).divergence is not None), None)
    assert found is not None, f"{defect.__name__}: none of 300 walks diverged"
