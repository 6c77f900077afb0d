"""``seqcheck bench --jgroups``: one JSON line, the JGroups lockstep beside the engine lockstep."""

from __future__ import annotations

import json

import pytest
from jgroups_harness import harness_for

from checks.cli import main


def test_bench_jgroups_json(capsys: pytest.CaptureFixture[str]) -> None:
    harness_for("3.6.20")
    assert main(["bench", "--jgroups", "3.6.20", "--runs", "5"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["release"].startswith("3.6.20") and row["runs"] == 5
    for name in ("engines", "jgroups", "harness"):
        assert row[name]["steps"] > 0 and row[name]["steps_per_s"] > 0 and row[name]["steps_per_cpu_s"] > 0
    assert row["jgroups_over_engines_steps_per_cpu_s"] > 0


def test_bench_jgroups_unknown_release(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--jgroups", "0.0.1", "--runs", "5"]) == 2
    assert "--jgroups 0.0.1" in capsys.readouterr().err
