"""``seqcheck bench --race-spin`` (checks/bench/race_spin.py) when it cannot race: without ``spin`` or
``cc`` on the PATH, or on a model whose system has no Promela twin, one line and exit 2. (The race
itself runs in tests/plugin/test_arq_plugin.py, with the example plug-in installed.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from checks.bench import race_spin
from checks.cli import main

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize(("tool", "message"), [
    ("spin", "bench --race-spin: spin is not on the PATH (install Debian's package spin)"),
    ("cc", "bench --race-spin: cc is not on the PATH (install a C compiler, e.g. Debian's gcc)"),
])
def test_without_spin_or_a_compiler(tool: str, message: str, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    which = shutil.which
    monkeypatch.setattr(race_spin.shutil, "which", lambda name: None if name == tool else which(name) or name)
    assert main(["bench", "--race-spin"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"seqcheck: {message}\n"


def test_a_model_without_a_twin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(race_spin, "missing_tools", lambda: None)
    model = MODELS / "unicast3" / "jgrp1548-fixed.toml"
    assert main(["bench", "--race-spin", "--model", str(model)]) == 2
    err = capsys.readouterr().err
    assert err == (f"seqcheck: bench --race-spin: {model}: protocol unicast3: its system has no Promela twin "
                   "(spin_twin(); the example plug-in docs/examples/arq_plugin has one)\n")


def test_spins_report_is_read() -> None:
    report = "State-vector 36 byte, depth reached 14, errors: 0\n      201 states, stored\n" \
             "      212 states, matched\n      413 transitions (= stored+matched)\n"
    assert race_spin.spin_counts(report) == {"states": 201, "transitions": 413, "errors": 0}
    assert race_spin.hash_bits(201) == 10 and race_spin.hash_bits(86_934) == 18
    assert race_spin.peak_kb("Name:\tpan\nVmHWM:\t   13720 kB\nVmRSS:\t 100 kB\n") == 13720
