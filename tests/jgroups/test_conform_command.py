"""``seqcheck conform``: the command line over the JGroups lockstep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.cli import main
from checks.jgroups import bindings

MODELS = Path(__file__).resolve().parents[2] / "models"
LOCKSTEP = MODELS / "fuzz" / "unicast3-lockstep.toml"


def test_conform_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    harness_for("3.6.20")  # skips when JGroups is not here
    rc = main(["conform", str(LOCKSTEP), "--jgroups", "3.6.20", "--runs", "12", "--steps", "80", "--seed", "7",
               "--json", "--trace-dir", str(tmp_path)])
    row = json.loads(capsys.readouterr().out)
    assert rc == 0 and row["unexplained"] == 0
    assert row["schedules"] == 12 and 0 < row["steps"] <= 12 * 80
    assert row["jgroups"].startswith("3.6.20.Final") and row["protocol"] == "unicast3"
    assert row["first_seed"] == 7 and row["cpu_seconds"] > 0 and row["jvm_cpu_seconds"] > 0


def test_unexplained_divergence_exits_1_with_a_trace(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The spec with JGRP-1548's defect brought back is not 3.6.20: the lockstep tells, exit 1, a trace."""
    harness_for("3.6.20")
    rc = main(["conform", str(LOCKSTEP), "--jgroups", "3.6.20", "--runs", "20", "--steps", "150", "--seed", "1",
               "--spec-flags", "JGRP-1548", "--json", "--trace-dir", str(tmp_path)])
    row = json.loads(capsys.readouterr().out)
    assert rc == 1 and row["unexplained"] > 0 and row["spec_flags"] == ["no_hs_resend"]
    first = row["divergences"][0]
    trace = json.loads(Path(first["trace"]).read_text())
    assert trace["kind"] == "divergence" and trace["model"] == str(LOCKSTEP)
    assert len(trace["steps"]) == first["step"]


@pytest.mark.parametrize("argv, message", [
    (["--jgroups", "9.9.9"], "--jgroups 9.9.9: no such release"),
    (["--jgroups", "3.6.20", "--runs", "0"], "--runs: expected 1 to"),
    (["--jgroups", "3.6.20", "--steps", str(10**9)], "--steps: expected 1 to"),
    (["--jgroups", "3.2.5"], "unicast3 is not in that release"),
    (["--jgroups", "3.6.20", "--spec-flags", "JGRP-9999"], "--spec-flags: JGRP-9999 is no variant flag"),
])
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str],
                                   argv: list[str], message: str) -> None:
    harness_for("3.6.20")
    assert main(["conform", str(LOCKSTEP), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_a_model_of_a_protocol_without_binding(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    harness_for("5.4.12")
    monkeypatch.delitem(bindings.BUILT_IN, "nakack4")  # every shipped protocol may have one
    assert main(["conform", str(MODELS / "fuzz" / "nakack4-lockstep.toml"), "--jgroups", "5.4.12"]) == 2
    assert "no binding" in capsys.readouterr().err


@pytest.mark.long
def test_conform_on_spark_equals_in_process(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A schedule depends on its seed alone: the same rows on Spark local[2] (a harness JVM per
    Python worker) as in this process."""
    harness_for("3.6.20")
    rows = []
    for master in ("none", "local[2]"):
        assert main(["conform", str(LOCKSTEP), "--jgroups", "3.6.20", "--runs", "16", "--steps", "100", "--seed",
                     "3", "--json", "--master", master, "--partitions", "4", "--trace-dir", str(tmp_path)]) == 0
        rows.append(json.loads(capsys.readouterr().out))
    keys = ("schedules", "steps", "explained", "unexplained", "spec_flags")
    in_process, on_spark = ({k: r[k] for k in keys} for r in rows)
    assert in_process == on_spark
    assert rows[1]["master"] == "local[2]"


def test_a_setting_the_release_lacks_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """NAKACK2's LastSeqnoResender (JGRP-1904) came with 3.5: a model using it on 3.4.8 is a usage error."""
    harness_for("3.4.8")
    rc = main(["conform", str(MODELS / "fuzz" / "nakack2-lockstep.toml"), "--jgroups", "3.4.8", "--runs", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err[-1].endswith("set [config] resend_last_seqno = false to run this model on it")


def test_a_harness_failure_is_one_line_and_no_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.jgroups.harness import Harness, HarnessError

    harness_for("3.6.20")

    def failing(self: Harness, op: str, **args: object) -> object:
        raise HarnessError(f"harness (3.6.20.Final): {op}: NullPointerException: planted")

    monkeypatch.setattr(Harness, "command", failing)
    rc = main(["conform", str(LOCKSTEP), "--jgroups", "3.6.20", "--runs", "2", "--trace-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and err[-1] == (f"seqcheck conform: {LOCKSTEP}: harness (3.6.20.Final): hello: "
                                   "NullPointerException: planted")
