"""Every shipped model reaches its expected verdict, and every counterexample validates and is
shortest (the checker explores breadth-first; validation re-checks that no earlier state violates).
Each protocol of a side-by-side file is one model."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR, model_paths
from checks.explore.trace import Trace, validate
from checks.jgroups.unicast2 import BINDING as JGROUPS_UNICAST2
from models.modelfile import Model, load, load_all
from models.world_factory import world_adapters

SHIPPED = model_paths([])
MODELS = [model for path in SHIPPED for model in load_all(path)]
# The larger models (pinned at 50,000 states or more) are checked in the long phase (-m long, which
# .ci/run runs after the README's command; .ci/run's `seqcheck check` checks them again).
LONG_STATES = 50_000


def sized(model: Model) -> object:
    return pytest.param(model, id=model_id(model),
                        marks=[pytest.mark.long] if (model.pinned_states or 0) >= LONG_STATES else [])


def model_id(model: Model) -> str:
    name = str(model.path.relative_to(MODELS_DIR).with_suffix(""))
    return f"{name}[{model.protocol}]" if model.side_by_side else name


def test_there_are_shipped_models_for_every_variant() -> None:
    names = {p.stem for p in (MODELS_DIR / "unicast3").glob("*.toml")}
    for jira in ("jgrp1873", "jgrp1548", "jgrp1586", "jgrp1578", "jgrp1874"):
        assert any(n.startswith(jira) and n.endswith("fixed") for n in names), jira
        assert any(n.startswith(jira) and not n.endswith("fixed") for n in names), jira


# The shipped twin of the conn_id_first_only model (seed #6) fails too, by a different defect: the
# delayed first message of the *old* connection (its description and docs/unicast2.md tell the story).
TWINS_THAT_FAIL = {"scenario-6-lost-first-message"}
# Defects that cost only bandwidth (a needless XMIT_REQ): no property of the unicast world tells them
# apart (the multicast world's no_premature_xmit_req has no unicast counterpart yet), so no model
# shows them. What does is the lockstep against the JGroups releases that have them
# (tests/jgroups/test_u2_jgroups_lockstep.py): each is in the profile of such a release.
BANDWIDTH_ONLY = {"xmit_all_gaps", "stale_xmit_record_asks_all"}


def test_every_unicast2_variant_has_a_violation_model_and_a_twin() -> None:
    """Each variant flag has a model beside a twin with the same world (sends, faults, views) that
    differs in the flag. Defect flags: the flagged model expects a violation and the twin (as
    shipped) passes. Fix flags (``fix_*``, fixes UNICAST2 never shipped): the twin as shipped
    expects a violation and the flagged model passes. Bandwidth-only defects (``BANDWIDTH_ONLY``)
    are shown by the JGroups lockstep instead: each is in a release profile."""
    u2 = [m for m in MODELS if m.protocol == "unicast2" and not m.side_by_side]
    for alias, flag in world_adapters()["unicast2"].variant_aliases.items():
        if flag in BANDWIDTH_ONLY:
            assert any(flag in profile.flags for profile in JGROUPS_UNICAST2.profiles), alias
            continue
        pairs = [(m, t) for m in u2 if m.variant == (flag,)
                 for t in u2 if t.variant == () and t.world.bounds == m.world.bounds]
        assert pairs, f"{alias}: no model beside a twin"
        if flag.startswith("fix_"):
            assert any(m.expect == "pass" and t.expect.startswith("violation:") for m, t in pairs), alias
        else:
            assert any(m.expect.startswith("violation:") and (t.expect == "pass" or t.path.stem in TWINS_THAT_FAIL)
                       for m, t in pairs), alias


def test_every_seed_scenario_has_a_unicast2_model() -> None:
    stems = {p.stem for p in (MODELS_DIR / "unicast2").glob("*.toml")}
    for number in range(1, 10):
        assert any(s.startswith(f"scenario-{number}-") for s in stems), number


def test_side_by_side_models_run_both_protocols() -> None:
    side = [m for m in MODELS if m.side_by_side]
    assert side
    for model in side:
        pairs = (("unicast2", "unicast3"), ("nakack2", "nakack4"), ("unicast3", "unicast4"))
        assert model.protocols in pairs, model.path


@pytest.mark.parametrize("model", [sized(m) for m in MODELS])
def test_shipped_model_matches_its_expectation(model: Model, tmp_path: Path) -> None:
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.matches, outcome.mismatch_reason
    assert model.description.strip(), "every model tells its story"
    if model.expect == "pass":
        assert outcome.result.stats.complete and outcome.trace is None
        return
    assert outcome.trace_path is not None
    trace = Trace.load(outcome.trace_path)
    assert trace == outcome.trace
    fresh = load(model.path, protocol=model.protocol if model.side_by_side else None)
    assert len(validate(fresh.world, trace)) == len(trace.actions)
