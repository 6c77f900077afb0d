"""Invariant inference in the DistAI style, for the UNICAST3 model: candidates from a grammar over
the state's fields, filtered by the explicit checker's reachable states, then weakened with z3
until inductive (Houdini).

1. ``candidates()``: every atom of the grammar, each guarded by the existence of the entries it
   reads (and, across the two entries, by their being on the same connection): ``x >= 0``,
   ``x <= y``, ``x < y``, ``x == y`` over the integer fields, and per packet type the bounds of its
   fields by the state's fields (``a <= s_hs`` for an ACK on A's current connection, ...).
2. ``reachable_states()``: abstract states from the cross-check's exploration (bounded BFS and
   seeded random walks) of shipped models; a candidate false on one of them is dropped.
3. ``houdini()``: while some action can break a surviving candidate (one z3 query per action
   for all of them: z3's model names the broken ones), drop the broken ones. What remains is
   inductive: the strongest invariant the grammar can express that the sample does not refute.

``infer()`` then asks which of the hand-written strengthenings and targets the inferred invariant
implies: the ones it does not are those outside the grammar (the timestamp-ordering arguments
between two packets), which is why UNICAST3's "why it works" needs them written by hand.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget
from checks.symbolic.crosscheck import CONCRETE, UNICAST3_BINDING, load_world
from checks.symbolic.obligations import conjunction
from checks.symbolic.ops import Ops, Z3Ops
from checks.symbolic.system import State, symbolic_params, symbolic_state
from checks.symbolic.unicast3.invariants import STRENGTHENINGS, TARGETS, Invariant
from checks.symbolic.unicast3.model import UNICAST3
from spec.unicast3 import Variant

INTS = ("s_conn", "s_acked", "s_hs", "s_wm_lo", "s_wm_hi", "s_last_ts", "a_next_conn", "r_conn", "r_hd", "b_ts")
MODELS = Path(__file__).resolve().parents[2] / "models" / "unicast3"
SAMPLED = ("receiver-removal", "idle-expiry", "asymmetric-view-heal", "jgrp1586-fixed", "reorder-duplicate")


def _guard(o: Ops, p: State, *fields: str) -> Any:
    parts = []
    if any(f.startswith("s_") for f in fields):
        parts.append(p.s_exists)
    if any(f.startswith("r_") for f in fields):
        parts.append(p.r_exists)
    if any(f.startswith("s_") for f in fields) and any(f.startswith("r_") for f in fields):
        parts.append(p.r_conn == p.s_conn)
    return o.And(*parts) if parts else True


def _atom(name: str, body: Callable[[Ops, State], Any]) -> Invariant:
    return Invariant(name, "inferred", state=lambda o, p, v: body(o, p))


def _nonnegative(x: str) -> Invariant:
    return _atom(f"{x} >= 0", lambda o, p: o.Implies(_guard(o, p, x), p[x] >= 0))


COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b,
                                                     "==": lambda a, b: a == b}


def _compare(x: str, op: str, y: str) -> Invariant:
    compare = COMPARISONS[op]
    return _atom(f"{x} {op} {y}", lambda o, p: o.Implies(_guard(o, p, x, y), compare(p[x], p[y])))


def _ack_bound(field: int, y: str) -> Invariant:
    label = ("seqno", "conn", "ts")[field]
    return _atom(f"ACK on s_conn: {label} <= {y}", lambda o, p: o.forall_in(p.n_ack, lambda a, c, t: o.Implies(
        o.And(_guard(o, p, y), p.s_exists, c == p.s_conn), (a, c, t)[field] <= p[y])))


def _data_bound(y: str) -> Invariant:
    return _atom(f"DATA: seqno <= {y}", lambda o, p: o.forall_in(p.n_data, lambda s, c, f: o.Implies(
        o.And(_guard(o, p, y), p.s_exists), s <= p[y])))


def candidates() -> list[Invariant]:
    out = [_nonnegative(x) for x in INTS]
    for x, y in itertools.permutations(INTS, 2):
        out += [_compare(x, "<=", y), _compare(x, "<", y)] + ([_compare(x, "==", y)] if x < y else [])
    for y in INTS:
        out += [_ack_bound(0, y), _ack_bound(2, y), _data_bound(y)]
    out += [_atom("ACK: conn < a_next_conn", lambda o, p: o.forall_in(p.n_ack, lambda a, c, t: c < p.a_next_conn)),
            _atom("ACK: ts >= 1", lambda o, p: o.forall_in(p.n_ack, lambda a, c, t: t >= 1)),
            _atom("SFS: ts <= b_ts", lambda o, p: o.forall_in(p.n_sfs, lambda t: t <= p.b_ts)),
            _atom("SFS: ts >= 1", lambda o, p: o.forall_in(p.n_sfs, lambda t: t >= 1)),
            _atom("DATA: conn == s_conn", lambda o, p: o.forall_in(p.n_data, lambda s, c, f: o.And(
                p.s_exists, c == p.s_conn))),
            _atom("DATA: seqno >= 1", lambda o, p: o.forall_in(p.n_data, lambda s, c, f: s >= 1)),
            _atom("CLOSE: conn < a_next_conn", lambda o, p: o.forall_in(p.n_close, lambda c: c < p.a_next_conn))]
    return out


def reachable_states(models: Iterable[str] = SAMPLED, max_states: int = 1500, walks: int = 40,
                     depth: int = 60, seed: int = 1) -> list[State]:
    """Abstract states of the shipped models' worlds: bounded BFS, then seeded random walks."""
    import random

    out: list[State] = []
    rng = random.Random(seed)
    for name in models:
        world = load_world(MODELS / f"{name}.toml")
        seen = set(world.init_states())
        queue = deque(seen)
        while queue:
            state = queue.popleft()
            for _, after in world.successors(state):
                if after not in seen and len(seen) < max_states:
                    seen.add(after)
                    queue.append(after)
        for _ in range(walks):
            state = world.init_states()[0]
            for _ in range(depth):
                successors = [after for _, after in world.successors(state)]
                if not successors:
                    break
                state = rng.choice(successors)
                seen.add(state)
        out += [UNICAST3_BINDING.abstract(world.view(s)) for s in seen]
    return out


def sample_filter(invariants: Sequence[Invariant], states: Sequence[State], v: Variant) -> list[Invariant]:
    return [inv for inv in invariants if all(inv.state(CONCRETE, s, v) for s in states)]  # type: ignore[misc]


def houdini(invariants: Sequence[Invariant], v: Variant) -> list[Invariant]:
    """The largest subset of ``invariants`` that is inductive (initiation and consecution)."""
    o = Z3Ops()
    p, q = symbolic_state("", UNICAST3.fields), symbolic_state("'", UNICAST3.fields)
    alive = [inv for inv in invariants if _holds_initially(o, p, inv, v)]
    changed = True
    while changed:
        changed = False
        for action in UNICAST3.actions:
            while alive:
                broken = _broken_by(o, p, q, action, alive, v)
                if not broken:
                    break
                alive = [inv for inv in alive if inv.name not in broken]
                changed = True
    return alive


def _holds_initially(o: Z3Ops, p: State, inv: Invariant, v: Variant) -> bool:
    solver = z3.Solver()
    solver.add(UNICAST3.initial(o, p), z3.Not(inv.state(o, p, v)))  # type: ignore[misc]
    return budget.check(solver) == z3.unsat


def _broken_by(o: Z3Ops, p: State, q: State, action: Any, alive: Sequence[Invariant], v: Variant) -> set[str]:
    """Names of the candidates that ``action`` can break from a state satisfying all of them."""
    posts = {inv.name: z3.Bool(f"holds[{inv.name}]") for inv in alive}
    solver = z3.Solver()
    solver.add(conjunction(o, p, alive, v), action.relation(o, p, q, symbolic_params(action), v))
    solver.add(*[posts[inv.name] == inv.state(o, q, v) for inv in alive])  # type: ignore[misc]
    solver.add(z3.Not(z3.And(*posts.values())))
    answer = budget.check(solver)
    if answer == z3.unsat:
        return set()
    if answer == z3.unknown:  # one query per candidate instead; drop those not proved
        return {inv.name for inv in alive if not _kept(o, p, q, action, alive, inv, v)}
    model = solver.model()
    return {name for name, flag in posts.items() if z3.is_false(model.eval(flag, model_completion=True))}


def _kept(o: Z3Ops, p: State, q: State, action: Any, alive: Sequence[Invariant], inv: Invariant,
          v: Variant) -> bool:
    solver = z3.Solver()
    solver.add(conjunction(o, p, alive, v), action.relation(o, p, q, symbolic_params(action), v),
               z3.Not(inv.state(o, q, v)))  # type: ignore[misc]
    return budget.check(solver) == z3.unsat


@dataclass
class Inferred:
    candidates: int
    sampled_states: int
    survived_sample: int
    inductive: list[Invariant]
    implied: dict[str, bool]  # hand-written invariant -> implied by the inferred one
    seconds: float  # wall
    cpu_seconds: float  # this process's (z3's and the sampling's)


SHIPPED = Variant()


def infer(v: Variant = SHIPPED) -> Inferred:
    watch = Stopwatch()
    grammar = candidates()
    states = reachable_states()
    sampled = sample_filter(grammar, states, v)
    inductive = houdini(sampled, v)
    o = Z3Ops()
    p = symbolic_state("", UNICAST3.fields)
    base = conjunction(o, p, inductive, v)
    implied = {}
    for inv in TARGETS + STRENGTHENINGS:
        if inv.state is None:
            continue
        solver = z3.Solver()
        solver.add(base, z3.Not(inv.state(o, p, v)))
        implied[inv.name] = budget.check(solver) == z3.unsat
    return Inferred(len(grammar), len(states), len(sampled), inductive, implied, *watch.elapsed())
