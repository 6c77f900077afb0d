"""Wall and CPU seconds side by side: every time seqcheck prints gives both (issue 33), because
wall time alone misleads on a shared machine. ``Stopwatch`` measures this process (user and system
time of all its threads, ``time.process_time``: z3 and the checker run here); work done in child
processes adds their CPU itself (``checks.check.cpu_seconds``, the JGroups harness's ``/proc``).
"""

from __future__ import annotations

import time


class Stopwatch:
    """Wall and CPU seconds (this process's user and system time, ``time.process_time``) since it
    was made."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> tuple[float, float]:
        """(wall seconds, CPU seconds) since it was made."""
        return time.perf_counter() - self.wall, time.process_time() - self.cpu

    def figures(self, count: float, unit: str) -> dict[str, float]:
        """``seconds``, ``cpu_seconds``, ``<unit>_per_s`` (wall) and ``cpu_<unit>_per_s``."""
        wall, cpu = self.elapsed()
        return {"seconds": wall, "cpu_seconds": cpu, f"{unit}_per_s": count / max(wall, 1e-9),
                f"cpu_{unit}_per_s": count / max(cpu, 1e-9)}
