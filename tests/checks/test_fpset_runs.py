"""Tests for the structure of checks/explore/fpset.py beyond the dict reference of test_fpset.py: the
bucketed cuckoo table as it grows, keys that all want the same buckets, keys whose mix or tag is
extreme, the stash, reading a fingerprint back from its index, and the bytes held.

White-box: ``invariants`` checks that every position is in exactly one place (one table slot or the
stash), in one of its key's two buckets, with its tag, and that buckets fill from their first slot.
Keys are built with a chosen mix by inverting the SplitMix64 finaliser, so a test can aim them at
given buckets whatever the table's size.
"""

from __future__ import annotations

import gc
import tracemalloc
from itertools import pairwise

import numpy as np
import pytest

import checks.explore.fpset as fpset_module
from checks.explore.fpset import BUCKET, EMPTY, GROWTH, MAX_LOAD, MIN_BUCKETS, FingerprintSet

_M1, _M2, _WORD = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 2**64
LO, HI = -(2**63), 2**63 - 1


def _unshift(value: int, shift: int) -> int:
    undone = value
    for _ in range(64 // shift + 1):
        undone = value ^ (undone >> shift)
    return undone


def key_with_mix(mixed: int) -> int:
    """The int64 fingerprint whose SplitMix64 mix is ``mixed`` (a 64-bit word)."""
    value = _unshift(mixed, 31) * pow(_M2, -1, _WORD) % _WORD
    value = _unshift(value, 27) * pow(_M1, -1, _WORD) % _WORD
    value = _unshift(value, 30)
    return value - _WORD if value >= 2**63 else value


def fps(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def invariants(fs: FingerprintSet) -> None:
    table = fs._table
    used = np.flatnonzero(table != EMPTY)
    positions = (table[used] & fs._position_mask).astype(np.int64)
    everywhere = np.concatenate((positions, fs._stash_positions))
    assert sorted(everywhere.tolist()) == list(range(fs.count))  # each position once, none lost
    mixed = fpset_module._mix(fs._fps[positions])
    homes = fs._homes(mixed)
    bucket = used // BUCKET
    assert np.all((homes[:, 0] == bucket) | (homes[:, 1] == bucket))
    assert np.array_equal(table[used] >> fs._position_bits, fs._tags(mixed))
    full = (table.reshape(-1, BUCKET) != EMPTY).astype(np.int8)
    assert np.all(np.diff(full, axis=1) <= 0)  # no used slot after a free one
    assert np.array_equal(fs._stash_fps, np.sort(fs._fps[fs._stash_positions]))
    assert fs.count <= MAX_LOAD * len(table)


def test_keys_built_by_their_mix_have_that_mix() -> None:
    for mixed in (0, 1, 2**64 - 1, 2**63, 0x0123456789ABCDEF):
        assert int(fpset_module._mix(fps([key_with_mix(mixed)]))[0]) == mixed


def test_growth_across_several_sizes_keeps_every_answer() -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(LO, HI, size=60_000, dtype=np.int64, endpoint=True)
    absent = rng.integers(LO, HI, size=2_000, dtype=np.int64, endpoint=True)
    fs = FingerprintSet()
    sizes = []
    for start in range(0, len(keys), 997):
        before = (len(fs._table), fs.lookup(keys[:start]), fs.lookup(absent))
        fs.add_new(keys[start:start + 997], start)
        if len(fs._table) != before[0]:  # grown: every earlier answer still holds
            sizes.append(len(fs._table))
            assert np.array_equal(fs.lookup(keys[:start]), before[1])
            assert np.array_equal(fs.lookup(absent), before[2])
            invariants(fs)
    assert len(sizes) >= 8 and all(a < b for a, b in pairwise(sizes))
    assert all(b <= a * GROWTH + BUCKET for a, b in pairwise(sizes) if a >= 10_000)  # one step a batch
    assert fs.lookup(keys).tolist() == list(range(len(keys)))
    assert (fs.lookup(absent) == -1).all()
    invariants(fs)


def test_a_batch_wanting_the_same_first_bucket_spreads_over_second_buckets() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([1]), 0)  # a table of MIN_BUCKETS buckets
    # the high half of the mix picks the first bucket, the low half the second
    batch = [key_with_mix((5 << 32) | (i << 24)) for i in range(1, 60)]
    fs.add_new(fps(batch), 1)
    assert fs.lookup(fps(batch)).tolist() == list(range(1, 60))
    assert len(fs._stash_fps) == 0  # one bucket took BUCKET of them, the rest went to their second
    invariants(fs)


def test_keys_wanting_the_same_two_buckets_overflow_into_the_stash_and_leave_it_as_the_table_grows() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([key_with_mix((50 << 58) | (50 << 26))]), 0)  # in bucket 50
    assert len(fs._table) == MIN_BUCKETS * BUCKET == 64 * 8
    # at 64 buckets every one of these keys has buckets 0 and 1; at more buckets they spread
    crowd = [key_with_mix(((i * 7919 % 2**26) << 32) | (2**26 + i * 104729 % 2**26)) for i in range(40)]
    fs.add_new(fps(crowd[:30]), 1)
    fs.add_new(fps(crowd[30:]), 31)
    assert len(fs._stash_fps) == 40 - 2 * BUCKET
    invariants(fs)
    assert fs.lookup(fps(crowd)).tolist() == list(range(1, 41))
    assert fs.nbytes() == fs._fps.nbytes + fs._table.nbytes + 16 * len(fs._stash_fps)
    rng = np.random.default_rng(11)
    more = rng.integers(LO, HI, size=50_000, dtype=np.int64, endpoint=True)
    for start in range(0, len(more), 5_000):
        fs.add_new(more[start:start + 5_000], 41 + start)
    assert len(fs._stash_fps) == 0
    invariants(fs)
    assert fs.lookup(fps(crowd)).tolist() == list(range(1, 41))
    assert fs.lookup(more).tolist() == list(range(41, 41 + len(more)))


def test_extreme_fingerprints_mixes_and_tags() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([7]), 0)
    ones = key_with_mix(2**64 - 1)  # its tag would be all ones, as in an empty entry
    special = [0, -1, LO, HI, LO + 1, HI - 1, ones, key_with_mix(2**63), key_with_mix(2**32 - 1)]
    assert len(set(special)) == len(special) and 7 not in special
    fs.add_new(fps(special), 1)
    assert fs.lookup(fps(special)).tolist() == list(range(1, len(special) + 1))
    others = [1, -2, 2**62, -(2**62), key_with_mix(2**64 - 2), key_with_mix(0xFFFFFFFF00000000)]
    assert fs.lookup(fps(others)).tolist() == [-1] * len(others)
    for index, key in enumerate(special, start=1):
        assert fs.fingerprint_of(index) == key
    invariants(fs)


def test_fingerprint_of_reads_back_every_index() -> None:
    rng = np.random.default_rng(5)
    keys = rng.integers(LO, HI, size=5_000, dtype=np.int64, endpoint=True)
    fs = FingerprintSet()
    for start in range(0, len(keys), 333):
        fs.add_new(keys[start:start + 333], start)
    assert [fs.fingerprint_of(i) for i in range(len(keys))] == keys.tolist()
    for missing in (-1, len(keys), len(keys) + 10**6):
        with pytest.raises(KeyError):
            fs.fingerprint_of(missing)


def test_indices_numbered_apart_from_positions() -> None:
    fs = FingerprintSet()
    fs.add_new(fps([30, -10, 20]), 100)
    fs.add_new(fps([HI, LO]), 103)  # continues the numbering
    fs.add_new(fps([0]), 7)  # a lower number
    fs.add_new(fps([5, 6]), 2**40)  # beyond int32
    assert fs.lookup(fps([30, -10, 20, HI, LO, 0, 5, 6, 1])).tolist() == \
        [100, 101, 102, 103, 104, 7, 2**40, 2**40 + 1, -1]
    assert [fs.fingerprint_of(i) for i in (100, 101, 102, 103, 104, 7, 2**40, 2**40 + 1)] == \
        [30, -10, 20, HI, LO, 0, 5, 6]
    for missing in (0, 6, 8, 99, 105, 2**40 + 2):
        with pytest.raises(KeyError):
            fs.fingerprint_of(missing)


def test_nbytes_is_what_the_arrays_hold_and_near_twelve_bytes_a_fingerprint() -> None:
    fs = FingerprintSet()
    assert fs.nbytes() == 0
    rng = np.random.default_rng(9)
    keys = rng.integers(LO, HI, size=300_000, dtype=np.int64, endpoint=True)
    per_fp = []
    for start in range(0, len(keys), 4096):
        fs.add_new(keys[start:start + 4096], start)
        held = fs._fps.nbytes + fs._table.nbytes + fs._stash_fps.nbytes + fs._stash_positions.nbytes
        assert fs.nbytes() == held
        if fs.count >= 20_000:
            per_fp.append(fs.nbytes() / fs.count)
    # 8 bytes a fingerprint (plus at most 1/16 slack) and 4 a slot, the table between MAX_LOAD / GROWTH
    # and MAX_LOAD full
    assert min(per_fp) >= 8 + 4 / MAX_LOAD
    assert max(per_fp) <= 8 * 17 / 16 + 4 * GROWTH / MAX_LOAD + 0.01


def test_nbytes_is_all_the_set_holds_and_growing_never_holds_two_tables() -> None:
    rng = np.random.default_rng(13)
    keys = rng.integers(LO, HI, size=1_250_000, dtype=np.int64, endpoint=True)
    grown = 0
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fs = FingerprintSet()
        for start in range(0, len(keys), 4096):
            table_before = fs._table.nbytes
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            fs.add_new(keys[start:start + 4096], start)
            peak = tracemalloc.get_traced_memory()[1]
            if fs._table.nbytes != table_before and table_before >= 1 << 22:
                grown += 1  # the old table was dropped before the new one was filled: only a chunk's
                # temporaries (a few per cent of the table) come on top of the new table's growth
                assert peak - before - (fs._table.nbytes - table_before) < 0.3 * fs._table.nbytes
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown >= 1
    assert fs.nbytes() <= held <= fs.nbytes() + 64 * 1024
