"""NAKACK2's symbolic sender window under STABLE: the cross-check against spec/nakack2.py (and drifts
it catches), the obligations (proved for founders and shrinking views; a STABILITY taken without its
view check breaks them; a merge's expected counterexamples), a planted wrong invariant, the ops the
model added, the command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import z3

from checks import cli
from checks.symbolic.bounded import bounded
from checks.symbolic.crosscheck import CONCRETE, crosscheck
from checks.symbolic.nakack2 import abstraction, model, proofs
from checks.symbolic.nakack2.invariants import INVARIANTS, spec_agreement
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.ops import EMPTY, Ops, Z3Ops
from checks.symbolic.system import State, frame
from checks.symbolic.unicast3.abstraction import OutOfScope
from checks.symbolic.unicast3.invariants import Invariant
from models.modelfile import load
from spec import nakack2 as nak

TEST_RLIMIT = 5_000_000  # z3's work per query of a test's own (it was a 3 s timeout): the same on any machine

MODELS = Path(__file__).resolve().parents[2] / "models" / "nakack2"


def _crosscheck(name: str, sender: int = 0, binding: Any = None, states: int = 500) -> Any:
    path = MODELS / f"{name}.toml"
    world = load(path).world
    return crosscheck(path, states, spec_agreement(world.cfg, sender),
                      binding=binding or proofs.binding_for(world, sender), world=world, walks=10, depth=40, seed=3,
                      invariant=proofs.all_hold(world.cfg.variant))


@pytest.mark.parametrize(("name", "sender"), [("three-members-loss", 0), ("crash-stable-goes-on", 1),
                                              ("merge-digest-lags-loopback", 0)])
def test_every_explicit_step_satisfies_the_relation(name: str, sender: int) -> None:
    report = _crosscheck(name, sender)
    assert report.mismatches == [] and report.states > 500 and report.steps > report.states
    assert report.agreements > 0 and report.instances > 0  # the STABLE guard compared with the spec's


def test_the_shipped_models_take_every_action_from_states_where_the_invariants_hold() -> None:
    """Non-vacuity: the proofs' hypotheses (Inv and T_a) are met by concrete steps of the spec."""
    witnessed: set[str] = set()
    for name, sender in (("three-members-loss", 0), ("crash-stable-goes-on", 0), ("merge-digest-lags-loopback", 0)):
        witnessed |= _crosscheck(name, sender, states=300).witnessed
    assert witnessed == {a.name for a in model.ACTIONS} - {"stutter"}


def test_a_view_change_that_keeps_the_window_is_caught() -> None:
    """A drifted on_view that keeps a non-member's window for S: A's view [A] drops B's window."""
    world = load(MODELS / "crash-stable-goes-on.toml").world
    binding = proofs.binding_for(world, 1)

    def keeps(o: Ops, p: State, q: State, a: dict[str, Any], v: nak.Variant) -> Any:
        return frame(o, p, q, {"cur": o.put(p.cur, a["k"], a["view"]), "votes": o.remove_where(
            p.votes, lambda c, j: c == a["k"]), "merged": o.put(p.merged, a["k"], EMPTY)})

    binding.actions["view"] = replace(model.ACTION_BY_NAME["view"], effect=keeps)
    report = _crosscheck("crash-stable-goes-on", 1, binding)
    assert report.mismatches and "InstallView" in report.mismatches[0]


def test_a_drifted_stable_guard_is_caught_in_the_spec_direction() -> None:
    world = load(MODELS / "crash-stable-goes-on.toml").world
    binding = proofs.binding_for(world, 0)
    binding.actions["stable"] = replace(model.ACTION_BY_NAME["stable"], guard=lambda o, p, a, v: False)
    report = _crosscheck("crash-stable-goes-on", 0, binding, states=50)
    assert any("spec enables STABLE True" in m for m in report.mismatches)


def test_every_obligation_of_the_proven_scope_is_proved() -> None:
    results = list(obligations(INVARIANTS, nak.Variant(), model=model.NAKACK2, actions=model.PROVEN_SCOPE))
    states = sum(1 for inv in INVARIANTS if inv.state)
    assert len(results) == states + len(model.PROVEN_SCOPE) * len(INVARIANTS)
    assert [r.name for r in results if r.result != PROVED] == []


BOUNDED = bounded(model.NAKACK2.fields)  # a bounded counterexample is one of the unbounded obligation; z3 finds it fast


def test_a_stability_taken_without_its_view_check_purges_past_a_member() -> None:
    """The last session's note: dropping the view check on STABILITY makes purge safety fail."""
    def unchecked(o: Ops, p: State, q: State, a: dict[str, Any], v: nak.Variant) -> Any:
        j, h = a["j"], a["h"]
        return frame(o, p, q, {**model._reset(o, p, j), "low": o.If(j == p.me, model._purged(o, p, h), p.low)})

    action = replace(model.ACTION_BY_NAME["deliver_stab"], effect=unchecked)
    results = {r.invariant: r.result for r in obligations(INVARIANTS, nak.Variant(), model=model.NAKACK2,
                                                          actions=(action,), only=lambda a, i: a != "init",
                                                          extra=BOUNDED)}
    assert results["low_below_view_min"] == COUNTEREXAMPLE and results["purge_covered"] == COUNTEREXAMPLE


def test_a_merge_breaks_exactly_the_expected_invariants() -> None:
    rows = list(proofs.merge_obligations())
    assert [row[0] for row in rows if row[1] != row[2]] == []
    assert {row[0].split(" / ")[1].split()[0] for row in rows if row[1] == COUNTEREXAMPLE} == proofs.MERGE_BREAKS
    assert len(rows) == len(INVARIANTS)


def test_a_planted_wrong_invariant_is_not_inductive() -> None:
    nothing_purged = Invariant("nothing_purged", "wrong: S never purges", state=lambda o, p, v: p.low == 0)
    invariants = INVARIANTS + (nothing_purged,)
    purge = (model.ACTION_BY_NAME["deliver_stab"],)
    results = {r.name: r.result for r in obligations(invariants, nak.Variant(), model=model.NAKACK2, actions=purge,
                                                     only=lambda a, i: i == "nothing_purged" and a != "init",
                                                     extra=BOUNDED, rlimit=60 * TEST_RLIMIT)}
    assert results == {"deliver_stab / nothing_purged": COUNTEREXAMPLE}
    unbounded = {r.name: r.result for r in obligations(invariants, nak.Variant(), model=model.NAKACK2,
                                                       actions=(model.ACTION_BY_NAME["send"],),
                                                       only=lambda a, i: i == "nothing_purged")}
    assert unbounded == {"init / nothing_purged": PROVED, "send / nothing_purged": PROVED}


def _z3_set(tuples: frozenset[tuple[int, ...]], arity: int) -> Any:
    s = z3.Lambda([z3.Int(f"x{i}") for i in range(arity)], z3.BoolVal(False))
    for t in tuples:
        s = z3.Store(s, *t, True)
    return s


def _members(s: Any, arity: int, span: range) -> frozenset[tuple[int, ...]]:
    import itertools

    return frozenset(t for t in itertools.product(span, repeat=arity) if z3.is_true(z3.simplify(z3.Select(s, *t))))


def test_remove_where_and_add_row_agree_on_z3_and_on_values() -> None:
    votes, rel = frozenset({(0, 1), (0, 2), (1, 2)}), abstraction.vdef(3)
    o = Z3Ops()
    expected = CONCRETE.remove_where(votes, lambda c, k: c == 0)
    assert expected == {(1, 2)}
    assert _members(o.remove_where(_z3_set(votes, 2), lambda c, k: c == 0), 2, range(4)) == expected
    stab = frozenset({(2, 3, 0)})
    expected = CONCRETE.add_row(stab, rel, 7, lambda j: j != 0, (7, 5))
    assert expected == {(2, 3, 0), (1, 7, 5), (2, 7, 5)}
    out = o.add_row(_z3_set(stab, 3), _z3_set(rel, 2), 7, lambda j: j != 0, (7, 5))
    assert _members(out, 3, range(8)) == expected


def test_the_abstraction_names_views_by_their_members() -> None:
    world = load(MODELS / "three-members-loss.toml").world
    state = abstraction.abstract(world.view(world.init_states()[0]), 0, abstraction.vdef(3))
    assert state.cur == {0: 7, 1: 7, 2: 7} and state.hd == {0: 0, 1: 0, 2: 0}
    assert {m for i, m in state.vdef if i == 5} == {0, 2}
    assert all(inv.state(CONCRETE, state, nak.Variant()) for inv in INVARIANTS if inv.state)


def test_joins_are_out_of_scope() -> None:
    from models.multicast_world import AnswerJoin

    with pytest.raises(OutOfScope, match="join"):
        abstraction.action_instance(0)(AnswerJoin(0, 1))


def test_prove_nakack2_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(proofs, "CROSSCHECKED", ())  # run above
    monkeypatch.setattr(proofs, "checker_reaches_merge_cti", lambda trace_dir: (
        "nakack2[merge]: checker", "passes through", "passes through", 0.0, 0.0, ""))  # slow: see the next test
    assert cli.main(["prove", "nakack2", "--json", "--trace-dir", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows.pop()["verdict"] == "as expected"
    assert sum(row["result"] == "counterexample" for row in rows) == len(proofs.MERGE_BREAKS)


@pytest.mark.slow
def test_the_checker_s_merge_counterexample_takes_a_merge_cti_and_show_draws_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = proofs.checker_reaches_merge_cti(tmp_path)
    assert row[1] == "passes through" and "C installs merge view" in row[5]
    trace = next((tmp_path / "prove").glob("nakack2-*.json"))
    assert cli.main(["show", str(trace)]) == 0
    assert "violates safety property purge_covered" in capsys.readouterr().out
