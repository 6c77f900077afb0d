"""`seqcheck check` warns before a model explodes: from the third level on the progress (line and
--json) gives the growth per level and a projection, a projection past max_states or --time-limit
(CPU seconds) is one warning line at once naming the budgets and the model's own keys to cut, and
--estimate explores only the first levels (a state budget) and prints the projection."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import checks.check_output as check_output
from checks.cli import MODELS_DIR, main
from checks.explore.growth import project, trend
from checks.explore.workers import process_cpu
from models.knobs import advice, knobs
from models.modelfile import load

DATA = Path(__file__).parent / "data"
EXPLODES = DATA / "nakack4-three-members-explodes.toml"  # levels x3 a level; [check] max_states = 20000
SMALL = MODELS_DIR / "nakack4" / "three-members-loss.toml"  # 15,853 states, 8,123 explored with symmetry
MIDDLE = MODELS_DIR / "unicast3" / "both-directions.toml"  # 150,363 states, 31 levels


def unbounded(tmp_path: Path) -> Path:
    """The exploding model with the default max_states (5,000,000)."""
    model = tmp_path / "explodes.toml"
    model.write_text(EXPLODES.read_text().replace("max_states = 20000\n", ""))
    return model


def test_an_exploding_model_is_flagged_at_once_with_what_to_cut(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(EXPLODES)]) == 1
    captured = capsys.readouterr()
    (warning,) = [line for line in captured.err.splitlines() if "warning" in line]
    assert warning.startswith("seqcheck: warning: nakack4-three-members-explodes.toml: the levels grow x")
    assert "passes max_states = 20,000 at depth " in warning and "would end incomplete" in warning
    for key in ("[sends] A = 2, B = 1", "faults.loss = 1", "faults.max_in_flight = 3", "config.capacity = 4",
                "config.send_atomically = false -> true", "raise [check] max_states"):
        assert key in warning, key
    assert "receiver_removals" not in warning  # a unicast key: NAKACK4's world has none
    out = captured.out
    assert "incomplete: max_states = 20,000 reached at depth" in out
    assert "to cut: [sends] A = 2, B = 1 -> fewer" in out


def test_the_warning_comes_before_max_states_and_in_json(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--trace-dir", str(tmp_path), str(EXPLODES)]) == 1
    captured = capsys.readouterr()
    row = json.loads(captured.out)
    (alarm,) = [json.loads(line) for line in captured.err.splitlines() if line.startswith('{"alarm"')]
    projection = alarm["projection"]
    assert alarm["alarm"] == "max_states" and alarm["max_states"] == 20_000 and alarm["max_states_given"]
    assert projection["depth"] >= 2 and len(projection["factors"]) == projection["depth"] - 1
    at = projection["max_states_at"]
    assert at["total"] >= 20_000 and at["depth"] <= projection["depth"] + 3
    levels = row["levels"]
    assert sum(levels[:projection["depth"] + 1]) < 20_000  # raised while the search was still far below it
    assert projection["factors"] == [round(levels[k] / levels[k - 1], 3) for k in range(2, projection["depth"] + 1)]
    assert row["stopped_by"] == "max_states" and row["verdict"] == "incomplete"
    assert row["growth_factors"][:len(projection["factors"])] == projection["factors"]
    assert row["cpu_seconds"] > 0 and row["seconds"] > 0


def test_progress_json_gives_growth_and_projection_from_the_third_level(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_output, "LOG_PROGRESS_EVERY", 0.0)
    assert main(["check", "--json", "--trace-dir", str(tmp_path), str(EXPLODES)]) == 1
    progress = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith('{"progress"')]
    assert progress
    for report in progress:
        assert {"cpu_seconds", "seconds", "growth_factors", "levels"} <= set(report)
        projection = report["projection"]
        if projection is None:
            continue
        assert projection["next_levels"] and projection["next_levels"][0]["depth"] == projection["depth"] + 1
        totals = [level["total"] for level in projection["next_levels"]]
        assert totals == sorted(totals) and all(level["cpu_seconds"] >= 0 for level in projection["next_levels"])
    assert any(report["projection"] for report in progress)


def test_a_time_limit_is_cpu_seconds_and_stops_a_search_as_incomplete(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    model = unbounded(tmp_path)  # minutes of CPU: two seconds stop it
    assert main(["check", "--json", "--time-limit", "2", "--trace-dir", str(tmp_path), str(model)]) == 1
    captured = capsys.readouterr()
    row = json.loads(captured.out)
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "time_limit" and row["matches"] is False
    assert row["cpu_seconds"] >= 2 and row["states"] < 5_000_000
    alarms = [json.loads(line) for line in captured.err.splitlines() if line.startswith('{"alarm"')]
    assert [a["alarm"] for a in alarms] == ["time_limit"] and alarms[0]["time_limit"] == 2
    assert "passes --time-limit 2 (CPU seconds) at depth" in alarms[0]["message"]
    assert alarms[0]["message"].endswith("; or raise --time-limit. seqcheck check --estimate projects without the "
                                         "search.")


def test_a_violation_found_before_the_time_limit_stands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
    assert main(["check", "--no-progress", "--time-limit", "600", "--trace-dir", str(tmp_path), str(model)]) == 0
    assert "violation:" in capsys.readouterr().out


def test_estimate_projects_an_exploding_model_without_the_search(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    model = unbounded(tmp_path)
    assert main(["check", "--estimate", "--estimate-states", "12000", "--no-progress", str(model)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{model}: the first ") and "new states per level 1, 2, 3, 19, 81, 244" in out[0]
    assert any(line.startswith("  growth per level: depth 2 x1.50, depth 3 x6.33") for line in out)
    assert any("max_states = 5,000,000 (the default) would be passed at depth" in line for line in out)
    assert out[-1].startswith("  to cut: [sends] A = 2, B = 1 -> fewer")
    assert main(["check", "--estimate", "--estimate-states", "12000", "--json", "--no-progress", str(model)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["estimate"] and row["verdict"] is None and row["states"] < 20_000
    assert row["projection"]["max_states_at"]["total"] >= 5_000_000


def test_estimate_on_shipped_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--estimate", "--no-progress", str(SMALL)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("models/nakack4/three-members-loss.toml: the whole search fits in the estimate's "
                          "100,000 states: pass (expected pass), 8,123 states")
    assert main(["check", "--estimate", "--estimate-states", "50000", "--json", "--no-progress", str(MIDDLE)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["verdict"] is None and 50_000 <= row["states"] < 150_363
    projection = row["projection"]
    assert projection["max_states_at"] is None or projection["max_states_at"]["depth"] > 31
    assert 150_363 / 2 < projection["trend"]["total"] < 150_363 * 3  # the falling growth: near the real size


def test_projection_rules() -> None:
    assert project([1, 2], [0.0, 0.1], distinct=3, cpu=0.1, max_states=100) is None  # rule 1
    p = project([1, 3, 9], [0.0, 1.0, 2.0], distinct=13, cpu=2.0, max_states=100)
    assert p is not None and p.factors == (3.0,) and p.rate == 3.0
    assert [(lv.depth, lv.new, lv.total) for lv in p.levels] == [(3, 27, 40), (4, 81, 121)]  # stops past 100
    assert p.max_states_at is not None and p.max_states_at.depth == 4 and p.alarm == "max_states"
    faster = project([1, 3, 9], [0.0, 1.0, 2.0], distinct=13 + 40, cpu=2.0, max_states=10_000)
    assert faster is not None and faster.rate == 40 / 9  # rule 2: 40 new so far is more than 27
    late = project([1, 3, 9], [0.0, 1.0, 2.0], distinct=13, cpu=2.0, max_states=10**9, time_limit=30.0)
    assert late is not None and late.alarm == "time_limit" and late.time_limit_at is not None
    shrinking = project([1, 4, 2], [0.0, 0.1, 0.2], distinct=7, cpu=0.2, max_states=100)
    assert shrinking is not None and shrinking.converges_to == 9 and shrinking.alarm is None
    falling = trend([1, 4, 12, 30, 60, 100], 10**9)
    assert falling is not None and not falling.passes_max_states and falling.total > 207
    assert trend([1, 3, 9, 27, 81], 10**9) is None  # a steady factor: no trend


@pytest.mark.parametrize("argv, message", [
    (["--estimate", "--estimate-states", "0"], "seqcheck: --estimate-states: expected a whole number >= 1, got 0"),
    (["--estimate-states", "10"], "seqcheck: --estimate-states: only with --estimate"),
    (["--time-limit", "0"], "seqcheck: --time-limit: expected CPU seconds > 0, got 0"),
    (["--time-limit", "nan"], "seqcheck: --time-limit: expected CPU seconds > 0, got nan"),
    (["--time-limit", "inf"], "seqcheck: --time-limit: expected CPU seconds > 0, got inf"),
    (["--estimate", "--report", "r"], "seqcheck: --estimate: not with --report"),
    (["--estimate", "--swarm"], "seqcheck: --estimate: not with --swarm"),
    (["--time-limit", "5", "--swarm"], "seqcheck: --time-limit: not with --swarm"),
])
def test_usage_errors_are_one_line(argv: list[str], message: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *argv, "--trace-dir", str(tmp_path), str(SMALL)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_the_keys_to_cut_are_the_worlds_own() -> None:
    unicast = advice(load(MIDDLE).world)  # A->B 2, B->A 1, loss 1, max_in_flight 3 (the default)
    assert unicast == ('[sends] "A->B" = 2, "B->A" = 1 -> fewer; faults.loss = 1 -> 0; '
                       "faults.max_in_flight = 3 -> 1 or 2")
    small = knobs(load(SMALL).world)  # A sends 1, capacity 1, send_atomically, max_in_flight 2
    assert [k.key for k in small] == ["faults.loss", "faults.max_in_flight"]
    assert knobs(object()) == [] and advice(object()) == "the model's own bounds (this world names none)"


def test_the_cpu_of_a_process_is_read_while_it_runs() -> None:
    started = time.process_time()
    while time.process_time() - started < 0.3:  # work, so that both clocks move
        pass
    assert abs(process_cpu(os.getpid()) - time.process_time()) < 0.1
    assert process_cpu(2**22 + 12345) == 0.0  # no such process


def test_a_time_limit_counts_the_workers_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = unbounded(tmp_path)
    assert main(["check", "--json", "--no-progress", "--workers", "2", "--time-limit", "3", "--trace-dir",
                 str(tmp_path), str(model)]) == 1
    row = json.loads(capsys.readouterr().out)
    assert row["verdict"] == "incomplete" and row["stopped_by"] == "time_limit"
    assert row["cpu_seconds"] >= 3  # the coordinator's and, from level 9 on (22,265 states to expand), the workers'
    assert row["levels"][:10] == [1, 2, 3, 19, 81, 244, 730, 2369, 7492, 22265]
