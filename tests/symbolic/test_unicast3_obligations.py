"""One z3 obligation per action x invariant for UNICAST3: proved as shipped, failing for JGRP-1873."""

from __future__ import annotations

import pytest

from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.ops import Ops
from checks.symbolic.system import State
from checks.symbolic.unicast3.invariants import STRENGTHENINGS, TARGETS, Invariant
from checks.symbolic.unicast3.model import ACTIONS
from spec.unicast3 import Variant

TEST_RLIMIT = 5_000_000  # z3's work per query of a test's own (it was a 3 s timeout): the same on any machine

SHIPPED = Variant()
NO_TIMESTAMPS = Variant(no_timestamps=True)


@pytest.mark.long
def test_every_obligation_is_proved_as_shipped() -> None:
    results = list(obligations(TARGETS + STRENGTHENINGS, SHIPPED))
    invariants = TARGETS + STRENGTHENINGS
    states = sum(1 for inv in invariants if inv.state)
    assert len(results) == states + len(ACTIONS) * len(invariants)
    assert [r.name for r in results if r.result != PROVED] == []


@pytest.mark.long
def test_without_timestamps_the_sync_answer_breaks_induction() -> None:
    failed = {r.name for r in obligations(TARGETS + STRENGTHENINGS, NO_TIMESTAMPS) if r.result != PROVED}
    assert "deliver_sfs / live_ack_below_first" in failed
    assert all(not name.startswith("init") for name in failed)


def test_a_planted_wrong_invariant_is_not_inductive() -> None:
    """'B has delivered everything A sent' holds initially and is false: some step must break it."""
    def delivered_all(o: Ops, p: State, v: Variant) -> object:
        return o.Implies(o.And(p.s_exists, p.r_exists, p.r_conn == p.s_conn), p.r_hd >= p.s_hs)

    planted = Invariant("delivered_all", "wrong on purpose", state=delivered_all)
    send = tuple(a for a in ACTIONS if a.name == "send")  # the step that breaks it (the others cost minutes of z3)
    results = {r.name: r.result for r in obligations(TARGETS + STRENGTHENINGS + (planted,), SHIPPED, actions=send,
                                                      only=lambda a, i: i == "delivered_all")}
    assert results["init / delivered_all"] == PROVED
    assert results["send / delivered_all"] == COUNTEREXAMPLE


@pytest.mark.long
def test_each_strengthening_is_needed_for_some_obligation() -> None:
    """Dropping live_ack_below_first (the timestamp argument) leaves the rest not inductive."""
    weaker = tuple(s for s in STRENGTHENINGS if s.name != "live_ack_below_first")
    deliveries = tuple(a for a in ACTIONS if a.name.startswith("deliver"))
    failed = [r.name for r in obligations(TARGETS + weaker, SHIPPED, actions=deliveries, rlimit=TEST_RLIMIT)
              if r.result != PROVED]
    assert failed


def test_the_checkers_own_counterexample_takes_the_cti_step() -> None:
    from pathlib import Path

    from checks.symbolic.cti import checker_passes_through

    model = Path(__file__).resolve().parents[2] / "models" / "unicast3" / "jgrp1873-no-timestamps.toml"
    where = checker_passes_through(model, TARGETS + STRENGTHENINGS, "deliver_sfs", "live_ack_below_first")
    assert where is not None and "SEND_FIRST_SEQNO" in where
    assert checker_passes_through(model, TARGETS + STRENGTHENINGS, "deliver_ack", "live_ack_below_first") is None


@pytest.mark.long
def test_without_the_message_cache_every_obligation_is_proved() -> None:
    """The 3.x releases (JGRP-2327's variant) drop what the cache keeps: the same invariants hold."""
    results = list(obligations(TARGETS + STRENGTHENINGS, Variant(no_message_cache=True)))
    assert results and [r.name for r in results if r.result != PROVED] == []


@pytest.mark.slow  # minutes of z3 under the calibrated budget
def test_the_message_cache_needs_cache_issued() -> None:
    """Without cache_issued, a drain may add a cached DATA above what A sent, or of the connection
    A opens next: window_within_sent is no longer proved (z3 gives a counterexample, or spends the
    calibrated budget: either way the strengthening is what makes it inductive for z3)."""
    weaker = tuple(s for s in STRENGTHENINGS if s.name != "cache_issued")
    data = tuple(a for a in ACTIONS if a.name == "deliver_data")
    results = {r.name: r.result for r in obligations(TARGETS + weaker, SHIPPED, actions=data,
                                                     only=lambda action, name: name == "window_within_sent")}
    assert results["init / window_within_sent"] == PROVED, results
    assert results["deliver_data / window_within_sent"] != PROVED, results
