"""What every symbolic model of this package is made of: a state (field name -> value, z3 terms
or Python values), guarded actions, the frame condition, and a model's description for the
obligations. A field's kind is ``INT``, ``BOOL``, ``("map",)`` (int -> int, ``ops.EMPTY`` default)
or ``("set", kind, ...)`` (a set of tuples: a packet type in flight).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import z3

from checks.symbolic.ops import Ops

INT, BOOL = "int", "bool"


class State(dict[str, Any]):
    """A symbolic or concrete state: field name -> value (attribute access for formulas)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _sort(kind: str) -> z3.SortRef:
    return z3.IntSort() if kind == INT else z3.BoolSort()


def symbolic_state(suffix: str, fields: dict[str, Any]) -> State:
    """Fresh z3 constants for every field of ``fields``, named ``<field><suffix>``."""
    out = State()
    for name, kind in fields.items():
        if kind == INT:
            out[name] = z3.Int(name + suffix)
        elif kind == BOOL:
            out[name] = z3.Bool(name + suffix)
        elif kind[0] == "map":
            out[name] = z3.Array(name + suffix, z3.IntSort(), z3.IntSort())
        else:
            out[name] = z3.Array(name + suffix, *[_sort(k) for k in kind[1:]], z3.BoolSort())
    return out


def frame(o: Ops, p: State, q: State, changed: dict[str, Any], free: Iterable[str] = ()) -> Any:
    """q equals ``changed`` on those fields, is unconstrained on ``free``, equals p elsewhere."""
    skip = set(free)
    parts = [q[f] == value for f, value in changed.items()]
    parts += [q[f] == p[f] for f in p if f not in changed and f not in skip]
    return o.And(*parts)


@dataclass(frozen=True)
class Action:
    name: str
    params: tuple[tuple[str, Any], ...]  # (name, sort kind) of the action's parameters
    guard: Callable[[Ops, State, dict[str, Any], Any], Any]  # the last argument: the spec's Variant
    effect: Callable[[Ops, State, State, dict[str, Any], Any], Any]

    def relation(self, o: Ops, p: State, q: State, a: dict[str, Any], v: Any) -> Any:
        return o.And(self.guard(o, p, a, v), self.effect(o, p, q, a, v))


def symbolic_params(action: Action, suffix: str = "") -> dict[str, Any]:
    """Fresh z3 constants for ``action``'s parameters."""
    out: dict[str, Any] = {}
    for name, kind in action.params:
        full = f"{action.name}.{name}{suffix}"
        if kind == INT:
            out[name] = z3.Int(full)
        elif kind == BOOL:
            out[name] = z3.Bool(full)
        else:
            out[name] = z3.Array(full, *[_sort(k) for k in kind[1:]], z3.BoolSort())
    return out


@dataclass(frozen=True)
class ModelSpec:
    """A symbolic model as the obligations see it: its fields, actions and initial states."""

    name: str
    fields: dict[str, Any]
    actions: tuple[Action, ...]
    initial: Callable[[Ops, State], Any]
    sender: tuple[str, ...] = ()  # the send entry's fields (meaningless while it does not exist)
    receiver: tuple[str, ...] = ()  # the receive entry's

    def action(self, name: str) -> Action:
        return next(a for a in self.actions if a.name == name)
