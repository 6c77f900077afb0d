"""What ``seqcheck prove --protocol unicast2`` runs, as rows (name, result, expected, seconds, cpu, detail):

1. the cross-check of ``unicast2.model`` against ``spec/unicast2.py`` on shipped models' explicit
   states (``crosscheck`` with ``unicast2.abstraction.binding_for``);
2. every obligation with the fix flags (``unicast2.invariants.FIXED``) over the actions rule 6
   gates: expected proved, i.e. no_spurious_purge and purge_covered hold for any number of messages;
3. the ungated removals (a view change, the sender's reaper) with the fix flags: the obligations
   ``UNGATED_COUNTEREXAMPLES`` are expected to fail (an entry dropped with its packets in flight);
4. every obligation as shipped (no fix flag): proved except ``EXPECTED_SHIPPED``, the three ways a
   first DATA starts a window below a STABLE A still accepts (no timestamps: JGRP-1873; the
   whole-range sync answer; the first-message resend of JGRP-1563's fix);
5. each of those made concrete and replayed on the spec, and two of them reached from a shipped
   model's initial state and on to a no_spurious_purge violation: traces ``seqcheck show`` draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from checks.stopwatch import Stopwatch
from checks.symbolic.crosscheck import (
    CONCRETE,
    CROSSCHECK_DEPTH,
    CROSSCHECK_WALKS,
    crosscheck,
    crosscheck_detail,
    load_world,
)
from checks.symbolic.cti import Subject, checker_passes_through, reachable_cti, validated_cti
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.system import State
from checks.symbolic.unicast2.abstraction import binding_for, concretize
from checks.symbolic.unicast2.invariants import FIXED, INVARIANTS, SHIPPED
from checks.symbolic.unicast2.model import ACTION_BY_NAME, ACTIONS, UNGATED_REMOVALS, UNICAST2
from checks.symbolic.unicast3.invariants import conn_id_purity, purge_covered, timestamps_issued, window_order
from spec import unicast2 as u2

MODELS = Path(__file__).resolve().parents[3] / "models" / "unicast2"
CROSSCHECKED = ("jgrp1873-fixed", "jgrp1873-view-change", "jgrp1548-fixed", "jgrp1874-fixed",
                "scenario-6-lost-first-message", "jgrp1873-fixed-lost-first-ack")
CROSSCHECK_STATES = 600
GATED = tuple(a for a in ACTIONS if a.name not in UNGATED_REMOVALS)
UNGATED_COUNTEREXAMPLES = (("view_a", "data_current"), ("idle_send", "data_current"),
                           ("view_b", "first_data_above_acked"))
# Where the bounded search reaches a shipped CTI (the STABLE-resend one needs two STABLEs of one window in
# flight after its removal, which no shipped model's budget allows).
REACHED_IN = {("deliver_sfs", "live_stable_below_first"): "jgrp1873-delayed-stable",
              ("xmit_a", "live_stable_below_first"): "jgrp1873-view-change"}
EXPECTED_SHIPPED = frozenset({("deliver_stable", "live_stable_below_first"), ("deliver_sfs", "live_stable_below_first"),
                              ("xmit_a", "live_stable_below_first")})

Row = tuple[str, str, str, float, float, str]  # name, result, expected, wall and CPU seconds, detail


def _agreements(v: u2.Variant) -> tuple[tuple[str, Any, Any], ...]:
    def symbolic(formula: Any) -> Any:
        return lambda state: bool(formula(CONCRETE, state, v))
    def pair(pred: Any) -> Any:
        return lambda view: pred(view.nodes[0], view.nodes[1])

    def nodes(pred: Any) -> Any:
        return lambda view: all(pred(n) for n in view.nodes)

    return (("window_order", nodes(u2.window_order), symbolic(window_order)),
            ("conn_id_purity", nodes(u2.conn_id_purity), symbolic(conn_id_purity)),
            ("timestamps_issued", pair(u2.timestamps_issued), symbolic(timestamps_issued)),
            ("purge_covered", pair(u2.purge_covered), symbolic(purge_covered)))


def crosschecks(seed: int) -> Iterator[Row]:
    for name in CROSSCHECKED:
        watch = Stopwatch()
        path = MODELS / f"{name}.toml"
        world = load_world(path)
        v = world.cfg.variant

        def all_hold(state: State, v: u2.Variant = v) -> bool:
            return all(inv.state(CONCRETE, state, v) for inv in INVARIANTS if inv.state)

        report = crosscheck(path, CROSSCHECK_STATES, _agreements(v), binding=binding_for(world),
                            invariant=all_hold if v == FIXED else None, walks=CROSSCHECK_WALKS,
                            depth=CROSSCHECK_DEPTH, seed=seed)
        detail = crosscheck_detail(report, seed)
        yield (f"unicast2: cross-check with spec on {name}", "agrees" if not report.mismatches else "disagrees",
               "agrees", *watch.elapsed(), detail)


def rows(trace_dir: Path, seed: int) -> Iterator[Row]:
    yield from crosschecks(seed)
    for r in obligations(INVARIANTS, FIXED, model=UNICAST2, actions=GATED):
        yield f"unicast2[fixed]: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds, ""
    for action, invariant in UNGATED_COUNTEREXAMPLES:
        def wanted(a: str, i: str, target: str = invariant) -> bool:
            return i == target and a != "init"

        for r in obligations(INVARIANTS, FIXED, model=UNICAST2, actions=(ACTION_BY_NAME[action],), only=wanted):
            yield (f"unicast2[fixed]: {r.name} (a removal rule 6 does not gate)", r.result, COUNTEREXAMPLE,
                   r.seconds, r.cpu_seconds, "")
    for r in obligations(INVARIANTS, SHIPPED, model=UNICAST2, actions=GATED):
        expected = COUNTEREXAMPLE if (r.action, r.invariant) in EXPECTED_SHIPPED else PROVED
        yield f"unicast2: {r.name}", r.result, expected, r.seconds, r.cpu_seconds, ""
    yield from shipped_ctis(trace_dir)


def shipped_ctis(trace_dir: Path) -> Iterator[Row]:
    """Each shipped counterexample-to-induction made concrete and replayed on spec/unicast2.py;
    those of ``REACHED_IN`` also searched for in a shipped model and written as traces."""
    subject = Subject(UNICAST2, concretize, binding_for)
    world = load_world(MODELS / "jgrp1873-delayed-stable.toml")
    for action, invariant in sorted(EXPECTED_SHIPPED):
        watch = Stopwatch()
        result, detail, _ = validated_cti(INVARIANTS, SHIPPED, action, invariant, world, subject)
        yield (f"unicast2: CTI of {action} / {invariant} replays on spec/unicast2.py",
               result, "validated", *watch.elapsed(), detail)
        if (action, invariant) in REACHED_IN:
            yield _reach(trace_dir, REACHED_IN[action, invariant], action, invariant, subject)


def _reach(trace_dir: Path, model: str, action: str, invariant: str, subject: Subject) -> Row:
    from checks.check import portable_path

    watch = Stopwatch()
    path = MODELS / f"{model}.toml"
    reached = reachable_cti(path, INVARIANTS, action, invariant, subject=subject)
    detail = "no reachable CTI within the bound"
    if reached is not None and reached.trace is not None:
        t = reached.trace
        t = replace(t, model=str(portable_path(path)))
        saved = t.save(trace_dir / "prove" / f"unicast2-{model}-{action}.json")
        detail = (f"{reached.states} states searched; step {reached.cti_step + 1} of {len(reached.path)} "
                  f"({t.summary[reached.cti_step]}) is the CTI; ends in {t.prop}; seqcheck show {saved}")
    where = checker_passes_through(path, INVARIANTS, action, invariant, subject)
    if where:
        detail += f"; {where}"
    return (f"unicast2: the CTI of {action} is reachable (bounded search, {model}.toml)",
            "reachable" if reached else "not found", "reachable", *watch.elapsed(), detail)
