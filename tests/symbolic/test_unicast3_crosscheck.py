"""The symbolic UNICAST3 relation against spec/unicast3.py on the explicit checker's states."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from checks.symbolic.crosscheck import CONCRETE, crosscheck
from checks.symbolic.ops import Ops
from checks.symbolic.system import State
from checks.symbolic.unicast3 import model
from checks.symbolic.unicast3.invariants import SPEC_AGREEMENT, STRENGTHENINGS, TARGETS
from checks.symbolic.unicast3.model import ACTIONS
from spec.unicast3 import Variant

MODELS = Path(__file__).resolve().parents[2] / "models" / "unicast3"
# Between them these exercise every symbolic action (views of A: jgrp1586-fixed).
COVERING = ("receiver-removal", "idle-expiry", "asymmetric-view-heal", "jgrp1586-fixed")


def holds_everywhere(state: State) -> bool:
    return all(inv.state(CONCRETE, state, Variant()) for inv in TARGETS + STRENGTHENINGS if inv.state)


def test_every_explicit_step_satisfies_the_relation_and_every_action_is_witnessed() -> None:
    witnessed: set[str] = set()
    for name in COVERING:
        report = crosscheck(MODELS / f"{name}.toml", max_states=1500, agreements=SPEC_AGREEMENT,
                            invariant=holds_everywhere)
        assert report.mismatches == [], report.mismatches[:1]
        assert report.steps > 3 * report.states > 0 and report.instances > 0 and report.agreements > 0
        witnessed |= report.witnessed
    assert witnessed == {a.name for a in ACTIONS}


@pytest.mark.parametrize("name", ["jgrp1873-no-timestamps", "jgrp1874-no-sync-rate-limit",
                                  "jgrp1578-ack-only-new", "jgrp1548-no-hs-resend", "jgrp1586-remove-on-view-change"])
def test_the_variants_agree_too(name: str) -> None:
    report = crosscheck(MODELS / f"{name}.toml", max_states=600)
    assert report.mismatches == [], report.mismatches[:1]


def test_a_drifted_effect_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ACK handler that ignores timestamps (JGRP-1873's code) against the shipped spec."""
    shipped = model.ACTION_BY_NAME["deliver_ack"]

    def ack_without_timestamps(o: Ops, p: State, q: State, a: dict[str, object], v: Variant) -> object:
        return shipped.effect(o, p, q, a, Variant(no_timestamps=True))

    drifted = replace(shipped, effect=ack_without_timestamps)
    monkeypatch.setitem(model.ACTION_BY_NAME, "deliver_ack", drifted)
    report = crosscheck(MODELS / "jgrp1873-fixed.toml", max_states=1500)
    assert any("deliver_ack" in m for m in report.mismatches)


def test_a_drifted_message_cache_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DATA handler without the message cache (the 3.x code, JGRP-2327's variant) against the
    shipped spec, which caches a reordered #2 and delivers it with #1."""
    shipped = model.ACTION_BY_NAME["deliver_data"]

    def data_without_cache(o: Ops, p: State, q: State, a: dict[str, object], v: Variant) -> object:
        return shipped.effect(o, p, q, a, Variant(no_message_cache=True))

    monkeypatch.setitem(model.ACTION_BY_NAME, "deliver_data", replace(shipped, effect=data_without_cache))
    report = crosscheck(MODELS / "basic-one-way.toml", max_states=300)
    assert any("deliver_data" in m for m in report.mismatches)


def test_a_drifted_guard_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The removal hook without rule 6's gate: enabled symbolically where the world forbids it."""
    drifted = replace(model.ACTION_BY_NAME["remove_recv"], guard=lambda o, p, a, v: p.r_exists)
    monkeypatch.setitem(model.ACTION_BY_NAME, "remove_recv", drifted)
    report = crosscheck(MODELS / "receiver-removal.toml", max_states=300)
    assert any("rule 6 forbids" in m for m in report.mismatches)


def test_a_restated_property_that_disagrees_with_the_spec_is_caught() -> None:
    wrong = (("purge_covered", SPEC_AGREEMENT[3][1], lambda state: state.r_hd > state.s_acked),)
    report = crosscheck(MODELS / "basic-one-way.toml", max_states=200, agreements=wrong)
    assert any(m.startswith("purge_covered") for m in report.mismatches)


def test_random_walks_go_deeper_and_repeat_with_their_seed() -> None:
    path = MODELS / "receiver-removal.toml"
    first = crosscheck(path, max_states=50, walks=10, depth=40, seed=3)
    again = crosscheck(path, max_states=50, walks=10, depth=40, seed=3)
    other = crosscheck(path, max_states=50, walks=10, depth=40, seed=4)
    assert first.mismatches == [] and first.states > 50 + 10
    assert (first.states, first.steps) == (again.states, again.steps) != (other.states, other.steps)
