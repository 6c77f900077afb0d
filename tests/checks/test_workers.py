"""``explore`` with worker processes (checks/explore/workers.py) against one process: the same state
and transition counts, levels, depth, cut states, verdicts, trace lengths and liveness findings on
shipped models (a pass with cut states, safety and liveness violations, a symmetric model, the
multicast world), the same stopping point under ``max_states``, Ctrl-C and a failing worker. The
threshold at which workers start is lowered so that these small models use them."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

import checks.explore.workers as workers_module
from checks.check import workers_problem
from checks.cli import main
from checks.explore.search import Result, explore
from checks.explore.system import PortableStates, export_state, import_state, offers, replay
from checks.explore.workers import WorkerSearch, explore_with_workers
from models.modelfile import Model, load

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(autouse=True)
def small_levels_use_workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Workers start at a level of 64 states; the list counts the starts."""
    monkeypatch.setattr(workers_module, "START_AT", 64)
    started: list[int] = []
    start = WorkerSearch._start_workers

    def counting(self: WorkerSearch) -> None:
        started.append(self.count)
        start(self)

    monkeypatch.setattr(WorkerSearch, "_start_workers", counting)
    return started


def summary(result: Result) -> dict[str, Any]:
    stats = result.stats
    return {"distinct": stats.distinct, "transitions": stats.transitions, "depth": stats.depth,
            "levels": stats.levels, "cut": stats.cut, "unreduced": stats.unreduced, "complete": stats.complete,
            "findings": [(f.prop, f.kind, len(f.path)) for f in result.findings],
            "witnessed": sorted(result.witnessed), "through_cuts": stats.liveness_through_cuts,
            "budgets": stats.budgets, "interrupted": stats.interrupted}


def both(path: str, workers: int = 2, **options: Any) -> tuple[Result, Result, Model]:
    one = load(MODELS / path)
    many = load(MODELS / path)
    options.setdefault("max_states", one.max_states)
    return (explore(one.world, **options), explore_with_workers(many.world, workers, **options), many)


@pytest.mark.parametrize(("path", "verdict"), [
    ("unicast3/jgrp1873-fixed.toml", None),  # a pass with cut states
    ("unicast3/jgrp1873-no-timestamps.toml", "no_spurious_purge"),  # safety
    ("unicast3/jgrp1586-remove-on-view-change.toml", "eventually_delivered"),  # liveness
    ("unicast2/scenario-7-disjoint-merge.toml", None),  # symmetric: one state per orbit
    ("nakack2/crash-stable-goes-on.toml", None),  # the multicast world
    ("nakack4/lost-ack-threshold-2.toml", None),  # liveness that leans on cut states
])
def test_same_result_as_one_process(path: str, verdict: str | None, small_levels_use_workers: list[int]) -> None:
    one, many, model = both(path)
    assert small_levels_use_workers == [2]
    assert summary(many) == summary(one)
    first = many.first()
    assert (first.prop if first else None) == verdict
    if path.startswith("unicast3/jgrp1873-fixed"):
        assert one.stats.cut > 0
    if path.startswith("unicast2/scenario-7"):
        assert one.stats.symmetry_group > 1
    if path.startswith("nakack4/lost-ack"):
        assert any(one.stats.liveness_through_cuts.values())
    for finding in many.findings:  # the trace is a real path of the model, of the one process's length
        actions = [model.world.action_to_json(action) for action, _ in finding.path]
        assert [state for _, state in replay(model.world, actions)] == [state for _, state in finding.path]


def test_same_stopping_point_under_max_states() -> None:
    one, many, _ = both("unicast3/jgrp1873-fixed.toml", max_states=5_000)
    assert not one.stats.complete and one.stats.budgets
    assert summary(many) == summary(one)


def test_no_dependence_on_the_number_of_workers() -> None:
    """Rule 4: the coordinator's numbering is the same with 2 and 3 workers (so in every run)."""
    _, two, _ = both("unicast2/scenario-7-disjoint-merge.toml", workers=2, stop_at_first=False)
    _, three, _ = both("unicast2/scenario-7-disjoint-merge.toml", workers=3, stop_at_first=False)
    assert summary(two) == summary(three)
    assert [(f.state_index, [a for a, _ in f.path]) for f in two.findings] == \
           [(f.state_index, [a for a, _ in f.path]) for f in three.findings]


def test_small_models_start_no_worker(monkeypatch: pytest.MonkeyPatch, small_levels_use_workers: list[int]) -> None:
    monkeypatch.setattr(workers_module, "START_AT", 10_000)
    one, many, _ = both("unicast3/jgrp1873-no-timestamps.toml")
    assert small_levels_use_workers == []
    assert summary(many) == summary(one)


def test_ctrl_c_stops_the_search_and_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the coordinator waits for a worker: a partial search, and no worker left."""
    model = load(MODELS / "unicast3/jgrp1873-fixed.toml")
    receive, received = WorkerSearch._receive, []

    def interrupted(self: WorkerSearch, worker: Any) -> None:
        received.append(1)
        if len(received) == 10:
            raise KeyboardInterrupt
        receive(self, worker)

    monkeypatch.setattr(WorkerSearch, "_receive", interrupted)
    result = explore_with_workers(model.world, 2, max_states=model.max_states)
    assert result.stats.interrupted and not result.stats.complete
    assert 64 < result.stats.distinct < 8_643
    assert multiprocessing.active_children() == []


def test_a_failing_worker_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load(MODELS / "unicast3/jgrp1873-fixed.toml")
    coordinator, expand = os.getpid(), model.world.expand_batch

    def failing(states: Any) -> Any:
        if os.getpid() != coordinator:
            raise ZeroDivisionError("planted")
        return expand(states)

    monkeypatch.setattr(model.world, "expand_batch", failing)
    with pytest.raises(RuntimeError, match="ZeroDivisionError: planted"):
        explore_with_workers(model.world, 2, max_states=model.max_states)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "0"], "--workers: expected a whole number >= 1, got 0"),
    (["--workers", "2", "--swarm"], "--workers: not with --swarm"),
    (["--workers", "2", "--por"], "--workers: not with --por"),
])
def test_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    if "--por" in args and "--por" not in main_help():
        pytest.skip("this checker has no --por")
    code = main(["check", str(MODELS / "unicast3/jgrp1548-fixed.toml"), "--trace-dir", str(tmp_path), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"seqcheck: {message}") and err.count("\n") == 1


def test_check_with_workers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["check", str(MODELS / "unicast3/jgrp1586-remove-on-view-change.toml"), "--workers", "2",
                 "--trace-dir", str(tmp_path), "--no-progress", "--json"])
    assert code == 0
    assert '"verdict": "violation:eventually_delivered"' in capsys.readouterr().out


def main_help() -> str:
    """``seqcheck check --help``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(["check", "--help"])
    return out.getvalue()


@pytest.mark.slow
def test_every_shipped_model() -> None:
    """Every shipped model (one row per protocol of a side-by-side file), workers from a level of 64
    states: the same summary as one process (about 3 minutes on 2 cores)."""
    from checks.cli import model_paths
    from models.modelfile import load_all

    for path in model_paths([]):
        for one, many in zip(load_all(path), load_all(path)):
            assert summary(explore_with_workers(many.world, 2, max_states=many.max_states)) == \
                summary(explore(one.world, max_states=one.max_states)), (path, one.protocol)


@pytest.mark.parametrize("path", ["unicast3/jgrp1873-fixed.toml", "nakack2/crash-stable-goes-on.toml"])
def test_a_state_crosses_as_its_value(path: str) -> None:
    """``PortableStates``: a state's process-independent value, imported by another copy of the model
    (which gives its ids in another order), is that model's same state, and exports to the same value."""
    here, there = load(MODELS / path), load(MODELS / path)
    assert offers(here.world, PortableStates)
    states = level = list(here.world.init_states())
    for _ in range(4):  # the first levels
        level = list(dict.fromkeys(after for state in level for _, after in here.world.successors(state)))
        states += level
    for state in reversed(states):  # another order: the other copy's ids differ from these
        value = export_state(here.world, state)
        assert export_state(there.world, import_state(there.world, value)) == value
    assert len(set(states)) > 10


def test_workers_need_portable_states(tmp_path: Path) -> None:
    """A system without ``PortableStates``: ``--workers 2`` is refused in one line naming the model and
    the capability (tests/cli/test_plugin.py runs it through the command)."""
    model = load(MODELS / "unicast3/jgrp1548-fixed.toml")

    class Plain:  # the TransitionSystem methods only
        def __init__(self, world: Any) -> None:
            self.world = world

        def __getattr__(self, name: str) -> Any:
            if name in PortableStates.__dict__:
                raise AttributeError(name)
            return getattr(self.world, name)

    plain = dataclasses.replace(model, world=Plain(model.world))
    problem = workers_problem([plain], 2, swarm=False, por=False)
    assert problem == (f"--workers: {model.path}: protocol unicast3: its system offers no PortableStates "
                       "(checks.explore.system), so its states cannot cross processes; use --workers 1")
    assert workers_problem([model], 2, swarm=False, por=False) is None
    with pytest.raises(ValueError, match="offers no PortableStates"):
        explore_with_workers(plain.world, 2, max_states=100)
