"""``impl/fixed_window.FixedBuffer``'s ring arithmetic (NAKACK4, UNICAST4) proved for every value.

A seqno ``s`` lives in slot ``(s - offset - 1) mod capacity`` (``FixedBuffer.index``) and the
window admits ``(low, low + capacity]`` (``FixedBuffer.full_for``: JGroups' edge is full when
``s - low > capacity``; the seed's edge, ``>=``, admits one less). ``RingArithmetic`` restates both
so that the same source runs on ints and on z3 integer terms; ``tests/symbolic/test_fixed_buffer.py``
checks it against the engine's public ``index`` and ``full_for`` with Hypothesis (random capacities,
offsets and purges, seqnos up to the top of the range), so the two cannot drift.

The lemmas hold for every capacity >= 1 and every ``0 <= offset <= low`` with seqnos up to
``MAX_SEQNO`` = 2**63 - 1. Python's ints are exact, and so is Java's long arithmetic here
(``s - offset - 1`` of two non-negative longs cannot overflow, ``%`` of a non-negative long is the
mathematical mod), so the integer proofs cover the top of the 64-bit range.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget
from checks.symbolic.table import Lemma
from impl.fixed_window import MAX_SEQNO


class RingArithmetic:
    """FixedBuffer's slot and edge, on ints or z3 terms."""

    def index(self, seqno: Any, offset: Any, capacity: Any) -> Any:
        return (seqno - offset - 1) % capacity

    def full_for(self, seqno: Any, low: Any, capacity: Any, seed_edge: bool) -> Any:
        distance = seqno - low
        return distance >= capacity if seed_edge else distance > capacity


def _prove(name: str, expected: str, hypothesis: Any, conclusion: Any, shown: tuple[Any, ...]) -> Lemma:
    """One lemma, in a z3 context of its own (as ``checks/symbolic/table.py``'s): the work its budget
    allows then does not depend on the queries this process made before (in the full suite a ring lemma
    came out unknown after other tests' queries, and proved alone)."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.add(z3.And(hypothesis, z3.Not(conclusion)).translate(ctx))
    watch = Stopwatch()
    answer = budget.check(solver)
    seconds, cpu = watch.elapsed()
    if answer == z3.unsat:
        return Lemma(name, "proved", expected, seconds, cpu)
    if answer == z3.sat:
        model = solver.model()
        return Lemma(name, "counterexample", expected, seconds, cpu,
                     ", ".join(f"{t}={model.eval(t.translate(ctx), model_completion=True)}" for t in shown))
    return Lemma(name, "unknown", expected, seconds, cpu, str(solver.reason_unknown()))


def prove_fixed_buffer(ring: RingArithmetic | None = None, select: Callable[[str], bool] | None = None
                       ) -> list[Lemma]:
    """Every lemma of the ring arithmetic ``ring`` (default: the engine's), with its result
    (``select(name)``: only some)."""
    ring = ring or RingArithmetic()
    lemmas = [lemma for lemma in _lemmas(ring) if select is None or select(lemma[0])]
    return [_prove(*lemma) for lemma in lemmas]


def _lemmas(ring: RingArithmetic) -> list[tuple[str, str, Any, Any, tuple[Any, ...]]]:
    """(name, expected, hypothesis, conclusion, terms to show) of each lemma."""
    offset, low, capacity, s1, s2 = z3.Ints("offset low capacity s1 s2")
    domain = z3.And(capacity >= 1, offset >= 0, offset <= low, low <= MAX_SEQNO)
    out: list[tuple[str, str, Any, Any, tuple[Any, ...]]] = []
    for seed_edge in (False, True):
        edge = "seed edge" if seed_edge else "JGroups' edge"

        def admitted(s: Any, seed: bool = seed_edge) -> Any:
            return z3.And(s > low, s <= MAX_SEQNO, z3.Not(ring.full_for(s, low, capacity, seed)))

        slot1, slot2 = ring.index(s1, offset, capacity), ring.index(s2, offset, capacity)
        out.append((f"fixed buffer ({edge}): every admitted seqno's slot is in 0 .. capacity - 1", "proved",
                    z3.And(domain, admitted(s1)), z3.And(slot1 >= 0, slot1 < capacity), (s1,)))
        out.append((f"fixed buffer ({edge}): distinct admitted seqnos get distinct slots", "proved",
                    z3.And(domain, admitted(s1), admitted(s2), s1 != s2), slot1 != slot2, (s1, s2)))
        size, upper = (capacity - 1, "capacity - 1") if seed_edge else (capacity, "capacity")
        exactly = z3.ForAll([s1], z3.Implies(z3.And(s1 > low, s1 <= MAX_SEQNO), admitted(s1) == (s1 <= low + size)))
        out.append((f"fixed buffer ({edge}): it admits exactly (low, low + {upper}]", "proved", domain, exactly, ()))
    wider = z3.And(capacity >= 1, offset >= 0, offset <= low, s1 > low, s2 > low, s1 <= low + capacity + 1,
                   s2 <= low + capacity + 1, s1 != s2)
    out.append(("fixed buffer: a window one seqno wider would put two seqnos in one slot", "counterexample",
                wider, ring.index(s1, offset, capacity) != ring.index(s2, offset, capacity), (capacity, low, s1, s2)))
    return out
