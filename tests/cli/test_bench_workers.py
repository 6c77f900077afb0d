"""``seqcheck bench --workers N`` (checks/bench/workers.py): one process and N workers side by side,
alternately, with the same result, medians, their ratio, CPU seconds and the load."""

from __future__ import annotations

import pytest

from checks.bench.workers import run_workers_bench
from checks.cli import MODELS_DIR, main


def test_side_by_side_on_a_small_model() -> None:
    """Below the workers' threshold: no worker starts, the figures are still both kinds'."""
    out = run_workers_bench(MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml", 2)
    assert out["same_result"] and out["states"] == 8_643
    assert out["workers_2"]["workers_cpu_s"] == 0 and out["workers_1"]["seconds"] > 0
    assert out["speedup"] > 0 and out["cpu_ratio"] > 0 and out["speedup_bound_on_idle_cores"] > 0
    assert len(out["workers_1"]["load_each"]) == len(out["workers_2"]["seconds_each"]) == 1


@pytest.mark.slow
def test_side_by_side_with_workers_started() -> None:
    out = run_workers_bench(MODELS_DIR / "unicast3" / "jgrp1874-fixed.toml", 2)  # a level of 8,818 states
    assert out["same_result"] and out["states"] == 98_287
    assert out["workers_2"]["workers_cpu_s"] > 0 and out["workers_1"]["workers_cpu_s"] == 0


def test_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--workers", "1"]) == 2
    assert capsys.readouterr().err == "seqcheck: --workers: expected 2 or more (compared with 1), got 1\n"
