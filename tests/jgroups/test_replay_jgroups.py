"""``seqcheck replay TRACE --jgroups VERSION``: a checker counterexample run on a JGroups release,
its property judged on what JGroups did. Traces are made here from the shipped models (never read
from ./traces)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.check import check_model
from checks.cli import main
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models"


def trace_of(name: str, folder: Path) -> Path:
    outcome = check_model(load(MODELS / name), trace_dir=folder)
    assert outcome.trace_path is not None, name
    return Path(outcome.trace_path)


def replay(trace: Path, version: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    rc = main(["replay", str(trace), "--jgroups", version, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_jgrp1873_is_clean_on_the_fixed_release(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The stale ACK of JGRP-1873 is refused by 3.6.20's timestamps: JGroups follows all 11 steps
    (the ACKs and SEND_FIRST_SEQNOs matched without their timestamps) and purges nothing it should not."""
    harness_for("3.6.20")
    rc, row = replay(trace_of("unicast3/jgrp1873-no-timestamps.toml", tmp_path), "3.6.20", capsys)
    assert rc == 0 and row["followed"] == row["steps"] == 11 and row["divergence"] is None
    assert row["loose_steps"] and row["violated"] is None


def test_jgrp1548_liveness_is_judged_by_a_fair_continuation(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """UNICAST3 always resent its highest message: after the lost last message the fair fault-free
    continuation delivers it on JGroups."""
    harness_for("3.6.20")
    rc, row = replay(trace_of("unicast3/jgrp1548-no-hs-resend.toml", tmp_path), "3.6.20", capsys)
    assert rc == 0 and row["continuation"] == "reached" and row["violated"] is None


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness_for("3.6.20")
    trace = trace_of("unicast3/jgrp1874-no-sync-rate-limit.toml", tmp_path)
    assert main(["replay", str(trace), "--jgroups", "7.7.7"]) == 2
    assert "no such release" in capsys.readouterr().err
    assert main(["replay", str(trace), "--jgroups", "3.6.20", "--emit-test", str(tmp_path / "t.py")]) == 2
    assert "not with --emit-test" in capsys.readouterr().err
