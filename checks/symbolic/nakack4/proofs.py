"""What ``seqcheck prove --protocol nakack4`` runs, as rows (name, result, expected, seconds, cpu, detail):

1. the cross-check of ``nakack4.model`` against ``spec/nakack4.py`` on shipped models' explicit
   states (``crosscheck`` with ``binding_for``: every step satisfies the symbolic relation, the
   window's add guard is enabled exactly when the spec enables the thread's SEND timer, the
   restated targets agree with the spec's predicates);
2. every obligation of NAKACK4 as shipped, and under the variants that keep every target
   (``view_change_no_purge``, ``drop_dont_block``): expected proved; ``purge_covered`` as a
   consequence of the inductive conjunction;
3. the seed's window edge (``seed_edge``) and JGRP-2904 (``ack_from_non_members``): the invariants
   they do not break are inductive on their own (and still imply ``purge_covered``); the broken
   ones are the counterexamples-to-induction of ``EXPECTED``, found under the side condition ``alone`` (S
   alone in its view with only its own entry, as ``jgrp2904.toml`` after its view ``[A]``; a
   counterexample under a side condition is one of the unbounded obligation);
4. each expected counterexample made concrete for its model's world (``concrete``: spec nodes and
   packets), replayed on ``spec/nakack4.py`` and drawn as the chart of its one step (the seed edge's
   deliver_ack and view_s CTIs too, which no shipped model reaches);
5. the reachable ones reached in a shipped model (bounded search, then on to the violation the
   model file expects) and written as a trace ``seqcheck show`` draws; and whether ``seqcheck
   check``'s own counterexample of that model takes the same step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget
from checks.symbolic.crosscheck import (
    CONCRETE,
    CROSSCHECK_DEPTH,
    CROSSCHECK_WALKS,
    Binding,
    crosscheck,
    crosscheck_detail,
)
from checks.symbolic.cti import Subject, checker_passes_through, reachable_cti, replayed_cti
from checks.symbolic.nakack4 import abstraction, concrete
from checks.symbolic.nakack4.invariants import CONSEQUENCES, STRENGTHENINGS, TARGETS, spec_agreement
from checks.symbolic.nakack4.model import ACTION_BY_NAME, ME, NAKACK4
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, conjunction, obligations
from checks.symbolic.ops import EMPTY, Z3Ops
from checks.symbolic.system import State, symbolic_state
from checks.symbolic.unicast3.invariants import Invariant
from models.modelfile import load
from spec import nakack4 as n4

MODELS = Path(__file__).resolve().parents[3] / "models" / "nakack4"
# In scope (no join, merge or DONT_LOOPBACK); together they take every action but view_r and drop
# (a receiver leaving S's view, a held DONT_BLOCK thread dropped: no shipped model does either).
CROSSCHECKED = ("window-edge", "window-edge-seed", "jgrp2904", "jgrp2853", "three-members-crash",
                "lost-ack-threshold-2", "jgrp2874", "send-atomically-lock-after-seqno", "jgrp2873")
CROSSCHECK_STATES = 800
INVARIANTS = TARGETS + STRENGTHENINGS
PROVED_UNDER = {"as shipped": n4.Variant(), "JGRP-2853 (view_change_no_purge)": n4.Variant(view_change_no_purge=True),
                "JGRP-2873 (drop_dont_block)": n4.Variant(drop_dont_block=True)}
# variant label -> (variant, the obligations expected to fail, the model whose checker reaches them)
EXPECTED: dict[str, tuple[n4.Variant, frozenset[tuple[str, str]], str]] = {
    "seed edge": (n4.Variant(seed_edge=True), frozenset({("send", "blocks_only_when_full"),
                                                         ("deliver_ack", "blocks_only_when_full"),
                                                         ("view_s", "blocks_only_when_full")}), "window-edge-seed"),
    "JGRP-2904": (n4.Variant(ack_from_non_members=True), frozenset({("deliver_ack", "ack_table_members"),
                                                                    ("deliver_ack", "low_below_min")}), "jgrp2904"),
}
# The expected CTIs a bounded search reaches in the variant's model. The seed edge's deliver_ack and
# view_s CTIs need a held seqno more than capacity above low, which one atomic sender never holds
# (window-edge-seed.toml's): they are counterexamples-to-induction only, not reached there.
REACHED = (("seed edge", "send", "blocks_only_when_full"), ("JGRP-2904", "deliver_ack", "ack_table_members"),
           ("JGRP-2904", "deliver_ack", "low_below_min"))

Row = tuple[str, str, str, float, float, str]  # name, result, expected, wall and CPU seconds, detail


def binding_for(world: Any) -> Binding:
    """The cross-check's binding in ``world`` (the capacity is the world's configuration's)."""
    actions = dict(ACTION_BY_NAME)
    return Binding(actions, abstraction.binder(world.cfg), abstraction.action_instance,
                   concrete.world_action, n4, {}, {}, lambda cfg, kind: False,
                   enabled_check=abstraction.enabled_check(actions))


# z3's CTIs as spec nodes of a model's world (``concrete``), replayed on spec/nakack4.py and drawn;
# the reachable ones also shown by the bounded search of a shipped model (a path the spec takes).
SUBJECT = Subject(NAKACK4, concrete.concretize, binding_for, concrete.pins, concrete.scope)


def alone(o: Z3Ops, p: State) -> Any:
    """Side condition: S alone in its view, its AckTable only its own entry."""
    return z3.And(p.members == z3.Store(z3.K(z3.IntSort(), z3.BoolVal(False)), ME, True),
                  p.table == z3.Store(z3.K(z3.IntSort(), z3.IntVal(EMPTY)), ME, z3.Int("table.own")))


SIDE_CONDITIONS = {"deliver_ack": alone}  # without it z3 times out first; the bounded retry finds it in ~9 s


def all_hold(v: n4.Variant) -> Callable[[State], bool]:
    """Every state invariant on a concrete state (the cross-check's witnesses of non-vacuity)."""
    return lambda state: all(inv.state(CONCRETE, state, v) for inv in INVARIANTS if inv.state)


def crosschecks(seed: int) -> Iterator[Row]:
    for name in CROSSCHECKED:
        watch = Stopwatch()
        path = MODELS / f"{name}.toml"
        world = load(path).world
        report = crosscheck(path, CROSSCHECK_STATES, spec_agreement(world.cfg), binding=binding_for(world),
                            world=world, walks=CROSSCHECK_WALKS, depth=CROSSCHECK_DEPTH, seed=seed,
                            invariant=all_hold(world.cfg.variant))
        yield (f"nakack4: cross-check with spec on {name}", "agrees" if not report.mismatches else "disagrees",
               "agrees", *watch.elapsed(), crosscheck_detail(report, seed))


def consequences(v: n4.Variant, label: str, invariants: tuple[Invariant, ...] = INVARIANTS) -> Iterator[Row]:
    """Each of ``CONSEQUENCES`` holds in every state of the inductive conjunction ``invariants``
    (which holds initially, so it holds in every reachable state)."""
    o = Z3Ops()
    p = symbolic_state("", NAKACK4.fields)
    for inv in CONSEQUENCES:
        assert inv.state is not None
        watch = Stopwatch()
        solver = z3.Solver()
        solver.add(conjunction(o, p, invariants, v), z3.Not(inv.state(o, p, v)))
        answer = budget.check(solver)
        result = PROVED if answer == z3.unsat else COUNTEREXAMPLE if answer == z3.sat else "unknown"
        yield (f"nakack4[{label}]: the inductive invariant implies {inv.name}", result, PROVED,
               *watch.elapsed(), "")


def rows(trace_dir: Path, seed: int) -> Iterator[Row]:
    yield from crosschecks(seed)
    for label, v in PROVED_UNDER.items():
        for r in obligations(INVARIANTS, v, model=NAKACK4):
            yield f"nakack4[{label}]: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds, ""
        yield from consequences(v, label)
    for label, (v, expected, _) in EXPECTED.items():
        yield from with_counterexamples(label, v, expected)
    for label, (v, expected, model) in EXPECTED.items():
        world = load(MODELS / f"{model}.toml").world
        for action, invariant in sorted(expected):
            drawing = trace_dir / "prove" / f"nakack4-cti-{model}-{action}-{invariant}.txt"
            result, seconds, cpu, detail = replayed_cti(INVARIANTS, v, action, invariant, SUBJECT, world, drawing)
            yield (f"nakack4[{label}]: CTI of {action} / {invariant} replays on spec/nakack4.py ({model}.toml)",
                   result, "validated", seconds, cpu, detail)
    for label, action, invariant in REACHED:
        yield _reach(trace_dir, EXPECTED[label][2], action, invariant)


def with_counterexamples(label: str, v: n4.Variant, expected: frozenset[tuple[str, str]]) -> Iterator[Row]:
    """The invariants ``expected`` does not break are inductive on their own under ``v`` (every
    obligation proved without the broken ones as hypotheses) and imply the consequences; each
    of ``expected`` is a counterexample-to-induction of the whole conjunction."""
    broken = {invariant for _, invariant in expected}
    kept = tuple(inv for inv in INVARIANTS if inv.name not in broken)
    for r in obligations(kept, v, model=NAKACK4):
        yield f"nakack4[{label}]: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds, ""
    yield from consequences(v, label, kept)
    for action, invariant in sorted(expected):
        side = SIDE_CONDITIONS.get(action)

        def this(a: str, i: str, target: str = invariant) -> bool:
            return i == target and a != "init"

        for r in obligations(INVARIANTS, v, model=NAKACK4, actions=(ACTION_BY_NAME[action],), only=this, extra=side):
            note = "" if side is None else " (side condition: S alone)"
            yield f"nakack4[{label}]: {r.name}{note}", r.result, COUNTEREXAMPLE, r.seconds, r.cpu_seconds, ""


def _reach(trace_dir: Path, model: str, action: str, invariant: str) -> Row:
    from checks.check import portable_path

    watch = Stopwatch()
    path = MODELS / f"{model}.toml"
    reached = reachable_cti(path, INVARIANTS, action, invariant, subject=SUBJECT)
    detail = "no reachable CTI within the bound"
    if reached is not None and reached.trace is not None:
        t = reached.trace
        t = replace(t, model=str(portable_path(path)))
        saved = t.save(trace_dir / "prove" / f"nakack4-{model}-{action}-{invariant}.json")
        detail = (f"{reached.states} states searched; step {reached.cti_step + 1} of {len(reached.path)} "
                  f"({t.summary[reached.cti_step]}) is the CTI; ends in {t.prop}; seqcheck show {saved}")
    where = checker_passes_through(path, INVARIANTS, action, invariant, SUBJECT)
    if where:
        detail += f"; {where}"
    return (f"nakack4: the CTI of {action} / {invariant} is reachable (bounded search, {model}.toml)",
            "reachable" if reached else "not found", "reachable", *watch.elapsed(), detail)

