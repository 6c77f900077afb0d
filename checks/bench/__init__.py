"""``seqcheck bench``: the checker against a textbook BFS (``checker``), the engines' messages per
second (``engine``), lockstep fuzz steps per second, in process and on Spark (``fuzz``), and the
visited-state set's lookup and insert cost from a million to tens of millions of fingerprints
against the sorted runs it replaced (``fpset``).

Every figure of time is given by wall clock and by CPU time (``checks/stopwatch.Stopwatch``); ratios are computed
from CPU time, which a busy machine does not change, and the runs compared are interleaved.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable


def median(runs: Iterable[dict[str, float]], key: str) -> float:
    return float(statistics.median(run[key] for run in runs))
