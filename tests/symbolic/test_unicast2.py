"""UNICAST2's symbolic model: cross-checked on the spec, proved with the fix flags, failing as shipped."""

from __future__ import annotations

from dataclasses import replace

import pytest

from checks.symbolic.crosscheck import CONCRETE, crosscheck, load_world
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.ops import Ops
from checks.symbolic.system import State
from checks.symbolic.unicast2 import model
from checks.symbolic.unicast2.abstraction import binding_for
from checks.symbolic.unicast2.invariants import FIXED, INVARIANTS, SHIPPED, STRENGTHENINGS
from checks.symbolic.unicast2.proofs import EXPECTED_SHIPPED, GATED, MODELS, UNGATED_COUNTEREXAMPLES, _agreements
from checks.symbolic.unicast3.invariants import TARGETS
from spec import unicast2 as u2

TEST_RLIMIT = 5_000_000  # z3's work per query of a test's own (it was a 3 s timeout): the same on any machine


@pytest.mark.parametrize("name", ["jgrp1873-fixed", "jgrp1873-view-change", "jgrp1548-fixed",
                                  "scenario-6-lost-first-message", "jgrp1873-fixed-lost-first-ack"])
def test_every_explicit_step_satisfies_the_relation(name: str) -> None:
    world = load_world(MODELS / f"{name}.toml")
    report = crosscheck(MODELS / f"{name}.toml", 400, _agreements(world.cfg.variant), binding=binding_for(world))
    assert report.mismatches == [], report.mismatches[:1]
    assert report.steps > 2 * report.states > 0 and report.agreements > 0


def test_a_drifted_stable_handler_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A STABLE that purges without checking its conn_id (the design draft's scenario #6)."""
    shipped = model.ACTION_BY_NAME["deliver_stable"]

    def any_conn(o: Ops, p: State, q: State, a: dict[str, object], v: u2.Variant) -> object:
        return shipped.effect(o, p, q, {**a, "conn": p.s_conn}, v)

    monkeypatch.setitem(model.ACTION_BY_NAME, "deliver_stable", replace(shipped, effect=any_conn))
    world = load_world(MODELS / "scenario-6-lost-first-message.toml")
    report = crosscheck(MODELS / "scenario-6-lost-first-message.toml", 3000, binding=binding_for(world))
    assert any("deliver_stable" in m for m in report.mismatches)


def test_with_the_fix_flags_every_gated_obligation_is_proved() -> None:
    results = list(obligations(INVARIANTS, FIXED, model=model.UNICAST2, actions=GATED))
    states = sum(1 for inv in INVARIANTS if inv.state)
    assert len(results) == states + len(GATED) * len(INVARIANTS)
    assert [r.name for r in results if r.result != PROVED] == []


@pytest.mark.long
def test_as_shipped_exactly_the_expected_obligations_fail() -> None:
    failed = {(r.action, r.invariant): r.result for r in obligations(INVARIANTS, SHIPPED, model=model.UNICAST2,
                                                                     actions=GATED)  # prove unicast2's budgets
              if r.result != PROVED}
    assert failed == {key: COUNTEREXAMPLE for key in EXPECTED_SHIPPED}


def test_the_ungated_removals_break_induction_even_with_the_fixes() -> None:
    for action, invariant in UNGATED_COUNTEREXAMPLES:
        def wanted(a: str, i: str, target: str = invariant) -> bool:
            return i == target and a != "init"

        results = [r.result for r in obligations(INVARIANTS, FIXED, model=model.UNICAST2,
                                                 actions=(model.ACTION_BY_NAME[action],), only=wanted)]
        assert results == [COUNTEREXAMPLE], (action, invariant)


def test_dropping_the_stable_order_strengthening_leaves_a_gap() -> None:
    weaker = TARGETS + tuple(s for s in STRENGTHENINGS if s.name != "stables_in_order_need_window")
    failed = [r.name for r in obligations(weaker, FIXED, model=model.UNICAST2, rlimit=TEST_RLIMIT,
                                          actions=(model.ACTION_BY_NAME["deliver_stable"],)) if r.result != PROVED]
    assert "deliver_stable / live_stable_below_first" in failed


def test_the_invariants_hold_on_fixed_worlds_and_every_gated_action_is_witnessed() -> None:
    """Shipped worlds run with every fix flag: each explored state satisfies every invariant, and
    each gated action changes some such state (the proofs' hypotheses are not vacuous). Not
    witnessed, by design: deliver_ack (no ACK without the first-message ACK) and idle_recv (the
    models leave the reaper off; its effect is remove_recv's under a stronger guard)."""
    witnessed: set[str] = set()
    for name in ("jgrp1873-fixed", "jgrp1548-fixed"):
        path = MODELS / f"{name}.toml"
        world = load_world(path)
        world.cfg = replace(world.cfg, variant=FIXED)

        def holds(state: State) -> bool:
            return all(inv.state(CONCRETE, state, FIXED) for inv in INVARIANTS if inv.state)

        report = crosscheck(path, 1000, binding=binding_for(world), invariant=holds, world=world, walks=20)
        assert report.mismatches == []
        witnessed |= report.witnessed
    assert witnessed == {a.name for a in GATED} - {"deliver_ack", "idle_recv"}


def test_the_first_message_resend_cti_replays_on_the_spec_and_is_reachable() -> None:
    from checks.symbolic.cti import Subject, concrete_cti, reachable_cti, validate_cti
    from checks.symbolic.unicast2.abstraction import concretize

    subject = Subject(model.UNICAST2, concretize, binding_for)
    cti = concrete_cti(INVARIANTS, SHIPPED, "xmit_a", "live_stable_below_first", subject)
    assert cti is not None
    assert validate_cti(cti, INVARIANTS, load_world(MODELS / "jgrp1873-delayed-stable.toml"), subject) is None
    reached = reachable_cti(MODELS / "jgrp1873-view-change.toml", INVARIANTS, "xmit_a", "live_stable_below_first",
                            subject=subject)
    assert reached is not None and reached.trace is not None and reached.trace.prop == "no_spurious_purge"
    assert "first-message resend" in reached.trace.summary[reached.cti_step]
