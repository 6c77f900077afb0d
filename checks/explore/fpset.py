"""A compact set of 64-bit state fingerprints, each mapped to the state's discovery index.

The checker inserts fingerprints a batch at a time (one batch per chunk of the BFS frontier), so the
set is built for batches: it is a few sorted numpy runs (fingerprints, with the index of each), and
a batch is looked up in every run with a vectorised binary search, then stored as a new run. Runs
of similar size are merged (as in a log-structured merge tree), so there are O(log n) of them and
each fingerprint is copied O(log n) times. Memory: 8 bytes per fingerprint plus 4 per index.

Two choices keep the checker fast and its peak memory low on millions of states:
- a merge inserts the smaller run into the larger by position (``searchsorted``), so it allocates
  only the merged run (no argsort of a concatenation); and runs stop merging at ``MAX_RUN``
  fingerprints, so the largest transient copy is bounded;
- a batch is looked up newest run first, and only the fingerprints not found yet go on to older
  runs: in a breadth-first search most successors were found recently.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Fingerprints = npt.NDArray[np.int64]
Indices = npt.NDArray[np.int64]
Run = tuple[Fingerprints, npt.NDArray[np.uint32]]

MAX_RUN = 1 << 19  # runs at least this long are not merged any more


class FingerprintSet:
    """Fingerprint -> discovery index, for batches."""

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
