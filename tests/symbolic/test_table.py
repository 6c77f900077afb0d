"""The Table's slot arithmetic: the encoding against the engine (Hypothesis), the 64-bit lemmas."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.symbolic.table import MUTANTS, TableArithmetic, prove_table
from impl.window import Table

ARITH = TableArithmetic()
ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "purge", "force"]), st.integers(0, 40)), max_size=40)


def check_encoding(table: Table[int]) -> None:
    """Every stored item sits where the encoding says, and reads back as its seqno."""
    shift, offset, first_row = table._shift, table.offset, table._first_row
    assert first_row == ARITH.first_row(table.low, offset, shift)
    for r, row in enumerate(table._rows):
        for c, item in enumerate(row or ()):
            if item is not None:
                assert ARITH.locate(item, offset, shift, first_row) == (r, c) == table._locate(item)
                assert ARITH.seqno_at(r, c, offset, shift, first_row) == item
                assert 0 <= r < ARITH.grown_rows(len(table._rows), r)


@settings(max_examples=150, deadline=None)
@given(offset=st.integers(-(2**63), 2**63 - 200), width=st.integers(1, 9), steps=ops)
def test_the_encoding_is_the_engines_arithmetic(offset: int, width: int, steps: list[tuple[str, int]]) -> None:
    table: Table[int] = Table(offset, msgs_per_row=width, initial_rows=1, max_span=64)
    for op, delta in steps:
        before_first, before_low = table._first_row, table.low
        if op == "add":
            table.add(table.hd + 1 + delta % 12, table.hd + 1 + delta % 12)
        elif op == "remove":
            table.remove_many()
        else:
            table.purge(table.low + delta % 6, force=op == "force")
        table.check_invariants()
        check_encoding(table)
        if table.low != before_low:  # compaction: first_row moved by the encoding's row count
            moved = ARITH.rows_to_discard(table.low, offset, table._shift, before_first)
            assert moved >= 0 and table._first_row == before_first + moved


def test_the_lemmas_hold_for_every_64_bit_window_fast_part() -> None:
    names = {"table: a live seqno's slot is in the rows (row >= 0, 0 <= column < msgs_per_row)",
             "table: compaction drops only rows wholly <= low (no live slot lost) and moves the rest",
             "table: every slot of a live seqno is that seqno's slot (onto: a bijection)",
             "table: without the no-overflow precondition the 64-bit index wraps (row < 0)"}
    lemmas = prove_table(select=lambda name: name in names or name.startswith("shift"))
    assert {lemma.name for lemma in lemmas} >= names
    assert [lemma.name for lemma in lemmas if not lemma.as_expected] == []


@pytest.mark.slow
def test_every_table_lemma_is_as_expected() -> None:
    lemmas = prove_table()
    assert len(lemmas) == 17 and all(lemma.as_expected for lemma in lemmas), [
        (lemma.name, lemma.result) for lemma in lemmas if not lemma.as_expected]


@pytest.mark.parametrize("name,lemma", [
    ("index without the -1 (seqno - offset)", "table: row 0 holds low + 1 (first_row = (low - offset) >> shift)"),
    ("compaction one seqno early ((low' - offset + 1) >> shift)",
     "table: compaction drops only rows wholly <= low (no live slot lost) and moves the rest"),
])
def test_a_planted_off_by_one_is_caught(name: str, lemma: str) -> None:
    results = prove_table(MUTANTS[name](), select=lambda n: n == lemma)
    assert [(r.name, r.result) for r in results] == [(lemma, "counterexample")]
    assert prove_table(select=lambda n: n == lemma)[0].result == "proved"
