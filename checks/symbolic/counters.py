"""The engines' wrapping counters for every machine value: timestamps and conn_ids.

``impl/common.ts_newer(ts, last)`` is the serial-number comparison of 31-bit timestamps
(``0 < (ts - last) mod 2**31 < 2**30``, digest 5.2); ``impl/common.next_conn_id`` counts conn_ids
0 .. 32767 and wraps to 0 (digest 5.1). ``newer`` and ``next_id`` below restate them on z3
bit-vectors (31 and 16 bits); ``tests/symbolic/test_counters.py`` checks both against the engine
functions on random values with Hypothesis, so the two cannot drift.

Lemmas (``prove_counters``):

- timestamps: ``newer`` is never symmetric; on any set of timestamps within 2**30 of a base (the
  window the engines rely on) it is a strict total order, the order of the offsets from the base;
  without wrap it is plain ``>``; with a span of 2**30 or more it has a cycle (the expected
  counterexample: three timestamps each "newer" than the next).
- conn_ids: ``next_id`` is +1 modulo 2**15, so 32768 consecutive connections of one member have
  distinct ids and UNICAST3's rule ("any different conn_id starts a new window") tells each new
  connection from the previous 32767. UNICAST4's numeric rule ("only a higher conn_id resets") has
  the expected counterexample at the wrap: the connection after 32767 gets 0, lower than the id the
  receiver holds, so the receiver keeps the old window and never delivers the new connection's
  messages. A member that opens 32768 connections (ids are shared across all its peers) reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget
from checks.symbolic.table import Lemma
from impl.common import TS_MODULUS
from impl.wire import MAX_CONN_ID

TS_BITS = TS_MODULUS.bit_length() - 1  # 31
ID_BITS = (MAX_CONN_ID + 1).bit_length()  # 16: ids 0 .. 2**15 - 1 live in a 16-bit short
HALF = 1 << (TS_BITS - 1)  # 2**30


def newer(ts: Any, last: Any) -> Any:
    """``ts_newer`` on 31-bit vectors: the difference modulo 2**31 lies in (0, 2**30)."""
    diff = ts - last  # wraps modulo 2**31
    return z3.And(diff != 0, z3.ULT(diff, HALF))


def next_id(conn_id: Any) -> Any:
    """``next_conn_id`` on 16-bit vectors: +1, wrapping to 0 after MAX_CONN_ID."""
    return z3.If(z3.UGE(conn_id, MAX_CONN_ID), z3.BitVecVal(0, ID_BITS), conn_id + 1)


def _check(name: str, expected: str, claim: Any, shown: Callable[[z3.ModelRef], str] | None = None) -> Lemma:
    """``claim`` for all values (proved) or z3's counterexample to it, in a z3 context of its own (as the
    Table's and FixedBuffer's lemmas): the work its budget allows does not depend on earlier queries."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.add(z3.Not(claim).translate(ctx))
    watch = Stopwatch()
    answer = budget.check(solver)
    seconds, cpu = watch.elapsed()
    if answer == z3.unsat:
        return Lemma(name, "proved", expected, seconds, cpu)
    if answer == z3.sat:
        model = solver.model().translate(claim.ctx)  # ``shown`` reads the claim's own variables
        return Lemma(name, "counterexample", expected, seconds, cpu, shown(model) if shown else "")
    return Lemma(name, "unknown", expected, seconds, cpu, str(solver.reason_unknown()))


def _timestamp_lemmas() -> list[Lemma]:
    a, b, c, base = z3.BitVecs("a b c base", TS_BITS)
    d1, d2, d3 = z3.BitVecs("d1 d2 d3", TS_BITS)
    in_window = z3.And(z3.ULT(d1, HALF), z3.ULT(d2, HALF), z3.ULT(d3, HALF))
    x1, x2, x3 = base + d1, base + d2, base + d3
    cycle = z3.And(newer(a, b), newer(b, c), newer(c, a))

    def show(model: z3.ModelRef) -> str:
        return ", ".join(f"{v}={model.eval(v, model_completion=True).as_long()}" for v in (a, b, c))

    no_wrap = z3.And(z3.ULT(a, HALF), z3.ULT(b, HALF))
    return [
        _check("timestamps: newer(a, b) and newer(b, a) never both hold", "proved",
               z3.ForAll([a, b], z3.Not(z3.And(newer(a, b), newer(b, a))))),
        _check("timestamps: within 2**30 of a base, newer is the order of the offsets (strict, total)", "proved",
               z3.ForAll([base, d1, d2], z3.Implies(in_window, newer(x1, x2) == z3.UGT(d1, d2)))),
        _check("timestamps: within 2**30 of a base, newer is transitive", "proved",
               z3.ForAll([base, d1, d2, d3], z3.Implies(z3.And(in_window, newer(x1, x2), newer(x2, x3)),
                                                         newer(x1, x3)))),
        _check("timestamps: below 2**30 (no wrap), newer is plain >", "proved",
               z3.ForAll([a, b], z3.Implies(no_wrap, newer(a, b) == z3.UGT(a, b)))),
        _check("timestamps: a span of 2**30 or more breaks the order (a cycle)", "counterexample",
               z3.Not(cycle), show),
    ]


def _conn_id_lemmas() -> list[Lemma]:
    c, k = z3.BitVecs("c k", ID_BITS)
    valid = z3.ULE(c, MAX_CONN_ID)
    modulus = MAX_CONN_ID + 1

    def show(model: z3.ModelRef) -> str:
        value = model.eval(c, model_completion=True).as_long()
        return f"conn_id {value} -> next {model.eval(next_id(c), model_completion=True).as_long()}"

    after_k = z3.URem(c + k, modulus)
    return [
        _check("conn_ids: next is +1 modulo 2**15 on every valid id", "proved",
               z3.ForAll([c], z3.Implies(valid, next_id(c) == z3.URem(c + 1, modulus)))),
        _check("conn_ids: 32768 consecutive connections have distinct ids (UNICAST3's any-different rule "
               "tells each from the previous 32767)", "proved",
               z3.ForAll([c, k], z3.Implies(z3.And(valid, z3.UGT(k, 0), z3.ULT(k, modulus)), after_k != c))),
        _check("conn_ids: UNICAST4's only-a-higher-id-resets rule fails at the wrap (next id is lower)",
               "counterexample", z3.Implies(valid, z3.UGT(next_id(c), c)), show),
    ]


def prove_counters() -> list[Lemma]:
    return _timestamp_lemmas() + _conn_id_lemmas()
