"""``seqcheck bench --fuzz --no-spark``: the in-process measurements only, without starting Spark."""

from __future__ import annotations

import json

import pytest

from checks.cli import MODELS_DIR, main


def test_bench_fuzz_without_spark(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--fuzz", "--no-spark", "--runs", "5",
                 "--model", str(MODELS_DIR / "fuzz" / "unicast3-lockstep.toml")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spark"] is False and "local1" not in out and "ratio_local1_vs_plain" not in out
    assert out["plain"]["steps_per_s"] > 0 and out["plain_whole"]["steps_per_s"] > 0
    assert out["ratio_plain_vs_plain_whole"] > 0
    for mode in ("plain", "plain_whole"):  # CPU beside wall (issue 33): one process, one thread
        assert 0 < out[mode]["cpu_seconds"] <= out[mode]["seconds"] + 0.05, out[mode]
