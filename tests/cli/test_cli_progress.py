"""What `seqcheck check` tells a user while and after it searches: the fingerprint collision bound
with every verdict, progress lines in a log (not only on a terminal), what Ctrl-C established, and
where an incomplete search grows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import checks.check_output as check_output
from checks import cpu_limit
from checks.cli import MODELS_DIR, main
from models.modelfile import load

SMALL = MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml"
BIG = MODELS_DIR / "bench" / "unicast3-bench.toml"  # about 2.7 million states: far longer than this test waits


def test_every_verdict_reports_its_collision_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--no-progress", "--trace-dir", str(tmp_path), str(SMALL)]) == 0
    row = json.loads(capsys.readouterr().out)
    n = row["states"]
    assert row["collision_probability"] == n * (n - 1) / 2.0**65
    assert sum(row["levels"]) == n and len(row["levels"]) == row["depth"] + 1
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(SMALL)]) == 0
    assert f"the largest model ({n:,} states) has a collision probability of at most" in capsys.readouterr().out


def test_progress_goes_to_a_log_as_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_output, "LOG_PROGRESS_EVERY", 0.0)  # every report (stderr is captured: not a terminal)
    assert main(["check", "--trace-dir", str(tmp_path), str(SMALL)]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "states/s" in line]
    assert lines and "\r" not in err
    assert all("jgrp1873-fixed.toml: " in line and " MB, " in line for line in lines)


def test_an_incomplete_search_says_where_it_grows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "small.toml"
    model.write_text(SMALL.read_text().replace("max_states = ", "# max_states = ").replace(
        "[check]", "[check]\nmax_states = 500", 1))
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model)]) == 1
    out = capsys.readouterr().out
    assert "incomplete" in out
    assert "incomplete: max_states = 500 reached at depth" in out and "new states per level" in out


def test_ctrl_c_reports_what_was_explored(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "checks.cli", "check", "--trace-dir", str(tmp_path),
                                str(BIG)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=cpu_limit.limit_cpu(600))
    assert process.stdout is not None
    process.stdout.readline()  # the table's header: the model is loaded, the search starts
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=cpu_limit.HANG_GUARD)  # SIGINT ends it: only a hang waits
    assert process.returncode == 130, err
    assert "interrupted" in out  # the row's verdict
    line = err.strip().splitlines()[-1]
    assert line.startswith("seqcheck: interrupted in models/bench/unicast3-bench.toml after ")
    assert "these held: no_duplicate, in_order" in line
    assert "not judged (the search is partial): eventually_delivered, eventually_acked" in line


def test_an_incomplete_search_says_which_budgets_it_spends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "small.toml"
    model.write_text(SMALL.read_text().replace("max_states = ", "# max_states = ").replace(
        "[check]", "[check]\nmax_states = 500", 1))
    assert main(["check", "--no-progress", "--json", "--trace-dir", str(tmp_path), str(model)]) == 1
    row = json.loads(capsys.readouterr().out)
    depths = [level["depth"] for level in row["budgets"]]
    assert depths == [row["depth"] - 1, row["depth"]] or depths == [row["depth"]]
    for level in row["budgets"]:
        sends = level["used"]["sends"]
        assert sends["budget"] == sum(load(model).world.bounds.sends) and 0 < sends["mean"] <= sends["budget"]
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(model)]) == 1
    out = capsys.readouterr().out
    assert f"budgets used at depth {depths[-1]} (mean of a sample / budget): sends " in out


def test_budget_usage_counts_what_a_world_has_spent(tmp_path: Path) -> None:
    world = load(MODELS_DIR / "unicast3" / "both-directions.toml").world  # A->B 2, B->A 1, loss 1
    init = world.init_states()[0]
    assert all(used == 0 for used, _ in world.budget_usage(init).values())
    send = next(after for action, after in world.successors(init) if type(action).__name__ == "AppSend")
    lost = next(after for action, after in world.successors(send) if type(action).__name__ == "LosePacket")
    usage = world.budget_usage(lost)
    assert usage["sends"] == (1, sum(world.bounds.sends)) and usage["loss"] == (1, world.bounds.loss)
    assert world.budget_usage(send)["fullest_channel"] == (1, world.bounds.max_in_flight)
