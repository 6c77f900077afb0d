"""``seqcheck fuzz --master spark://...`` and ``seqcheck check --master spark://...`` on a standalone
Spark cluster started on loopback.

Invariants tested: the same command that runs on ``local[*]`` runs on a standalone master with one
worker (both started from the installed pyspark distribution's ``bin/spark-class``, bound to
127.0.0.1): the fuzz results equal the runs' local re-execution seed for seed, and the exhaustive
search on the cluster (``checks/sparkbfs``) gives one process's counts, and its violation, trace and
depth. The master and the worker are stopped (their process groups) whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR
from checks.fuzz.run import FuzzPlan, Runner

pytestmark = pytest.mark.long  # starts Spark: run by .ci/run after the README's command

SPARK_HOME = Path(pyspark.__file__).resolve().parent
FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wait_for(condition: object, what: str, processes: list[subprocess.Popen[bytes]]) -> None:
    """Until ``condition()`` holds, while every process started is alive: a slow start is waited
    for, a dead one fails at once (and a hung one at the hang guard, which no start comes near)."""
    deadline = time.monotonic() + cpu_limit.HANG_GUARD
    while time.monotonic() < deadline:
        try:
            if condition():  # type: ignore[operator]
                return
        except (OSError, ValueError):  # not listening yet, or its UI answering HTML before its JSON page is up
            pass
        dead = [p.args for p in processes if p.poll() is not None]
        if dead:
            raise RuntimeError(f"{what} not ready: {dead} exited")
        time.sleep(0.5)
    raise TimeoutError(f"{what} not ready after {cpu_limit.HANG_GUARD:.0f} s (hung)")


def alive_workers(webui: int) -> int:
    with urllib.request.urlopen(f"http://{HOST}:{webui}/json/", timeout=5) as answer:
        return int(json.load(answer).get("aliveworkers", 0))


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": HOST, "SPARK_NO_DAEMONIZE": "1",
           "SPARK_LOG_DIR": str(tmp_path / "logs"), "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "PYSPARK_PYTHON": sys.executable}
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, webui = free_port(), free_port()
    started: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> None:
        log = (tmp_path / f"{name}.log").open("wb")
        started.append(subprocess.Popen([spark_class, *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True))

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", HOST, "--port", str(port),
              "--webui-port", str(webui))
        wait_for(lambda: alive_workers(webui) >= 0, "the master", started)
        start("worker", "org.apache.spark.deploy.worker.Worker", f"spark://{HOST}:{port}", "--host", HOST,
              "--port", str(free_port()), "--webui-port", str(free_port()), "--cores", "2", "--memory", "1g",
              "--work-dir", str(tmp_path / "work"))
        wait_for(lambda: alive_workers(webui) >= 1, "the worker", started)
        yield f"spark://{HOST}:{port}"
    finally:
        for process in reversed(started):
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a process we started and its group (spark-class runs java as a child)."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def test_fuzz_runs_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "fuzz", str(FUZZ), "--runs", "16", "--steps", "40",
                          "--seed", "500", "--master", cluster, "--out", str(out), "--no-progress", "--json"],
                         capture_output=True, text=True, cpu_seconds=600)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["master"] == cluster and summary["runs"] == 16 and summary["matches"]
    runner = Runner(FuzzPlan(FUZZ.name, FUZZ.read_text(), 40), FUZZ)
    local = [runner.run(seed) for seed in range(500, 516)]
    assert summary["steps"] == sum(r.steps for r in local)
    assert summary["actions"] == {k: sum(r.counts[i] for r in local) for i, k in enumerate(summary["actions"])}
    assert summary["phase_hits"] == [sum(col) for col in zip(*(r.phase_hits for r in local))]


CHECKED = (MODELS_DIR / "side-by-side" / "scenario-7.toml", MODELS_DIR / "unicast2" / "jgrp1874-whole-range.toml")
SAME = ("verdict", "matches", "states", "transitions", "depth", "cut", "levels", "unreduced_states", "symmetry_group")


def test_check_runs_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:
    """A passing side-by-side file with symmetry (orbit counts) and a safety violation (its trace)."""
    args = ["check", *map(str, CHECKED), "--safety-only", "--json", "--no-progress"]
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", *args, "--master", cluster, "--trace-dir",
                          str(tmp_path / "spark")], capture_output=True, text=True, cpu_seconds=900)
    assert done.returncode == 0, done.stderr[-3000:]
    here = cpu_limit.run([sys.executable, "-m", "checks.cli", *args, "--trace-dir", str(tmp_path / "here")],
                         capture_output=True, text=True, cpu_seconds=300)
    assert here.returncode == 0, here.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    alone = [json.loads(line) for line in here.stdout.splitlines()]
    assert [r["spark"]["master"] for r in rows] == [cluster] * 3
    for row, one in zip(rows, alone, strict=True):
        same = SAME if one["verdict"] == "pass" else ("verdict", "matches", "depth", "trace_length")
        assert {k: row[k] for k in same} == {k: one[k] for k in same}, row["protocol"]
    assert rows[-1]["verdict"] == "violation:sync_resend_bounded" and Path(rows[-1]["trace"]).exists()
