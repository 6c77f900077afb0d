"""Proof obligations in mypyvy's discipline: one z3 query per (action, invariant), with its wall and CPU time.

For an inductive invariant Inv = I_1 and ... and I_n (the targets and the strengthenings):

- initiation, per I_k: init(p) => I_k(p);
- consecution, per action a and state invariant I_k: Inv(p) and T_a(p, q) => I_k(q);
- per action a and step invariant P_k: Inv(p) and T_a(p, q) => P_k(p, q).

Each query is "the negation is unsatisfiable": ``unsat`` is *proved*, ``sat`` gives a
counterexample-to-induction (z3's model), ``unknown`` (the query's work budget spent,
``checks/symbolic/budget``; or quantifiers) is reported as such after one retry with a bounded
pre-state (``checks/symbolic/bounded``), whose ``sat`` is a counterexample too (its ``unsat`` proves
nothing, so it stays ``unknown``). No query has a wall-clock timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget
from checks.symbolic.bounded import bounded
from checks.symbolic.ops import Z3Ops
from checks.symbolic.system import Action, ModelSpec, State, symbolic_params, symbolic_state
from checks.symbolic.unicast3.invariants import Invariant
from checks.symbolic.unicast3.model import UNICAST3

PROVED, COUNTEREXAMPLE, UNKNOWN = "proved", "counterexample", "unknown"


@dataclass
class Result:
    name: str  # "<action> / <invariant>"
    action: str
    invariant: str
    result: str  # PROVED | COUNTEREXAMPLE | UNKNOWN
    seconds: float  # wall
    cpu_seconds: float  # this process's (z3's)
    model: z3.ModelRef | None = None
    pre: State | None = None
    post: State | None = None
    params: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "result": self.result, "seconds": round(self.seconds, 3),
                "cpu_seconds": round(self.cpu_seconds, 3)}


def conjunction(o: Z3Ops, p: State, invariants: Sequence[Invariant], v: Any) -> Any:
    return z3.And(*[inv.state(o, p, v) for inv in invariants if inv.state is not None])


def _solve(assertions: Sequence[Any], rlimit: int | None) -> tuple[str, z3.ModelRef | None]:
    solver = z3.Solver()
    solver.add(*assertions)
    answer = budget.check(solver, rlimit)
    if answer == z3.unsat:
        return PROVED, None
    if answer == z3.sat:
        return COUNTEREXAMPLE, solver.model()
    return UNKNOWN, None


def obligations(invariants: Sequence[Invariant], v: Any, *, model: ModelSpec = UNICAST3,
                actions: Sequence[Action] | None = None, only: Callable[[str, str], bool] | None = None,
                extra: Callable[[Z3Ops, State], Any] | None = None, rlimit: int | None = None) -> Iterator[Result]:
    """Every obligation of ``invariants`` of ``model`` under variant ``v``, in order (initiation
    first). ``actions``: some of the model's; ``only(action, invariant)`` selects some;
    ``extra(ops, pre)`` adds a side condition to the pre-state of every consecution query (e.g. a
    bounded network for a concrete CTI). ``rlimit``: every query's work budget (default: its
    calibrated one, ``checks/symbolic/budget``)."""
    # A query's text (so its calibrated budget, checks/symbolic/budget) is the same alone (``only``) or
    # in a run: the names of bound variables come from a builder per action, branched per goal.
    p, q = symbolic_state("", model.fields), symbolic_state("'", model.fields)
    for inv in invariants:
        if inv.state is None or (only is not None and not only("init", inv.name)):
            continue
        watch = Stopwatch()
        o = Z3Ops()
        result, found = _solve([model.initial(o, p), z3.Not(inv.state(o, p, v))], rlimit)
        yield Result(f"init / {inv.name}", "init", inv.name, result, *watch.elapsed(), found, p)
    for action in model.actions if actions is None else actions:
        params = symbolic_params(action)
        shared = Z3Ops()
        inv_p, relation = conjunction(shared, p, invariants, v), action.relation(shared, p, q, params, v)
        side = [] if extra is None else [extra(shared, p)]
        for inv in invariants:
            if only is not None and not only(action.name, inv.name):
                continue
            watch = Stopwatch()
            o = shared.branch()
            goal = inv.state(o, q, v) if inv.state is not None else inv.step(o, p, q, v)  # type: ignore[misc]
            result, found = _solve([inv_p, relation, *side, z3.Not(goal)], rlimit)
            if result == UNKNOWN and extra is None:  # a bounded pre-state is one of the states: its CTI is one too
                result, found = _solve([inv_p, relation, bounded(model.fields)(o, p), z3.Not(goal)], rlimit)
                result = COUNTEREXAMPLE if result == COUNTEREXAMPLE else UNKNOWN
            yield Result(f"{action.name} / {inv.name}", action.name, inv.name, result,
                         *watch.elapsed(), found, p, q, params)

