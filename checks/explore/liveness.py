"""Liveness on the explored graph: which states can no longer reach a goal without faults.

The checker records, for every expanded state, its edges through non-fault actions, and which
states satisfy each liveness goal. A state *can recover* if some path of such edges leads from it
to a goal state. Computed as a fixpoint: start from the goal states (and the cut states, whose
continuations were not explored, so they get the benefit of the doubt), and add every state with
an edge to a state already in. Every state left over is a counterexample; BFS numbering makes the
lowest-numbered one a state at minimal depth. Where a property holds and there are cut states,
the checker closes once more without them (``recoverable(goal, no cuts)``) and reports how many
states reach the goal only through a cut state: the verdict's dependence on the benefit of the
doubt, which a larger ``max_in_flight`` would settle.

Two ways to compute it:
- ``RecoveryGraph``: the reverse graph, built from (source, target) arrays by sorting one int64
  per edge (target in the high half, source in the low half), then a backward breadth-first search.
  Linear time, but 12 bytes per edge at its peak.
- ``RecoveryRows``: the edges as the checker records them, a count per source (sources in index
  order) plus the targets, 4 bytes per edge. "Can recover" is propagated a round at a time over
  all edges (a state can recover if one of its successors can), which needs at most one round per
  step of the longest shortest recovery path: few in practice. After ``FORWARD_ROUNDS`` rounds without reaching
  the fixpoint, the edges of the states still undecided go to a ``RecoveryGraph``.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator, Sequence

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
    def from_edges(cls, count: int, sources: Sequence[int] | array[int] | npt.NDArray[np.int32],
                   targets: Sequence[int] | array[int] | npt.NDArray[np.int32]) -> RecoveryGraph:
        packed = np.asarray(targets, dtype=np.int64) << 32
        packed |= np.asarray(sources, dtype=np.int64)
        return cls(count, packed)

    def unrecoverable(self, goal: array[int], cut: array[int]) -> int:
        """The lowest index of a state that cannot reach ``goal`` (or a cut state), or -1."""
        return _lowest_false(self.close(_initial(self.count, goal, cut)))

    def close(self, can: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """``can`` (updated in place) with every state that has an edge to a state in it, repeatedly."""
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
        return can


FORWARD_ROUNDS = 64
ROWS_BLOCK = 1 << 16  # states per block of a forward round


class RecoveryRows:
    """Recovery edges as compressed rows: ``per_source[i]`` edges leave state i, and ``targets``
    lists their targets, source by source. Sources past the end of ``per_source`` have none.

    Nothing the size of the graph is allocated: each round walks the states a block at a time,
    deriving the block's sources and where their targets start from the counts."""

    def __init__(self, count: int, per_source: array[int], targets: array[int]) -> None:
        self.count = count
        self.counts = np.frombuffer(per_source, dtype=np.uint16 if per_source.typecode == "H" else np.uint32)
        self.targets = np.frombuffer(targets, dtype=np.int32)
        if int(self.counts.sum(dtype=np.int64)) != len(self.targets):
            raise ValueError("per_source does not add up to the number of targets")

    def _blocks(self) -> Iterator[tuple[Ints, Ints, Ints, int, int]]:
        """Per block of states: its sources, their edge counts, where their targets start (from
        the block's first edge), and the block's edges ``lo .. hi - 1``."""
        edge = 0
        for first in range(0, len(self.counts), ROWS_BLOCK):
            block = self.counts[first:first + ROWS_BLOCK]
            sources = np.flatnonzero(block)
            sizes = block[sources].astype(np.int64)
            starts = np.cumsum(sizes)
            starts -= sizes
            total = int(sizes.sum())
            if total:
                yield sources + first, sizes, starts, edge, edge + total
            edge += total

    def unrecoverable(self, goal: array[int], cut: array[int], rounds: int = FORWARD_ROUNDS) -> int:
        """The lowest index of a state that cannot reach ``goal`` (or a cut state), or -1."""
        return _lowest_false(self.recoverable(goal, cut, rounds))

    def recoverable(self, goal: array[int], cut: array[int], rounds: int = FORWARD_ROUNDS) -> npt.NDArray[np.bool_]:
        """Per state: can it reach ``goal`` (or a cut state)?"""
        can = _initial(self.count, goal, cut)
        for _ in range(rounds):
            changed = False
            for sources, _sizes, starts, lo, hi in self._blocks():
                reached = np.logical_or.reduceat(can[self.targets[lo:hi]], starts)
                reached &= ~can[sources]
                if reached.any():
                    can[sources[reached]] = True
                    changed = True
            if not changed:
                return can
        return self._rest(can)

    def _rest(self, can: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Finish with a backward search over the edges of the states not decided yet."""
        sources_of, targets_of = [], []
        for sources, sizes, _starts, lo, hi in self._blocks():
            undecided = ~can[sources]
            sources_of.append(np.repeat(sources[undecided], sizes[undecided]).astype(np.int32))
            targets_of.append(self.targets[lo:hi][np.repeat(undecided, sizes)])
        if not sources_of:
            return can
        graph = RecoveryGraph.from_edges(self.count, np.concatenate(sources_of), np.concatenate(targets_of))
        return graph.close(can)


def _initial(count: int, goal: array[int], cut: array[int]) -> npt.NDArray[np.bool_]:
    can = np.zeros(count, dtype=bool)
    can[np.frombuffer(goal, dtype=np.int32)] = True
    can[np.frombuffer(cut, dtype=np.int32)] = True
    return can


def _lowest_false(can: npt.NDArray[np.bool_]) -> int:
    stuck = np.flatnonzero(~can)
    return int(stuck[0]) if len(stuck) else -1


def unrecoverable_states(count: int, edges_from: array[int], edges_to: array[int], goal: array[int],
                         cut: array[int]) -> int:
    """The lowest index of a state that cannot reach ``goal`` through the edges, or -1."""
    return RecoveryGraph.from_edges(count, edges_from, edges_to).unrecoverable(goal, cut)
