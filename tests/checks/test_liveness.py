"""Tests for liveness checking: checks/explore/liveness.py::unrecoverable_states and its use by
checks/explore/search.py.

A ``Liveness(name, goal)`` property claims AG EF goal over the non-fault edges: from every reachable
state some fault-free continuation reaches ``goal``. The hand-made systems below pin the cases that
matter for a retransmitting protocol (recovery by retransmission, traps entered by a fault, cycles,
cut states); a Hypothesis test then compares the checker with a networkx oracle on random graphs.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import networkx as nx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from checks.explore.liveness import unrecoverable_states
from checks.explore.search import explore
from checks.explore.system import Always, Liveness, Property, replay

# ---------------------------------------------------------------- a graph as a transition system

Edge = tuple[Hashable, Hashable, bool]  # (source, target, is fault)


class Graph:
    """States are the graph's nodes; action ``k`` is edge ``k``. Successors follow the edge order."""

    name = "graph"

    def __init__(self, edges: Sequence[Edge], init: Sequence[Hashable], goal: Callable[[Any], bool], *,
                 cut: Iterable[Hashable] = (), extra: Sequence[Property] = ()) -> None:
        self.edges = list(edges)
        self.init = list(init)
        self.cut = set(cut)
        self.properties: list[Property] = [*extra, Liveness("recovers", goal)]
        self.out: dict[Hashable, list[int]] = {}
        for k, (a, _, _) in enumerate(self.edges):
            self.out.setdefault(a, []).append(k)

    def init_states(self) -> Sequence[Hashable]:
        return self.init

    def successors(self, state: Hashable) -> Iterable[tuple[Hashable, Hashable]]:
        return [(k, self.edges[k][1]) for k in self.out.get(state, [])]

    def within_bounds(self, state: Hashable) -> bool:
        return state not in self.cut

    def accepts_end(self, state: Hashable) -> bool:
        return True

    def is_fault(self, action: Hashable) -> bool:
        assert isinstance(action, int)
        return self.edges[action][2]

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"edge": action}

    def format_action(self, action: Hashable) -> str:
        return f"edge {action}"


def ok(a: Hashable, b: Hashable) -> Edge:
    return (a, b, False)


def fault(a: Hashable, b: Hashable) -> Edge:
    return (a, b, True)


def stuck(system: Graph, properties: Sequence[Property] | None = None,
          **kwargs: Any) -> list[tuple[str, Hashable, int]]:
    """Explore ``system``; return ``(property, unrecoverable state, path length)`` for each liveness
    finding, after checking that each finding's path replays from its actions."""
    result = explore(system, properties, **kwargs)
    init = list(dict.fromkeys(system.init))
    out = []
    for f in result.findings:
        assert f.kind == "liveness", f
        assert replay(system, [system.action_to_json(a) for a, _ in f.path]) == f.path
        out.append((f.prop, f.path[-1][1] if f.path else init[f.state_index], len(f.path)))
    return out


# ---------------------------------------------------------------- hand-made systems


def test_recovery_by_non_fault_actions_passes() -> None:
    # send -> in_flight -> delivered; a drop (fault) loses the packet, a retransmission (not a fault)
    # puts it back in flight.
    edges = [ok("send", "in_flight"), fault("in_flight", "lost"), ok("lost", "in_flight"),
             ok("in_flight", "delivered")]
    system = Graph(edges, ["send"], lambda s: s == "delivered")
    assert stuck(system) == []
    assert explore(system).stats.complete


def test_goal_already_holding_everywhere_passes() -> None:
    assert stuck(Graph([ok(0, 1), fault(1, 2)], [0], lambda s: True)) == []


def test_trap_entered_by_a_fault_is_reported() -> None:
    # the fault leads to a state whose only ways out are faults: recovery needs the network to misbehave
    edges = [ok("send", "in_flight"), fault("in_flight", "trap"), ok("in_flight", "delivered"),
             ok("trap", "trap"), fault("trap", "delivered")]
    system = Graph(edges, ["send"], lambda s: s == "delivered")
    assert stuck(system) == [("recovers", "trap", 2)]
    finding = explore(system).findings[0]
    assert (finding.kind, [a for a, _ in finding.path]) == ("liveness", [0, 1])


def test_lowest_depth_unrecoverable_state_is_reported() -> None:
    # 0 -> 1 -> 2 -(fault)-> deep_trap (depth 3), and 0 -(fault)-> shallow -> shallow_trap (depth 2);
    # the deep trap's edges come first, but the shallow trap is one level closer to the start.
    edges = [ok(0, 1), ok(1, 2), fault(2, "deep_trap"), ok(2, "goal"), fault(0, "shallow"),
             ok("shallow", "shallow_trap"), ok("shallow", "goal"), ok("deep_trap", "deep_trap")]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", "shallow_trap", 2)]


def test_states_leading_only_into_a_trap_are_unrecoverable_too() -> None:
    # before -> trap is not a fault, so "before" (depth 1) is already unrecoverable
    edges = [fault(0, "before"), ok(0, "goal"), ok("before", "trap"), fault("trap", "goal")]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", "before", 1)]


def test_unrecoverable_initial_state_has_an_empty_path() -> None:
    result = explore(Graph([fault(0, "goal")], [0], lambda s: s == "goal"))
    assert [(f.kind, f.state_index, f.path) for f in result.findings] == [("liveness", 0, [])]


def test_end_state_that_is_not_a_goal_is_unrecoverable() -> None:
    # accepts_end is True everywhere, so no deadlock, but "done" cannot reach the goal
    assert stuck(Graph([ok(0, "done"), ok(0, "goal")], [0], lambda s: s == "goal")) == [("recovers", "done", 1)]


def test_pure_cycle_without_the_goal_is_reported() -> None:
    # stateright's `eventually` misses this kind of cycle; AG EF must not
    edges = [ok(i, (i + 1) % 5) for i in range(5)]
    assert stuck(Graph(edges, [0], lambda s: s == "never")) == [("recovers", 0, 0)]


def test_cycle_through_the_goal_passes() -> None:
    edges = [ok(i, (i + 1) % 5) for i in range(5)]
    assert stuck(Graph(edges, [0], lambda s: s == 3)) == []


def test_cycle_with_an_exit_to_the_goal_passes() -> None:
    edges = [ok(0, 1), ok(1, 2), ok(2, 0), fault(1, 1), ok(2, "goal"), ok("goal", 0)]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == []


def test_cycle_left_by_a_fault_into_a_closed_cycle_is_reported() -> None:
    # the main cycle can reach the goal; a fault drops into a goal-free cycle c0 -> c1 -> c2 -> c0
    edges = [ok(0, 1), ok(1, "goal"), ok("goal", 0), fault(1, "c0"), ok("c0", "c1"), ok("c1", "c2"),
             ok("c2", "c0"), fault("c2", "goal")]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", "c0", 2)]


def test_cut_states_get_the_benefit_of_the_doubt() -> None:
    edges = [ok(0, 1), ok(1, 2), ok(2, "trap")]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", 0, 0)]
    system = Graph(edges, [0], lambda s: s == "goal", cut=[2])  # 2 is not expanded: "trap" is never seen
    assert stuck(system) == []
    assert explore(system).stats.cut == 1


def test_the_states_that_need_the_benefit_of_the_doubt_are_counted() -> None:
    """A liveness property that holds reports how many expanded states reach the goal only through a
    cut state (the cut states themselves are the bound's edge, not counted)."""
    edges = [ok(0, 1), ok(1, 2), ok(2, "trap"), ok(1, "side"), ok("side", "goal")]
    through_cut = explore(Graph(edges, [0], lambda s: s == "goal", cut=[2])).stats.liveness_through_cuts
    assert through_cut == {"recovers": 0}  # 0 and 1 reach the goal through "side"; 2 is the cut state
    edges = [ok(0, 1), ok(1, 2), ok(2, "trap"), ok(0, "goal")]
    through_cut = explore(Graph(edges, [0], lambda s: s == "goal", cut=[2])).stats.liveness_through_cuts
    assert through_cut == {"recovers": 1}  # 1 goes on only to the cut state 2; 0 has its own way
    assert explore(Graph(edges, [0], lambda s: s == "goal")).stats.liveness_through_cuts == {}  # no cuts: no doubt


def test_a_cut_state_does_not_rescue_states_that_cannot_reach_it() -> None:
    edges = [ok(0, "far"), fault(0, "trap"), ok("trap", "trap")]
    assert stuck(Graph(edges, [0], lambda s: False, cut=["far"])) == [("recovers", "trap", 1)]


def test_fault_edges_into_the_goal_do_not_count() -> None:
    edges = [ok(0, 1), fault(1, "goal"), ok(1, 0)]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", 0, 0)]


def test_what_follows_a_goal_state_still_matters() -> None:
    # AG EF: "after" is reachable and cannot get back to the goal, even though it follows one
    edges = [ok(0, "goal"), ok("goal", "after"), ok("after", "after")]
    assert stuck(Graph(edges, [0], lambda s: s == "goal")) == [("recovers", "after", 2)]


def test_each_liveness_property_gets_its_own_finding() -> None:
    edges = [ok(0, "a"), ok(0, "b"), ok("a", "a"), ok("b", "b")]
    extra = [Liveness("reach_a", lambda s: s == "a")]
    system = Graph(edges, [0], lambda s: s == "b", extra=extra)
    assert stuck(system) == [("reach_a", "b", 1), ("recovers", "a", 1)]
    assert stuck(system, [extra[0]]) == [("reach_a", "b", 1)]


def test_liveness_is_not_judged_on_an_incomplete_exploration() -> None:
    edges = [ok(i, i + 1) for i in range(20)]  # state 20 is a trap
    result = explore(Graph(edges, [0], lambda s: s == "never"), max_states=5)
    assert not result.stats.complete
    assert result.findings == []


def test_liveness_is_not_judged_when_safety_already_failed() -> None:
    edges = [ok(0, 1), ok(1, "trap")]
    system = Graph(edges, [0], lambda s: s == "never", extra=[Always("small", lambda s: s != 1)])
    assert [f.kind for f in explore(system).findings] == ["always"]


# ---------------------------------------------------------------- unrecoverable_states directly


def ints(values: Iterable[int]) -> array[int]:
    return array("i", values)


@pytest.mark.parametrize(("count", "edges", "goal", "cut", "stuck"), [
    (1, [], [], [], 0),  # one state, no goal
    (1, [], [0], [], -1),
    (3, [], [0, 1, 2], [], -1),
    (3, [(0, 1), (1, 2)], [2], [], -1),  # a chain into the goal
    (3, [(0, 1), (1, 2)], [1], [], 2),  # the goal is behind 2
    (4, [(0, 1), (1, 2), (2, 1)], [3], [], 0),  # a cycle that never meets the goal
    (3, [(0, 1), (1, 2), (2, 1)], [], [2], -1),  # a cut state rescues its ancestors
    (5, [(0, 1), (0, 2), (2, 3), (3, 2), (1, 4)], [4], [], 2),
    (5, [(1, 0), (2, 1), (3, 2), (4, 3)], [0], [], -1),  # predecessors found level by level
    (4, [(0, 0), (1, 1), (2, 2), (3, 3)], [2], [], 0),  # self-loops only
    (3, [(0, 1), (0, 1), (0, 1), (1, 2)], [2], [1], -1),  # parallel edges
])
def test_unrecoverable_states(count: int, edges: list[tuple[int, int]], goal: list[int], cut: list[int],
                              stuck: int) -> None:
    result = unrecoverable_states(count, ints(a for a, _ in edges), ints(b for _, b in edges), ints(goal), ints(cut))
    assert result == stuck


def test_unrecoverable_states_on_a_long_chain() -> None:
    # 10 000 states, each the predecessor of the next; the walk back takes one round per state
    n = 10_000
    assert unrecoverable_states(n, ints(range(n - 1)), ints(range(1, n)), ints([n - 1]), ints([])) == -1
    assert unrecoverable_states(n, ints(range(n - 1)), ints(range(1, n)), ints([n - 2]), ints([])) == n - 1


def test_unrecoverable_states_with_no_states() -> None:
    assert unrecoverable_states(0, ints([]), ints([]), ints([]), ints([])) == -1


# ---------------------------------------------------------------- random graphs against networkx


@st.composite
def random_cases(draw: st.DrawFn) -> tuple[int, list[Edge], list[int], set[int], set[int]]:
    n = draw(st.integers(1, 10))
    node = st.integers(0, n - 1)
    # mostly non-fault edges, a non-empty goal, and often a tree from state 0 down to every state, so
    # that unrecoverable states are found at every depth, not only among the initial states
    is_fault = st.sampled_from([False, False, False, True])
    tree: list[Edge] = []
    if draw(st.booleans()):
        tree = [(draw(st.integers(max(0, b - 3), b - 1)), b, draw(is_fault)) for b in range(1, n)]
    edges: list[Edge] = tree + draw(st.lists(st.tuples(node, node, is_fault), max_size=(1 if tree else 3) * n))
    init = [0] if tree else draw(st.lists(node, min_size=1, max_size=3))
    goal = draw(st.sets(node, min_size=1, max_size=max(1, n // 2)))
    cut = draw(st.sets(node, max_size=2))
    return n, edges, init, goal, cut


def bfs_order(system: Graph) -> list[Hashable]:
    """Textbook BFS discovery order: the oracle for discovery indices."""
    order = list(dict.fromkeys(system.init))
    seen, queue = set(order), deque(order)
    while queue:
        state = queue.popleft()
        if state in system.cut:
            continue
        for _, after in system.successors(state):
            if after not in seen:
                seen.add(after)
                order.append(after)
                queue.append(after)
    return order


@settings(max_examples=300, deadline=None, derandomize=True)
@given(random_cases())
def test_liveness_matches_a_networkx_oracle(case: tuple[int, list[Edge], list[int], set[int], set[int]]) -> None:
    n, edges, init, goal, cut = case
    discovered: list[Hashable] = []

    def record_state(state: Hashable) -> bool:
        discovered.append(state)
        return True

    record = Always("record", record_state)
    system = Graph(edges, init, lambda s: s in goal, cut=cut, extra=[record])
    result = explore(system)

    # reachable states: descendants of the initial states in the graph without the cut states' edges
    explored = nx.MultiDiGraph()
    explored.add_nodes_from(range(n))
    explored.add_edges_from((a, b) for a, b, _ in edges if a not in cut)
    reachable = set(init).union(*(nx.descendants(explored, i) for i in init))
    assert set(discovered) == reachable
    assert discovered == bfs_order(system)  # discovery index = BFS index
    assert result.stats.distinct == len(reachable)
    assert result.stats.cut == len(reachable & cut)
    assert result.stats.transitions == sum(1 for a, _, _ in edges if a in reachable and a not in cut)
    assert result.stats.complete

    # recoverable states: ancestors of a goal or cut state over reachable non-fault edges
    recovery = nx.DiGraph()
    recovery.add_nodes_from(reachable)
    recovery.add_edges_from((a, b) for a, b, f in edges if not f and a in reachable and a not in cut)
    safe = reachable & (goal | cut)
    can = safe.union(*(nx.ancestors(recovery, s) for s in safe))
    stuck = [s for s in discovered if s not in can]

    findings = [f for f in result.findings if f.kind == "liveness"]
    assert [f.kind for f in result.findings] == ["liveness"] * len(findings)
    if not stuck:
        event("every reachable state recovers")
        assert findings == []
        return
    (finding,) = findings
    event(f"unrecoverable state at depth {min(len(finding.path), 3)}{'+' * (len(finding.path) >= 3)}")
    assert finding.state_index == discovered.index(stuck[0])
    depth = min(nx.shortest_path_length(explored, i, stuck[0]) for i in init if nx.has_path(explored, i, stuck[0]))
    assert len(finding.path) == depth
    # the path is a real execution from one of the initial states, and ends at the stuck state
    assert any(_follows(system, i, finding.path) for i in init)
    if finding.path:
        assert finding.path[-1][1] == stuck[0]
    else:
        assert stuck[0] in init


def _follows(system: Graph, start: Hashable, path: list[tuple[Hashable, Hashable]]) -> bool:
    state = start
    for action, after in path:
        if (action, after) not in list(system.successors(state)):
            return False
        state = after
    return True
