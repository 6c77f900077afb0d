"""One fuzz job per output folder (issue 18, item 10): a second job on a folder in use is refused
before Spark starts, and a job whose results hold another number of runs than it asked for does
not report success."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main
from checks.fuzz.command import FuzzOptions, FuzzReport
from checks.fuzz.spark import Aggregates
from models.modelfile import load

MODEL = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"


def test_a_folder_in_use_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with (out / ".lock").open("a") as held:  # another job holds the folder
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code = main(["fuzz", str(MODEL), "--runs", "1", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "is in use by another fuzz job" in err
    assert not (out / "runs").exists()


def test_an_unwritable_out_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["fuzz", str(MODEL), "--runs", "1", "--out", str(blocker / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--out: cannot write in" in err


def test_missing_runs_are_a_mismatch(tmp_path: Path) -> None:
    model = load(MODEL)
    options = FuzzOptions(MODEL, runs=1600, out=tmp_path)
    totals = Aggregates(767, 70_000, {"pass": 767}, {"pass": 0}, {}, {}, 0, [])
    report = FuzzReport(options, model, 2, 4, 0.0, 1.0, totals)
    assert "holds 767 runs, not the 1,600 asked for" in report.mismatch
    complete = FuzzReport(options, model, 2, 4, 0.0, 1.0, Aggregates(1600, 1, {"pass": 1600}, {}, {}, {}, 0, []))
    assert complete.mismatch == ""
