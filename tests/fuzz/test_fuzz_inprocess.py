"""``seqcheck fuzz --master none`` and ``--master auto``: fuzz jobs in this process, without Spark.

Invariants tested: ``auto`` runs a job in this process exactly when it asks for at most
``IN_PROCESS_STEPS`` steps, and the report says which it chose; an in-process job imports neither
Spark, py4j nor pyarrow; its rows are the runner's, seed for seed, and its distinct-state count is
exact; a stopped in-process job resumes to the uninterrupted job's rows, and a job is resumed only
by the kind of master that started it (one line, before anything runs). (Spark against this
process on one job: ``test_fuzz_spark.py``; Ctrl-C: ``test_fuzz_interrupt.py``.)
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR, main
from checks.fuzz.inprocess import COLUMNS, IN_PROCESS_STEPS, chosen_master, rows
from checks.fuzz.run import FuzzPlan, Runner

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"


def test_auto_runs_small_jobs_in_this_process() -> None:
    assert chosen_master("auto", 10, 10, "parquet")[0] == "local[*]"  # --resume: the way the job started
    assert chosen_master("auto", 10**9, 100, "jsonl")[0] == "none"
    assert chosen_master("none", 10, 10, "parquet")[0] == "none"  # named: as named (refused if it differs)
    assert chosen_master("auto", IN_PROCESS_STEPS // 100, 100)[0] == "none"
    assert chosen_master("auto", IN_PROCESS_STEPS // 100 + 1, 100)[0] == "local[*]"
    assert chosen_master("auto", 1, IN_PROCESS_STEPS + 1)[0] == "local[*]"
    assert chosen_master("none", 10**9, 100)[0] == "none"
    assert chosen_master("local[1]", 1, 1) == ("local[1]", "Spark (--master local[1])")
    master, why = chosen_master("auto", 2_000, 100)
    assert master == "none" and why == ("in this process (--master auto: 2,000 runs x 100 steps <= 200,000; "
                                        "Spark local[*] above)")


def test_the_progress_line_gives_cpu_beside_wall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: every printed time has CPU beside wall, the progress line's too (one a run here)."""
    from checks.fuzz import inprocess

    monkeypatch.setattr(inprocess, "PROGRESS_EVERY", 0.0)
    assert main(["fuzz", str(FUZZ), "--runs", "5", "--steps", "20", "--seed", "3", "--master", "none",
                 "--out", str(tmp_path)]) == 0
    progress = [line for line in capsys.readouterr().err.splitlines() if line.startswith("fuzz: ")]
    assert progress and all(re.search(r" failing, [\d,]+ s \(CPU [\d,]+ s\), [\d,]+ runs/s$", line)
                            for line in progress), progress


def test_an_in_process_job_writes_the_runners_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(FUZZ), "--runs", "30", "--steps", "40", "--seed", "70", "--partitions", "5",
                 "--master", "none", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "master    none: in this process (--master none), 5 seed ranges" in out
    assert "(counted exactly)" in out and "(JSON Lines, one row per run)" in out
    written = sorted(rows(tmp_path / "runs"), key=lambda row: row["seed"])
    runner = Runner(FuzzPlan(FUZZ.name, FUZZ.read_text(), 40), FUZZ)
    assert [tuple(row[c] for c in COLUMNS) for row in written] == [runner.run(s).row() for s in range(70, 100)]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["master"] == "none" and summary["master_asked"] == "none" and summary["cores"] == 1
    assert summary["distinct_states_exact"] is True
    assert summary["distinct_states_approx"] == len({fp for row in written for fp in row["fingerprints"]})
    assert summary["steps"] == sum(row["steps"] for row in written) and summary["verdicts"] == {"pass": 30}
    ledger = json.loads((tmp_path / "job.json").read_text())
    assert ledger["key"]["rows"] == "jsonl" and len(ledger["ranges"]) == 5


def test_auto_is_the_default_and_needs_no_spark(tmp_path: Path) -> None:
    """In a fresh process: the default master runs a small job here, and nothing of Spark, py4j or
    pyarrow is imported."""
    script = ("import sys\nfrom checks.cli import main\n"
              f"code = main(['fuzz', {str(FUZZ)!r}, '--runs', '12', '--steps', '30', '--out', {str(tmp_path)!r}, "
              "'--no-progress'])\n"
              "print(code, sorted({m.split('.')[0] for m in sys.modules} & {'pyspark', 'py4j', 'pyarrow'}))\n")
    done = cpu_limit.run([sys.executable, "-c", script], capture_output=True, text=True, cpu_seconds=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"
    assert "master    none: in this process (--master auto: 12 runs x 30 steps <= 200,000" in done.stdout
    assert json.loads((tmp_path / "summary.json").read_text())["master_asked"] == "auto"


def test_a_stopped_in_process_job_resumes_to_the_same_rows(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    job = ["fuzz", str(FUZZ), "--runs", "48", "--steps", "25", "--seed", "300", "--partitions", "24",
           "--out", str(tmp_path), "--no-progress"]
    args = [*job, "--master", "none", "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["cpu_seconds"] > 0 and first["steps_per_cpu_s"] == round(first["steps"] / first["cpu_seconds"], 1)
    whole = sorted(rows(tmp_path / "runs"), key=lambda row: row["seed"])
    ledger = json.loads((tmp_path / "job.json").read_text())
    assert ledger["segments"] == [[0, 8], [8, 16], [16, 24]]  # one core: segments of 8 ranges
    assert set(ledger["cpu_seconds"]) == set(ledger["seconds"]) == {"0", "1", "2"}
    del ledger["cpu_seconds"]  # a ledger an older version wrote: the resumed job's CPU is unknown
    (tmp_path / "runs" / "segment=1" / "_SUCCESS").unlink()  # stopped while writing segment 1
    shutil.rmtree(tmp_path / "runs" / "segment=2")  # never started
    del ledger["seconds"]["2"]
    (tmp_path / "job.json").write_text(json.dumps(ledger))
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["resumed_runs"] == 16 and summary["runs"] == 48 and summary["cpu_seconds"] is None
    assert sorted(rows(tmp_path / "runs"), key=lambda row: row["seed"]) == whole
    assert main([*job, "--master", "local[1]", "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "it ran in this process: resume it with --master none (or auto)" in err
    assert main([*job, "--resume", "--json"]) == 0  # auto goes on the way the job started
    again = json.loads(capsys.readouterr().out)
    assert again["master"] == "none" and again["resumed_runs"] == 48
    assert again["master_chosen"] == "in this process (--master auto --resume: the job ran in this process)"
