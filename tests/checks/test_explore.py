"""Tests for checks/explore/search.py and checks/explore/system.py::replay on tiny hand-made transition systems.

Every system here is small enough to count by hand, so each test pins exact numbers (distinct states,
transitions, depth, cut states) the way a tlaplus manifest pins ``distinctStates`` and ``stateDepth``.
Counterexample paths are always re-validated against the system (guide C3): each step must be an
enabled successor of the previous state, and the path must replay from its action JSON alone.

Tests marked ``xfail(strict=True, reason="BUG: ...")`` show a defect of the checker that is not fixed
yet; they start to pass (and so fail as XPASS) once it is.
"""

from __future__ import annotations

import json
import types
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import checks.explore.search as explore_module
from checks.explore.fingerprint import fingerprinter
from checks.explore.search import Finding, Result, Stats, explore, rebuild_path
from checks.explore.system import Always, Liveness, Property, ReplayError, Sometimes, TransitionSystem, replay

# ---------------------------------------------------------------- tiny systems


class Grid:
    """Two counters ``x in 0..n`` and ``y in 0..m``; actions ``inc_x`` and ``inc_y``.

    (n+1)(m+1) states, n(m+1) + m(n+1) transitions, depth n+m. The corner (n, m) is the only state
    without successors; ``accepts_end`` accepts it unless ``corner_ok`` is False.
    """

    name = "grid"

    def __init__(self, n: int, m: int, *, properties: Sequence[Property] = (), bound: int | None = None,
                 corner_ok: bool = True, init: Sequence[tuple[int, int]] = ((0, 0),)) -> None:
        self.n, self.m = n, m
        self.properties = list(properties)
        self.bound = bound  # within bounds iff x + y < bound
        self.corner_ok = corner_ok
        self.init = list(init)
        self.expanded: list[Any] = []  # states passed to successors(), in call order

    def init_states(self) -> Sequence[Hashable]:
        return self.init

    def successors(self, state: Hashable) -> Iterator[tuple[Hashable, Hashable]]:
        # a generator: the protocol only promises an Iterable, which the checker must iterate once
        assert isinstance(state, tuple)
        self.expanded.append(state)
        x, y = state
        if x < self.n:
            yield ("inc_x", (x + 1, y))
        if y < self.m:
            yield ("inc_y", (x, y + 1))

    def within_bounds(self, state: Hashable) -> bool:
        assert isinstance(state, tuple)
        return self.bound is None or state[0] + state[1] < self.bound

    def accepts_end(self, state: Hashable) -> bool:
        return self.corner_ok and state == (self.n, self.m)

    def is_fault(self, action: Hashable) -> bool:
        return False

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"op": action}

    def format_action(self, action: Hashable) -> str:
        return str(action)


class Graph:
    """An explicit graph: ``edges[state]`` lists ``(action, next_state)`` in successor order.

    Actions are strings, unique among the successors of one state. ``ends`` are the states that may
    legitimately have no successors, ``cut`` the states outside the bounds, ``faults`` the fault actions.
    """

    name = "graph"

    def __init__(self, edges: Mapping[Any, Sequence[tuple[str, Any]]], init: Sequence[Hashable], *,
                 properties: Sequence[Property] = (), ends: Iterable[Hashable] = (),
                 cut: Iterable[Hashable] = (), faults: Iterable[str] = ()) -> None:
        self.edges = edges
        self.init = list(init)
        self.properties = list(properties)
        self.ends, self.cut, self.faults = set(ends), set(cut), set(faults)

    def init_states(self) -> Sequence[Hashable]:
        return self.init

    def successors(self, state: Hashable) -> Iterable[tuple[Hashable, Hashable]]:
        return list(self.edges.get(state, []))

    def within_bounds(self, state: Hashable) -> bool:
        return state not in self.cut

    def accepts_end(self, state: Hashable) -> bool:
        return state in self.ends

    def is_fault(self, action: Hashable) -> bool:
        return action in self.faults

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"label": action}

    def format_action(self, action: Hashable) -> str:
        return str(action)


def recorder(log: list[Any]) -> Callable[[Any], bool]:
    """A predicate that holds everywhere and logs the states it is asked about, in order."""

    def holds(state: Any) -> bool:
        log.append(state)
        return True

    return holds


def is_state(target: Hashable) -> Callable[[Any], bool]:
    return lambda state: bool(state == target)


def chain(length: int) -> dict[Any, list[tuple[str, Any]]]:
    """0 -> 1 -> ... -> length, with actions ``step{i}``."""
    return {i: [(f"step{i}", i + 1)] for i in range(length)}


def bfs_order(system: TransitionSystem) -> list[Any]:
    """Textbook BFS discovery order (deduplicated initial states first), the oracle for state indices."""
    order = list(dict.fromkeys(system.init_states()))
    seen = set(order)
    queue = deque(order)
    while queue:
        state = queue.popleft()
        if not system.within_bounds(state):
            continue
        for _, after in system.successors(state):
            if after not in seen:
                seen.add(after)
                order.append(after)
                queue.append(after)
    return order


def depth_of(system: TransitionSystem, target: Hashable) -> int:
    """The BFS distance from the initial states to ``target`` (oracle for shortest paths)."""
    frontier = list(dict.fromkeys(system.init_states()))
    seen = set(frontier)
    depth = 0
    while frontier:
        if target in frontier:
            return depth
        following = []
        for state in frontier:
            if system.within_bounds(state):
                for _, after in system.successors(state):
                    if after not in seen:
                        seen.add(after)
                        following.append(after)
        frontier, depth = following, depth + 1
    raise AssertionError(f"{target!r} is not reachable")


def validated_end(system: TransitionSystem, path: list[tuple[Hashable, Hashable]]) -> Any:
    """Check that the non-empty ``path`` is a real execution from some initial state and that it
    replays from its action JSON alone (when it starts at the first initial state); return its last state."""
    assert path
    starts = [s for s in dict.fromkeys(system.init_states()) if _follows(system, s, path)]
    assert starts, f"path {path!r} is not an execution of {system.name}"
    actions = [json.loads(json.dumps(system.action_to_json(a))) for a, _ in path]
    if starts[0] == system.init_states()[0]:
        assert replay(system, actions) == path
    return path[-1][1]


def _follows(system: TransitionSystem, start: Hashable, path: list[tuple[Hashable, Hashable]]) -> bool:
    state = start
    for action, after in path:
        if (action, after) not in list(system.successors(state)):
            return False
        state = after
    return True


# ---------------------------------------------------------------- hand-counted state spaces


@pytest.mark.parametrize(("n", "m"), [(0, 0), (1, 0), (0, 3), (1, 1), (2, 3), (5, 4), (12, 7)])
def test_grid_counts(n: int, m: int) -> None:
    result = explore(Grid(n, m))
    s = result.stats
    assert (s.distinct, s.transitions, s.depth, s.cut) == ((n + 1) * (m + 1), n * (m + 1) + m * (n + 1), n + m, 0)
    assert s.complete
    assert s.max_frontier == (min(n, m) + 1 if n + m > 0 else 0)  # the widest anti-diagonal below the first
    assert result.findings == []
    assert result.witnessed == {}
    assert result.system_name == "grid"
    assert result.initial == (0, 0)
    assert result.first() is None


def test_grid_expands_every_state_exactly_once() -> None:
    grid = Grid(4, 6)
    explore(grid)
    assert len(grid.expanded) == len(set(grid.expanded)) == 35
    assert grid.expanded == bfs_order(Grid(4, 6))


@pytest.mark.parametrize("k", [1, 2, 7, 100])
def test_counter_modulo_k_is_a_cycle_of_k_states(k: int) -> None:
    ring = Graph({i: [("tick", (i + 1) % k)] for i in range(k)}, [0])
    result = explore(ring)
    assert (result.stats.distinct, result.stats.transitions, result.stats.depth) == (k, k, k - 1)
    assert result.stats.complete
    assert result.findings == []  # every state has a successor: no deadlock


def test_several_initial_states_are_all_explored() -> None:
    # two disjoint chains 0..3 and 10..12, started from both ends
    edges = {**chain(3), 10: [("a", 11)], 11: [("b", 12)]}
    result = explore(Graph(edges, [0, 10], ends=[3, 12]))
    assert (result.stats.distinct, result.stats.transitions, result.stats.depth) == (7, 5, 3)
    assert result.initial == 0


def test_initial_states_reachable_from_each_other_are_not_counted_twice() -> None:
    result = explore(Graph(chain(4), [0, 2, 4], ends=[4]))
    # 1 and 3 are one step from an initial state
    assert (result.stats.distinct, result.stats.transitions, result.stats.depth) == (5, 4, 1)


def test_duplicate_initial_states_count_once() -> None:
    grid = Grid(2, 2, init=[(0, 0), (1, 1), (0, 0), (1, 1), (0, 0)])
    result = explore(grid)
    assert result.stats.distinct == 9
    assert result.stats.transitions == 12
    assert result.stats.depth == 2  # (1, 1) is initial, so (2, 2) is two steps away
    assert grid.expanded.count((0, 0)) == 1


def test_no_initial_states() -> None:
    result = explore(Graph({}, [], properties=[Sometimes("anything", lambda s: True)]))
    assert (result.stats.distinct, result.stats.transitions, result.stats.complete) == (0, 0, True)
    assert result.initial is None
    assert [(f.prop, f.kind) for f in result.findings] == [("anything", "sometimes")]


def test_wide_levels_span_several_chunks() -> None:
    # root -> a0..a4999 -> b(i // 3): level 1 is wider than explore.CHUNK, and siblings a2046, a2047,
    # a2048 share b682 across the chunk boundary.
    width = 5000
    assert width > 2 * explore_module.CHUNK
    edges: dict[Hashable, list[tuple[str, Hashable]]] = {"root": [(f"a{i}", ("a", i)) for i in range(width)]}
    for i in range(width):
        edges["a", i] = [("down", ("b", i // 3))]
    bs = [("b", j) for j in range((width + 2) // 3)]
    system = Graph(edges, ["root"], ends=bs)
    result = explore(system)
    s = result.stats
    assert (s.distinct, s.transitions, s.depth, s.max_frontier) == (1 + width + len(bs), 2 * width, 2, width)
    assert s.complete and result.findings == []


def test_discovery_indices_follow_bfs_order() -> None:
    # Sometimes witnesses report the discovery index of the first witness; it is the BFS index.
    grid = Grid(6, 5)
    order = bfs_order(Grid(6, 5))
    props: list[Property] = [Sometimes(f"reach{x}{y}", is_state((x, y))) for x, y in order]
    result = explore(grid, props)
    assert result.witnessed == {f"reach{x}{y}": i for i, (x, y) in enumerate(order)}
    assert result.findings == []


def test_stats_helpers() -> None:
    stats = Stats(distinct=2**10, seconds=2.0)
    assert stats.states_per_second == 512.0
    assert stats.collision_probability == 2.0**10 * (2.0**10 - 1) / 2.0**65
    assert Stats().states_per_second == 0.0


# ---------------------------------------------------------------- safety (Always)


@pytest.mark.parametrize("d", [1, 2, 5, 9])
def test_always_violation_has_a_shortest_path(d: int) -> None:
    grid = Grid(6, 6, properties=[Always("below_diagonal", lambda s: s[0] + s[1] != d)])
    result = explore(grid)
    assert len(result.findings) == 1
    finding = result.findings[0]
    assert (finding.prop, finding.kind) == ("below_diagonal", "always")
    assert len(finding.path) == d
    end = validated_end(grid, finding.path)
    assert end[0] + end[1] == d
    # the first violating state in BFS order is reported, and its index is its discovery index
    order = bfs_order(Grid(6, 6))
    assert end == next(s for s in order if s[0] + s[1] == d)
    assert finding.state_index == order.index(end)
    assert not result.stats.complete  # stopped at the first finding


def test_shortest_path_avoids_a_long_detour() -> None:
    # 0 -> 1 -> ... -> 9 -> bad, and 0 -> shortcut -> bad; the long branch is listed first.
    edges = {**chain(9), 9: [("last", "bad")]}
    edges[0] = [("long", 1), ("short", "shortcut")]
    edges["shortcut"] = [("jump", "bad")]
    system = Graph(edges, [0], ends=["bad"], properties=[Always("good", lambda s: s != "bad")])
    finding = explore(system).findings[0]
    assert [a for a, _ in finding.path] == ["short", "jump"]
    assert validated_end(system, finding.path) == "bad"


def test_initial_state_violation_has_an_empty_path() -> None:
    grid = Grid(3, 3, properties=[Always("not_origin", lambda s: s != (0, 0))])
    result = explore(grid)
    assert [(f.prop, f.kind, f.state_index, f.path) for f in result.findings] == [("not_origin", "always", 0, [])]
    assert result.stats.distinct == 1
    assert not result.stats.complete
    assert grid.expanded == []


def test_violation_at_a_later_initial_state_has_an_empty_path() -> None:
    grid = Grid(3, 3, init=[(0, 0), (2, 2)], properties=[Always("small", lambda s: s[0] < 2)])
    finding = explore(grid).findings[0]
    assert (finding.state_index, finding.path) == (1, [])


def test_violation_reached_from_the_second_initial_state() -> None:
    edges = {"a": [("x", "a1")], "b": [("y", "b1")], "b1": [("z", "bad")]}
    system = Graph(edges, ["a", "b"], ends=["a1", "bad"], properties=[Always("good", lambda s: s != "bad")])
    finding = explore(system).findings[0]
    assert finding.path == [("y", "b1"), ("z", "bad")]  # starts at "b", not at Result.initial


def test_stop_at_first_false_finds_every_violated_property() -> None:
    props = [
        Always("p_depth2", lambda s: s[0] + s[1] != 2),
        Always("p_never", lambda s: s[0] + s[1] < 100),
        Always("p_depth5", lambda s: s != (3, 2)),
        Always("p_corner", lambda s: s != (4, 4)),
    ]
    grid = Grid(4, 4, properties=props)
    result = explore(grid, stop_at_first=False)
    found = {f.prop: f for f in result.findings}
    assert sorted(found) == ["p_corner", "p_depth2", "p_depth5"]
    assert [f.prop for f in result.findings] == ["p_depth2", "p_depth5", "p_corner"]  # discovery order
    assert len(found["p_depth2"].path) == 2
    assert validated_end(grid, found["p_depth5"].path) == (3, 2)
    assert validated_end(grid, found["p_corner"].path) == (4, 4)
    assert len(found["p_corner"].path) == 8
    assert all(f.kind == "always" for f in result.findings)
    assert result.stats.complete and result.stats.distinct == 25


def test_each_property_is_reported_once() -> None:
    grid = Grid(3, 3, properties=[Always("x_small", lambda s: s[0] < 2)])
    result = explore(grid, stop_at_first=False)
    assert [f.prop for f in result.findings] == ["x_small"]  # (2, 0), (2, 1), ... violate it too


def test_two_properties_violated_by_the_same_state_are_both_reported() -> None:
    # stop_at_first stops the search, not the checks of the state that stopped it
    props = [Always("first", lambda s: s != (1, 0)), Always("second", lambda s: s != (1, 0))]
    result = explore(Grid(3, 3, properties=props))
    assert [(f.prop, f.state_index) for f in result.findings] == [("first", 1), ("second", 1)]


def test_properties_argument_overrides_the_systems_properties() -> None:
    grid = Grid(3, 3, properties=[Always("never", lambda s: False)])
    assert explore(grid, []).findings == []
    other = Always("no_corner", lambda s: s != (3, 3))
    assert [f.prop for f in explore(grid, [other]).findings] == ["no_corner"]


# ---------------------------------------------------------------- witnesses (Sometimes)


def test_sometimes_witnessed() -> None:
    props = [Sometimes("corner", lambda s: s == (3, 2)), Sometimes("origin", lambda s: s == (0, 0))]
    result = explore(Grid(3, 2, properties=props))
    assert result.witnessed == {"corner": 11, "origin": 0}
    assert result.findings == []


def test_sometimes_never_witnessed_on_a_complete_exploration() -> None:
    result = explore(Grid(3, 2, properties=[Sometimes("beyond", lambda s: s[0] > 3)]))
    assert result.stats.complete
    assert [(f.prop, f.kind, f.state_index, f.path) for f in result.findings] == [("beyond", "sometimes", -1, [])]
    assert result.witnessed == {}


def test_sometimes_not_reported_when_max_states_stops_the_exploration() -> None:
    result = explore(Grid(10, 10, properties=[Sometimes("corner", lambda s: s == (10, 10))]), max_states=20)
    assert not result.stats.complete
    assert result.findings == []
    assert result.witnessed == {}


def test_sometimes_not_reported_when_a_safety_violation_stops_the_exploration() -> None:
    props: list[Property] = [Always("small", lambda s: s[0] + s[1] < 3), Sometimes("corner", lambda s: s == (5, 5))]
    result = explore(Grid(5, 5, properties=props))
    assert [f.kind for f in result.findings] == ["always"]


def test_sometimes_witnessed_in_a_cut_state() -> None:
    result = explore(Grid(5, 5, bound=2, properties=[Sometimes("two", lambda s: s == (2, 0))]))
    assert result.witnessed == {"two": 3}


# ---------------------------------------------------------------- deadlock


def test_deadlock_found_with_a_shortest_path() -> None:
    # 0 -> 1 -> 2 -> 3 (accepted end); 1 -> stuck at depth 2; 3 -> 4 -> stuck2 deeper
    edges: dict[Any, list[tuple[str, Any]]] = {
        0: [("a", 1)], 1: [("b", 2), ("c", "stuck")], 2: [("d", 3)], 3: [("e", "stuck2")]}
    system = Graph(edges, [0], ends=[])
    result = explore(system, stop_at_first=False)
    assert [(f.prop, f.kind) for f in result.findings] == [("deadlock", "deadlock")]  # reported once
    finding = result.findings[0]
    assert finding.path == [("a", 1), ("c", "stuck")]
    assert validated_end(system, finding.path) == "stuck"


def test_deadlock_in_the_initial_state() -> None:
    finding = explore(Graph({}, ["alone"])).findings[0]
    assert (finding.kind, finding.state_index, finding.path) == ("deadlock", 0, [])


def test_grid_corner_is_a_deadlock_unless_accepted() -> None:
    result = explore(Grid(3, 4, corner_ok=False))
    assert [(f.kind, len(f.path), f.path[-1][1]) for f in result.findings] == [("deadlock", 7, (3, 4))]
    assert explore(Grid(3, 4, corner_ok=True)).findings == []


def test_check_deadlock_false_reports_no_deadlock() -> None:
    result = explore(Grid(3, 4, corner_ok=False), check_deadlock=False)
    assert result.findings == []
    assert result.stats.complete


def test_cut_state_without_successors_is_not_a_deadlock() -> None:
    result = explore(Graph(chain(3), [0], cut=[3]))
    assert result.findings == []
    assert result.stats.cut == 1


def test_self_loop_is_not_a_deadlock() -> None:
    result = explore(Graph({0: [("a", 1)], 1: [("spin", 1)]}, [0]))
    assert result.findings == []
    assert (result.stats.distinct, result.stats.transitions) == (2, 2)


# ---------------------------------------------------------------- bounds and max_states


@pytest.mark.parametrize("bound", [1, 2, 3, 5])
def test_cut_states_are_counted_checked_and_not_expanded(bound: int) -> None:
    checked: list[Any] = []
    grid = Grid(4, 4, bound=bound, properties=[Always("record", recorder(checked))])
    result = explore(grid)
    inside = [(x, y) for x in range(5) for y in range(5) if x + y < bound]
    cut = [(x, y) for x in range(5) for y in range(5) if x + y == bound]
    s = result.stats
    assert (s.distinct, s.cut, s.depth) == (len(inside) + len(cut), len(cut), bound)
    assert s.transitions == sum((x < 4) + (y < 4) for x, y in inside)
    assert s.complete  # cut states do not make an exploration incomplete
    assert sorted(checked) == sorted(inside + cut)
    assert sorted(grid.expanded) == sorted(inside)
    assert result.findings == []  # the cut corner of the region has no successors, yet no deadlock


def test_always_is_checked_on_cut_states() -> None:
    grid = Grid(4, 4, bound=3, properties=[Always("low", lambda s: s[0] + s[1] < 3)])
    finding = explore(grid).findings[0]
    assert len(finding.path) == 3
    assert validated_end(grid, finding.path) == (3, 0)


def test_out_of_bounds_initial_state_is_cut() -> None:
    grid = Grid(4, 4, bound=0)
    result = explore(grid)
    assert (result.stats.distinct, result.stats.cut, result.stats.complete) == (1, 1, True)
    assert grid.expanded == []


@pytest.mark.parametrize("limit", [1, 2, 7, 30, 120, 121])
def test_max_states_stops_early_and_marks_incomplete(limit: int) -> None:
    grid = Grid(10, 10, corner_ok=False, properties=[Sometimes("corner", lambda s: s == (10, 10))])
    result = explore(grid, max_states=limit)
    assert not result.stats.complete
    assert limit <= result.stats.distinct <= 121
    # a limit is checked between chunks, so it may be overshot by at most one chunk's successors
    assert result.stats.distinct < limit + 2 * explore_module.CHUNK
    # incomplete: no deadlock at the unexpanded corner, no unwitnessed Sometimes
    assert result.findings == []


def test_max_states_equal_to_the_state_count_leaves_the_last_level_unexpanded() -> None:
    grid = Grid(10, 10, corner_ok=False)
    result = explore(grid, max_states=121)
    assert result.stats.distinct == 121 and not result.stats.complete
    assert (10, 10) not in grid.expanded
    result = explore(Grid(10, 10, corner_ok=False), max_states=122)
    assert result.stats.complete
    assert [f.kind for f in result.findings] == ["deadlock"]


# ---------------------------------------------------------------- progress


def test_progress_is_reported_with_a_virtual_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(1000))
    monkeypatch.setattr(explore_module, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks)),
                                                                      process_time=lambda: 0.0))
    calls: list[tuple[int, int]] = []

    def progress(stats: Stats, frontier: int) -> None:
        calls.append((stats.distinct, frontier))

    result = explore(Grid(3, 3), progress=progress)
    # one frontier level per chunk, one report per chunk (the clock moves a second per reading)
    assert len(calls) == result.stats.depth + 1 == 7
    assert [d for d, _ in calls] == [3, 6, 10, 13, 15, 16, 16]
    # the reported frontier is the current level from the chunk just expanded on, plus the next level
    assert [f for _, f in calls] == [1 + 2, 2 + 3, 3 + 4, 4 + 3, 3 + 2, 2 + 1, 1 + 0]
    assert result.stats.seconds > 0


# ---------------------------------------------------------------- nondeterminism and rebuild_path


class Flaky(Graph):
    """From the initial state, the first call of ``successors`` yields ``good``; later calls yield
    ``other`` (a model that reads a global counter or iterates a set)."""

    def __init__(self, properties: Sequence[Property]) -> None:
        super().__init__({"good": [("g", "end")]}, ["start"], properties=properties, ends=["end", "other"])
        self.calls = 0

    def successors(self, state: Hashable) -> Iterable[tuple[Hashable, Hashable]]:
        if state == "start":
            self.calls += 1
            return [("go", "good")] if self.calls == 1 else [("go", "other")]
        return super().successors(state)


def test_changed_successor_contents_are_diagnosed_as_nondeterminism() -> None:
    system = Flaky([Always("not_end", lambda s: s != "end")])
    with pytest.raises(RuntimeError, match="nondeterministic"):
        explore(system)


class Shuffling(Graph):
    """Yields the same successors in a different order on every call."""

    def __init__(self, properties: Sequence[Property]) -> None:
        edges: dict[Any, list[tuple[str, Any]]] = {0: [("a", 1), ("b", 2), ("c", 3)], 2: [("d", "bad")]}
        super().__init__(edges, [0], properties=properties, ends=[1, 3, "bad"])
        self.calls = 0

    def successors(self, state: Hashable) -> Iterable[tuple[Hashable, Hashable]]:
        self.calls += 1
        out = list(super().successors(state))
        shift = self.calls % max(len(out), 1)
        return out[shift:] + out[:shift]


def test_changed_successor_order_still_rebuilds_the_path() -> None:
    # rebuild_path matches successors by fingerprint, not by position, so order changes are tolerated
    system = Shuffling([Always("good", lambda s: s != "bad")])
    finding = explore(system).findings[0]
    assert finding.path == [("b", 2), ("d", "bad")]


def test_rebuild_path_directly() -> None:
    grid = Grid(3, 3)
    order = bfs_order(grid)
    parents = array("i", [-1, 0, 0, 1])  # (0,0); (1,0) and (0,1) from it; (2,0) from (1,0)
    fingerprints = array("q", fingerprinter(grid)(order[:4]).tolist())
    assert order[:4] == [(0, 0), (1, 0), (0, 1), (2, 0)]
    assert rebuild_path(grid, parents, fingerprints, 3, [(0, 0)]) == [("inc_x", (1, 0)), ("inc_x", (2, 0))]
    assert rebuild_path(grid, parents, fingerprints, 0, [(0, 0)]) == []


# ---------------------------------------------------------------- replay


def test_replay_reproduces_a_recorded_path() -> None:
    grid = Grid(3, 3)
    actions = [{"op": "inc_x"}, {"op": "inc_y"}, {"op": "inc_y"}, {"op": "inc_x"}]
    path = replay(grid, actions)
    assert path == [("inc_x", (1, 0)), ("inc_y", (1, 1)), ("inc_y", (1, 2)), ("inc_x", (2, 2))]
    assert replay(grid, []) == []


def test_replay_of_a_finding_survives_a_json_round_trip() -> None:
    grid = Grid(5, 5, properties=[Always("far", lambda s: s != (2, 3))])
    finding = explore(grid).findings[0]
    text = json.dumps([grid.action_to_json(a) for a, _ in finding.path])
    assert replay(grid, json.loads(text)) == finding.path


@pytest.mark.parametrize(("actions", "step"), [
    ([{"op": "inc_z"}], 1),
    ([{"op": "inc_x"}, {"op": "inc_x"}], 2),  # x is already at its maximum 1
    ([{"op": "inc_y"}, {"op": "inc_y"}, {"op": "inc_x"}, {"op": "inc_y"}, {"op": "inc_y"}], 5),
])
def test_replay_error_names_the_step(actions: list[dict[str, Any]], step: int) -> None:
    with pytest.raises(ReplayError, match=rf"^step {step}: action .* is not enabled"):
        replay(Grid(1, 3), actions)


# ---------------------------------------------------------------- Result and Finding


def test_result_first_and_finding_defaults() -> None:
    finding = Finding("p", "always", 3)
    assert finding.path == []
    result = Result("sys", Stats(), [finding, Finding("q", "deadlock", 4)], {})
    assert result.first() is finding
    assert result.initial is None


# ---------------------------------------------------------------- safety and deadlock against an oracle


@st.composite
def random_graphs(draw: st.DrawFn) -> tuple[Graph, set[int], set[int]]:
    """A random graph on 0..n-1 with random initial states, bad states, accepted ends and cut states."""
    n = draw(st.integers(1, 9))
    node = st.integers(0, n - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=3 * n))
    edges: dict[Hashable, list[tuple[str, Hashable]]] = {}
    for k, (a, b) in enumerate(pairs):
        edges.setdefault(a, []).append((f"e{k}", b))
    init = draw(st.lists(node, min_size=1, max_size=3))
    bad = draw(st.sets(node, max_size=3))
    ends = draw(st.sets(node))
    cut = draw(st.sets(node, max_size=2))
    return Graph(edges, init, ends=ends, cut=cut), bad, ends


@settings(max_examples=150, deadline=None, derandomize=True)
@given(random_graphs())
def test_safety_and_deadlock_match_a_bfs_oracle(case: tuple[Graph, set[int], set[int]]) -> None:
    graph, bad, ends = case
    order = bfs_order(graph)
    checked: list[Any] = []
    graph.properties = [
        Always("record", recorder(checked)),
        Always("not_bad", lambda s: s not in bad),
    ]
    result = explore(graph, stop_at_first=False)
    assert checked == order
    assert result.stats.distinct == len(order)
    assert result.stats.complete
    assert result.stats.cut == len(set(order) & graph.cut)
    expanded = [s for s in order if s not in graph.cut]
    assert result.stats.transitions == sum(len(graph.edges.get(s, [])) for s in expanded)
    findings = {f.kind: f for f in result.findings}
    reachable_bad = [s for s in order if s in bad]
    dead = [s for s in expanded if not graph.edges.get(s) and s not in ends]
    assert set(findings) == {kind for kind, states in (("always", reachable_bad), ("deadlock", dead)) if states}
    for kind, states in (("always", reachable_bad), ("deadlock", dead)):
        event(f"{kind}: {'found' if states else 'none'}")
        if states:
            finding = findings[kind]
            assert finding.state_index == order.index(states[0])
            if finding.path:
                assert validated_end(graph, finding.path) == states[0]
            else:
                assert states[0] in graph.init
            assert len(finding.path) == depth_of(graph, states[0])


# ---------------------------------------------------------------- known bugs


def test_states_with_colliding_python_hashes_are_distinct() -> None:
    """Fingerprints are no Python hash (``hash(-1) == hash(-2)`` would merge the two states and
    leave the rest of the space unexplored)."""
    assert hash(-1) == hash(-2)
    system = Graph({0: [("dec", -1)], -1: [("dec", -2)], -2: [("dec", -3)]}, [0], ends=[-3],
                   properties=[Always("above_minus_3", lambda s: s > -3)])
    result = explore(system)
    assert result.stats.distinct == 4
    assert [f.prop for f in result.findings] == ["above_minus_3"]


def test_counterexample_from_the_second_initial_state_replays() -> None:
    edges = {"a": [("x", "a1")], "b": [("y", "b1")], "b1": [("z", "bad")]}
    system = Graph(edges, ["a", "b"], ends=["a1", "bad"], properties=[Always("good", lambda s: s != "bad")])
    finding = explore(system).findings[0]
    assert replay(system, [system.action_to_json(a) for a, _ in finding.path]) == finding.path


def test_stopping_in_the_middle_of_a_level_is_incomplete() -> None:
    # root -> a0..a2999. a0 is a deadlock; a1..a2047 (rest of the first chunk) lead back to root;
    # a2048..a2999 (second chunk) lead to new states b2048..
    chunk, width = explore_module.CHUNK, 3000
    edges: dict[Hashable, list[tuple[str, Hashable]]] = {"root": [(f"a{i}", ("a", i)) for i in range(width)]}
    for i in range(1, width):
        edges["a", i] = [("up", "root")] if i < chunk else [("down", ("b", i))]
    system = Graph(edges, ["root"], ends=[("b", i) for i in range(width)],
                   properties=[Sometimes("reach_b", lambda s: s[0] == "b")])
    result = explore(system)
    assert result.findings[0].kind == "deadlock"
    assert not result.stats.complete
    assert [f.kind for f in result.findings] == ["deadlock"]


def test_stop_at_first_false_also_checks_liveness() -> None:
    # 0 -> trap (no way back to the goal 0); 0 violates an unrelated Always property
    system = Graph({0: [("fall", "trap")], "trap": [("spin", "trap")]}, [0],
                   properties=[Always("nonzero", lambda s: s != 0), Liveness("back_home", lambda s: s == 0)])
    result = explore(system, stop_at_first=False)
    assert sorted(f.kind for f in result.findings) == ["always", "liveness"]



def test_replay_from_a_named_initial_state_and_the_error_of_the_first() -> None:
    edges = {"a": [("x", "a1")], "b": [("y", "b1")], "b1": [("z", "bad")]}
    system = Graph(edges, ["a", "b"], ends=["a1", "bad"], properties=[Always("good", lambda s: s != "bad")])
    assert [after for _, after in replay(system, [{"label": "y"}], initial=1)] == ["b1"]
    with pytest.raises(ReplayError, match="step 1: action"):
        replay(system, [{"label": "y"}], initial=0)
    with pytest.raises(ReplayError, match=r"step 1: action \{'label': 'y'\}"):
        replay(system, [{"label": "y"}, {"label": "w"}])  # replays from neither: the first one's error


class SwallowingGrid(Grid):
    """A grid whose expansion of state (3, 3) receives SIGINT where Python swallows the
    ``KeyboardInterrupt`` (here a bare ``except``; in the wild a generator's finalizer)."""

    def successors(self, state: Hashable) -> Iterator[tuple[Hashable, Hashable]]:
        if state == (3, 3):
            import os
            import signal

            try:
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):  # the signal is handled between bytecodes
                    pass
            except KeyboardInterrupt:
                pass
        yield from super().successors(state)


def test_a_swallowed_ctrl_c_still_stops_the_search() -> None:
    result = explore(SwallowingGrid(300, 300), [])
    assert result.stats.interrupted and not result.stats.complete
    assert result.stats.distinct < 301 * 301
    result = explore(Grid(30, 30), [])  # the handler is gone afterwards: the next search runs to the end
    assert result.stats.complete and not result.stats.interrupted
