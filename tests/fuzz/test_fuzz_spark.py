"""``seqcheck fuzz`` on a local[2] Spark session (one per module: Spark takes ~10 s to start).

Invariants tested: the fixed fuzz model passes with every result row written; a planted defect
(the JGRP-1873 variant model with raised budgets, and an engine that drops XMIT_REQs) is found,
re-run from its seed, shrunk, saved, and the saved trace validates on the spec and on the engines
and is accepted by ``seqcheck show`` and ``seqcheck replay``; a run's row depends on its seed only
(1, 3 and 7 partitions, and the driver's own re-run, give identical rows; see also
``test_fuzz_equivalence.py`` for task cuts, task order and runner refresh in one process).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checks.cli import MODELS_DIR, main
from checks.conform.differential import replay_on_engines
from checks.explore.trace import Trace, validate
from checks.fuzz.command import FuzzOptions, run_fuzz
from checks.fuzz.coverage import CELLS, FAULTS, KINDS
from checks.fuzz.ledger import ResumeError
from checks.fuzz.run import FuzzPlan, Runner
from checks.fuzz.shrink import Shrunk
from checks.fuzz.spark import run_job, schema, session
from models.modelfile import load

pytestmark = pytest.mark.long  # starts Spark: run by .ci/run after the README's command

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
JGRP1873 = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
MASTER = "local[2]"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    active, owned = session(MASTER, "seqcheck tests/fuzz")
    yield active
    if owned:
        active.stop()


def fuzz(*args: str) -> int:
    return main(["fuzz", *args, "--master", MASTER, "--no-progress"])


def test_fixed_model_passes_and_every_run_is_a_row(spark: Any, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert fuzz(str(FUZZ), "--runs", "40", "--steps", "60", "--out", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "outcome   as expected (pass)" in out
    assert "never reached (" in out and "exhaustive count: unknown" in out
    rows = spark.read.parquet(str(tmp_path / "runs")).orderBy("seed").collect()
    assert [r["seed"] for r in rows] == list(range(40))
    assert {r["verdict"] for r in rows} == {"pass"}
    for r in rows:
        assert 0 < r["steps"] <= 60 and r["steps"] == sum(r[f"n_{k}"] for k in KINDS)
        assert len(r["fingerprints"]) >= 2 and r["fingerprints"] == sorted(set(r["fingerprints"]))
        assert len(r["phase_hits"]) == len(CELLS) + len(FAULTS)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["runs"] == 40 and summary["matches"] and summary["steps"] == sum(r["steps"] for r in rows)
    assert 0 < summary["distinct_states_approx"] <= summary["steps"] + 40
    assert summary["cpu_seconds"] > 0  # the executors' workers' CPU, through an accumulator
    assert re.search(r"session start \d+\.\d s \(CPU \d+\.\d s with the JVM's\)", out)
    assert summary["startup_cpu_seconds"] >= 0  # the session is the fixture's: this process's CPU only


def test_a_session_start_counts_the_jvms_cpu(spark: Any) -> None:
    """The JVM this process started (the driver's gateway) has used CPU to start: /proc gives it."""
    from checks.fuzz.spark import startup_cpu

    assert startup_cpu(spark, True, time.process_time()) > 0.5
    assert startup_cpu(spark, False, time.process_time()) < 0.5  # not started here: this process's only


def test_planted_variant_is_found_shrunk_saved_and_validated(spark: Any, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert fuzz(str(JGRP1873), "--runs", "100", "--budget-scale", "2", "--out", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "outcome   as expected (violation:no_spurious_purge)" in out
    derived = tmp_path / "jgrp1873-no-timestamps-x2.toml"
    summary = json.loads((tmp_path / "summary.json").read_text())
    traces = [t for t in summary["traces"] if t["verdict"] == "violation:no_spurious_purge"]
    assert traces and not summary["not_reproduced"]
    for saved in traces:
        trace = Trace.load(saved["path"])
        assert trace.seed == saved["seed"] and trace.kind == "always" and trace.prop == "no_spurious_purge"
        assert len(trace.actions) <= saved["original_length"]
        validate(load(derived).world, trace)
        assert replay_on_engines(derived, trace)[1] is None
        assert main(["show", saved["path"]]) == 0
        assert main(["replay", saved["path"]]) == 0
    replayed = capsys.readouterr().out
    assert "engine with the variant: violates no_spurious_purge" in replayed


def test_planted_engine_defect_is_a_divergence_trace(spark: Any, tmp_path: Path) -> None:
    import fuzz_planted

    spark.sparkContext.addPyFile(fuzz_planted.__file__)
    report = run_fuzz(FuzzOptions(FUZZ, runs=30, steps=60, master=MASTER, out=tmp_path, shrink=1,
                                  engines="fuzz_planted:engines"))
    assert report.totals.verdicts.get("divergence", 0) > 0
    assert report.mismatch.startswith("expected pass, got divergence")
    shrunk = [s for s in report.shrunk if isinstance(s, Shrunk)]
    assert len(shrunk) == 1 and shrunk[0].verdict == "divergence"
    trace = Trace.load(shrunk[0].path)
    assert trace.kind == "divergence" and trace.seed == shrunk[0].seed
    assert len(trace.actions) <= shrunk[0].original_length
    _, divergence = replay_on_engines(FUZZ, trace, engines_for=fuzz_planted.engines)
    assert divergence is not None and divergence.step == len(trace.actions) and "datagrams" in divergence.what
    assert replay_on_engines(FUZZ, trace)[1] is None  # the shipped engine takes the same steps


def test_rows_depend_on_the_seed_only(spark: Any, tmp_path: Path) -> None:
    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 40)
    for partitions in (1, 3, 7):
        run_job(spark, plan, 1000, 24, partitions, tmp_path / f"p{partitions}", None)
    one, three, seven = (rows_of(spark, tmp_path / f"p{p}") for p in (1, 3, 7))
    assert one == three == seven
    runner = Runner(plan, FUZZ)
    local = [runner.run(seed).row() for seed in range(1000, 1024)]
    assert one == [tuple(row) for row in local]


def rows_of(spark: Any, results: Path) -> list[tuple[Any, ...]]:
    """The rows of a job's results folder as tuples of ``schema()``'s columns (without the
    ``segment`` column that Spark reads off the segment folders' names), by seed."""
    frame = spark.read.parquet(str(results))
    return [tuple(r) for r in frame.select(*schema().fieldNames()).orderBy("seed").collect()]


def test_a_stopped_job_resumes_where_it_stopped(spark: Any, tmp_path: Path) -> None:
    """``--resume`` (``checks/fuzz/ledger.py``): segments recorded as done and committed are kept,
    the others (never started, recorded but uncommitted, half written) run again; every seed
    gets exactly its row, as an uninterrupted job writes it."""
    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 30)
    results = tmp_path / "runs"
    job = run_job(spark, plan, 500, 80, 40, results, None)  # 2 cores: segments of 16, 16 and 8 tasks
    assert job.partitions == 40 and job.resumed_runs == 0
    whole = rows_of(spark, results)
    assert [row[0] for row in whole] == list(range(500, 580))
    ledger = json.loads((tmp_path / "job.json").read_text())
    assert ledger["segments"] == [[0, 16], [16, 32], [32, 40]] and set(ledger["seconds"]) == {"0", "1", "2"}
    (results / "segment=1" / "_SUCCESS").unlink()  # stopped while Spark committed segment 1
    shutil.rmtree(results / "segment=2")  # never started
    del ledger["seconds"]["2"]
    (tmp_path / "job.json").write_text(json.dumps(ledger))
    resumed = run_job(spark, plan, 500, 80, 7, results, None, resume=True)  # --partitions is the ledger's
    assert resumed.resumed_runs == 32 and resumed.partitions == 40
    assert rows_of(spark, results) == whole
    with pytest.raises(ResumeError, match="--steps 30 there, 31 here"):
        run_job(spark, FuzzPlan(FUZZ.name, FUZZ.read_text(), 31), 500, 80, 40, results, None, resume=True)


def test_resume_without_a_job_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fuzz(str(FUZZ), "--runs", "10", "--out", str(tmp_path / "none"), "--resume") == 2
    assert capsys.readouterr().err.strip().endswith("holds no fuzz job (job.json not found)")
    assert not (tmp_path / "none").exists()


def test_side_by_side_file_is_fuzzed_one_protocol_at_a_time(spark: Any, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``FILE#PROTOCOL``: UNICAST2 before JGRP-1563's fix (the file's per-protocol variant) loses a
    lone first message for good and UNICAST3 does not, each judged by its own expectation in the
    file; the failure's trace names the derived single-protocol file and validates on it."""
    side = MODELS_DIR / "side-by-side" / "jgrp1563.toml"
    assert fuzz(f"{side}#unicast2", "--runs", "120", "--out", str(tmp_path / "u2")) == 0
    assert "outcome   as expected (violation:eventually_delivered)" in capsys.readouterr().out
    derived = tmp_path / "u2" / "jgrp1563.unicast2.toml"
    model = load(derived)
    assert model.protocol == "unicast2" and model.variant == ("no_first_ack",)
    summary = json.loads((tmp_path / "u2" / "summary.json").read_text())
    saved = next(t for t in summary["traces"] if t["verdict"] == "violation:eventually_delivered")
    trace = Trace.load(saved["path"])
    assert trace.model == str(derived) and len(trace.actions) <= saved["original_length"]
    validate(model.world, trace)
    assert fuzz(f"{side}#unicast3", "--runs", "60", "--out", str(tmp_path / "u3")) == 0
    assert "outcome   as expected (pass)" in capsys.readouterr().out
    assert fuzz(str(side), "--runs", "10", "--out", str(tmp_path / "both")) == 2
    assert "name one" in capsys.readouterr().err


def test_in_process_and_spark_give_the_same_job(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--master none`` against Spark on one job with failures: the same rows seed for seed, the
    same ledger but for how rows are stored, the same aggregates (the distinct states: counted
    exactly here, within Spark's estimate; the --report coverage curve exactly), the same shrunk
    traces and the same exit status."""
    from checks.fuzz.inprocess import COLUMNS, rows

    args = [str(JGRP1873), "--runs", "100", "--seed", "3", "--budget-scale", "2", "--shrink", "1", "--no-progress"]
    codes = {name: main(["fuzz", *args, "--master", master, "--out", str(tmp_path / name),
                         "--report", str(tmp_path / f"{name}-report")])
             for name, master in (("spark", MASTER), ("none", "none"))}
    capsys.readouterr()
    assert codes == {"spark": 0, "none": 0}
    on_spark, here = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("spark", "none"))
    for key in ("runs", "steps", "verdicts", "first_failing_seed", "ends", "actions", "phase_hits", "matches",
                "mismatch", "not_reproduced", "coverage_curve"):
        assert on_spark[key] == here[key], key
    assert here["verdicts"].get("violation:no_spurious_purge", 0) > 0
    written = sorted(tuple(row[c] for c in COLUMNS) for row in rows(tmp_path / "none" / "runs"))
    assert rows_of(spark, tmp_path / "spark" / "runs") == written
    distinct = len({fp for row in written for fp in row[-2]})
    assert here["distinct_states_approx"] == distinct and here["distinct_states_exact"]
    assert here["coverage_curve"][-1] == [100, distinct]  # Spark's curve is exact too (checks/fuzz/curve.py)
    assert all((tmp_path / f"{name}-report" / "index.html").is_file() for name in ("spark", "none"))
    assert abs(on_spark["distinct_states_approx"] - distinct) <= 0.05 * distinct
    keys = [json.loads((tmp_path / name / "job.json").read_text())["key"] for name in ("spark", "none")]
    assert keys[0] == {**keys[1], "rows": "parquet"} and keys[1]["rows"] == "jsonl"
    traces = [[(t["seed"], t["verdict"], t["length"], t["original_length"]) for t in s["traces"]]
              for s in (on_spark, here)]
    assert traces[0] == traces[1] and traces[0]
    for a, b in zip(on_spark["traces"], here["traces"]):
        one, two = Trace.load(a["path"]), Trace.load(b["path"])
        assert (one.actions, one.seed, one.prop, one.kind) == (two.actions, two.seed, two.prop, two.kind)


def test_the_multicast_world_runs_on_spark_as_in_this_process(spark: Any, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A NAKACK2 job (multicast coverage scheme) on Spark: the rows and aggregates of the same job in this process."""
    from checks.fuzz.inprocess import COLUMNS, rows

    model = MODELS_DIR / "nakack2" / "jgrp2675.toml"
    args = [str(model), "--runs", "60", "--steps", "60", "--shrink", "1", "--no-progress"]
    codes = {name: main(["fuzz", *args, "--master", master, "--out", str(tmp_path / name)])
             for name, master in (("spark", MASTER), ("none", "none"))}
    capsys.readouterr()
    assert codes == {"spark": 0, "none": 0}
    on_spark, here = (json.loads((tmp_path / name / "summary.json").read_text()) for name in ("spark", "none"))
    for key in ("runs", "steps", "verdicts", "phase_hits", "actions", "matches"):
        assert on_spark[key] == here[key], key
    written = sorted(tuple(row[c] for c in COLUMNS) for row in rows(tmp_path / "none" / "runs"))
    assert rows_of(spark, tmp_path / "spark" / "runs") == written
