"""No verdict depends on machine load (issue 28, item 8): tests and checks bound runs by work
(states, steps, replays, CPU time), never by wall seconds.

The audit, kept: every test or check that sleeps, sets an alarm or compares wall time was read; what
remains is listed in ``ALLOWED`` with why. The rules, kept by reading the sources (``ast`` and text):

- no ``signal.alarm`` / ``SIGALRM`` / ``ITIMER_REAL`` outside ``checks/cpu_limit.py`` (whose
  wall-clock guard only ends a process that blocked, far beyond any honest run);
- no subprocess with a ``timeout=`` in the tests: ``checks.cpu_limit.run`` (RLIMIT_CPU in the child)
  or, for a process that must end by itself, ``cpu_limit.HANG_GUARD``;
- no assertion on elapsed wall time (``perf_counter() - started < ...``) in the tests, and no
  wall-clock deadline in a search or a shrink.

And the helper itself: a child that waits (sleeps) is not stopped, one that spins is; the same for
the in-process budget.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks import cpu_limit

ROOT = Path(__file__).resolve().parents[2]
ALARM = re.compile(r"signal\.alarm|SIGALRM|ITIMER_REAL")
WALL_ASSERT = re.compile(r"assert[^\n]*(perf_counter|monotonic|time\.time)\(\)\s*-")
TIMEOUT_ARG = re.compile(r"\btimeout=(?!cpu_limit\.HANG_GUARD)")
DEADLINE = re.compile(r"monotonic\(\)\s*\+|deadline")
# path -> why it may do what the rules forbid
ALLOWED = {
    "checks/cpu_limit.py": "the hang guard: ends a blocked process, no verdict on speed",
    "tests/project/test_work_bounds.py": "this file (its patterns and its own helper tests)",
    "tests/fuzz/test_fuzz_cluster.py": "a Spark master's web UI read over HTTP (timeout=5 per request) and the "
                                       "wait for a cluster that fails at once if its processes die (HANG_GUARD)",
    "checks/fuzz/spark.py": "a TCP connect to a spark:// master (network, not work: a usage error)",
    "checks/explore/workers.py": "joining worker processes at shutdown (cleanup, no verdict)",
}


def sources(*folders: str) -> list[tuple[str, str]]:
    found = []
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name not in ALLOWED:
                found.append((name, path.read_text()))
    return found


def test_no_alarm_decides_anything() -> None:
    assert [name for name, text in sources("tests", "checks", "models", "impl", "spec") if ALARM.search(text)] == []


def test_no_test_asserts_wall_time() -> None:
    assert [name for name, text in sources("tests") if WALL_ASSERT.search(text)] == []


def test_no_test_runs_a_subprocess_under_a_wall_clock_timeout() -> None:
    assert [name for name, text in sources("tests") if TIMEOUT_ARG.search(text)] == []


def test_no_search_or_shrink_has_a_wall_clock_deadline() -> None:
    assert [name for name, text in sources("checks/fuzz", "checks/explore", "checks/symbolic")
            if DEADLINE.search(text)] == []


def test_a_waiting_child_is_not_stopped_and_a_spinning_one_is() -> None:
    slept = cpu_limit.run([sys.executable, "-c", "import time; time.sleep(2.5)"], cpu_seconds=1)
    assert slept.returncode == 0  # 2.5 s of wall time, almost no CPU: a busy machine looks like this
    spun = cpu_limit.run([sys.executable, "-c", "while True: pass"], cpu_seconds=1)
    assert cpu_limit.exceeded(spun.returncode)


def test_the_in_process_budget_counts_cpu_not_waiting() -> None:
    with cpu_limit.cpu_budget(0.3):
        time.sleep(1.0)  # waiting costs no CPU
    with pytest.raises(cpu_limit.CpuBudgetExceeded), cpu_limit.cpu_budget(0.3):
        while True:
            pass


def test_a_blocked_block_ends_at_the_hang_guard() -> None:
    with pytest.raises(cpu_limit.Hung), cpu_limit.cpu_budget(10, hang_guard=0.5):
        subprocess.run([sys.executable, "-c", "import time; time.sleep(5)"], check=False)
