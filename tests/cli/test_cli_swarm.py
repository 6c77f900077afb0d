"""``seqcheck check --swarm`` (checks/swarm_job.py) with ``--master none``: the tasks in this process.

Invariants tested: every shipped defect model (expect != pass, each protocol of a side-by-side file)
is found by a small swarm (all but two of them are ``slow``: ``pytest -m slow
tests/cli/test_cli_swarm.py``), its trace validated, shortened and written where ``seqcheck check``
writes counterexamples, and ``seqcheck show`` draws it; the results depend on ``--seed`` only and
are printed with it; a passing model gives ``no-violation``; a swarm that does not find the
expected violation exits 1; a swarm option without ``--swarm``, or a bad value, is one line and
exit code 2. Spark itself: ``test_cli_swarm_spark.py``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from checks import cpu_limit
from checks.check import trace_file
from checks.cli import MODELS_DIR, main, model_paths
from checks.explore.trace import Trace, validate
from models.modelfile import load, load_all

SMALL = ("--master", "none", "--tasks", "4", "--task-states", "5000", "--no-progress")
JGRP1873 = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
FIXED = MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml"
TIMES = {"cpu_seconds", "seconds", "startup_seconds", "startup_cpu_seconds", "exhaustive_cpu_seconds",
         "exhaustive_seconds"}


FAST = {"unicast3/jgrp1578-ack-only-new.toml", "side-by-side/jgrp1563.toml"}  # in the default suite


def defect_models() -> list[Any]:
    """Every shipped model expecting a violation; all but ``FAST`` are slow (together about a
    minute of CPU: each side-by-side file also runs its passing UNICAST3 half)."""
    found = []
    for path in sorted(MODELS_DIR.rglob("*.toml")):
        name = str(path.relative_to(MODELS_DIR))
        if name.split("/")[0] in ("bench", "fuzz"):
            continue
        for model in load_all(path):
            if model.expect != "pass":
                found.append(pytest.param(path, model.protocol if model.side_by_side else None,
                                          id=f"{name}:{model.protocol}",
                                          marks=() if name in FAST else pytest.mark.slow))
    return found


def swarm_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", "--swarm", "--json", *args])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def untimed(report: dict[str, Any]) -> dict[str, Any]:
    """A report without wall and CPU times (the only figures that vary between runs)."""
    out = {k: v for k, v in report.items() if k not in TIMES and k != "curve"}
    out["per_task"] = [{k: v for k, v in t.items() if k not in TIMES} for t in report["per_task"]]
    out["curve"] = [{k: v for k, v in p.items() if k != "cpu_seconds"} for p in report["curve"]]
    return out


def test_shipped_defect_models_are_all_here() -> None:
    # Every model ``seqcheck check`` runs by default that expects a violation, one entry per protocol of a
    # side-by-side file; counted independently of ``defect_models``' own walk.
    expected = {(path, model.protocol) for path in model_paths([]) for model in load_all(path)
                if model.expect != "pass"}
    found = {(param.values[0], param.values[1] or load(param.values[0]).protocol) for param in defect_models()}
    assert found == expected
    assert len(defect_models()) == len(expected) >= 55
    assert {protocol for _, protocol in expected} >= {"unicast2", "unicast3", "unicast4", "nakack2", "nakack4"}


@pytest.mark.parametrize(("path", "protocol"), defect_models())
def test_every_shipped_defect_model_is_found(path: Path, protocol: str | None, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, reports = swarm_json(capsys, str(path), *SMALL, "--trace-dir", str(tmp_path))
    assert code == (0 if all(r["matches"] for r in reports) else 1)
    (report,) = [r for r in reports if protocol is None or r["protocol"] == protocol]
    assert report["matches"], report["mismatch"]
    prop = report["expected"].removeprefix("violation:")
    (entry,) = [f for f in report["found"] if f["property"] == prop]
    model = load(path, protocol=protocol)
    trace = Trace.load(entry["path"])
    assert trace.prop == prop and len(trace.actions) == entry["length"] <= entry["found_length"]
    validate(model.world, trace)
    assert entry["error"] is None
    if report["verdict"] == report["expected"]:
        assert Path(entry["path"]) == trace_file(model, tmp_path)


def test_a_swarm_trace_is_written_like_the_checkers_and_show_draws_it(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, (report,) = swarm_json(capsys, str(JGRP1873), *SMALL, "--trace-dir", str(tmp_path))
    assert code == 0 and report["verdict"] == "violation:no_spurious_purge" and report["seed"] == 0
    first = report["found"][0]
    assert first["shortest"] and first["length"] == 11  # the checker's shortest counterexample
    assert Path(first["path"]) == tmp_path / "unicast3" / "jgrp1873-no-timestamps.json"
    others = [Path(f["path"]) for f in report["found"][1:]]
    assert all(p.parent == Path(first["path"]).parent and p.name.startswith("jgrp1873-no-timestamps.")
               for p in others)
    assert main(["show", first["path"]]) == 0
    assert "violates safety property no_spurious_purge after 11 steps" in capsys.readouterr().out


def test_results_depend_on_the_seed_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = (str(FIXED), "--master", "none", "--tasks", "3", "--task-states", "1500", "--no-progress",
            "--trace-dir", str(tmp_path))
    _, (first,) = swarm_json(capsys, *args, "--seed", "41")
    _, (again,) = swarm_json(capsys, *args, "--seed", "41")
    _, (other,) = swarm_json(capsys, *args, "--seed", "42")
    assert untimed(first) == untimed(again)
    assert first["seed"] == 41 and [t["seed"] for t in first["per_task"]] != [t["seed"] for t in other["per_task"]]


def test_a_passing_model_gives_no_violation_with_coverage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, (report,) = swarm_json(capsys, str(FIXED), *SMALL, "--trace-dir", str(tmp_path), "--exhaustive")
    assert code == 0 and report["verdict"] == "no-violation" and report["matches"] and report["found"] == []
    exhaustive = report["exhaustive_states"]
    assert report["exhaustive_complete"] and report["exhaustive_cpu_seconds"] > 0 and report["exhaustive_seconds"] > 0
    # CPU beside wall (issue 33): in this process, one thread: CPU positive and not above wall (a little slack)
    for row in [report, *report["per_task"]]:
        assert 0 < row["cpu_seconds"] <= row["seconds"] + 0.05, row
    assert exhaustive == load(FIXED).pinned_states or load(FIXED).pinned_states is None
    assert 0 < report["distinct_states"] <= exhaustive  # every state a task visits is reachable
    assert report["distinct_exact"] and report["coverage_percent"] == round(100 * report["distinct_states"]
                                                                            / exhaustive, 2)
    assert [p["tasks"] for p in report["curve"]] == [1, 2, 4]
    assert [p["distinct_states"] for p in report["curve"]] == sorted(p["distinct_states"] for p in report["curve"])
    assert report["states_visited"] >= report["distinct_states"]
    assert not list(tmp_path.rglob("*.json"))


def test_each_task_line_and_the_time_line_give_cpu_beside_wall(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: every printed time has CPU beside wall."""
    assert main(["check", "--swarm", str(FIXED), "--master", "none", "--tasks", "2", "--task-states", "500",
                 "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    tasks = [line for line in out.err.splitlines() if "swarm: task" in line]
    assert len(tasks) == 2 and all(re.search(r": 500 states, budget, \d+\.\d s \(CPU \d+\.\d s\)$", line)
                                   for line in tasks), out.err
    assert re.search(r"\ntime +[\d,]+\.\d s CPU in the tasks, [\d,]+\.\d s wall\n", out.out), out.out


def test_the_table_says_what_was_found_and_a_miss_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--swarm", str(JGRP1873), *SMALL, "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "seed 0 (--seed 0 repeats it), 4 tasks in this process (--master none)" in out
    assert "verdict   violation:no_spurious_purge  ok" in out
    wrong = tmp_path / "fixed-expects-a-violation.toml"
    wrong.write_text(FIXED.read_text().replace('expect = "pass"', 'expect = "violation:no_spurious_purge"'))
    assert main(["check", "--swarm", str(wrong), *SMALL, "--trace-dir", str(tmp_path)]) == 1
    assert "MISMATCH: expected violation:no_spurious_purge, found no violation" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--seed", "3"], "--seed: only with --swarm"),
    (["--master", "none"], "--master: expected local, local[N], local[*] or spark://HOST:PORT (omit --master"),
    (["--swarm", "--master", "yarn"], "--master: expected none, local, local[N], local[*] or spark://HOST:PORT"),
    (["--swarm", "--depth", "9:3"], "--depth: expected LO:HI with 1 <= LO <= HI"),
    (["--swarm", "--depth", "x"], "--depth: expected LO:HI"),
    (["--swarm", "--tasks", "0"], "--tasks: expected a whole number >= 1, got 0"),
    (["--swarm", "--liveness-rate", "2"], "--liveness-rate: expected a number from 0 to 1"),
])
def test_usage_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "check", str(FIXED), *args], capture_output=True,
                         text=True, cpu_seconds=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"seqcheck: {message}"), done.stderr
