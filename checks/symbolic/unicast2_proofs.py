"""What ``seqcheck prove --protocol unicast2`` runs, as rows (name, result, expected, seconds, detail):

1. the cross-check of ``unicast2_model`` against ``spec/unicast2.py`` on shipped models' explicit
   states (``crosscheck`` with ``unicast2_abstraction.binding_for``);
2. every obligation with the fix flags (``unicast2_invariants.FIXED``) over the actions rule 6
   gates: expected proved, i.e. no_spurious_purge and purge_covered hold for any number of messages;
3. the ungated removals (a view change, the sender's reaper) with the fix flags: the obligations
   ``UNGATED_COUNTEREXAMPLES`` are expected to fail (an entry dropped with its packets in flight);
4. every obligation as shipped (no fix flag): proved except ``EXPECTED_SHIPPED``, the three ways a
   first DATA starts a window below a STABLE A still accepts (no timestamps: JGRP-1873; the
   whole-range sync answer; the first-message resend of JGRP-1563's fix).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checks.symbolic.crosscheck import CONCRETE, crosscheck, load_world
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.unicast2_abstraction import binding_for
from checks.symbolic.unicast2_invariants import FIXED, INVARIANTS, SHIPPED
from checks.symbolic.unicast2_model import ACTION_BY_NAME, ACTIONS, UNGATED_REMOVALS, UNICAST2
from checks.symbolic.unicast3_invariants import conn_id_purity, purge_covered, timestamps_issued, window_order
from checks.symbolic.unicast3_model import State
from spec import unicast2 as u2

MODELS = Path(__file__).resolve().parents[2] / "models" / "unicast2"
CROSSCHECKED = ("jgrp1873-fixed", "jgrp1873-view-change", "jgrp1548-fixed", "jgrp1874-fixed",
                "scenario-6-lost-first-message", "jgrp1873-fixed-lost-first-ack")
CROSSCHECK_STATES = 600
GATED = tuple(a for a in ACTIONS if a.name not in UNGATED_REMOVALS)
UNGATED_COUNTEREXAMPLES = (("view_a", "data_current"), ("idle_send", "data_current"),
                           ("view_b", "first_data_above_acked"))
EXPECTED_SHIPPED = frozenset({("deliver_stable", "live_stable_below_first"), ("deliver_sfs", "live_stable_below_first"),
                              ("xmit_a", "live_stable_below_first")})

Row = tuple[str, str, str, float, str]


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


def crosschecks() -> Iterator[Row]:
    for name in CROSSCHECKED:
        started = time.perf_counter()
        path = MODELS / f"{name}.toml"
        world = load_world(path)
        v = world.cfg.variant

        def all_hold(state: State, v: u2.Variant = v) -> bool:
            return all(inv.state(CONCRETE, state, v) for inv in INVARIANTS if inv.state)

        report = crosscheck(path, CROSSCHECK_STATES, _agreements(v), binding=binding_for(world),
                            invariant=all_hold if v == FIXED else None)
        detail = (f"{report.states} states ({'all' if report.complete else 'bounded BFS'}), {report.steps} steps, "
                  f"{report.instances} enabled instances") if not report.mismatches else report.mismatches[0][:300]
        yield (f"unicast2: cross-check with spec on {name}", "agrees" if not report.mismatches else "disagrees",
               "agrees", time.perf_counter() - started, detail)


def rows() -> Iterator[Row]:
    yield from crosschecks()
    for r in obligations(INVARIANTS, FIXED, model=UNICAST2, actions=GATED):
        yield f"unicast2[fixed]: {r.name}", r.result, PROVED, r.seconds, ""
    for action, invariant in UNGATED_COUNTEREXAMPLES:
        def wanted(a: str, i: str, target: str = invariant) -> bool:
            return i == target and a != "init"

        for r in obligations(INVARIANTS, FIXED, model=UNICAST2, actions=(ACTION_BY_NAME[action],), only=wanted):
            yield (f"unicast2[fixed]: {r.name} (a removal rule 6 does not gate)", r.result, COUNTEREXAMPLE,
                   r.seconds, "")
    for r in obligations(INVARIANTS, SHIPPED, model=UNICAST2, actions=GATED):
        expected = COUNTEREXAMPLE if (r.action, r.invariant) in EXPECTED_SHIPPED else PROVED
        yield f"unicast2: {r.name}", r.result, expected, r.seconds, ""
