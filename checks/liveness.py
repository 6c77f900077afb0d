"""Liveness on the explored graph: which states can no longer reach a goal without faults.

The checker records, for every expanded state, its edges through non-fault actions, and which
states satisfy each liveness goal. A state *can recover* if some path of such edges leads from it
to a goal state. Computed backwards: start from the goal states (and the cut states, whose
continuations were not explored, so they get the benefit of the doubt), and walk edges in reverse.
Every state left over is a counterexample; BFS numbering makes the lowest-numbered one a state at
minimal depth.
"""

from __future__ import annotations

from array import array

import numpy as np


def unrecoverable_states(count: int, edges_from: array[int], edges_to: array[int], goal: array[int],
                         cut: array[int]) -> int:
    """The lowest index of a state that cannot reach ``goal`` through the edges, or -1."""
    can = np.zeros(count, dtype=bool)
    can[np.frombuffer(goal, dtype=np.int32)] = True
    can[np.frombuffer(cut, dtype=np.int32)] = True
    sources = np.frombuffer(edges_from, dtype=np.int32)
    targets = np.frombuffer(edges_to, dtype=np.int32)
    order = np.argsort(targets, kind="stable")
    by_target, predecessor = targets[order], sources[order]
    starts = np.searchsorted(by_target, np.arange(count), side="left")
    ends = np.searchsorted(by_target, np.arange(count), side="right")
    frontier = np.flatnonzero(can)
    while len(frontier):
        lengths = ends[frontier] - starts[frontier]
        total = int(lengths.sum())
        if total == 0:
            break
        firsts = np.repeat(starts[frontier] - np.cumsum(lengths) + lengths, lengths)
        preds = predecessor[firsts + np.arange(total)]
        preds = np.unique(preds[~can[preds]]).astype(np.int64)
        can[preds] = True
        frontier = preds  # type: ignore[assignment]
    stuck = np.flatnonzero(~can)
    return int(stuck[0]) if len(stuck) else -1
