"""FixedBuffer's ring: the engine's own index and full_for, run on z3 terms, for every capacity."""

from __future__ import annotations

from typing import Any

import pytest

from checks.symbolic.fixed_buffer import prove_fixed_buffer
from impl.fixed_window import FixedBuffer


def test_the_ring_lemmas_are_as_expected() -> None:
    lemmas = prove_fixed_buffer()
    assert len(lemmas) == 7
    assert [(lemma.name, lemma.result) for lemma in lemmas if not lemma.as_expected] == []


def test_a_planted_off_by_one_in_the_engine_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proofs read the engine's source: a ring one slot too large is out of the buffer."""
    def index(self: FixedBuffer[Any], seqno: Any) -> Any:
        return (seqno - self._offset - 1) % (self._capacity + 1)

    monkeypatch.setattr(FixedBuffer, "index", index)
    failed = {lemma.name for lemma in prove_fixed_buffer() if not lemma.as_expected}
    assert "fixed buffer (JGroups' edge): every admitted seqno's slot is in 0 .. capacity - 1" in failed


def test_the_symbolic_buffer_is_the_engine_on_ints() -> None:
    buffer: FixedBuffer[int] = FixedBuffer(5, 7)
    assert [buffer.index(s) for s in range(8, 14)] == [0, 1, 2, 3, 4, 0]
    assert not buffer.full_for(12) and buffer.full_for(13)
