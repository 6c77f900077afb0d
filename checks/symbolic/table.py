"""``impl/window.Table``'s arithmetic proved for every 64-bit value: the seqno -> (row, column)
mapping, growth and compaction.

The Table keeps seqno ``s`` at row ``((s - offset - 1) >> shift) - first_row``, column
``(s - offset - 1) & mask`` (``_locate``, inlined in ``add``); ``check_invariants`` reads a slot back
as ``offset + 1 + ((first_row + row) << shift) + column``; ``first_row`` is ``(low - offset) >>
shift`` ("row 0 holds low + 1"); ``add`` grows the row list to ``row + 1``; ``_discard_below_low``
drops the first ``((low' - offset) >> shift) - first_row`` rows when ``low`` rises to ``low'``.

``TableArithmetic`` states these once; its methods run on Python ints and on z3 64-bit vectors
alike (``>>`` is arithmetic on both, ``&`` and ``<<`` agree while nothing overflows). The encoding
is tied to the engine by ``tests/symbolic/test_table.py``, which checks the whole encoding (slot of
every stored item, first row, read-back, compaction count, growth) against a real ``Table``'s rows
with Hypothesis (random offsets, row widths, adds, removes and purges), so the two cannot drift.
(The engine's slot arithmetic is private to ``Table``; the layout rules keep checks/ out of it.)

The lemmas quantify over every signed 64-bit ``offset <= low <= hr`` whose span ``hr - offset``
does not overflow (Java's long arithmetic, which JGroups' table uses, is exact there) and every
``shift`` in 0..62 (msgs_per_row a power of two up to 2**62); the last one shows what the
precondition excludes: without it the index wraps. They are proved in steps (``STEPS``: generic
facts of shifts; index facts; then the lemmas with instances of both as hypotheses), because
bit-blasting a variable shift inside one long formula does not finish in minutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import z3

from checks.stopwatch import Stopwatch
from checks.symbolic import budget

BITS = 64


class TableArithmetic:
    """The Table's slot arithmetic (see the module docstring); ints or z3 bit-vectors."""

    def index(self, seqno: Any, offset: Any) -> Any:
        return seqno - offset - 1

    def first_row(self, low: Any, offset: Any, shift: Any) -> Any:
        return (low - offset) >> shift

    def locate(self, seqno: Any, offset: Any, shift: Any, first_row: Any) -> tuple[Any, Any]:
        index = self.index(seqno, offset)
        return (index >> shift) - first_row, index & ((1 << shift) - 1)

    def seqno_at(self, row: Any, column: Any, offset: Any, shift: Any, first_row: Any) -> Any:
        return offset + 1 + ((first_row + row) << shift) + column

    def rows_to_discard(self, new_low: Any, offset: Any, shift: Any, first_row: Any) -> Any:
        return ((new_low - offset) >> shift) - first_row

    def grown_rows(self, rows: Any, row: Any) -> Any:
        """``add`` extends the row list to ``row + 1`` rows when ``row`` lies beyond it."""
        if isinstance(row, int) and isinstance(rows, int):
            return max(rows, row + 1)
        return z3.If(row >= rows, row + 1, rows)


@dataclass
class Lemma:
    name: str
    result: str  # proved | counterexample | unknown
    expected: str  # what the lemma should give
    seconds: float  # wall
    cpu_seconds: float  # this process's (z3's)
    detail: str = ""

    @property
    def as_expected(self) -> bool:
        return self.result == self.expected

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "result": self.result, "expected": self.expected,
                "seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3),
                "detail": self.detail}


def _vars() -> dict[str, Any]:
    names = ("offset", "low", "new_low", "hr", "s", "s2", "shift", "row", "column", "rows")
    return {n: z3.BitVec(n, BITS) for n in names}


def _domain(v: dict[str, Any]) -> Any:
    """Every window the Table can be in: offset <= low <= new_low <= hr (new_low: where a purge or
    a removal moves low), no overflow in hr - offset, 0 <= shift <= 62."""
    return z3.And(v["offset"] <= v["low"], v["low"] <= v["new_low"], v["new_low"] <= v["hr"],
                  z3.BVSubNoOverflow(v["hr"], v["offset"]), z3.BVSubNoUnderflow(v["hr"], v["offset"], True),
                  v["shift"] >= 0, v["shift"] <= 62)


def _live(v: dict[str, Any], s: Any, low: Any = None) -> Any:
    return z3.And((v["low"] if low is None else low) < s, s <= v["hr"])


# Generic facts of 64-bit arithmetic, each proved on its own for all values; the lemmas below use
# instances of them as hypotheses (a proof in steps: bit-blasting a variable shift inside a long
# formula is slow, each step alone is fast).
_A, _B, _C, _SH = z3.BitVecs("a b c sh", BITS)
_SHIFTS = z3.And(_SH >= 0, _SH <= 62)
STEPS: tuple[tuple[str, Any, Any], ...] = (
    ("shift: a >> sh is monotone on non-negative values", z3.And(_SHIFTS, _B >= 0, _B <= _A),
     (_B >> _SH) <= (_A >> _SH)),
    ("shift: a >> sh of a non-negative value is non-negative", z3.And(_SHIFTS, _A >= 0), (_A >> _SH) >= 0),
    ("shift: (a << sh) + c splits back into a and c when 0 <= c < 2**sh and nothing overflows",
     z3.And(_SHIFTS, _A >= 0, _C >= 0, _C < (1 << _SH), (_A << _SH) >> _SH == _A, (_A << _SH) + _C >= 0),
     z3.And(((_A << _SH) + _C) >> _SH == _A, ((_A << _SH) + _C) & ((1 << _SH) - 1) == _C)),
    ("shift: a is (a >> sh) << sh plus its low sh bits", _SHIFTS,
     ((_A >> _SH) << _SH) + (_A & ((1 << _SH) - 1)) == _A),
)


def _step(index: int, a: Any, b: Any, c: Any, sh: Any) -> Any:
    """Instance of generic fact ``index`` (as an implication, valid because the fact is proved)."""
    _, hypothesis, conclusion = STEPS[index]
    pairs = [(x, y if z3.is_expr(y) else z3.BitVecVal(y, BITS)) for x, y in ((_A, a), (_B, b), (_C, c), (_SH, sh))]
    return z3.Implies(z3.substitute(hypothesis, *pairs), z3.substitute(conclusion, *pairs))


def _index_facts(t: TableArithmetic, v: dict[str, Any]) -> list[tuple[str, Any]]:
    """Linear facts about the indices under ``_domain`` (each proved, then used as a hypothesis)."""
    off, hr = v["offset"], v["hr"]
    low, new_low = v["low"] - off, v["new_low"] - off
    facts = [("table: 0 <= low - offset <= new_low - offset", z3.And(low >= 0, new_low >= low))]
    for name in ("s", "s2"):
        i = t.index(v[name], off)
        facts.append((f"table: a live {name}'s index lies in [low - offset, hr - offset)",
                      z3.Implies(_live(v, v[name]), z3.And(i >= low, i >= 0, i < hr - off))))
        facts.append((f"table: a live {name} above new_low has an index >= new_low - offset",
                      z3.Implies(_live(v, v[name], v["new_low"]), i >= new_low)))
    return facts


def _instances(t: TableArithmetic, v: dict[str, Any]) -> Any:
    off, sh = v["offset"], v["shift"]
    low, new_low = v["low"] - off, v["new_low"] - off
    i, i2 = t.index(v["s"], off), t.index(v["s2"], off)
    fr = t.first_row(v["low"], off, sh)
    at_row = fr + v["row"]
    return z3.And(_step(0, new_low, low, 0, sh), _step(0, i, low, 0, sh), _step(0, i2, low, 0, sh),
                  _step(0, i, new_low, 0, sh), _step(1, low, 0, 0, sh), _step(1, i, 0, 0, sh),
                  _step(1, v["low"] + 1 - off - 1, 0, 0, sh), _step(2, at_row, 0, v["column"], sh),
                  _step(3, i, 0, 0, sh))


INJECTIVE = "table: distinct live seqnos get distinct slots (injective on (low, hr]; by the read-back lemma)"


def _claims(t: TableArithmetic, v: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """(name, hypothesis, conclusion) of each lemma about the Table (each expected proved)."""
    off, shift = v["offset"], v["shift"]
    fr = t.first_row(v["low"], off, shift)
    width = 1 << shift
    r1, c1 = t.locate(v["s"], off, shift, fr)
    r2, c2 = t.locate(v["s2"], off, shift, fr)
    yield ("table: a live seqno's slot is in the rows (row >= 0, 0 <= column < msgs_per_row)",
           _live(v, v["s"]), z3.And(r1 >= 0, c1 >= 0, c1 < width))
    yield ("table: row 0 holds low + 1 (first_row = (low - offset) >> shift)", True,
           t.locate(v["low"] + 1, off, shift, fr)[0] == 0)
    # Injectivity from the read-back lemma (next) alone: equal slots read back the same seqno. The read-back
    # is an uninterpreted function here, so z3 reasons by congruence instead of bit-blasting it.
    read = z3.Function("read_back", *[z3.BitVecSort(BITS)] * 3)

    def read_back(s: Any, row: Any, column: Any) -> Any:
        return z3.Implies(_live(v, s), read(row, column) == s)

    yield (INJECTIVE, z3.And(_live(v, v["s"]), _live(v, v["s2"]), v["s"] != v["s2"], read_back(v["s"], r1, c1),
                             read_back(v["s2"], r2, c2)), z3.Or(r1 != r2, c1 != c2))
    yield ("table: reading a live seqno's slot back gives the seqno (check_invariants' base)",
           _live(v, v["s"]), t.seqno_at(r1, c1, off, shift, fr) == v["s"])
    at = t.seqno_at(v["row"], v["column"], off, shift, fr)
    at_row = fr + v["row"]
    yield ("table: every slot of a live seqno is that seqno's slot (onto: a bijection)",
           z3.And(v["row"] >= 0, v["column"] >= 0, v["column"] < width, (at_row << shift) >> shift == at_row,
                  (at_row << shift) + v["column"] >= 0, _live(v, at)),
           z3.And(t.locate(at, off, shift, fr)[0] == v["row"], t.locate(at, off, shift, fr)[1] == v["column"]))
    grown = t.grown_rows(v["rows"], r1)
    yield ("table: growth makes room for a live seqno (row < rows after add)",
           z3.And(_live(v, v["s"]), v["rows"] >= 1), z3.And(r1 < grown, grown >= v["rows"]))
    k = t.rows_to_discard(v["new_low"], off, shift, fr)
    r_new, c_new = t.locate(v["s"], off, shift, fr + k)
    yield ("table: compaction drops only rows wholly <= low (no live slot lost) and moves the rest",
           _live(v, v["s"], v["new_low"]),
           z3.And(k >= 0, r1 >= k, r_new == r1 - k, c_new == c1, fr + k == t.first_row(v["new_low"], off, shift)))


def prove_table(t: TableArithmetic | None = None, select: Callable[[str], bool] | None = None) -> list[Lemma]:
    """Every lemma of the Table's arithmetic ``t`` (default: the engine's), with its result: the
    generic steps, the index facts, the lemmas (using both as hypotheses), and the expected
    counterexample without the no-overflow precondition. ``select(name)``: only some of them (the
    lemmas still assume every step and fact: those are proved on their own)."""
    t = t or TableArithmetic()
    chosen = select or (lambda name: True)
    v = _vars()
    out = [_prove(name, "proved", hypothesis, conclusion, v)
           for name, hypothesis, conclusion in STEPS if chosen(name)]
    domain = _domain(v)
    facts = _index_facts(t, v)
    out += [_prove(name, "proved", domain, fact, v) for name, fact in facts if chosen(name)]
    known = z3.And(domain, *[fact for _, fact in facts], _instances(t, v))
    for name, hypothesis, conclusion in _claims(t, v):
        if chosen(name):  # injectivity follows from the read-back lemma alone (equal slots read back equal)
            assumed = hypothesis if name == INJECTIVE else z3.And(known, hypothesis)
            out.append(_prove(name, "proved", assumed, conclusion, v))
    if not chosen("table: without the no-overflow precondition the 64-bit index wraps (row < 0)"):
        return out
    fr = t.first_row(v["low"], v["offset"], v["shift"])
    unguarded = z3.And(v["offset"] <= v["low"], v["low"] <= v["hr"], v["shift"] >= 0, v["shift"] <= 62,
                       _live(v, v["s"]))
    out.append(_prove("table: without the no-overflow precondition the 64-bit index wraps (row < 0)",
                      "counterexample", unguarded, t.locate(v["s"], v["offset"], v["shift"], fr)[0] >= 0, v))
    return out


def _prove(name: str, expected: str, hypothesis: Any, conclusion: Any, v: dict[str, Any]) -> Lemma:
    """One lemma, in a z3 context of its own: z3's search (and so the work its budget allows) then
    does not depend on the queries this process made before (a lemma expected to have a
    counterexample came out unknown in one test order of the suite and not in another)."""
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
        shown = ", ".join(f"{k}={model.eval(x.translate(ctx), model_completion=True).as_signed_long()}"
                          for k, x in v.items() if k in ("offset", "low", "hr", "s", "shift"))
        return Lemma(name, "counterexample", expected, seconds, cpu, shown)
    return Lemma(name, "unknown", expected, seconds, cpu, str(solver.reason_unknown()))


MUTANTS: dict[str, Callable[[], TableArithmetic]] = {}


def mutant(name: str) -> Callable[[type[TableArithmetic]], type[TableArithmetic]]:
    def register(cls: type[TableArithmetic]) -> type[TableArithmetic]:
        MUTANTS[name] = cls
        return cls
    return register


@mutant("index without the -1 (seqno - offset)")
class _IndexOffByOne(TableArithmetic):
    def index(self, seqno: Any, offset: Any) -> Any:
        return seqno - offset


@mutant("compaction one seqno early ((low' - offset + 1) >> shift)")
class _DiscardOffByOne(TableArithmetic):
    def rows_to_discard(self, new_low: Any, offset: Any, shift: Any, first_row: Any) -> Any:
        return ((new_low - offset + 1) >> shift) - first_row
