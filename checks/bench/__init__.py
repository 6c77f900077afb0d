"""``seqcheck bench``: the checker against a textbook BFS (``checker``), the engines' messages per
second (``engine``), lockstep fuzz steps per second, in process and on Spark (``fuzz``), and the
visited-state set's lookup and insert cost from a million to tens of millions of fingerprints
against the sorted runs it replaced (``fpset``).

Every figure of time is given by wall clock and by CPU time (``Stopwatch``); ratios are computed
from CPU time, which a busy machine does not change, and the runs compared are interleaved.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable


class Stopwatch:
    """Wall and CPU seconds (this process's user and system time, ``time.process_time``) since it
    was made."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def figures(self, count: float, unit: str) -> dict[str, float]:
        """``seconds``, ``cpu_seconds``, ``<unit>_per_s`` (wall) and ``cpu_<unit>_per_s``."""
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        return {"seconds": wall, "cpu_seconds": cpu, f"{unit}_per_s": count / max(wall, 1e-9),
                f"cpu_{unit}_per_s": count / max(cpu, 1e-9)}


def median(runs: Iterable[dict[str, float]], key: str) -> float:
    return float(statistics.median(run[key] for run in runs))
