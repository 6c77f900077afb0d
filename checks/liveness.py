"""Liveness on the explored graph: which states can no longer reach a goal without faults.

The checker records, for every expanded state, its edges through non-fault actions, and which
states satisfy each liveness goal. A state *can recover* if some path of such edges leads from it
to a goal state. Computed backwards: start from the goal states (and the cut states, whose
continuations were not explored, so they get the benefit of the doubt), and walk edges in reverse.
Every state left over is a counterexample; BFS numbering makes the lowest-numbered one a state at
minimal depth.

The reverse graph is built once for all liveness properties (``RecoveryGraph``), from edges given
as (source, target) arrays or, as the checker records them, as a count of edges per source in
source order plus the targets (compressed rows). Building it sorts one int64 per edge in place
(target in the high half, source in the low half), then keeps one int32 per edge and per state.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]


class RecoveryGraph:
    """The recovery edges of ``count`` states, reversed: for each state, its predecessors."""

    def __init__(self, count: int, packed: npt.NDArray[np.int64]) -> None:
        """``packed``: one ``target << 32 | source`` per edge, in any order (sorted here, in place)."""
        self.count = count
        packed.sort()
        halves = packed.view(np.int32)
        low = 0 if sys.byteorder == "little" else 1
        self.predecessors = halves[low::2].copy()  # sources, grouped by target
        per_target = np.bincount(halves[1 - low::2], minlength=count)
        self.starts = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(per_target, out=self.starts[1:])

    @classmethod
    def from_edges(cls, count: int, sources: Sequence[int] | array[int], targets: Sequence[int] | array[int]
                   ) -> RecoveryGraph:
        packed = np.asarray(targets, dtype=np.int64) << 32
        packed |= np.asarray(sources, dtype=np.int64)
        return cls(count, packed)

    @classmethod
    def from_rows(cls, count: int, per_source: array[int], targets: array[int]) -> RecoveryGraph:
        """``per_source[i]``: how many edges leave state i; ``targets``: their targets, by source."""
        packed = np.frombuffer(targets, dtype=np.int32).astype(np.int64)
        packed <<= 32
        packed |= np.repeat(np.arange(len(per_source), dtype=np.int32), np.frombuffer(per_source, dtype=np.uint32))
        return cls(count, packed)

    def unrecoverable(self, goal: array[int], cut: array[int]) -> int:
        """The lowest index of a state that cannot reach ``goal`` (or a cut state), or -1."""
        can = np.zeros(self.count, dtype=bool)
        can[np.frombuffer(goal, dtype=np.int32)] = True
        can[np.frombuffer(cut, dtype=np.int32)] = True
        starts, predecessors = self.starts, self.predecessors
        frontier: Ints = np.flatnonzero(can)
        while len(frontier):
            firsts, ends = starts[frontier], starts[frontier + 1]
            lengths = ends - firsts
            total = int(lengths.sum())
            if total == 0:
                break
            offsets = np.repeat(firsts - np.cumsum(lengths) + lengths, lengths)
            preds = predecessors[offsets + np.arange(total)]
            frontier = np.unique(preds[~can[preds]]).astype(np.int64)
            can[frontier] = True
        stuck = np.flatnonzero(~can)
        return int(stuck[0]) if len(stuck) else -1


def unrecoverable_states(count: int, edges_from: array[int], edges_to: array[int], goal: array[int],
                         cut: array[int]) -> int:
    """The lowest index of a state that cannot reach ``goal`` through the edges, or -1."""
    return RecoveryGraph.from_edges(count, edges_from, edges_to).unrecoverable(goal, cut)
