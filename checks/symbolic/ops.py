"""Formulas that evaluate two ways: on z3 terms (to prove) and on Python values (to cross-check).

The symbolic models of this package write every guard, effect and invariant once, against an
``Ops`` object. ``Z3Ops`` turns the formula into a z3 term over symbolic state; ``ConcreteOps``
evaluates the very same Python source on a concrete state (ints, bools, frozensets, dicts) to a
bool. Comparison and arithmetic operators (``<``, ``+``, ``==``) already work on both kinds of
value; everything else (connectives, if-then-else, finite sets and maps, quantifiers over their
elements) goes through ``Ops``.

Value shapes
------------
- ``int`` / ``bool`` fields: z3 ``Int`` / ``Bool`` constants; Python ``int`` / ``bool``.
- *sets* of k-tuples (the network's packets of one type): z3 arrays from k indices to Bool; Python
  ``frozenset`` of k-tuples.
- *maps* from int to int with a default ``EMPTY`` (a receive window's slots): a z3 array Int -> Int;
  a Python ``dict`` holding only the non-default entries.

Quantifiers range over a set's members or a map's non-default keys, so on concrete values they are
finite loops; on z3 they become ``ForAll`` with fresh bound variables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import z3

EMPTY = -1  # a map's default value: "no entry" (every stored value is a conn_id >= 0)

Fn = Callable[..., Any]


class Ops:
    """The operations a formula may use beyond Python's operators (see the module docstring)."""

    def And(self, *args: Any) -> Any:
        raise NotImplementedError
    def Or(self, *args: Any) -> Any:
        raise NotImplementedError
    def Not(self, a: Any) -> Any:
        raise NotImplementedError
    def Implies(self, a: Any, b: Any) -> Any:
        raise NotImplementedError
    def If(self, c: Any, a: Any, b: Any) -> Any:
        raise NotImplementedError
    def has(self, s: Any, *key: Any) -> Any:
        raise NotImplementedError
    def add(self, s: Any, *key: Any) -> Any:
        raise NotImplementedError
    def remove(self, s: Any, *key: Any) -> Any:
        raise NotImplementedError
    def get(self, m: Any, k: Any) -> Any:
        raise NotImplementedError
    def put(self, m: Any, k: Any, v: Any) -> Any:
        raise NotImplementedError
    def restrict_above(self, m: Any, bound: Any) -> Any:
        raise NotImplementedError
    def forall_range(self, lo: Any, hi: Any, body: Fn) -> Any:
        raise NotImplementedError
    def forall_in(self, s: Any, body: Fn) -> Any:
        raise NotImplementedError
    def forall_map(self, m: Any, body: Fn) -> Any:
        raise NotImplementedError
    def subset(self, a: Any, b: Any) -> Any:
        raise NotImplementedError
    def add_where(self, s: Any, r: Any, rest: Fn, cond: Fn) -> Any:
        raise NotImplementedError
    def grown_by(self, small: Any, big: Any, cond: Fn) -> Any:
        raise NotImplementedError
    def empty_map(self) -> Any:
        raise NotImplementedError

    def add_range(self, s: Any, lo: Any, hi: Any, rest: Fn) -> Any:
        """``s`` plus ``(x, *rest(x))`` for every x in (lo, hi]."""
        raise NotImplementedError

    def restrict_to(self, m: Any, keys: Any, missing: Any) -> Any:
        """``m`` on the keys of the set ``keys`` (a key without an entry gets ``missing``), EMPTY elsewhere."""
        raise NotImplementedError

    def remove_where(self, s: Any, cond: Fn) -> Any:
        """``s`` without the tuples ``t`` for which ``cond(*t)`` holds."""
        raise NotImplementedError

    def add_row(self, s: Any, rel: Any, row: Any, cond: Fn, rest: Sequence[Any]) -> Any:
        """``s`` plus ``(j, *rest)`` for every ``(row, j)`` of the binary relation ``rel`` with ``cond(j)``."""
        raise NotImplementedError

    def fill_row(self, m: Any, rel: Any, value: Any, cond: Fn) -> Any:
        """``m`` with ``k -> value`` added for every ``(k, value)`` of the binary relation ``rel`` with
        ``cond(k)`` where ``m`` has no entry (existing entries stay)."""
        raise NotImplementedError

    def min(self, a: Any, b: Any) -> Any:
        return self.If(a < b, a, b)


class ConcreteOps(Ops):
    """Evaluation on Python values: every formula becomes a bool."""

    def And(self, *args: Any) -> bool:
        return all(args)

    def Or(self, *args: Any) -> bool:
        return any(args)

    def Not(self, a: Any) -> bool:
        return not a

    def Implies(self, a: Any, b: Any) -> bool:
        return (not a) or bool(b)

    def If(self, c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    def has(self, s: frozenset[tuple[Any, ...]], *key: Any) -> bool:
        return tuple(key) in s

    def add(self, s: frozenset[tuple[Any, ...]], *key: Any) -> frozenset[tuple[Any, ...]]:
        return s | {tuple(key)}

    def remove(self, s: frozenset[tuple[Any, ...]], *key: Any) -> frozenset[tuple[Any, ...]]:
        return s - {tuple(key)}

    def get(self, m: Mapping[int, int], k: int) -> int:
        return m.get(k, EMPTY)

    def put(self, m: Mapping[int, int], k: int, v: int) -> dict[int, int]:
        out = dict(m)
        if v == EMPTY:
            out.pop(k, None)
        else:
            out[k] = v
        return out

    def restrict_above(self, m: Mapping[int, int], bound: int) -> dict[int, int]:
        return {k: v for k, v in m.items() if k > bound}

    def forall_range(self, lo: int, hi: int, body: Fn) -> bool:
        return all(body(x) for x in range(lo + 1, hi + 1))

    def forall_in(self, s: frozenset[tuple[Any, ...]], body: Fn) -> bool:
        return all(body(*key) for key in s)

    def forall_map(self, m: Mapping[int, int], body: Fn) -> bool:
        return all(body(k, v) for k, v in m.items())

    def subset(self, a: frozenset[Any], b: frozenset[Any]) -> bool:
        return a <= b

    def add_where(self, s: frozenset[tuple[Any, ...]], r: frozenset[tuple[Any, ...]], rest: Fn, cond: Fn
                  ) -> frozenset[tuple[Any, ...]]:
        return s | {(x,) + tuple(rest(x)) for (x,) in r if cond(x)}

    def grown_by(self, small: frozenset[tuple[Any, ...]], big: frozenset[tuple[Any, ...]], cond: Fn) -> bool:
        return small <= big and all(cond(*key) for key in big - small)

    def empty_map(self) -> dict[int, int]:
        return {}

    def add_range(self, s: frozenset[tuple[Any, ...]], lo: int, hi: int, rest: Fn) -> frozenset[tuple[Any, ...]]:
        return s | {(x,) + tuple(rest(x)) for x in range(lo + 1, hi + 1)}

    def restrict_to(self, m: Mapping[int, int], keys: frozenset[tuple[Any, ...]], missing: int) -> dict[int, int]:
        out = {k: m.get(k, missing) for (k,) in keys}
        return {k: v for k, v in out.items() if v != EMPTY}

    def remove_where(self, s: frozenset[tuple[Any, ...]], cond: Fn) -> frozenset[tuple[Any, ...]]:
        return frozenset(t for t in s if not cond(*t))

    def add_row(self, s: frozenset[tuple[Any, ...]], rel: frozenset[tuple[Any, Any]], row: Any, cond: Fn,
                rest: Sequence[Any]) -> frozenset[tuple[Any, ...]]:
        return s | {(j, *rest) for i, j in rel if i == row and cond(j)}

    def fill_row(self, m: Mapping[int, int], rel: frozenset[tuple[int, int]], value: int, cond: Fn
                 ) -> dict[int, int]:
        return {**{k: value for k, v in rel if v == value and cond(k)}, **m}


class Z3Ops(Ops):
    """Construction of z3 terms; quantifiers get fresh bound variables."""

    def __init__(self, first: int = 0) -> None:
        self._next = first

    def branch(self) -> Z3Ops:
        """A builder whose bound variables are named on from here, this one's left as they are: the
        terms of one query then read the same whatever other queries were built before."""
        return Z3Ops(self._next)

    def _var(self, sort: z3.SortRef) -> z3.ExprRef:
        self._next += 1
        return z3.Const(f"q{self._next - 1}", sort)

    def And(self, *args: Any) -> Any:
        return z3.And(*args)

    def Or(self, *args: Any) -> Any:
        return z3.Or(*args)

    def Not(self, a: Any) -> Any:
        return z3.Not(a)

    def Implies(self, a: Any, b: Any) -> Any:
        return z3.Implies(a, b)

    def If(self, c: Any, a: Any, b: Any) -> Any:
        return z3.If(c, a, b)

    def has(self, s: Any, *key: Any) -> Any:
        return z3.Select(s, *key)

    def add(self, s: Any, *key: Any) -> Any:
        return z3.Store(s, *key, True)

    def remove(self, s: Any, *key: Any) -> Any:
        return z3.Store(s, *key, False)

    def get(self, m: Any, k: Any) -> Any:
        return z3.Select(m, k)

    def put(self, m: Any, k: Any, v: Any) -> Any:
        return z3.Store(m, k, v)

    def restrict_above(self, m: Any, bound: Any) -> Any:
        x = self._var(z3.IntSort())
        return z3.Lambda([x], z3.If(x > bound, z3.Select(m, x), EMPTY))

    def forall_range(self, lo: Any, hi: Any, body: Fn) -> Any:
        x = self._var(z3.IntSort())
        return z3.ForAll([x], z3.Implies(z3.And(lo < x, x <= hi), body(x)))

    def _bound(self, s: Any) -> list[z3.ExprRef]:
        sort = s.sort()
        arity = 1
        while True:
            try:
                sort.domain_n(arity)
            except z3.Z3Exception:
                break
            arity += 1
        return [self._var(sort.domain_n(i)) for i in range(arity)]

    def forall_in(self, s: Any, body: Fn) -> Any:
        keys = self._bound(s)
        return z3.ForAll(keys, z3.Implies(z3.Select(s, *keys), body(*keys)))

    def forall_map(self, m: Any, body: Fn) -> Any:
        x = self._var(z3.IntSort())
        return z3.ForAll([x], z3.Implies(z3.Select(m, x) != EMPTY, body(x, z3.Select(m, x))))

    def subset(self, a: Any, b: Any) -> Any:
        return self.forall_in(a, lambda *key: z3.Select(b, *key))

    def add_where(self, s: Any, r: Any, rest: Fn, cond: Fn) -> Any:
        keys = self._bound(s)
        head, tail = keys[0], keys[1:]
        fields = rest(head)
        new = z3.And(z3.Select(r, head), cond(head), *[v == f for v, f in zip(tail, fields)])
        return z3.Lambda(keys, z3.Or(z3.Select(s, *keys), new))

    def empty_map(self) -> Any:
        return z3.K(z3.IntSort(), z3.IntVal(EMPTY))

    def add_range(self, s: Any, lo: Any, hi: Any, rest: Fn) -> Any:
        keys = self._bound(s)
        head, tail = keys[0], keys[1:]
        new = z3.And(lo < head, head <= hi, *[v == f for v, f in zip(tail, rest(head))])
        return z3.Lambda(keys, z3.Or(z3.Select(s, *keys), new))

    def restrict_to(self, m: Any, keys: Any, missing: Any) -> Any:
        x = self._var(z3.IntSort())
        entry = z3.If(z3.Select(m, x) == EMPTY, missing, z3.Select(m, x))
        return z3.Lambda([x], z3.If(z3.Select(keys, x), entry, EMPTY))

    def remove_where(self, s: Any, cond: Fn) -> Any:
        keys = self._bound(s)
        return z3.Lambda(keys, z3.And(z3.Select(s, *keys), z3.Not(cond(*keys))))

    def add_row(self, s: Any, rel: Any, row: Any, cond: Fn, rest: Sequence[Any]) -> Any:
        keys = self._bound(s)
        head, tail = keys[0], keys[1:]
        new = z3.And(z3.Select(rel, row, head), cond(head), *[v == r for v, r in zip(tail, rest)])
        return z3.Lambda(keys, z3.Or(z3.Select(s, *keys), new))

    def fill_row(self, m: Any, rel: Any, value: Any, cond: Fn) -> Any:
        x = self._var(z3.IntSort())
        new = z3.If(z3.And(z3.Select(rel, x, value), cond(x)), value, EMPTY)
        return z3.Lambda([x], z3.If(z3.Select(m, x) != EMPTY, z3.Select(m, x), new))

    def grown_by(self, small: Any, big: Any, cond: Fn) -> Any:
        keys = self._bound(big)
        return z3.And(self.subset(small, big),
                      z3.ForAll(keys, z3.Implies(z3.And(z3.Select(big, *keys), z3.Not(z3.Select(small, *keys))),
                                                 cond(*keys))))
