"""``impl/fixed_window.FixedBuffer``'s ring arithmetic (NAKACK4, UNICAST4) proved for every value.

A seqno ``s`` lives in slot ``FixedBuffer.index(s) = (s - offset - 1) mod capacity`` and the window
admits ``(low, low + capacity]`` (``full_for``: JGroups' edge ``s - low > capacity``; the seed's
edge ``>=`` admits one less). The lemmas run the engine's *own* ``index`` and ``full_for`` on z3
integer terms (a buffer whose ``_offset``, ``_low`` and ``_capacity`` are z3 constants: the same
source evaluates on ints and on terms), for every capacity >= 1 and every ``0 <= offset <= low``
with seqnos up to ``MAX_SEQNO`` = 2**63 - 1. Python's ints are exact, and so is Java's long
arithmetic here (``s - offset - 1`` of two non-negative longs cannot overflow and ``%`` of a
non-negative long is the mathematical mod), so the integer proof covers the top of the 64-bit range.
"""

from __future__ import annotations

import time
from typing import Any

import z3

from checks.symbolic.table import Lemma
from impl.fixed_window import MAX_SEQNO, FixedBuffer


def symbolic_buffer(seed_edge: bool = False) -> tuple[FixedBuffer[Any], dict[str, Any]]:
    """A FixedBuffer whose offset, low and capacity are z3 integer constants."""
    buffer: FixedBuffer[Any] = FixedBuffer(1, 0, seed_edge=seed_edge)
    terms = {name: z3.Int(name) for name in ("offset", "low", "capacity")}
    buffer._offset, buffer._low, buffer._capacity = terms["offset"], terms["low"], terms["capacity"]
    return buffer, terms


def _prove(name: str, expected: str, hypothesis: Any, conclusion: Any, shown: tuple[Any, ...]) -> Lemma:
    solver = z3.Solver()
    solver.set("timeout", 30_000)
    solver.add(hypothesis, z3.Not(conclusion))
    started = time.perf_counter()
    answer = solver.check()
    seconds = time.perf_counter() - started
    if answer == z3.unsat:
        return Lemma(name, "proved", expected, seconds)
    if answer == z3.sat:
        model = solver.model()
        return Lemma(name, "counterexample", expected, seconds,
                     ", ".join(f"{t}={model.eval(t, model_completion=True)}" for t in shown))
    return Lemma(name, "unknown", expected, seconds, str(solver.reason_unknown()))


def prove_fixed_buffer() -> list[Lemma]:
    out = []
    for seed_edge in (False, True):
        buffer, t = symbolic_buffer(seed_edge)
        s1, s2 = z3.Ints("s1 s2")
        edge = "seed edge" if seed_edge else "JGroups' edge"
        domain = z3.And(t["capacity"] >= 1, t["offset"] >= 0, t["offset"] <= t["low"], t["low"] <= MAX_SEQNO)

        def admitted(s: Any, b: FixedBuffer[Any] = buffer, low: Any = t["low"]) -> Any:
            return z3.And(s > low, s <= MAX_SEQNO, z3.Not(b.full_for(s)))

        out.append(_prove(f"fixed buffer ({edge}): every admitted seqno's slot is in 0 .. capacity - 1", "proved",
                          z3.And(domain, admitted(s1)),
                          z3.And(buffer.index(s1) >= 0, buffer.index(s1) < t["capacity"]), (s1,)))
        out.append(_prove(f"fixed buffer ({edge}): distinct admitted seqnos get distinct slots", "proved",
                          z3.And(domain, admitted(s1), admitted(s2), s1 != s2),
                          buffer.index(s1) != buffer.index(s2), (s1, s2)))
        size = t["capacity"] if not seed_edge else t["capacity"] - 1
        upper = "capacity - 1" if seed_edge else "capacity"
        exactly = z3.ForAll([s1], z3.Implies(z3.And(s1 > t["low"], s1 <= MAX_SEQNO),
                                             admitted(s1) == (s1 <= t["low"] + size)))
        out.append(_prove(f"fixed buffer ({edge}): it admits exactly (low, low + {upper}]", "proved", domain,
                          exactly, ()))
    buffer, t = symbolic_buffer()
    s1, s2 = z3.Ints("s1 s2")
    wider = z3.And(t["capacity"] >= 1, t["offset"] >= 0, t["offset"] <= t["low"], s1 > t["low"], s2 > t["low"],
                   s1 <= t["low"] + t["capacity"] + 1, s2 <= t["low"] + t["capacity"] + 1, s1 != s2)
    out.append(_prove("fixed buffer: a window one seqno wider would put two seqnos in one slot", "counterexample",
                      wider, buffer.index(s1) != buffer.index(s2), (t["capacity"], t["low"], s1, s2)))
    return out
