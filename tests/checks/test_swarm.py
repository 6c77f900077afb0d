"""Tests for checks/explore/swarm.py (one swarm task) and checks/explore/shorten.py, on tiny hand-made
systems whose answers are known, and on a shipped model for what only a real world shows
(fingerprints that do not depend on the process's interning).

Invariants tested: task specs depend on (seed, index) only; a task is deterministic; a depth-bounded
task visits exactly the states within its bound (a state first met deep is searched again when met
shallower); safety, deadlock and liveness findings come back as paths that validate as traces; the
budget stops a task; coverage samples merge exactly below their size and estimate within a few
per cent above it; shortening reaches the BFS shortest from the initial state or, when that search
does not fit, from a midpoint.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

from checks.cli import MODELS_DIR
from checks.explore.search import explore
from checks.explore.shorten import first_stuck, shorten
from checks.explore.swarm import (
    SwarmSearch,
    TaskSpec,
    bottom,
    distinct_estimate,
    merge_samples,
    portable_fingerprinter,
    run_task,
    task_specs,
)
from checks.explore.system import Always, Liveness, Property, replay
from checks.explore.trace import Trace, TraceError, validate
from models.modelfile import load


class Jumps:
    """States ``0 .. n-1``; actions ``+1`` and ``+k`` (capped at ``n-1``). Many states are first met
    on a long chain of ``+1`` and later on a short one with jumps, so a depth bound matters."""

    name = "jumps"

    def __init__(self, n: int, k: int, properties: Sequence[Property] = (), *, stuck_from: int | None = None,
                 dead: int | None = None) -> None:
        self.n, self.k = n, k
        self.properties = list(properties)
        self.stuck_from = stuck_from  # states >= this only go up by "+1" faults (liveness traps)
        self.dead = dead  # a state without successors that may not end

    def init_states(self) -> Sequence[Hashable]:
        return [0]

    def successors(self, state: Any) -> Iterator[tuple[str, int]]:
        if state == self.dead:
            return
        if state + 1 < self.n:
            yield ("+1", state + 1)
        if state + self.k < self.n:
            yield (f"+{self.k}", state + self.k)
        if state > 0 and (self.stuck_from is None or state < self.stuck_from):
            yield ("reset", 0)  # a fault-free way back to the goal (state 0)

    def within_bounds(self, state: Any) -> bool:
        return True

    def accepts_end(self, state: Any) -> bool:
        return state != self.dead

    def is_fault(self, action: Any) -> bool:
        return action != "reset"

    def action_to_json(self, action: Any) -> dict[str, Any]:
        return {"op": action}

    def format_action(self, action: Any) -> str:
        return str(action)


def distances(system: Jumps) -> dict[int, int]:
    """BFS depth of every reachable state."""
    depth = {0: 0}
    queue = deque([0])
    while queue:
        state = queue.popleft()
        for _, after in system.successors(state):
            if after not in depth:
                depth[after] = depth[state] + 1
                queue.append(after)
    return depth


def spec(order: str = "permuted", depth: int = 100, max_states: int = 10**6, seed: int = 1,
         rate: float = 1.0) -> TaskSpec:
    return TaskSpec(0, seed, order, depth, max_states, rate)


# ---------------------------------------------------------------- specs and determinism


def test_a_tasks_spec_depends_on_the_seed_and_its_index_only() -> None:
    few, many = task_specs(7, 3, depth=(5, 40), max_states=10), task_specs(7, 50, depth=(5, 40), max_states=10)
    assert few == many[:3]
    assert all(5 <= s.depth <= 40 for s in many) and {s.order for s in many} == {"permuted", "shuffled"}
    assert len({s.seed for s in many}) == 50 and len({s.depth for s in many}) > 10
    assert task_specs(8, 3, depth=(5, 40), max_states=10) != few
    assert sorted(s.depth for s in many)[25] < (5 + 40) / 2  # log-uniform: the median below the midpoint


@pytest.mark.parametrize("order", ["permuted", "shuffled"])
def test_a_task_is_deterministic_and_orders_differ_by_seed(order: str) -> None:
    system = Jumps(400, 7)
    first = run_task(system, spec(order, depth=30, max_states=150))
    again = run_task(system, spec(order, depth=30, max_states=150))
    other = run_task(system, spec(order, depth=30, max_states=150, seed=2))
    assert (first.states, first.transitions, first.revisits, list(first.sample)) == \
        (again.states, again.transitions, again.revisits, list(again.sample))
    assert list(first.sample) != list(other.sample)  # another seed, another part of the space


# ---------------------------------------------------------------- the bounded search


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("order", ["permuted", "shuffled"])
def test_a_bounded_task_visits_exactly_the_states_within_its_bound(order: str, seed: int) -> None:
    system = Jumps(300, 6)
    within = {s for s, d in distances(system).items() if d <= 12}
    search = SwarmSearch(system, spec(order, depth=12, seed=seed))
    result = search.run()
    assert result.stopped == "exhausted" and result.states == len(within)
    assert set(search.depth_of) == within
    assert all(search.depth_of[s] == d for s, d in distances(system).items() if s in within)
    assert result.max_depth <= 12


def test_without_a_depth_bound_a_task_visits_what_the_checker_counts() -> None:
    system = Jumps(250, 9)
    result = run_task(system, spec(depth=10**6))
    assert result.states == explore(system, [], stop_at_first=False).stats.distinct == 250


def test_the_budget_stops_a_task() -> None:
    result = run_task(Jumps(10_000, 3), spec(depth=10**6, max_states=500))
    assert (result.stopped, result.states) == ("budget", 500)


# ---------------------------------------------------------------- findings validate as traces


def as_trace(system: Jumps, prop: str, kind: str, actions: tuple[dict[str, Any], ...]) -> Trace:
    return Trace("jumps", "", prop, kind, actions)


def test_a_safety_violation_comes_back_as_a_path_that_validates() -> None:
    system = Jumps(200, 5, [Always("below_150", lambda s: s < 150)])
    result = run_task(system, spec())
    (found,) = result.found
    assert (found.prop, found.kind) == ("below_150", "always")
    last = replay(system, found.actions)[-1][1]
    assert isinstance(last, int) and last >= 150
    validate(system, as_trace(system, found.prop, found.kind, found.actions))


def test_a_deadlock_comes_back_as_a_path_that_validates() -> None:
    system = Jumps(60, 4, dead=33)
    (found,) = run_task(system, spec()).found
    assert (found.prop, found.kind) == ("deadlock", "deadlock")
    validate(system, as_trace(system, "deadlock", "deadlock", found.actions))


@pytest.mark.parametrize("rate", [0.0, 1.0])
def test_a_state_that_cannot_recover_is_a_liveness_violation(rate: float) -> None:
    """From 40 on there is no fault-free way back to 0 (the goal): found at a leaf (rate 0) or on
    the way (rate 1)."""
    system = Jumps(60, 4, [Liveness("back_to_zero", lambda s: s == 0)], stuck_from=40)
    (found,) = run_task(system, spec(depth=30, rate=rate)).found
    assert (found.prop, found.kind) == ("back_to_zero", "liveness")
    last = replay(system, found.actions)[-1][1]
    assert isinstance(last, int) and last >= 40
    validate(system, as_trace(system, found.prop, found.kind, found.actions))
    assert not run_task(Jumps(60, 4, [Liveness("back_to_zero", lambda s: s == 0)]), spec(rate=rate)).found


# ---------------------------------------------------------------- coverage samples


def test_samples_merge_exactly_below_their_size() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.integers(-2**63, 2**63 - 1, 3000, dtype=np.int64), rng.integers(-2**63, 2**63 - 1, 2000, dtype=np.int64)
    b[:500] = a[:500]  # 500 states both visited
    k = 8192
    assert distinct_estimate(merge_samples(bottom(a, k), bottom(b, k), k), k) == (4500, True)


def test_samples_estimate_a_large_union_within_a_few_per_cent() -> None:
    rng = np.random.default_rng(11)
    parts = [rng.integers(-2**63, 2**63 - 1, 60_000, dtype=np.int64) for _ in range(4)]
    parts[1][:30_000] = parts[0][:30_000]
    k = 4096  # standard error about 1.6%
    merged = bottom(parts[0], k)
    for part in parts[1:]:
        merged = merge_samples(merged, bottom(part, k), k)
    estimate, exact = distinct_estimate(merged, k)
    assert not exact and abs(estimate - 210_000) / 210_000 < 0.06


def test_coverage_fingerprints_do_not_depend_on_the_processes_interning() -> None:
    """A world numbers its values in the order it meets them; the coverage sample must not."""
    path = MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml"
    fresh = run_task(load(path).world, spec("shuffled", depth=20, max_states=3000, seed=3))
    used = load(path).world
    run_task(used, spec("permuted", depth=40, max_states=3000, seed=9))  # other states interned first
    again = run_task(used, spec("shuffled", depth=20, max_states=3000, seed=3))
    assert fresh.states == again.states == 3000
    assert list(fresh.sample) == list(again.sample)
    assert portable_fingerprinter(Jumps(3, 1)) is not None


# ---------------------------------------------------------------- shortening


def long_path(system: Jumps, target: int) -> list[tuple[Hashable, Hashable]]:
    """``+1`` steps from 0 to ``target``: a valid, far from shortest, path."""
    return replay(system, [{"op": "+1"}] * target)


def test_shortening_from_the_initial_state_gives_the_shortest_trace() -> None:
    system = Jumps(200, 10, [Always("below_87", lambda s: s < 87)])
    short = shorten(system, long_path(system, 87), "below_87", "always", max_states=10_000)
    shortest = min(d for s, d in distances(system).items() if s >= 87)
    assert short.shortest and short.original == 87 and len(short.path) == shortest == 9
    validate(system, as_trace(system, "below_87", "always", tuple({"op": a} for a, _ in short.path)))


def test_shortening_from_a_midpoint_when_the_first_search_does_not_fit() -> None:
    system = Jumps(400, 10, [Always("below_300", lambda s: s < 300)])
    short = shorten(system, long_path(system, 300), "below_300", "always", max_states=60)
    assert not short.shortest and short.searches > 1
    assert min(d for s, d in distances(system).items() if s >= 300) < len(short.path) < 300
    validate(system, as_trace(system, "below_300", "always", tuple({"op": a} for a, _ in short.path)))


def test_a_liveness_path_is_cut_at_its_first_stuck_state() -> None:
    prop = Liveness("back_to_zero", lambda s: s == 0)
    system = Jumps(60, 4, [prop], stuck_from=40)
    path = first_stuck(system, long_path(system, 55), prop)
    assert len(path) == 40
    with pytest.raises(TraceError):  # one step earlier the state still recovers
        validate(system, as_trace(system, "back_to_zero", "liveness", tuple({"op": a} for a, _ in path[:-1])))
    validate(system, as_trace(system, "back_to_zero", "liveness", tuple({"op": a} for a, _ in path)))
