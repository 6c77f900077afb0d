"""The fingerprint set's lookup and insert cost per fingerprint as it grows, against sorted runs.

``checks/explore/fpset.py::FingerprintSet`` (an open-addressing hash table) is measured next to
``SortedRunsBaseline``, a copy of the sorted-run set it replaced (sorted runs merged like a
log-structured merge tree, looked up with ``searchsorted``), in the same process and the same run.

Both sets are filled side by side, in batches of ``batch`` distinct random int64 fingerprints from a
seeded generator, numbered as the checker numbers states. At each size of ``sizes`` the fill stops
and, for each set, the median over ``REPEAT`` batches of the cost per fingerprint is taken of:

- ``absent_ns``: looking up a batch of fingerprints that are not in the set;
- ``present_ns``: looking up a batch of fingerprints drawn from those in the set;
- ``insert_ns``: adding a batch of new fingerprints (which then stay in the set);

the query batches are sorted and distinct, as ``checks/explore/search.py`` passes them. Also
reported: ``fill_ns``, the cost per fingerprint of the whole fill so far (which includes the hash
table's doublings and the runs' merges, which a median of single inserts hides), ``bytes_per_fp``
(``nbytes() / count``) and, per size, the ratios new / old. Every cost is CPU time
(``time.process_time_ns``: this process's), so a busy machine does not change the figures.

Run as ``python -m checks.bench.fpset SIZE [SIZE ...]``; prints one JSON line.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from checks.explore.fpset import FingerprintSet

Fingerprints = npt.NDArray[np.int64]
Indices = npt.NDArray[np.int64]
Run = tuple[Fingerprints, npt.NDArray[np.uint32]]

REPEAT = 9  # batches measured per figure; the median is reported
MAX_RUN = 1 << 19  # the baseline's runs at least this long are not merged any more


class FingerprintStore(Protocol):
    @property
    def count(self) -> int: ...

    def lookup(self, fingerprints: Fingerprints) -> Indices: ...

    def add_new(self, fingerprints: Fingerprints, first_index: int) -> None: ...

    def nbytes(self) -> int: ...


class SortedRunsBaseline:
    """The fingerprint set before the hash table: sorted runs, merged like an LSM tree."""

    def __init__(self) -> None:
        self._runs: list[Run] = []
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def lookup(self, fingerprints: Fingerprints) -> Indices:
        """The index of each fingerprint, or -1 where it is not in the set."""
        found = np.full(len(fingerprints), -1, dtype=np.int64)
        pending: npt.NDArray[np.int64] | None = None  # positions not found yet; None = all
        for keys, values in reversed(self._runs):
            queries = fingerprints if pending is None else fingerprints[pending]
            positions = np.searchsorted(keys, queries)
            np.minimum(positions, len(keys) - 1, out=positions)
            hit = keys[positions] == queries
            where = np.arange(len(fingerprints)) if pending is None else pending
            found[where[hit]] = values[positions[hit]]
            pending = where[~hit]
            if len(pending) == 0:
                break
        return found

    def add_new(self, fingerprints: Fingerprints, first_index: int) -> None:
        """Add distinct fingerprints (none already present), numbered from ``first_index`` on."""
        if len(fingerprints) == 0:
            return
        order = np.argsort(fingerprints, kind="stable")
        keys = fingerprints[order]
        values = (order + first_index).astype(np.uint32)
        self._runs.append((keys, values))
        self._count += len(keys)
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= 2 * len(self._runs[-1][0]) \
                and len(self._runs[-2][0]) < MAX_RUN:
            newer, older = self._runs.pop(), self._runs.pop()
            self._runs.append(_merge(older, newer))

    def fingerprint_of(self, index: int) -> int:
        """The fingerprint stored with ``index`` (a linear scan: for rebuilding counterexamples)."""
        for keys, values in self._runs:
            at = np.flatnonzero(values == index)
            if len(at):
                return int(keys[at[0]])
        raise KeyError(index)

    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self._runs)


def _merge(a: Run, b: Run) -> Run:
    """Two sorted runs with no key in common as one sorted run."""
    if len(a[0]) < len(b[0]):
        a, b = b, a
    total = len(a[0]) + len(b[0])
    at = np.searchsorted(a[0], b[0])
    at += np.arange(len(b[0]))
    keys = np.empty(total, dtype=np.int64)
    values = np.empty(total, dtype=np.uint32)
    rest = np.ones(total, dtype=bool)
    rest[at] = False
    keys[at], values[at] = b
    keys[rest], values[rest] = a
    return keys, values


def distinct_fingerprints(count: int, rng: np.random.Generator) -> Fingerprints:
    """``count`` distinct random int64 fingerprints, in random order."""
    keys = rng.integers(-(2**63), 2**63 - 1, size=count, dtype=np.int64, endpoint=True)
    while True:
        ordered = np.sort(keys)
        repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        del ordered
        if len(repeated) == 0:
            return keys
        for value in repeated.tolist():  # keep the first occurrence, draw the others anew
            again = np.flatnonzero(keys == value)[1:]
            keys[again] = rng.integers(-(2**63), 2**63 - 1, size=len(again), dtype=np.int64, endpoint=True)


def _ns_per_fp(action: Callable[[], object], size: int) -> float:
    started = time.process_time_ns()
    action()
    return (time.process_time_ns() - started) / size


class _Filled:
    """One set being filled from the shared stream of fresh fingerprints."""

    def __init__(self, store: FingerprintStore) -> None:
        self.store = store
        self.fill_ns = 0.0  # total time spent in add_new

    def add(self, keys: Fingerprints) -> float:
        """Add ``keys``, numbered from the set's count on; the time it took in ns."""
        started = time.process_time_ns()
        self.store.add_new(keys, self.store.count)
        spent = time.process_time_ns() - started
        self.fill_ns += spent
        return spent


def _measure(filled: _Filled, stream: Fingerprints, absent: Fingerprints, batch: int,
             rng: np.random.Generator) -> dict[str, float]:
    """The median costs at the set's current size; inserts take the next fingerprints of ``stream``."""
    store = filled.store
    start = store.count
    absent_ns, present_ns, insert_ns = [], [], []
    for rep in range(REPEAT):
        queries = np.unique(absent[rep * batch:(rep + 1) * batch])
        absent_ns.append(_ns_per_fp(partial(store.lookup, queries), len(queries)))
        queries = np.unique(stream[rng.integers(0, store.count, size=batch)])
        present_ns.append(_ns_per_fp(partial(store.lookup, queries), len(queries)))
        fresh = stream[store.count:store.count + batch]
        insert_ns.append(filled.add(fresh) / len(fresh))
    assert store.count == start + REPEAT * batch
    return {"absent_ns": round(statistics.median(absent_ns), 1),
            "present_ns": round(statistics.median(present_ns), 1),
            "insert_ns": round(statistics.median(insert_ns), 1),
            "fill_ns": round(filled.fill_ns / store.count, 1),
            "bytes_per_fp": round(store.nbytes() / store.count, 2), "count": store.count}


def _check(filled: _Filled, stream: Fingerprints, absent: Fingerprints, rng: np.random.Generator) -> None:
    """A few lookups of known answers, so that a broken set cannot produce fast figures."""
    store = filled.store
    at = rng.integers(0, store.count, size=1000)
    assert store.lookup(stream[at]).tolist() == at.tolist()
    assert (store.lookup(absent[-1000:]) == -1).all()


def run_fpset_bench(sizes: list[int], batch: int = 16384, seed: int = 0) -> dict[str, Any]:
    """Lookup and insert cost per fingerprint at each size, the hash table against sorted runs."""
    sizes = sorted(sizes)
    rng = np.random.default_rng(seed)
    inserted_while_measuring = len(sizes) * REPEAT * batch
    keys = distinct_fingerprints(sizes[-1] + inserted_while_measuring + (REPEAT + 1) * batch, rng)
    stream, absent = keys[:sizes[-1] + inserted_while_measuring], keys[sizes[-1] + inserted_while_measuring:]
    sets = {"new": _Filled(FingerprintSet()), "old": _Filled(SortedRunsBaseline())}
    rows = []
    for size in sizes:
        for filled in sets.values():
            while filled.store.count < size:
                filled.add(stream[filled.store.count:min(filled.store.count + batch, size)])
        row: dict[str, Any] = {"size": size}
        for name, filled in sets.items():
            _check(filled, stream, absent, rng)
            row[name] = _measure(filled, stream, absent, batch, rng)
        row["ratio_new_old"] = {key: round(row["new"][key] / row["old"][key], 3)
                                for key in ("absent_ns", "present_ns", "insert_ns", "fill_ns", "bytes_per_fp")}
        rows.append(row)
    return {"bench": "fpset", "batch": batch, "seed": seed, "repeat": REPEAT, "rows": rows}


if __name__ == "__main__":
    print(json.dumps(run_fpset_bench([int(arg) for arg in sys.argv[1:]])))
