"""A compact set of 64-bit state fingerprints, each mapped to the state's discovery index.

The checker inserts fingerprints a batch at a time (one batch per chunk of the BFS frontier), so the
set is built for batches: it is a few sorted numpy runs (fingerprints, with the index of each), and
a batch is looked up in every run with a vectorised binary search, then stored as a new run. Runs
of similar size are merged (as in a log-structured merge tree), so there are O(log n) of them and
each fingerprint is copied O(log n) times. Memory: 8 bytes per fingerprint plus 4 per index, with
transient copies during a merge.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Fingerprints = npt.NDArray[np.int64]
Indices = npt.NDArray[np.int64]


class FingerprintSet:
    """Fingerprint -> discovery index, for batches."""

    def __init__(self) -> None:
        self._runs: list[tuple[Fingerprints, npt.NDArray[np.uint32]]] = []
        self._count = 0

    @property
    def count(self) -> int:
        return self._count

    def lookup(self, fingerprints: Fingerprints) -> Indices:
        """The index of each fingerprint, or -1 where it is not in the set."""
        found = np.full(len(fingerprints), -1, dtype=np.int64)
        for keys, values in self._runs:
            positions = np.searchsorted(keys, fingerprints)
            positions[positions == len(keys)] = 0
            hit = keys[positions] == fingerprints
            found[hit] = values[positions[hit]]
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
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= 2 * len(self._runs[-1][0]):
            (k2, v2), (k1, v1) = self._runs.pop(), self._runs.pop()
            keys = np.concatenate((k1, k2))
            order = np.argsort(keys, kind="stable")
            self._runs.append((keys[order], np.concatenate((v1, v2))[order]))

    def nbytes(self) -> int:
        return sum(k.nbytes + v.nbytes for k, v in self._runs)
