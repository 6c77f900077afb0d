"""`seqcheck replay` and `--emit-test`, for every protocol with an engine: every shipped model whose
expected verdict is a violation is checked, its counterexample replays on the engine configured
with the model's variant (in lockstep, and as a script judged on the engine's own state), it does
not reproduce on the reference engine (the variant without its defect flags), and the emitted
regression test is a real test: it passes on its own, and fails when its ENGINE_VARIANT brings the
defect back. A violation in the protocol as the model configures it (a residual) is emitted as a
strict xfail. A multicast model's script is ``McastScript`` (checks/conform/mcast_script.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checks import cpu_limit
from checks.check import trace_file
from checks.cli import main, model_paths
from checks.conform.engines import binding, engine_protocols
from checks.conform.replay import is_residual, run_replay
from models.modelfile import Model, load, load_all

# A known gap (issue 30 item 2, open): engine scripts know no dead member and cannot judge
# senders_released, so JGRP-2929's trace replays in lockstep (tests/differential) and on JGroups
# (tests/jgroups/test_u4_replays.py), not as a script.
SCRIPT_GAP = {"unicast4/jgrp2929"}
VIOLATION_MODELS = [p for p in model_paths([])  # of the protocols with an engine (not per-connection retransmission)
                    if any(m.expect != "pass" and not m.side_by_side and m.protocol in engine_protocols()
                           and not getattr(m.world.cfg, "xmit_per_connection", False) for m in load_all(p))
                    and f"{p.parent.name}/{p.stem}" not in SCRIPT_GAP]


def _pytest(path: Path) -> subprocess.CompletedProcess[str]:
    return cpu_limit.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                         capture_output=True, text=True, cpu_seconds=120)


def check_replay_and_emit(model_path: Path, tmp_path: Path) -> Model:
    """Check the model, replay its counterexample on the engines, emit the regression test and run
    it (and, unless the violation is a residual, its copy with the defect brought back)."""
    model = load(model_path)
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(model_path)]) == 0
    trace = trace_file(model, tmp_path / "traces")
    report = run_replay(trace, model_path)
    assert report.divergence is None, report.divergence
    if report.trace.prop in binding(model.protocol).script.scriptable:
        assert report.defective_holds is False
        assert report.fixed_holds is (None if is_residual(model) else True), report.skipped_on_fixed
    assert report.reproduced
    if report.trace.prop not in binding(model.protocol).script.scriptable:
        # a protocol whose traces replay in lockstep only, or a property the engines cannot judge
        # (previous_batch_only reads the spec's xmit_last): no regression test, one line, exit 2
        assert main(["replay", str(trace), "--emit-test", str(tmp_path / "t.py")]) == 2
        return model
    module = re.sub(r"\W", "_", model_path.stem)  # an importable name: "jgrp1873-jgroups-3.4" has a dot
    emitted = tmp_path / f"test_emitted_{module}.py"
    assert main(["replay", str(trace), "--emit-test", str(emitted)]) == 0
    passing = _pytest(emitted)
    assert passing.returncode == 0, passing.stdout
    if not is_residual(model):
        flags = ", ".join(f"{name}=True" for name in model.variant)
        defective = emitted.with_name(emitted.stem + "_defect.py")
        text, count = re.subn(r"^ENGINE_VARIANT = Variant\([^)]*\)", f"ENGINE_VARIANT = Variant({flags})",
                              emitted.read_text(), flags=re.MULTILINE)
        assert count == 1
        defective.write_text(text)
        failing = _pytest(defective)
        assert failing.returncode == 1, failing.stdout
    return model


def _first_per_protocol(paths: list[Path]) -> list[Any]:
    """Every violation model; the first of each protocol in the README's test command, the others (each
    about 7 s: two emitted pytest runs in subprocesses) in the long phase that .ci/run runs after it."""
    seen: set[str] = set()
    params = []
    for path in paths:
        protocol = load(path).protocol
        params.append(pytest.param(path, id=f"{path.parent.name}/{path.stem}",
                                   marks=[] if protocol not in seen else [pytest.mark.long]))
        seen.add(protocol)
    return params


@pytest.mark.parametrize("model_path", _first_per_protocol(VIOLATION_MODELS))
def test_violation_trace_reproduces_on_the_engine_and_not_on_the_fix(model_path: Path, tmp_path: Path) -> None:
    check_replay_and_emit(model_path, tmp_path)


def test_every_protocol_with_an_engine_has_violations_to_replay() -> None:
    protocols = {load(p).protocol for p in VIOLATION_MODELS}
    assert protocols == set(engine_protocols()), protocols


def test_replay_of_a_residual_reproduces_as_shipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model_path = next(p for p in model_paths([]) if p.stem == "residual-stale-packets")
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model_path)]) == 0
    capsys.readouterr()
    assert main(["replay", str(trace_file(load(model_path), tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "the engine took all" in out and "violates no_spurious_purge" in out


def test_replay_of_a_missing_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("seqcheck: ")


SIDE_BY_SIDE = [(p, m.protocol) for p in model_paths([]) for m in load_all(p)
                if m.side_by_side and m.expect != "pass" and m.protocol in engine_protocols()]


@pytest.mark.parametrize(("model_path", "protocol"), SIDE_BY_SIDE,
                         ids=[f"{p.stem}[{protocol}]" for p, protocol in SIDE_BY_SIDE])
def test_side_by_side_violation_replays_on_its_protocols_engine(
        model_path: Path, protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model_path)]) == 0
    trace = trace_file(load(model_path, protocol=protocol), tmp_path)
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert f"{model_path.name}#{protocol}" in out and "the engine took all" in out
