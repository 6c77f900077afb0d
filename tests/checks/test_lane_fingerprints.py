"""``lane_fingerprints`` (checks/explore/fingerprint.py): the fingerprints of packed states are
fixed values, independent of the process and of how the states are handed over (tuples or the
rows of an array), and a state of the wrong width is refused."""

from __future__ import annotations

import random

import numpy as np
import pytest

from checks.explore.fingerprint import lane_fingerprints

# computed by the implementation that built the lanes with ``np.array(states)`` (before issue 31):
# a change of these values would change every stored fingerprint and swarm row of a packed model
PINNED = [
    ([(0,), (1,), (2**31 - 1,)], 1, [3803688792395291579, -6977822845260490347, 6040406647911695984]),
    ([(0, 0, 0, 0, 0), (1, 2, 3, 4, 5), (5, 4, 3, 2, 1)], 5,
     [488160379378388248, -1893545844620976292, -2472616911430063890]),
]


@pytest.mark.parametrize(("states", "width", "expected"), PINNED)
def test_pinned_values(states: list[tuple[int, ...]], width: int, expected: list[int]) -> None:
    assert lane_fingerprints(states, width).tolist() == expected
    assert lane_fingerprints(np.array(states, dtype=np.int64), width).tolist() == expected
    assert lane_fingerprints(np.array(states, dtype=np.int32), width).tolist() == expected


@pytest.mark.parametrize("width", [1, 2, 4, 7, 12])
def test_tuples_and_rows_agree_and_distinct_states_differ(width: int) -> None:
    rng = random.Random(width)
    states = list({tuple(rng.randrange(2**31) for _ in range(width)) for _ in range(3000)})
    fps = lane_fingerprints(states, width)
    assert fps.dtype == np.int64 and len(fps) == len(states)
    assert fps.tolist() == lane_fingerprints(np.array(states, dtype=np.int64), width).tolist()
    assert len(set(fps.tolist())) == len(states)
    assert lane_fingerprints(states[:1], width)[0] == fps[0]  # a state's value does not depend on its batch


def test_input_is_not_modified() -> None:
    rows = np.arange(12, dtype=np.int64).reshape(4, 3)
    lane_fingerprints(rows, 3)
    assert rows.tolist() == np.arange(12).reshape(4, 3).tolist()


def test_empty_batch() -> None:
    assert lane_fingerprints([], 3).tolist() == []


@pytest.mark.parametrize("states", [
    [(1, 2, 3), (1, 2)],  # too few ints in all
    [(1, 2, 3), (1, 2, 3, 4)],  # too many
    [(1, 2, 3, 4), (1, 2)],  # the right total, the wrong widths
])
def test_wrong_width_is_refused(states: list[tuple[int, ...]]) -> None:
    with pytest.raises(ValueError, match="exactly 3 ints"):
        lane_fingerprints(states, 3)
    with pytest.raises(ValueError, match="exactly 3 ints"):
        lane_fingerprints(np.zeros((2, 4), dtype=np.int64), 3)
