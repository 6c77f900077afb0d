"""Tests for checks/explore/fpset.py::FingerprintSet against a plain ``dict`` reference.

The set is a bucketed cuckoo hash table that grows as batches come, so the interesting cases are
many batches (which make it grow, and evict entries near its load bound), lookups just below, at
and above every stored key (keys that differ in one bit), and the extremes of the int64 range.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.explore.fpset import BUCKET, GROWTH, MAX_LOAD, MIN_BUCKETS, FingerprintSet

INT64 = st.integers(-(2**63), 2**63 - 1)


def fps(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def probes(reference: dict[int, int], extra: list[int]) -> list[int]:
    """Every stored key, its neighbours, the int64 extremes and ``extra``."""
    out = set(extra) | {-(2**63), 2**63 - 1, 0}
    for key in reference:
        out |= {key, max(key - 1, -(2**63)), min(key + 1, 2**63 - 1)}
    return sorted(out)


def assert_agrees(fs: FingerprintSet, reference: dict[int, int], extra: list[int]) -> None:
    keys = probes(reference, extra)
    found = fs.lookup(fps(keys))
    assert found.dtype == np.int64
    assert found.tolist() == [reference.get(k, -1) for k in keys]
    assert fs.count == len(reference)
    low, high = nbytes_range(fs.count)
    assert low <= fs.nbytes() <= high


def nbytes_range(count: int) -> tuple[float, float]:
    """The bytes the layout holds for ``count`` fingerprints: 8 each (plus at most 1/16 slack) and a
    4-byte slot each in a table at most ``MAX_LOAD`` full, grown by ``GROWTH`` at a time from
    ``MIN_BUCKETS`` buckets; nothing lost, nothing kept twice."""
    if count == 0:
        return 0, 0
    slots_at_most = max(MIN_BUCKETS * BUCKET, math.ceil(count * GROWTH / MAX_LOAD) + GROWTH * BUCKET)
    return 8 * count + 4 * count / MAX_LOAD, 8 * (count + count // 16 + 1) + 4 * slots_at_most


def add(fs: FingerprintSet, reference: dict[int, int], batch: list[int]) -> None:
    """Add the keys of ``batch`` that are new, in batch order, numbered like the checker does."""
    fresh = [k for k in dict.fromkeys(batch) if k not in reference]
    first = len(reference)
    fs.add_new(fps(fresh), first)
    for offset, key in enumerate(fresh):
        reference[key] = first + offset


def test_empty_set() -> None:
    fs = FingerprintSet()
    assert fs.count == 0 and fs.nbytes() == 0
    assert fs.lookup(fps([0, 1, -1])).tolist() == [-1, -1, -1]
    assert fs.lookup(fps([])).tolist() == []


def test_adding_an_empty_batch_changes_nothing() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([]), 0)
    fs.add_new(fps([5]), 0)
    fs.add_new(fps([]), 1)
    assert fs.count == 1
    assert fs.lookup(fps([5, 4, 6])).tolist() == [0, -1, -1]


def test_indices_follow_batch_order_not_key_order() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([30, 10, 20]), 7)
    assert fs.lookup(fps([10, 20, 30, 40])).tolist() == [8, 9, 7, -1]


def test_lookup_of_unsorted_queries_with_repeats() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([3, 1, 2]), 0)
    fs.add_new(fps([-5, 100]), 3)
    assert fs.lookup(fps([100, 1, 100, 7, -5, 1])).tolist() == [4, 1, 4, -1, 3, 1]


def test_int64_extremes() -> None:
    lo, hi = -(2**63), 2**63 - 1
    fs = FingerprintSet()
    fs.add_new(fps([hi]), 0)
    fs.add_new(fps([lo]), 1)
    fs.add_new(fps([0]), 2)
    assert fs.lookup(fps([lo, lo + 1, -1, 0, 1, hi - 1, hi])).tolist() == [1, -1, -1, 2, -1, -1, 0]


def test_many_batches() -> None:
    rng = np.random.default_rng(20240611)
    fs = FingerprintSet()
    reference: dict[int, int] = {}
    for round_ in range(400):
        size = int(rng.integers(0, 40))
        # half the keys random over int64, half clustered near earlier keys to hit neighbours
        batch = rng.integers(-(2**63), 2**63 - 1, size=size, dtype=np.int64).tolist()
        batch += [k + int(rng.integers(-2, 3)) for k in list(reference)[-size // 2:] if abs(k) < 2**62]
        add(fs, reference, batch)
        if round_ % 50 == 0:
            assert_agrees(fs, reference, batch)
    assert_agrees(fs, reference, [])
    assert len(reference) > 7000
    # the table stayed within its load bound and placed every key (white-box: the module's promise)
    assert fs.count <= MAX_LOAD * len(fs._table) and len(fs._stash_fps) == 0


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7])
def test_equal_size_batches(batch_size: int) -> None:
    fs = FingerprintSet()
    reference: dict[int, int] = {}
    for i in range(300):
        add(fs, reference, [(i * batch_size + j) * 7919 - 10**6 for j in range(batch_size)])
    assert_agrees(fs, reference, [])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(batches=st.lists(st.lists(INT64, max_size=20), max_size=40), extra=st.lists(INT64, max_size=10))
def test_agrees_with_a_dict(batches: list[list[int]], extra: list[int]) -> None:
    fs = FingerprintSet()
    reference: dict[int, int] = {}
    for batch in batches:
        add(fs, reference, batch)
        assert_agrees(fs, reference, extra + batch)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.integers(-50, 50), max_size=200), st.integers(1, 9), st.integers(0, 2**20))
def test_agrees_with_a_dict_on_a_small_key_range(keys: list[int], batch_size: int, first: int) -> None:
    # a small key range makes repeated keys and neighbouring keys common
    fs = FingerprintSet()
    reference: dict[int, int] = {}
    fresh_keys = list(dict.fromkeys(keys))
    for start in range(0, len(fresh_keys), batch_size):
        batch = fresh_keys[start:start + batch_size]
        fs.add_new(fps(batch), first + start)
        reference.update({k: first + start + i for i, k in enumerate(batch)})
    queries = list(range(-52, 53))
    assert fs.lookup(fps(queries)).tolist() == [reference.get(k, -1) for k in queries]
