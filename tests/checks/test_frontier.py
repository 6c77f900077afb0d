"""Tests for checks/explore/frontier.py: a packed level gives back exactly the states a list level does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.explore.frontier import ListLevel, PackedLevel, new_level

INT32 = st.integers(0, 2**31 - 1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(width=st.integers(1, 6), data=st.data())
def test_packed_level_agrees_with_a_list(width: int, data: st.DataObject) -> None:
    batches = data.draw(st.lists(st.lists(st.tuples(*[INT32] * width), max_size=30), max_size=6))
    packed, reference = PackedLevel(width), ListLevel()
    for batch in batches:
        packed.extend(batch)
        reference.extend(batch)
    assert len(packed) == len(reference)
    for start, stop in [(0, len(reference)), (0, 1), (1, 3), (len(reference) - 2, len(reference) + 5), (5, 2)]:
        start = max(start, 0)
        assert packed.chunk(start, stop) == reference.chunk(start, stop)
        assert all(type(s) is tuple for s in packed.chunk(start, stop))


def test_extremes_of_the_int32_range_round_trip() -> None:
    level = PackedLevel(3)
    level.extend([(0, 2**31 - 1, 5), (-(2**31), 0, -1)])
    assert level.chunk(0, 2) == [(0, 2**31 - 1, 5), (-(2**31), 0, -1)]


@pytest.mark.parametrize("bad", [[(1, 2, 3)], [(1,)], [(1, 2), (3,)], [(2**31, 0)], [(1, "x")]])
def test_states_that_do_not_fit_are_refused_and_leave_the_level_unchanged(bad: list[tuple[object, ...]]) -> None:
    level = PackedLevel(2)
    level.extend([(7, 8)])
    with pytest.raises((ValueError, OverflowError, TypeError)):
        level.extend(bad)  # type: ignore[arg-type]
    assert len(level) == 1 and level.chunk(0, 5) == [(7, 8)]


def test_new_level_picks_the_representation() -> None:
    assert isinstance(new_level(None), ListLevel)
    assert isinstance(new_level(4), PackedLevel)
    with pytest.raises(ValueError):
        PackedLevel(0)
