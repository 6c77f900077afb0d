"""The Promela twin of the example ARQ (docs/examples/arq_plugin/seqcheck_arq/arq.pml) is the same model
state for state: Spin's verifier stores as many states as seqcheck's search finds and makes one
transition more (its initial state), with sequence numbers unbounded, modulo 2W and with faults of
both kinds; with modulus W both find the violation of in_order_exactly_once."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from checks.bench.race_spin import build_pan, measured, spin_counts
from checks.explore.search import explore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def spin_on_the_path() -> None:
    """Skip without spin or cc, unless SEQCHECK_REQUIRE_SPIN=1 (.ci/run): then fail."""
    if shutil.which("spin") is None or shutil.which("cc") is None:
        reason = "spin or cc is not on the PATH (Debian's packages spin, gcc)"
        if os.environ.get("SEQCHECK_REQUIRE_SPIN") == "1":
            pytest.fail(f"SEQCHECK_REQUIRE_SPIN=1 but {reason}")
        pytest.skip(reason)


def arq(monkeypatch: pytest.MonkeyPatch, **figures: int) -> Any:
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "examples" / "arq_plugin"))
    module = importlib.import_module("seqcheck_arq.arq")
    return module.SlidingWindowArq("arq", properties=("in_order_exactly_once",), **figures)


@pytest.mark.parametrize("figures", [
    {"messages": 3, "window": 2, "modulus": 0, "capacity": 2, "loss": 1, "duplicate": 1},
    {"messages": 4, "window": 2, "modulus": 4, "capacity": 3, "loss": 2, "duplicate": 1},
    {"messages": 3, "window": 3, "modulus": 3, "capacity": 3, "loss": 2, "duplicate": 0},
])
def test_the_twin_has_the_same_states(figures: dict[str, int], monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    system = arq(monkeypatch, **figures)
    result = explore(system, max_states=100_000)
    pml, defines = system.spin_twin()
    build_pan(pml, defines, tmp_path)
    text, _, _ = measured(["./pan", "-m100000"], cwd=tmp_path)
    spin = spin_counts(text)
    if figures["modulus"] == figures["window"]:  # both stop at the violation, each in its own order
        first = result.first()
        assert first is not None and first.prop == "in_order_exactly_once"
        assert spin["errors"] == 1 and "assertion violated" in text
        return
    assert result.stats.complete and result.first() is None and spin["errors"] == 0
    assert (spin["states"], spin["transitions"]) == (result.stats.distinct, result.stats.transitions + 1)
