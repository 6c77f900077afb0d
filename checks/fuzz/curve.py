"""Coverage against schedules: how many distinct states the first ``n`` runs of a fuzz job visited.

It owns the curve's arithmetic, shared by the in-process and the Spark aggregates so that both give
the same numbers: every fingerprint is credited to the first run (lowest seed) that visited it;
run ``i`` of a job is seed ``first_seed + i``; the curve has ``points`` checkpoints, checkpoint
``j`` (1-based) after ``ceil(j * runs / points)`` runs, counting the fingerprints whose first run
lies below it. A fingerprint first met by run ``i`` is therefore counted from bucket
``i * points // runs`` on, which is what the Spark query groups by. The counts are exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CURVE_POINTS = 60  # checkpoints of the curve (fewer for jobs of fewer runs)


def points_for(runs: int) -> int:
    return max(1, min(CURVE_POINTS, runs))


def first_runs(fingerprints: np.ndarray, run_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each distinct fingerprint once, with the lowest run index that visited it."""
    if fingerprints.size == 0:
        return fingerprints, run_index
    order = np.lexsort((run_index, fingerprints))  # by fingerprint, then run
    fps, idx = fingerprints[order], run_index[order]
    keep = np.ones(fps.size, dtype=bool)
    keep[1:] = fps[1:] != fps[:-1]
    return fps[keep], idx[keep]


def curve_from_first_runs(first: np.ndarray, runs: int) -> list[tuple[int, int]]:
    """The curve from every distinct fingerprint's first run index (0-based, below ``runs``)."""
    points = points_for(runs)
    buckets = np.bincount((first.astype(np.int64) * points) // runs, minlength=points) if first.size else \
        np.zeros(points, dtype=np.int64)
    return curve_from_buckets([int(n) for n in buckets[:points]], runs)


def curve_from_buckets(buckets: Sequence[int], runs: int) -> list[tuple[int, int]]:
    """The curve from the number of fingerprints first met in each bucket (``len(buckets)`` points)."""
    points, total, curve = len(buckets), 0, []
    for j, count in enumerate(buckets, start=1):
        total += count
        curve.append((-(-j * runs // points), total))
    return curve
