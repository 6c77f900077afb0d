"""``checks/fuzz/fingerprints.py``: the incremental fingerprints the runs use are the definition's.

Invariants tested: ``StepFingerprints`` gives every state the fingerprint ``Fingerprints`` (the
whole-state definition) gives it, whatever states it saw before (run order, shuffled, repeated),
on UNICAST3 and UNICAST2 worlds, unreduced (the lockstep harness's) and reduced; ``FastCanonical``
writes ``Canonical``'s text for every value a run meets, timestamps zeroed alike; and a runner
whose fingerprints are the definition's produces the same rows, seed for seed, as the default one
(fingerprints, so the distinct-state counts, and everything else).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.explore.fingerprint import Canonical
from checks.fuzz.fingerprints import FastCanonical, Fingerprints, StepFingerprints
from checks.fuzz.run import FuzzPlan, Runner

MODELS = {  # name -> (model file, --swarm, --pct)
    "unicast3-lockstep": (MODELS_DIR / "fuzz" / "unicast3-lockstep.toml", False, False),
    "unicast2-lockstep": (MODELS_DIR / "fuzz" / "unicast2-lockstep.toml", False, False),
    "jgrp1873-swarm": (MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml", True, False),
    "u2-jgrp1873-pct": (MODELS_DIR / "unicast2" / "jgrp1873-delayed-stable.toml", False, True),
}
SEEDS = range(12)


def _runner(name: str) -> Runner:
    path, swarm, pct = MODELS[name]
    return Runner(FuzzPlan(path.name, path.read_text(), 100, swarm=swarm, pct=pct), path)


def _visited(runner: Runner) -> list[tuple[int, ...]]:
    """Every state the runs of ``SEEDS`` fingerprint, in order (initial states included)."""
    states: list[tuple[int, ...]] = []
    fingerprint = runner.fingerprint

    def recording(state: tuple[int, ...]) -> int:
        states.append(state)
        return fingerprint(state)

    runner.fingerprint = recording  # type: ignore[assignment]
    for seed in SEEDS:
        runner.run(seed)
    runner.fingerprint = fingerprint
    return states


@pytest.mark.parametrize("name", sorted(MODELS))
def test_incremental_fingerprints_are_the_definitions_in_any_order(name: str) -> None:
    runner = _runner(name)
    states = _visited(runner)
    world = runner.shared.world
    assert len(set(states)) > 40
    expected = [Fingerprints(world)(s) for s in states]
    # distinct states, distinct fingerprints, once reduced: the harness's world keeps timestamps as
    # issued, and two quiescent ends that differ only in how many were issued are one reduced state
    reduced = {runner.model.world.adopt(world.view(s)) for s in set(states)}
    assert len(set(expected)) == len(reduced)
    step = StepFingerprints(world)
    assert [step(s) for s in states] == expected  # run order: each call changes a few slots
    shuffled = list(zip(states, expected))
    random.Random(7).shuffle(shuffled)
    assert [step(s) for s, _ in shuffled] == [fp for _, fp in shuffled]  # what came before plays no part
    assert [StepFingerprints(world)(s) for s, _ in shuffled[:50]] == [fp for _, fp in shuffled[:50]]


@pytest.mark.parametrize("name", ["unicast3-lockstep", "unicast2-lockstep"])
def test_incremental_fingerprints_of_reduced_states_are_the_definitions(name: str) -> None:
    runner = _runner(name)
    reduced = runner.model.world
    states = [reduced.adopt(runner.shared.world.view(s)) for s in _visited(runner)]
    step, whole = StepFingerprints(reduced), Fingerprints(reduced)
    assert [step(s) for s in states] == [whole(s) for s in states]


def _values(runner: Runner, states: list[tuple[int, ...]]) -> list[Any]:
    world, n = runner.shared.world, runner.shared.world.n
    tables = [world.node_table] * n + [world.net_table, world.env_table, world.hist_table]
    return [tables[slot].values[s[slot]] for s in states for slot in range(n + 3)]


@pytest.mark.parametrize("name", ["unicast3-lockstep", "unicast2-lockstep"])
def test_fast_canonical_text_is_canonicals(name: str) -> None:
    runner = _runner(name)
    values = _values(runner, _visited(runner))
    zeroed = runner.shared.world.adapter.timestamp_fields()
    assert zeroed  # timestamps are read as 0 in both
    fast, slow = FastCanonical(zeroed), Canonical(zeroed)
    assert [fast(v) for v in values] == [slow(v) for v in values]
    assert FastCanonical()(values[-1]) == Canonical()(values[-1])  # nothing zeroed
    odd = [frozenset({3, 1}), [2, (1, None)], {"b", "a"}, (True, 1.5, b"x")]
    assert [FastCanonical()(v) for v in odd] == [Canonical()(v) for v in odd]


def _rows(runner: Runner, seeds: range) -> list[tuple[Any, ...]]:
    return [runner.run(seed).row() for seed in seeds]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_rows_are_those_of_whole_state_fingerprints(name: str) -> None:
    incremental, whole = _runner(name), _runner(name)
    whole.fingerprint = Fingerprints(whole.shared.world)
    whole.reduced_fingerprint = Fingerprints(whole.model.world)
    assert _rows(incremental, SEEDS) == _rows(whole, SEEDS)


def test_runs_fingerprint_incrementally() -> None:
    runner = _runner("unicast3-lockstep")
    assert type(runner.fingerprint) is StepFingerprints and type(runner.reduced_fingerprint) is StepFingerprints
    assert isinstance(runner.fingerprint.canonical, FastCanonical)

