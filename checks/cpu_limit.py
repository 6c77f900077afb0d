"""CPU-time limits: a run bounded by the work it does, never by how long it waits for a core.

A wall-clock timeout fails a healthy run on a busy machine (issue 28, item 8: a ``seqcheck check``
that takes 0.6 s alone passed a 30 s alarm at a load of 12-15). This module owns the two ways the
project bounds a run by CPU time instead:

- a child process: ``limit_cpu(seconds)`` is a ``preexec_fn`` setting RLIMIT_CPU in the child (the
  kernel sends SIGXCPU at the soft limit, SIGKILL a second later), and ``run`` wraps
  ``subprocess.run`` with it; ``exceeded(returncode)`` tells such a stop from any other exit;
- this process: ``cpu_budget(seconds)``, a context manager on ``ITIMER_PROF`` (the process's user +
  system time), raising ``CpuBudgetExceeded`` inside the block when it is spent.

A process that blocks without using CPU (reading a FIFO, say) is not stopped by either: ``run``'s
and ``cpu_budget``'s ``hang_guard`` (wall seconds, far above any honest run: ``HANG_GUARD``) is
there only so that such a hang ends, and says so; it is no verdict on speed.
"""

from __future__ import annotations

import resource
import signal
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

HANG_GUARD = 1_800.0  # wall seconds: only a process that stopped working (blocked) gets near it


class CpuBudgetExceeded(Exception):
    """The block of ``cpu_budget`` used its CPU seconds."""


class Hung(Exception):
    """The block of ``cpu_budget`` ran ``hang_guard`` wall seconds (blocked, not working)."""


def limit_cpu(seconds: float) -> Callable[[], None]:
    """A ``preexec_fn``: the child may use ``seconds`` of CPU (rounded up to whole seconds)."""
    soft = max(1, int(-(-seconds // 1)))

    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))

    return preexec


def exceeded(returncode: int) -> bool:
    """Did a child ``limit_cpu`` bounded end because it ran out of CPU time?"""
    return returncode in (-signal.SIGXCPU, -signal.SIGKILL)


def run(argv: Sequence[str], *, cpu_seconds: float, hang_guard: float = HANG_GUARD,
        **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(argv, ...)`` with the child limited to ``cpu_seconds`` of CPU. Raises
    ``subprocess.TimeoutExpired`` only past ``hang_guard`` wall seconds (a blocked child)."""
    return subprocess.run(argv, preexec_fn=limit_cpu(cpu_seconds), timeout=hang_guard, **kwargs)


@contextmanager
def cpu_budget(seconds: float, *, hang_guard: float = HANG_GUARD) -> Iterator[None]:
    """Run the block with at most ``seconds`` of this process's CPU time (``CpuBudgetExceeded``)
    and, for a block that blocks, ``hang_guard`` wall seconds (``Hung``). Main thread only."""
    def spent(signum: int, frame: Any) -> None:
        raise CpuBudgetExceeded

    def hung(signum: int, frame: Any) -> None:
        raise Hung

    previous = signal.signal(signal.SIGPROF, spent), signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, hang_guard)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
