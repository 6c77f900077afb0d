"""The command line on NAKACK2 models (models/nakack2/): they check, draw, fuzz, replay on the engine (in
lockstep and as a script of group events) and emit a regression test (``McastScript``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main

MODEL = MODELS_DIR / "nakack2" / "below-drop-no-xmit.toml"


def test_a_nakack2_trace_checks_and_draws_as_a_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "nakack2" / "below-drop-no-xmit.json")]) == 0
    drawing = capsys.readouterr().out
    assert "A: application multicasts" in drawing and "(dropped below NAKACK2)" in drawing
    assert "end state of B: window for A: purged to #0, delivered to #0, received to #0" in drawing  # a chart
    assert "violated: eventually_delivered" in drawing


def test_fuzz_runs_a_nakack2_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(MODEL), "--runs", "100", "--master", "none", "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "outcome   as expected (violation:eventually_delivered)" in out
    assert "faults met in protocol phases (member state just before the fault" in out


def test_a_nakack2_trace_replays_on_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    capsys.readouterr()
    trace = tmp_path / "nakack2" / "below-drop-no-xmit.json"
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "lockstep: the engine took all 2 steps exactly as the spec" in out
    assert main(["replay", str(trace), "--emit-test", str(tmp_path / "t.py")]) == 0
    emitted = (tmp_path / "t.py").read_text()
    assert "from checks.conform.mcast_script import McastScript" in emitted and "net.multicast('A')" in emitted
