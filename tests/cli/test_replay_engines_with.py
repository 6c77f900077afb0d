"""`seqcheck replay --engines-with NAME`: a trace replays on the engines of one of `seqcheck fuzz`'s
settings (a fuzz run under `--engines-with timed` names that setting in the replay command it
prints); an unknown name is a one-line usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

import checks.fuzz.run as fuzz_run
from checks.check import trace_file
from checks.cli import MODELS_DIR, main
from checks.fuzz.command import ENGINE_SETTINGS
from models.modelfile import load

MODEL = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    assert main(["check", "--no-progress", "--trace-dir", str(folder), str(MODEL)]) == 0
    return trace_file(load(MODEL), folder)


def test_the_named_engines_replay_the_trace(trace: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    used: list[str | None] = []
    real = fuzz_run.resolve_engines

    def recording(spec: str | None):  # type: ignore[no-untyped-def]
        used.append(spec)
        return real(spec)

    monkeypatch.setattr(fuzz_run, "resolve_engines", recording)
    assert main(["replay", str(trace), "--engines-with", "rows-of-2"]) == 0
    assert used == [ENGINE_SETTINGS["rows-of-2"]]
    out = capsys.readouterr().out
    assert "the engine took all 11 steps exactly as the spec" in out and "lockstep engines: rows-of-2" in out
    assert main(["replay", str(trace)]) == 0  # the default engines: no setting resolved
    assert used == [ENGINE_SETTINGS["rows-of-2"]]


def test_an_unknown_setting_is_a_usage_error(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(trace), "--engines-with", "rows-of-7"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--engines-with" in err and "timed" in err


def test_a_fuzz_failure_names_its_engines_in_the_replay_command(trace: Path) -> None:
    from types import SimpleNamespace

    from checks.explore.trace import Trace
    from checks.fuzz.command import _failure_lines
    from checks.fuzz.shrink import Shrunk

    shrunk = Shrunk(7, "violation:no_spurious_purge", 30, Trace.load(trace), trace, 12)
    for engines, tail in ((ENGINE_SETTINGS["timed"], f"seqcheck replay {trace} --engines-with timed"),
                          (None, f"seqcheck replay {trace}")):
        report = SimpleNamespace(shrunk=[shrunk], options=SimpleNamespace(engines=engines))
        assert _failure_lines(report)[-1].endswith(tail)  # type: ignore[arg-type]
