"""Tests for checks/explore/liveness.py::RecoveryRows (forward rounds, then a backward search) against
``unrecoverable_states`` and a plain fixpoint, on random graphs and on long chains."""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.explore.liveness import RecoveryRows, unrecoverable_states


def rows(count: int, edges: list[tuple[int, int]], typecode: str = "H") -> tuple[array[int], array[int]]:
    """Edges grouped by source in index order, as the checker records them."""
    per_source = array(typecode, [0] * count)
    targets = array("i")
    for source in range(count):
        mine = [b for a, b in edges if a == source]
        per_source[source] = len(mine)
        targets.extend(mine)
    return per_source, targets


def reference(count: int, edges: list[tuple[int, int]], goal: list[int], cut: list[int]) -> int:
    can = set(goal) | set(cut)
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            if b in can and a not in can:
                can.add(a)
                changed = True
    stuck = [s for s in range(count) if s not in can]
    return stuck[0] if stuck else -1


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[tuple[int, int]], list[int], list[int]]:
    count = draw(st.integers(0, 30))
    if count == 0:
        return 0, [], [], []
    node = st.integers(0, count - 1)
    edges = draw(st.lists(st.tuples(node, node), max_size=80))
    goal = draw(st.lists(node, max_size=5))
    cut = draw(st.lists(node, max_size=3))
    return count, edges, goal, cut


@settings(max_examples=300, deadline=None, derandomize=True)
@given(graph=graphs(), rounds=st.sampled_from([0, 1, 2, 64]), typecode=st.sampled_from(["H", "I"]))
def test_agrees_with_the_reference(graph: tuple[int, list[tuple[int, int]], list[int], list[int]], rounds: int,
                                   typecode: str) -> None:
    count, edges, goal, cut = graph
    per_source, targets = rows(count, edges, typecode)
    expected = reference(count, edges, goal, cut)
    got = RecoveryRows(count, per_source, targets).unrecoverable(array("i", goal), array("i", cut), rounds=rounds)
    assert got == expected
    assert unrecoverable_states(count, array("i", [a for a, _ in edges]), array("i", [b for _, b in edges]),
                                array("i", goal), array("i", cut)) == expected


@pytest.mark.parametrize("rounds", [3, 64, 10_000])
def test_a_long_chain_needs_the_backward_search_or_many_rounds(rounds: int) -> None:
    n = 3000
    per_source, targets = rows(n, [(i, i + 1) for i in range(n - 1)])
    graph = RecoveryRows(n, per_source, targets)
    assert graph.unrecoverable(array("i", [n - 1]), array("i"), rounds=rounds) == -1
    assert graph.unrecoverable(array("i", [n - 2]), array("i"), rounds=rounds) == n - 1
    assert graph.unrecoverable(array("i", [n // 2]), array("i"), rounds=rounds) == n // 2 + 1


def test_sources_past_the_recorded_counts_have_no_edges() -> None:
    per_source, targets = rows(2, [(0, 1)])
    assert RecoveryRows(5, per_source, targets).unrecoverable(array("i", [1]), array("i", [3])) == 2


def test_counts_that_do_not_add_up_are_refused() -> None:
    with pytest.raises(ValueError):
        RecoveryRows(3, array("H", [1, 2]), array("i", [1]))


def test_no_states() -> None:
    assert RecoveryRows(0, array("H"), array("i")).unrecoverable(array("i"), array("i")) == -1


def test_random_large_graph_agrees_with_unrecoverable_states() -> None:
    rng = np.random.default_rng(7)
    count = 5000
    sources = np.sort(rng.integers(0, count, 15000))
    targets = rng.integers(0, count, 15000)
    per_source = array("I", np.bincount(sources, minlength=count).astype(np.uint32).tobytes())
    goal = array("i", rng.integers(0, count, 50).astype(np.int32).tobytes())
    expected = unrecoverable_states(count, array("i", sources.astype(np.int32).tobytes()),
                                    array("i", targets.astype(np.int32).tobytes()), goal, array("i"))
    graph = RecoveryRows(count, per_source, array("i", targets.astype(np.int32).tobytes()))
    assert graph.unrecoverable(goal, array("i"), rounds=2) == expected
    assert graph.unrecoverable(goal, array("i")) == expected
