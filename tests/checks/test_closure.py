"""Tests for checks/explore/closure.py: the liveness judgement of one state, shared by the fuzz
(checks/fuzz/run.py) and the trace validator (checks/explore/trace.py).

The oracle is the search both used before: a plain breadth-first search per property over the
successors whose action is no fault, true at a goal state, at a state beyond the bounds, or once it
met more than ``max_states`` states. The joint search must give every property the oracle's verdict
(random graphs, the multicast violation models' last states, the fuzz seeds of the old world rule),
and the multicast world's ``progress_successors`` must be ``successors`` without the faults.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.check import check_model
from checks.cli import MODELS_DIR
from checks.explore import closure
from checks.explore.closure import BEYOND, BOUND, GOAL, STUCK, Judgement, judge
from checks.explore.system import Liveness, TransitionSystem
from checks.explore.trace import TraceError, can_reach_goal, validate
from checks.fuzz.run import FuzzPlan, Runner
from models.modelfile import load
from models.multicast_world import FAULTS, InstallView, MulticastWorld


def oracle(system: TransitionSystem, start: Hashable, goal: Callable[[Any], bool], max_states: int) -> bool:
    """The judgement before checks/explore/closure.py, kept verbatim as the reference."""
    seen = {start}
    frontier = [start]
    while frontier:
        next_frontier = []
        for state in frontier:
            if goal(state) or not system.within_bounds(state):
                return True
            for action, after in system.successors(state):
                if not system.is_fault(action) and after not in seen:
                    seen.add(after)
                    next_frontier.append(after)
            if len(seen) > max_states:
                return True
        frontier = next_frontier
    return False


# ---------------------------------------------------------------- random graphs

Edge = tuple[int, int, bool]  # (source, target, is fault)


class Graph:
    """States are the graph's nodes; action ``k`` is edge ``k``; successors follow the edge order."""

    name = "graph"

    def __init__(self, edges: Sequence[Edge], cut: Iterable[int], props: Sequence[Liveness]) -> None:
        self.edges, self.cut, self.properties = list(edges), set(cut), list(props)
        self.out: dict[int, list[int]] = {}
        for k, (a, _, _) in enumerate(self.edges):
            self.out.setdefault(a, []).append(k)

    def init_states(self) -> Sequence[int]:
        return [0]

    def successors(self, state: int) -> Iterable[tuple[int, int]]:
        return [(k, self.edges[k][1]) for k in self.out.get(state, [])]

    def within_bounds(self, state: int) -> bool:
        return state not in self.cut

    def accepts_end(self, state: int) -> bool:
        return True

    def is_fault(self, action: Hashable) -> bool:
        assert isinstance(action, int)
        return self.edges[action][2]

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"edge": action}

    def format_action(self, action: Hashable) -> str:
        return f"edge {action}"


def member_of(states: frozenset[int]) -> Callable[[Any], bool]:
    return lambda state: state in states


@st.composite
def graphs(draw: st.DrawFn) -> tuple[Graph, int, int]:
    n = draw(st.integers(1, 12))
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node, st.sampled_from([False, False, True])), max_size=3 * n))
    goals = draw(st.lists(st.frozensets(node, max_size=3), min_size=1, max_size=3))
    props = [Liveness(f"p{i}", member_of(goal)) for i, goal in enumerate(goals)]
    return Graph(edges, draw(st.sets(node, max_size=2)), props), draw(node), draw(st.integers(1, n + 1))


@settings(max_examples=600, deadline=None, derandomize=True)
@given(graphs(), st.integers(0, 13))
def test_one_search_for_all_properties_gives_each_the_verdict_of_its_own(case: tuple[Graph, int, int],
                                                                         probe: int) -> None:
    """Whatever the probe's budget (0: breadth first alone; 13: the probe meets every state)."""
    system, start, max_states = case
    kept = closure.PROBE_STATES
    closure.PROBE_STATES = probe
    try:
        judged = judge(system, start, system.properties, max_states=max_states)
        for prop in system.properties:
            expected = oracle(system, start, prop.goal, max_states)
            assert judged[prop.name].live == expected, prop.name
            assert can_reach_goal(system, start, prop.goal, max_states=max_states) == expected
            alone = judge(system, start, [prop], max_states=max_states)[prop.name]
            assert alone == judged[prop.name]  # the same outcome at the same count of states met
    finally:
        closure.PROBE_STATES = kept


def test_the_probe_finds_a_deep_goal_the_breadth_first_search_would_meet_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of 50 states to the goal beside a fan of 500 dead ends: breadth first meets the
    fan before the goal, the probe (first successor first) walks the chain and never opens the fan."""
    chain = [(i, i + 1, False) for i in range(50)]
    fan = [(0, 100, False)] + [(100, 101 + k, False) for k in range(500)]
    props = [Liveness("end", lambda s: s == 50)]
    system = Graph(chain + fan, [], props)
    assert judge(system, 0, props, max_states=10_000)["end"] == Judgement(GOAL, 52)  # 0 to 50, and 100
    assert judge(system, 0, props, max_states=10)["end"] == Judgement(GOAL, 52)  # live either way (rule 4)
    monkeypatch.setattr(closure, "PROBE_STATES", 0)
    assert judge(system, 0, props, max_states=10_000)["end"] == Judgement(GOAL, 552)
    assert judge(system, 0, props, max_states=10)["end"].outcome == BOUND


def test_outcomes_name_how_each_property_was_decided() -> None:
    edges = [(0, 1, False), (1, 2, False), (2, 3, False), (0, 9, True)]
    props = [Liveness("one", lambda s: s == 1), Liveness("nine", lambda s: s == 9),
             Liveness("three", lambda s: s == 3)]
    judged = judge(Graph(edges, [], props), 0, props, max_states=100)
    assert {name: j.outcome for name, j in judged.items()} == {"one": GOAL, "nine": STUCK, "three": GOAL}
    assert not judged["nine"].live and judged["nine"].states == 4  # 9 is behind a fault
    assert judge(Graph(edges, [2], props), 0, props[1:2], max_states=100)["nine"].outcome == BEYOND
    assert judge(Graph(edges, [], props), 0, props[1:2], max_states=2)["nine"].outcome == BOUND


# ---------------------------------------------------------------- the multicast world

NAKACK2_LIVENESS = MODELS_DIR / "fuzz" / "nakack2-liveness.toml"


def old_rule(self: MulticastWorld, action: object) -> bool:
    """World rule 7 before join answers and leaves were progress (tests/fuzz/test_fuzz_multicast.py)."""
    if isinstance(action, InstallView) and self.bounds.views_are_progress:
        return False
    return isinstance(action, FAULTS)


def sample_states(world: MulticastWorld, count: int, seed: int) -> list[tuple[int, ...]]:
    """States of random walks from the initial state (seeded), ``count`` in all."""
    rng, out = random.Random(seed), list[tuple[int, ...]]()
    while len(out) < count:
        state = world.init_states()[0]
        for _ in range(60):
            steps = list(world.successors(state))
            if not steps:
                break
            state = rng.choice(steps)[1]
            out.append(state)
    return out[:count]


@pytest.mark.parametrize("name", ["fuzz/nakack2-liveness", "nakack2/merge-digest-lags-loopback",
                                  "nakack4/jgrp2853", "nakack4/jgrp3034-fixed"])
@pytest.mark.parametrize("planted", [False, True])
def test_progress_successors_are_the_successors_without_the_faults(name: str, planted: bool,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if planted:  # follows is_fault, whatever it says
        monkeypatch.setattr(MulticastWorld, "is_fault", old_rule)
    world = load(MODELS_DIR / f"{name}.toml").world
    assert isinstance(world, MulticastWorld)
    for state in sample_states(world, 150, seed=7):
        assert list(world.progress_successors(state)) == [
            (a, t) for a, t in world.successors(state) if not world.is_fault(a)]


MULTICAST_LIVENESS_VIOLATIONS = [
    "nakack2/below-drop-no-xmit", "nakack2/jgrp2675", "nakack2/join-digest-lags-loopback",
    "nakack4/jgrp2829", "nakack4/jgrp2853", "nakack4/jgrp3034-fixed", "nakack4/lost-ack-threshold-0"]


@pytest.mark.parametrize("name", MULTICAST_LIVENESS_VIOLATIONS)
def test_the_multicast_violation_models_keep_their_verdicts(name: str, tmp_path: Path) -> None:
    model = load(MODELS_DIR / f"{name}.toml")
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.matches, outcome.mismatch_reason  # the checker's trace validates (the new search)
    trace = outcome.trace
    assert trace is not None
    path = validate(model.world, trace)
    last = path[-1][1]
    props = [p for p in model.world.properties if isinstance(p, Liveness)]
    judged = judge(model.world, last, props, max_states=200_000)
    assert {p.name: judged[p.name].live for p in props} == {
        p.name: oracle(model.world, last, p.goal, 200_000) for p in props}
    assert trace.kind == "liveness" and not judged[trace.prop].live
    with pytest.raises(TraceError, match=r"cannot confirm .*: the fault-free continuations of the last state pass "
                                         r"1 states \(the bound of the search\)"):
        validate(model.world, trace, max_states=1)


def runner() -> Runner:
    return Runner(FuzzPlan(NAKACK2_LIVENESS.name, NAKACK2_LIVENESS.read_text(), steps=100), NAKACK2_LIVENESS)


def end_state(seed: int) -> tuple[MulticastWorld, tuple[int, ...]]:
    walk, _, _ = runner().walk(seed)
    world = walk.reduced
    assert isinstance(world, MulticastWorld)
    return world, world.adopt(walk.lock.world.view(walk.lock.state))


@pytest.mark.parametrize("seed", [16, 109])
def test_fuzz_seeds_of_the_old_rule_keep_their_verdicts(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(MulticastWorld, "is_fault", old_rule)
    assert runner().run(seed).verdict == "violation:eventually_delivered"
    world, state = end_state(seed)
    for prop in (p for p in world.properties if isinstance(p, Liveness)):
        assert judge(world, state, [prop], max_states=200_000)[prop.name].live == oracle(world, state, prop.goal,
                                                                                          200_000)


@pytest.mark.slow
def test_fuzz_seed_58_of_the_old_rule_keeps_its_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """window_drains: the end state's fault-free continuations (176,256 states) never drain."""
    monkeypatch.setattr(MulticastWorld, "is_fault", old_rule)
    assert runner().run(58).verdict == "violation:window_drains"
    world, state = end_state(58)
    drains = next(p for p in world.properties if p.name == "window_drains")
    assert isinstance(drains, Liveness)
    judged = judge(world, state, [drains], max_states=200_000)["window_drains"]
    assert (judged.outcome, judged.states) == (STUCK, 176_256)
    assert not oracle(world, state, drains.goal, 200_000)


def test_a_run_judged_live_at_the_bound_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 58 of the old rule fails window_drains after a search of 176,256 states; with a bound of
    1,000 it passes, and its record's detail names the property and the bound (one line)."""
    import checks.fuzz.run as run

    monkeypatch.setattr(MulticastWorld, "is_fault", old_rule)
    monkeypatch.setattr(run, "LIVENESS_MAX_STATES", 1_000)
    record = runner().run(58)
    assert (record.verdict, record.detail) == ("pass", "liveness: window_drains counted live unconfirmed: the "
                                               "fault-free continuations of the end state pass 1,000 states "
                                               "(the bound of the search)")
    assert runner().run(16).verdict == "violation:eventually_delivered"  # its search stays under 1,000 states
