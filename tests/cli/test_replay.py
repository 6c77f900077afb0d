"""`seqcheck replay` and `--emit-test`: every variant's counterexample reproduces on the engine with
the same variant flag and not on the engine as shipped, and the emitted regression test is a real
test: it passes on the shipped engine and fails when its ENGINE_VARIANT brings the defect back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checks.cli import main, model_paths
from checks.replay import run_replay
from models.modelfile import load

VARIANT_MODELS = [p for p in model_paths([]) if load(p).variant]


@pytest.mark.parametrize("model_path", VARIANT_MODELS, ids=[p.stem for p in VARIANT_MODELS])
def test_variant_trace_reproduces_on_the_engine_and_not_on_the_fix(model_path: Path, tmp_path: Path) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model_path)]) == 0
    trace = tmp_path / f"{model_path.stem}.json"
    report = run_replay(trace, model_path)
    assert report.divergence is None
    assert report.defective_holds is False
    assert report.fixed_holds is True
    assert report.reproduced

    emitted = tmp_path / f"test_emitted_{model_path.stem.replace('-', '_')}.py"
    assert main(["replay", str(trace), "--emit-test", str(emitted)]) == 0
    passing = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(emitted)],
                             capture_output=True, text=True, timeout=120)
    assert passing.returncode == 0, passing.stdout
    variant = ", ".join(f"{name}=True" for name in load(model_path).variant)
    defective = emitted.with_name(emitted.stem + "_defect.py")
    text = emitted.read_text().replace("ENGINE_VARIANT = Variant()", f"ENGINE_VARIANT = Variant({variant})")
    defective.write_text(text)
    failing = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(defective)],
                             capture_output=True, text=True, timeout=120)
    assert failing.returncode == 1, failing.stdout


def test_replay_of_a_residual_reproduces_as_shipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model_path = next(p for p in model_paths([]) if p.stem == "residual-stale-packets")
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model_path)]) == 0
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "residual-stale-packets.json")]) == 0
    out = capsys.readouterr().out
    assert "the engine took all" in out and "violates no_spurious_purge" in out


def test_replay_of_a_missing_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("seqcheck: ")
