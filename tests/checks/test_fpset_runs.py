"""Tests for checks/explore/fpset.py beyond the dict reference of test_fpset.py: the cap on run length,
the merge by position, and reading a fingerprint back from its index."""

from __future__ import annotations

import numpy as np
import pytest

import checks.explore.fpset as fpset_module
from checks.explore.fpset import FingerprintSet


def test_runs_stop_merging_at_the_cap_and_lookups_still_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fpset_module, "MAX_RUN", 64)
    rng = np.random.default_rng(3)
    keys = rng.choice(np.arange(-(10**6), 10**6, dtype=np.int64), size=3000, replace=False)
    fs = FingerprintSet()
    reference: dict[int, int] = {}
    for start in range(0, len(keys), 37):
        batch = keys[start:start + 37]
        fs.add_new(batch, len(reference))
        reference.update({int(k): len(reference) + i for i, k in enumerate(batch.tolist())})
    assert all(len(k) < 2 * 64 + 37 for k, _ in fs._runs)
    probes = np.concatenate((keys, keys + 1, keys - 1))
    assert fs.lookup(probes).tolist() == [reference.get(int(k), -1) for k in probes]
    assert fs.nbytes() == 12 * len(reference)
    for run_keys, _ in fs._runs:
        assert np.all(np.diff(run_keys) > 0)


def test_fingerprint_of_reads_back_every_index() -> None:
    fs = FingerprintSet()
    fs.add_new(np.array([30, -10, 20], dtype=np.int64), 0)
    fs.add_new(np.array([2**63 - 1, -(2**63)], dtype=np.int64), 3)
    assert [fs.fingerprint_of(i) for i in range(5)] == [30, -10, 20, 2**63 - 1, -(2**63)]
    with pytest.raises(KeyError):
        fs.fingerprint_of(5)


def test_newest_run_first_lookup_finds_keys_in_every_run() -> None:
    fs = FingerprintSet()
    for i in range(10):  # ten runs of different sizes (1, 2, 4, ... keys), merged or not
        fs.add_new(np.arange(i * 1000, i * 1000 + 2**i, dtype=np.int64), 2**i - 1)
    queries = np.array([0, 1000, 1001, 9000, 9511, 9512, 5, -1], dtype=np.int64)
    assert fs.lookup(queries).tolist() == [0, 1, 2, 511, 1022, -1, -1, -1]
