"""The command line on NAKACK2 models (models/nakack2/): they check, draw, and, while NAKACK2 has no
engine, ``replay`` and ``fuzz`` refuse them with one line instead of a traceback."""

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


@pytest.mark.parametrize("command", ["fuzz", "replay"])
def test_without_an_engine_fuzz_and_replay_are_one_line(command: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    capsys.readouterr()
    args = (["fuzz", str(MODEL), "--runs", "2", "--master", "none", "--out", str(tmp_path / "out")]
            if command == "fuzz" else ["replay", str(tmp_path / "nakack2" / "below-drop-no-xmit.json")])
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith("protocol nakack2 has no production engine to run on "
                                            "(none registered in seqcheck.engines)"), err
