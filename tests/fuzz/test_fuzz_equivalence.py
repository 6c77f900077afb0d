"""The fuzzer's fast paths against the slow definitions they stand for, and determinism.

Invariants tested: ``World.candidates`` with ``World.successor`` give exactly the enabled actions
and next states of ``World.successors``, kind by kind; the fingerprint of a lockstep (unreduced)
state is the fingerprint of the reduced state ``World.adopt`` makes of it; a run's row does not
depend on how the seeds are cut into tasks, in which order the tasks run in one process, or when
that process replaces its runner; random views (joins and leaves) make a valid model file that
depends on the members and the count only.
"""

from __future__ import annotations

import random
import tomllib
from pathlib import Path
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.fuzz import spark as fuzz_spark
from checks.fuzz.coverage import KINDS
from checks.fuzz.fingerprints import Fingerprints
from checks.fuzz.model import scaled_model_text, write_scaled_model
from checks.fuzz.run import FuzzPlan, Runner, Weights
from models.modelfile import load
from models.world import (
    AppSend,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    InstallView,
    LosePacket,
    RemoveReceiver,
)

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
TYPES = (AppSend, DeliverPacket, DuplicatePacket, LosePacket, FireTimer, InstallView, RemoveReceiver)


@pytest.mark.parametrize("reduce", [True, False])
def test_candidates_and_successor_agree_with_successors(reduce: bool) -> None:
    world = load(FUZZ, reduce_timestamps=reduce).world
    rng = random.Random(3)
    for _ in range(15):
        state = world.init_states()[0]
        for _ in range(60):
            enabled = list(world.successors(state))
            if not enabled or not world.within_bounds(state):
                break
            for kind in TYPES:
                pairs = [(a, t) for a in world.candidates(state, kind) if (t := world.successor(state, a)) is not None]
                assert pairs == [(a, t) for a, t in enabled if type(a) is kind]
            state = enabled[rng.randrange(len(enabled))][1]


def test_fingerprint_of_a_lockstep_state_is_that_of_its_reduced_state() -> None:
    runner = Runner(FuzzPlan(FUZZ.name, FUZZ.read_text(), 100), FUZZ)
    unreduced, reduced = runner.shared.world, runner.model.world
    direct, via_adopt = Fingerprints(unreduced), Fingerprints(reduced)
    checked = 0
    for seed in range(25):
        walk, _, _ = runner.walk(seed)
        for _, state in walk.lock.path:
            assert direct(state) == via_adopt(reduced.adopt(unreduced.view(state)))
            checked += 1
    assert checked > 1_000


def _rows(plan: FuzzPlan, ranges: list[tuple[int, int]]) -> dict[int, Any]:
    class Counter:
        def add(self, _: int) -> None:
            pass

    rows = {}
    for seeds in ranges:
        for row in fuzz_spark.run_range(plan, Counter(), Counter(), seeds):
            rows[row[0]] = row
    return rows


def test_rows_do_not_depend_on_task_cuts_order_or_runner_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 60)
    one_task = _rows(plan, [(0, 24)])
    monkeypatch.setattr(fuzz_spark, "FRESH_RUNNER_EVERY", 5)  # the process's runner is replaced mid-task
    monkeypatch.setattr(fuzz_spark, "_RUNNERS", fuzz_spark._Runners())
    cut_and_reordered = _rows(plan, [(17, 24), (0, 3), (9, 17), (3, 9)])
    assert one_task == cut_and_reordered
    other_plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 60, Weights.parse("loss=3"))
    _rows(other_plan, [(0, 2)])  # another plan in between: the runner is rebuilt
    assert _rows(plan, [(5, 8)]) == {s: one_task[s] for s in range(5, 8)}


def test_random_views_are_joins_and_leaves_in_a_valid_model(tmp_path: Path) -> None:
    text = scaled_model_text(FUZZ, 1, 4)
    assert text == scaled_model_text(FUZZ, 1, 4)  # the members and the count decide the draw
    raw, original = tomllib.loads(text), tomllib.loads(FUZZ.read_text())
    members = original["members"]
    added = raw["views"][len(original["views"]):]
    for member in members:
        script = [v["view"] for v in original["views"] if v["member"] == member]
        extra = [v["view"] for v in added if v["member"] == member]
        assert 4 <= len(extra) <= 5 and sorted(extra[-1]) == sorted(members)
        assert all(member in view for view in extra)
        full = script + extra
        previous = [sorted(members)] + [sorted(v) for v in full[:-1]]
        assert all(sorted(view) != before for view, before in zip(full[len(script):], previous[len(script):]))
    assert any(len(v["view"]) < len(members) for v in added)  # someone leaves ...
    derived = write_scaled_model(FUZZ, 1, tmp_path, random_views=4)
    assert derived.name == "unicast3-lockstep-x1-v4.toml"
    model = load(derived)
    assert sum(len(script) for script in model.world.bounds.views) == len(raw["views"])
    runner = Runner(FuzzPlan(derived.name, derived.read_text(), 80, Weights.parse("view=3")), derived)
    records = [runner.run(seed) for seed in range(12)]
    assert {r.verdict for r in records} == {"pass"}
    assert sum(r.counts[KINDS.index("view")] for r in records) > 12  # ... and views are installed
