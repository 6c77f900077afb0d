"""``seqcheck check --swarm`` on a local[2] Spark session (one per module, as tests/fuzz/test_fuzz_spark.py).

Invariant tested: Spark only distributes the tasks (checks/swarm_job.py rule 1): the same seed gives
the same tasks, states, coverage and traces on Spark as in process (``--master none``), and the
trace found on Spark validates and is where ``seqcheck check`` writes the model's counterexample.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.check import trace_file
from checks.cli import MODELS_DIR, main
from checks.explore.trace import Trace, validate
from checks.fuzz.spark import session
from models.modelfile import load

pytestmark = pytest.mark.long  # starts Spark: run by .ci/run after the README's command

MASTER = "local[2]"
JGRP1873 = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
SAME = ("verdict", "matches", "seed", "tasks", "states_visited", "transitions", "distinct_states", "distinct_exact",
        "found")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    active, owned = session(MASTER, "seqcheck tests/cli swarm")
    yield active
    if owned:
        active.stop()


def report(capsys: pytest.CaptureFixture[str], master: str, traces: Path) -> dict[str, Any]:
    assert main(["check", "--swarm", str(JGRP1873), "--master", master, "--tasks", "5", "--task-states", "3000",
                 "--seed", "17", "--json", "--no-progress", "--trace-dir", str(traces)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    out: dict[str, Any] = json.loads(line)
    for entry in out["found"]:
        entry["path"] = str(Path(entry["path"]).relative_to(traces))
    out["per_task"] = [{k: v for k, v in t.items() if k not in ("cpu_seconds", "seconds")} for t in out["per_task"]]
    return out


def test_spark_runs_the_same_tasks_as_the_process(spark: Any, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    on_spark = report(capsys, MASTER, tmp_path / "spark")
    here = report(capsys, "none", tmp_path / "here")
    assert on_spark["master"] == MASTER and on_spark["cores"] == 2 and here["cores"] == 1
    assert {k: on_spark[k] for k in SAME} == {k: here[k] for k in SAME}
    assert on_spark["per_task"] == here["per_task"]
    model = load(JGRP1873)
    trace = Trace.load(trace_file(model, tmp_path / "spark"))
    assert trace.prop == "no_spurious_purge"
    validate(model.world, trace)
