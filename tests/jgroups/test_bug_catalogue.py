"""The bug catalogue on real JGroups (``checks/jgroups/catalogue.py``): each historical defect's
counterexample, made here by the checker from its shipped model, replayed on the release that had
the bug (the model's property is violated by what JGroups did) and on the release that fixed it
(nothing is violated)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.check import check_model
from checks.jgroups.catalogue import CATALOGUE, Bug
from checks.jgroups.replay import replay_on_jgroups
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.parametrize("bug", CATALOGUE, ids=[b.jira for b in CATALOGUE])
def test_bug_shows_on_the_release_that_had_it(tmp_path: Path, bug: Bug) -> None:
    model = load(MODELS / bug.model)
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.trace_path is not None, f"{bug.model}: no counterexample"
    prop = outcome.verdict.removeprefix("violation:")
    buggy = replay_on_jgroups(Path(outcome.trace_path), str(MODELS / bug.model), None, harness_for(bug.buggy))
    assert buggy.divergence is None or buggy.explained is not None, "\n".join(buggy.lines())
    assert buggy.violated == prop, "\n".join(buggy.lines())
    fixed = replay_on_jgroups(Path(outcome.trace_path), str(MODELS / bug.model), None, harness_for(bug.fixed))
    assert fixed.divergence is None or fixed.explained is not None, "\n".join(fixed.lines())
    assert fixed.violated is None, "\n".join(fixed.lines())
