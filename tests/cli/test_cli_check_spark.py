"""``seqcheck check --master local[2]``: the breadth-first search on Spark (``checks/sparkbfs``).

Invariants tested: on every shipped model (``models/`` but ``bench`` and ``fuzz``), the search on Spark
gives what one process gives with the same properties (liveness left out: ``--safety-only``) and no
partial-order reduction (the search on Spark reduces by symmetry only): on a
complete search the same states, transitions, levels, depth, cut states, orbits and verdict; on a safety
violation the same property, depth and trace length, with a trace that validates where ``seqcheck check``
writes it. A driver killed after some levels and started again with the same ``--checkpoint`` goes on
from the last level recorded and ends with the same result.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks import cpu_limit
from checks.check import SparkRun, check_model
from checks.cli import MODELS_DIR
from checks.cli_arguments import model_paths
from checks.explore.trace import Trace, validate
from checks.fuzz.spark import session
from checks.sparkbfs.search import STATE_FILE
from models.modelfile import load, load_all

pytestmark = pytest.mark.long  # starts Spark: run by .ci/run after the README's command

MASTER = "local[2]"
SHIPPED = model_paths([])
COUNTS = ("distinct", "transitions", "depth", "cut", "levels", "unreduced", "complete", "symmetry_group")
RESUMED = MODELS_DIR / "unicast3" / "basic-one-way.toml"  # 25 levels, 13,205 states


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    active, owned = session(MASTER, "seqcheck tests/cli check --master")
    yield active
    if owned:
        active.stop()


# The long phase of .ci/run runs these (each protocol, safety violations, symmetry in both worlds, a
# side-by-side file, messages to self); every other shipped model is marked slow: about a minute each on
# 2 cores, two hours for all of them (run them with ``pytest -m slow tests/cli/test_cli_check_spark.py``).
REPRESENTATIVE = {"unicast3/jgrp1873-no-timestamps.toml", "unicast3/self-jgrp1548.toml",
                  "unicast2/scenario-7-disjoint-merge.toml", "nakack2/jgrp1539.toml", "nakack4/jgrp2873.toml",
                  "unicast4/jgrp2852.toml", "side-by-side/silent-member.toml",
                  "nakack4/three-members-loss.toml"}  # the multicast world's symmetry (B and C alike)


def _case(path: Path) -> Any:
    name = str(path.relative_to(MODELS_DIR))
    return pytest.param(path, id=name, marks=() if name in REPRESENTATIVE else (pytest.mark.slow,))


def test_the_representative_models_are_shipped() -> None:
    assert {str(p.relative_to(MODELS_DIR)) for p in SHIPPED} >= REPRESENTATIVE


@pytest.mark.parametrize("path", [_case(p) for p in SHIPPED])
def test_every_shipped_model_as_in_one_process(spark: Any, path: Path, tmp_path: Path) -> None:
    for model in load_all(path):
        here = check_model(model, trace_dir=tmp_path / "here", safety_only=True, partial_order=False)  # as on Spark
        there = check_model(model, trace_dir=tmp_path / "spark", safety_only=True, spark=SparkRun(spark))
        assert (there.verdict, there.matches) == (here.verdict, here.matches), model.protocol
        finding = here.result.first()
        s, t = here.result.stats, there.result.stats
        if finding is not None and finding.kind in ("always", "deadlock"):  # stopped in a level: depth and trace
            assert t.depth == s.depth and there.trace is not None and here.trace is not None
            assert len(there.trace.actions) == len(here.trace.actions)
            assert there.trace_path is not None
            validate(model.world, Trace.load(there.trace_path))
        else:
            assert {k: getattr(t, k) for k in COUNTS} == {k: getattr(s, k) for k in COUNTS}, model.protocol


def test_max_states_stops_the_search_incomplete(spark: Any) -> None:
    """The level that passes max_states keeps its smallest fingerprints up to it, is checked, not expanded."""
    model = load(RESUMED)  # levels 1, 1, 5, 15, 49, 126, 247, 375, ...: 819 states to depth 7
    here = check_model(model, trace_dir=None, safety_only=True, max_states=600)
    there = check_model(model, trace_dir=None, safety_only=True, max_states=600, spark=SparkRun(spark))
    assert here.verdict == there.verdict == "incomplete"
    s = there.result.stats
    assert (s.distinct, s.stopped_by, s.complete, s.depth) == (600, "max_states", False, 7)
    assert s.levels[:-1] == here.result.stats.levels[:7] and s.levels[-1] == 600 - 444


def _command(checkpoint: Path, traces: Path) -> list[str]:
    return [sys.executable, "-m", "checks.cli", "check", str(RESUMED), "--master", MASTER, "--safety-only", "--json",
            "--checkpoint", str(checkpoint), "--trace-dir", str(traces)]


def _levels_done(checkpoint: Path) -> int:
    for state in checkpoint.glob(f"*/{STATE_FILE}"):
        try:
            return int(json.loads(state.read_text())["visited"])
        except (OSError, ValueError, KeyError):
            return -1
    return -1


def test_a_killed_driver_resumes_from_its_last_level(tmp_path: Path) -> None:
    checkpoint, traces = tmp_path / "checkpoint", tmp_path / "traces"
    driver = subprocess.Popen(_command(checkpoint, traces), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + cpu_limit.HANG_GUARD
        while _levels_done(checkpoint) < 4 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert driver.poll() is None, "the search ended before it could be killed"
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver, its JVM and the Python workers: its own group
        driver.wait()
    killed_after = _levels_done(checkpoint)
    assert 4 <= killed_after < 25
    done = cpu_limit.run(_command(checkpoint, traces), capture_output=True, text=True, cpu_seconds=900)
    assert done.returncode == 0, done.stderr[-3000:]
    resumed = json.loads(done.stdout)
    assert resumed["spark"]["resumed_from"] == [killed_after + 1]
    here = check_model(load(RESUMED), trace_dir=None, safety_only=True).to_json()
    same = ("verdict", "matches", "states", "transitions", "depth", "cut", "levels", "unreduced_states")
    assert {k: resumed[k] for k in same} == {k: here[k] for k in same}
