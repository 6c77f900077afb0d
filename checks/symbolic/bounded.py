"""Bounded pre-states: a side condition that makes z3's model of a failed obligation a finite,
readable concrete state (at most ``PACKETS`` packets of each type, ``SLOTS`` held slots, numbers in
0..``SMALL``). A bounded counterexample is a counterexample of the unbounded obligation too (it is
one of its states), so it also settles a query that z3 leaves ``unknown`` without the bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from checks.symbolic.ops import EMPTY, Z3Ops
from checks.symbolic.system import INT, State

PACKETS, SLOTS, SMALL = 3, 3, 4


def bounded(fields: dict[str, Any]) -> Callable[[Z3Ops, State], Any]:
    """Side condition on a pre-state of a model with ``fields``: every set holds at most PACKETS
    tuples, every map (``r_buf``) at most SLOTS entries, every number (in a field or a tuple) lies in
    0..SMALL. The constants it introduces are named after the fields (``read_state`` reads them)."""
    return lambda o, p: _bounded(fields, p)


def _bounded(fields: dict[str, Any], p: State) -> Any:
    parts = []
    for name, kind in fields.items():
        if kind == INT:
            parts.append(z3.And(p[name] >= 0, p[name] <= SMALL))
        elif isinstance(kind, tuple) and kind[0] == "set":
            parts.append(_finite_set(p[name], [k for k in kind[1:]], name))
    for name in [name for name, kind in fields.items() if isinstance(kind, tuple) and kind[0] == "map"]:
        keys = [z3.Int(f"{name}.k{i}") for i in range(SLOTS)]
        values = [z3.Int(f"{name}.v{i}") for i in range(SLOTS)]
        x = z3.Int(f"{name}.x")
        body: Any = z3.IntVal(EMPTY)
        for k, v in zip(keys, values):
            body = z3.If(x == k, v, body)
            parts += [k >= 0, k <= SMALL + 2, z3.Or(v == EMPTY, z3.And(v >= 0, v <= SMALL))]
        parts.append(p[name] == z3.Lambda([x], body))
    return z3.And(*parts)


def _finite_set(s: Any, kinds: list[str], name: str) -> Any:
    rows = [[(z3.Int if k == INT else z3.Bool)(f"{name}.{i}.{j}") for j, k in enumerate(kinds)] for i in range(PACKETS)]
    present = [z3.Bool(f"{name}.{i}.present") for i in range(PACKETS)]
    bound = [z3.Const(f"{name}.x{j}", z3.IntSort() if k == INT else z3.BoolSort()) for j, k in enumerate(kinds)]
    member = z3.Or(*[z3.And(present[i], *[b == r for b, r in zip(bound, rows[i])]) for i in range(PACKETS)])
    small = [z3.And(r >= 0, r <= SMALL) for row in rows for r, k in zip(row, kinds) if k == INT]
    return z3.And(s == z3.Lambda(bound, member), *small)


