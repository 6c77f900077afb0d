"""NAKACK4's symbolic sender window and AckTable: the cross-check against spec/nakack4.py (and a
drifted guard it catches), the obligations (proved as shipped, the expected counterexamples of the
seed's edge and JGRP-2904), a planted wrong invariant, the command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import z3

from checks import cli
from checks.symbolic.crosscheck import CONCRETE, crosscheck
from checks.symbolic.nakack4 import abstraction, model, proofs
from checks.symbolic.nakack4.invariants import STRENGTHENINGS, TARGETS, spec_agreement
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.ops import EMPTY, Ops, Z3Ops
from checks.symbolic.system import Action, State
from checks.symbolic.unicast3.invariants import Invariant
from models.modelfile import load
from spec import nakack4 as n4

MODELS = Path(__file__).resolve().parents[2] / "models" / "nakack4"
INVARIANTS = TARGETS + STRENGTHENINGS


def _crosscheck(name: str, binding: Any = None, states: int = 600) -> Any:
    path = MODELS / f"{name}.toml"
    world = load(path).world
    return crosscheck(path, states, spec_agreement(world.cfg), binding=binding or proofs.binding_for(world),
                      world=world, walks=10, depth=40, seed=3)


@pytest.mark.parametrize("name", ["window-edge", "window-edge-seed", "jgrp2904", "three-members-crash"])
def test_every_explicit_step_satisfies_the_relation(name: str) -> None:
    report = _crosscheck(name)
    assert report.mismatches == [] and report.states > 500 and report.steps > report.states
    assert report.agreements > 0


def test_the_shipped_models_take_every_action_from_states_where_the_invariants_hold() -> None:
    """Non-vacuity: the proofs' hypotheses (Inv and T_a) are met by concrete steps of the spec."""
    witnessed: set[str] = set()
    for name in ("window-edge", "jgrp2874", "three-members-crash"):
        path = MODELS / f"{name}.toml"
        world = load(path).world
        report = crosscheck(path, 400, binding=proofs.binding_for(world), world=world,
                            invariant=proofs.all_hold(world.cfg.variant))
        witnessed |= report.witnessed
    assert witnessed == {a.name for a in model.ACTIONS} - {"view_r", "drop", "stutter"}


def test_the_window_guard_is_checked_against_the_spec_s_send_timer() -> None:
    assert _crosscheck("window-edge").instances > 0  # held threads whose SEND timer was compared


def test_a_drifted_window_guard_is_caught() -> None:
    """The atomic send's edge drifted to the seed's (s - low < capacity): the spec's send of the
    capacity-th unacknowledged message breaks the symbolic relation."""
    world = load(MODELS / "window-edge.toml").world
    binding = proofs.binding_for(world)

    def seed_edge_send(o: Ops, p: State, q: State, a: dict[str, Any], v: n4.Variant) -> Any:
        return model.ACTION_BY_NAME["send"].effect(o, p, q, a, replace(v, seed_edge=True))

    binding.actions["send"] = Action("send", (), lambda o, p, a, v: True, seed_edge_send)
    report = _crosscheck("window-edge", binding)
    assert report.mismatches and "send" in report.mismatches[0]


def test_a_drifted_add_guard_is_caught_in_the_spec_direction() -> None:
    """A looser add guard (any held seqno may be added) is enabled where the spec blocks the thread."""
    world = load(MODELS / "window-edge-seed.toml").world
    binding = proofs.binding_for(world)
    binding.actions["add"] = replace(model.ACTION_BY_NAME["add"], guard=lambda o, p, a, v: o.has(p.sending, a["s"]))
    report = _crosscheck("window-edge-seed", binding)
    assert any("SEND timer" in m for m in report.mismatches)


def test_every_obligation_is_proved_as_shipped_and_implies_purge_covered() -> None:
    results = list(obligations(INVARIANTS, n4.Variant(), model=model.NAKACK4))
    states = sum(1 for inv in INVARIANTS if inv.state)
    assert len(results) == states + len(model.ACTIONS) * len(INVARIANTS)
    assert [r.name for r in results if r.result != PROVED] == []
    assert [row[1] for row in proofs.consequences(n4.Variant(), "shipped")] == [PROVED]


def test_the_seed_edge_breaks_only_blocks_only_when_full() -> None:
    v, expected, _ = proofs.EXPECTED["seed edge"]
    failed = {(r.action, r.invariant) for r in obligations(INVARIANTS, v, model=model.NAKACK4,
                                                           actions=(model.ACTION_BY_NAME["send"],))
              if r.result != PROVED}
    assert failed == {("send", "blocks_only_when_full")} and failed <= expected
    window = [r.result for r in obligations(INVARIANTS, v, model=model.NAKACK4,
                                            only=lambda a, i: i == "window_bound")]
    assert set(window) == {PROVED}  # the seed's edge holds one message less: the bound itself holds


def test_jgrp2904_re_creates_an_entry() -> None:
    v = n4.Variant(ack_from_non_members=True)
    results = list(obligations(INVARIANTS, v, model=model.NAKACK4, actions=(model.ACTION_BY_NAME["deliver_ack"],),
                               only=lambda a, i: i == "ack_table_members" and a != "init", extra=proofs.alone))
    assert [r.result for r in results] == [COUNTEREXAMPLE]
    assert results[0].model is not None
    v, expected, _ = proofs.EXPECTED["JGRP-2904"]
    rows = list(proofs.with_counterexamples("JGRP-2904", v, expected))
    assert [row[0] for row in rows if row[1] != row[2]] == []  # the rest inductive, purge safety survives
    assert "nakack4[JGRP-2904]: the inductive invariant implies purge_covered" in {row[0] for row in rows}


def test_a_planted_wrong_invariant_is_not_inductive() -> None:
    nothing_unacked = Invariant("nothing_unacked", "wrong: S never holds an unacknowledged message",
                                state=lambda o, p, v: p.high == p.low)
    results = {r.name: r.result for r in obligations(INVARIANTS + (nothing_unacked,), n4.Variant(),
                                                     model=model.NAKACK4, only=lambda a, i: i == "nothing_unacked")}
    assert results["init / nothing_unacked"] == PROVED
    assert results["send / nothing_unacked"] == COUNTEREXAMPLE


def test_restrict_to_agrees_on_z3_and_on_values() -> None:
    table, keys = {0: 3, 1: 5, 4: 2}, frozenset({(0,), (1,), (7,)})
    expected = CONCRETE.restrict_to(table, keys, 0)
    assert expected == {0: 3, 1: 5, 7: 0}
    o = Z3Ops()
    m = z3.K(z3.IntSort(), z3.IntVal(EMPTY))
    for k, v in table.items():
        m = z3.Store(m, k, v)
    s = z3.K(z3.IntSort(), z3.BoolVal(False))
    for (k,) in keys:
        s = z3.Store(s, k, True)
    out = o.restrict_to(m, s, 0)
    for k in range(-1, 9):
        assert z3.simplify(z3.Select(out, k)).as_long() == expected.get(k, EMPTY)


def test_joins_and_dont_loopback_are_out_of_scope() -> None:
    from models.multicast_world import AnswerJoin

    with pytest.raises(abstraction.OutOfScope, match="joins and merges"):
        abstraction.action_instance(AnswerJoin(0, 2))
    with pytest.raises(abstraction.OutOfScope, match="dont_loopback"):
        abstraction.binder(load(MODELS / "jgrp2829.toml").world.cfg)


def test_the_abstraction_reads_the_sender_s_window_and_acks_in_flight() -> None:
    world = load(MODELS / "jgrp2904.toml").world
    state = world.init_states()[0]
    for kind in ("AppMcast", "DeliverPacket"):  # A multicasts #1, then C receives it and ACKs
        state = next(after for action, after in world.successors(state) if type(action).__name__ == kind
                     and (kind == "AppMcast" or action.packet.dst == 1))
    abstract = abstraction.binder(world.cfg)(world.view(state))
    assert (abstract.cap, abstract.low, abstract.high, abstract.seqno) == (1, 0, 1, 1)
    assert abstract.hd == {0: 0, 1: 1} and abstract.table == {0: 0, 1: 0} and abstract.n_ack == {(1, 1)}
    assert abstract.members == {(0,), (1,)} and abstract.sending == frozenset()


@pytest.mark.long
def test_prove_nakack4_is_as_expected_with_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prove", "nakack4", "--json", "--trace-dir", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    verdict = rows.pop()
    assert verdict["verdict"] == "as expected"
    results = {row["name"]: row["result"] for row in rows}
    assert results["nakack4[as shipped]: deliver_ack / low_below_min"] == PROVED
    assert results["nakack4[as shipped]: the inductive invariant implies purge_covered"] == PROVED
    trace = tmp_path / "prove" / "nakack4-jgrp2904-deliver_ack-ack_table_members.json"
    assert cli.main(["show", str(trace)]) == 0
    assert "violates safety property ack_table_members" in capsys.readouterr().out
