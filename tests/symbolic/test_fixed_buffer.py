"""FixedBuffer's ring: the encoding against the engine (Hypothesis), the lemmas, a planted off-by-one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from checks.symbolic.fixed_buffer import RingArithmetic, prove_fixed_buffer
from impl.fixed_window import MAX_SEQNO, FixedBuffer

RING = RingArithmetic()
TOP_OR_BOTTOM = st.one_of(st.integers(0, 1000), st.integers(MAX_SEQNO - 300, MAX_SEQNO - 150))


@settings(max_examples=200, deadline=None)
@given(capacity=st.integers(1, 70), offset=TOP_OR_BOTTOM,
       purge=st.integers(0, 100), delta=st.integers(-3, 80), seed_edge=st.booleans())
def test_the_encoding_is_the_engines_index_and_edge(capacity: int, offset: int, purge: int, delta: int,
                                                    seed_edge: bool) -> None:
    buffer: FixedBuffer[int] = FixedBuffer(capacity, offset, seed_edge=seed_edge)
    for seqno in range(offset + 1, offset + 1 + min(purge, capacity - 1 if seed_edge else capacity)):
        buffer.add(seqno, seqno)
    buffer.purge(offset + purge, force=True)
    assert buffer.low >= offset
    seqno = buffer.low + delta
    assert RING.index(seqno, offset, capacity) == buffer.index(seqno)
    assert RING.full_for(seqno, buffer.low, capacity, seed_edge) == buffer.full_for(seqno)


def test_the_ring_lemmas_are_as_expected() -> None:
    lemmas = prove_fixed_buffer()
    assert len(lemmas) == 7
    assert [(lemma.name, lemma.result) for lemma in lemmas if not lemma.as_expected] == []


def test_a_planted_off_by_one_is_caught() -> None:
    """A ring one slot too large puts a seqno outside the buffer."""
    class OneTooMany(RingArithmetic):
        def index(self, seqno: Any, offset: Any, capacity: Any) -> Any:
            return (seqno - offset - 1) % (capacity + 1)

    name = "fixed buffer (JGroups' edge): every admitted seqno's slot is in 0 .. capacity - 1"
    planted = prove_fixed_buffer(OneTooMany(), select=lambda n: n == name)
    assert [lemma.result for lemma in planted] == ["counterexample"]
    assert [lemma.result for lemma in prove_fixed_buffer(select=lambda n: n == name)] == ["proved"]
