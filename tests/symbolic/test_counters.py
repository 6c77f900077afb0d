"""Wrapping timestamps and conn_ids: the z3 encodings against impl/common.py, and the lemmas."""

from __future__ import annotations

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.symbolic.counters import ID_BITS, TS_BITS, newer, next_id, prove_counters
from impl.common import TS_MODULUS, next_conn_id, ts_newer
from impl.wire import MAX_CONN_ID

timestamps = st.one_of(st.integers(0, TS_MODULUS - 1), st.integers(TS_MODULUS - 8, TS_MODULUS - 1),
                       st.integers(0, 8), st.integers((TS_MODULUS >> 1) - 4, (TS_MODULUS >> 1) + 4))


@settings(max_examples=300, deadline=None)
@given(ts=timestamps, last=timestamps)
def test_newer_is_the_engines_ts_newer(ts: int, last: int) -> None:
    encoded = z3.simplify(newer(z3.BitVecVal(ts, TS_BITS), z3.BitVecVal(last, TS_BITS)))
    assert z3.is_true(encoded) == ts_newer(ts, last)


@settings(max_examples=200, deadline=None)
@given(conn_id=st.one_of(st.integers(0, MAX_CONN_ID), st.integers(MAX_CONN_ID - 3, MAX_CONN_ID)))
def test_next_id_is_the_engines_next_conn_id(conn_id: int) -> None:
    encoded = z3.simplify(next_id(z3.BitVecVal(conn_id, ID_BITS)))
    assert encoded.as_long() == next_conn_id(conn_id)


def test_the_counter_lemmas_are_as_expected() -> None:
    lemmas = prove_counters()
    assert [(lemma.name, lemma.result) for lemma in lemmas if not lemma.as_expected] == []
    found = {lemma.name: lemma.detail for lemma in lemmas if lemma.result == "counterexample"}
    assert any("32767 -> next 0" in detail for detail in found.values())
    assert len(found) == 2


def test_a_wrong_comparison_is_caught() -> None:
    """A plain signed comparison instead of the serial one is not an order across the wrap."""
    a, b = z3.BitVecs("a b", TS_BITS)
    solver = z3.Solver()
    solver.add(newer(a, b) != (a > b))
    assert solver.check() == z3.sat
