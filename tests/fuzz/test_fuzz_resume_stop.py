"""``seqcheck fuzz --resume`` after a real stop: the command is killed (its process group, JVM
included) once its first segment is recorded, and ``--resume`` finishes the job.

Invariant tested: after the kill and the resume, the job's totals (runs, steps, actions of each
kind) equal those of the runs re-executed locally, one per seed, and the resumed report counts the
runs done before the kill. (The ledger's cases, without a process to kill, are in ``test_fuzz_spark.py``.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR
from checks.fuzz.coverage import KINDS
from checks.fuzz.run import FuzzPlan, Runner

pytestmark = pytest.mark.long  # starts Spark: run by .ci/run after the README's command

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
RUNS, STEPS = 480, 40
COMMAND = [sys.executable, "-m", "checks.cli", "fuzz", str(FUZZ), "--runs", str(RUNS), "--steps", str(STEPS),
           "--partitions", "24", "--master", "local[1]", "--no-progress", "--shrink", "0"]


def finished_segments(out: Path) -> int:
    try:
        return len(json.loads((out / "job.json").read_text())["seconds"])
    except (OSError, ValueError):
        return 0


def test_killed_job_resumes_to_the_uninterrupted_rows(tmp_path: Path) -> None:
    out = tmp_path / "out"
    job = subprocess.Popen([*COMMAND, "--out", str(out)], start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=cpu_limit.limit_cpu(600))
    try:
        while finished_segments(out) == 0 and job.poll() is None:  # the job's work is bounded: no deadline
            time.sleep(0.2)
        assert job.poll() is None, "the job ended before it could be stopped (make it longer)"
        assert finished_segments(out) == 1
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    done = cpu_limit.run([*COMMAND, "--out", str(out), "--resume", "--json"], capture_output=True, text=True,
                         cpu_seconds=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["runs"] == RUNS and summary["resumed_runs"] == RUNS // 3  # 24 tasks: segments of 8
    runner = Runner(FuzzPlan(FUZZ.name, FUZZ.read_text(), STEPS), FUZZ)
    local = [runner.run(seed) for seed in range(RUNS)]
    assert summary["steps"] == sum(r.steps for r in local)  # each seed's row once: same runs, same steps
    assert summary["verdicts"] == {"pass": RUNS}
    assert summary["actions"] == {kind: sum(r.counts[i] for r in local) for i, kind in enumerate(KINDS)}
