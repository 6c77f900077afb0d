"""The engine against the spec on batches (``models/fuzz/unicast3-lockstep-batch.toml``; spec decision 25):
the lockstep harness (checks/conform/differential.py) on seeded random walks, and the planted defects it
must catch.

Invariant tested: on every walk, after every step (batch deliveries among them, OOB and regular), the
engines emitted the spec's datagrams byte for byte (the immediate ACKs among them), delivered the same
payloads in the same order and hold the spec's abstract state (the pending ACK flags among it). An ACK at
once for every batch whatever ack_threshold, an immediate ACK that clears the pending flag, and a batch
that caches another connection's DATA as the single path does must each be reported as a divergence.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast3 import receive
from impl.unicast3.codec import AckMsg, DataMsg
from impl.unicast3.state import Member
from models.modelfile import Model, load
from models.world import DeliverBatch

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep-batch.toml"
WALKS, STEPS = 40, 300


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


def walks(model: Model, count: int = WALKS) -> Iterator[tuple[int, Any]]:
    for seed in range(count):
        yield seed, random_walk(model, seed, STEPS)


def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    steps = batches = 0
    for seed, result in walks(model):
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
        batches += sum(1 for action in result_actions(model, seed) if type(action) is DeliverBatch)
    assert steps > 2_000 and batches > 20


def result_actions(model: Model, seed: int) -> list[Any]:
    """The actions ``random_walk`` takes with ``seed`` (the same draws on the same enabled lists)."""
    rng, world = random.Random(seed), model.world
    state, out = world.init_states()[0], []
    for _ in range(STEPS):
        enabled = list(world.successors(state)) if world.within_bounds(state) else []
        if not enabled:
            break
        action, state = enabled[rng.randrange(len(enabled))]
        out.append(action)
    return out


ORIGINAL = receive._batch_received


def ack_every_batch(m: Member[int], src: int, entry: receive.RecvEntry, ours: list[DataMsg], *, now: int,
                    opened: bool) -> None:
    ORIGINAL(m, src, entry, ours, now=now, opened=opened)
    if len(ours) < m.config.ack_threshold:
        m.emit(src, AckMsg(entry.window.hd, entry.conn_id, m.next_timestamp()))


def clear_pending(m: Member[int], src: int, entry: receive.RecvEntry, ours: list[DataMsg], *, now: int,
                  opened: bool) -> None:
    pending = entry.ack_pending
    ORIGINAL(m, src, entry, ours, now=now, opened=opened)
    if len(ours) >= m.config.ack_threshold and pending:
        entry.ack_pending = False


DEFECTS: dict[str, Callable[..., None]] = {"ack-every-batch": ack_every_batch, "immediate-ack-clears-pending":
                                           clear_pending}


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_a_planted_defect_diverges(model: Model, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(receive, "_batch_received", DEFECTS[name])
    found = next((seed for seed, result in walks(model, 300) if result.divergence is not None), None)
    assert found is not None, f"{name}: none of 300 walks diverged"
