"""Tests for impl/fixed_window.py: one test per rule of JGroups' FixedBuffer, then a Hypothesis
state machine that runs random operations against a plain dict model, with offsets near 2**63."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from impl.fixed_window import MAX_SEQNO, AddStatus, FixedBuffer


def filled(capacity: int, seqnos: list[int], offset: int = 0, seed_edge: bool = False) -> FixedBuffer[str]:
    buf: FixedBuffer[str] = FixedBuffer(capacity, offset, seed_edge=seed_edge)
    for s in seqnos:
        assert buf.add(s, f"m{s}", block=True) is AddStatus.ADDED
    buf.check_invariants()
    return buf


def test_a_new_buffer_starts_at_its_offset() -> None:
    buf: FixedBuffer[str] = FixedBuffer(4, 10)
    assert (buf.low, buf.hd, buf.high, buf.size, buf.num_missing) == (10, 10, 10, 0, 0)
    assert buf.index(11) == 0 and buf.index(14) == 3 and buf.index(15) == 0


@pytest.mark.parametrize(("capacity", "offset"), [(0, 0), (-1, 0), (4, -1), (4, MAX_SEQNO + 1)])
def test_bad_construction_is_refused(capacity: int, offset: int) -> None:
    with pytest.raises(ValueError):
        FixedBuffer(capacity, offset)


def test_the_code_edge_holds_exactly_capacity_messages() -> None:
    buf = filled(3, [1, 2, 3])
    assert buf.add(4, "m4", block=True) is AddStatus.WOULD_BLOCK
    assert buf.add(4, "m4") is AddStatus.BEYOND_CAPACITY
    assert (buf.high, buf.size, buf.num_blockings, buf.num_dropped) == (3, 3, 1, 1)


def test_the_seed_edge_holds_one_message_less() -> None:
    buf = filled(3, [1, 2], seed_edge=True)
    assert buf.add(3, "m3", block=True) is AddStatus.WOULD_BLOCK
    assert buf.add(3, "m3") is AddStatus.BEYOND_CAPACITY
    one: FixedBuffer[str] = FixedBuffer(1, seed_edge=True)
    assert one.add(1, "m1", block=True) is AddStatus.WOULD_BLOCK  # capacity 1: nothing ever fits


def test_add_rejects_purged_duplicate_and_invalid_seqnos() -> None:
    buf = filled(4, [1, 2])
    assert buf.add(2, "again") is AddStatus.DUPLICATE
    assert buf.get(2) == "m2"
    assert buf.remove_many(nullify=True) == ["m1", "m2"]
    assert buf.add(2, "m2") is AddStatus.PURGED and buf.add(0, "m0") is AddStatus.PURGED
    assert buf.add(-1, "x") is AddStatus.INVALID and buf.add(MAX_SEQNO + 1, "x") is AddStatus.INVALID
    with pytest.raises(ValueError):
        buf.add(3, None)  # type: ignore[arg-type]


def test_a_closed_buffer_fails_blocked_adds_but_takes_what_fits() -> None:
    buf = filled(2, [1, 2])
    buf.close()
    assert buf.add(3, "m3", block=True) is AddStatus.CLOSED and buf.num_dropped == 1
    assert buf.remove(nullify=False) == "m1" and buf.purge(1)
    assert buf.add(3, "m3", block=True) is AddStatus.ADDED  # within capacity: no wait, no failure


def test_remove_without_nullify_keeps_the_item_until_a_purge() -> None:
    buf = filled(4, [1, 2, 3])
    assert buf.remove_many(nullify=False, max_items=2) == ["m1", "m2"]
    assert (buf.low, buf.hd, buf.size) == (0, 2, 1)
    assert buf.get(1) == "m1"  # kept for retransmission
    assert buf.purge(5) and (buf.low, buf.hd) == (2, 2)  # non-forced: clamped to hd
    assert buf.get(1) is None and buf.get(3) == "m3"
    assert not buf.purge(2)  # nothing above low: low did not move


def test_a_forced_purge_clamps_to_high_and_recounts() -> None:
    buf = filled(4, [1, 2, 4])
    assert buf.num_missing == 1 and buf.missing() == [3]
    assert buf.purge(9, force=True)
    assert (buf.low, buf.hd, buf.high, buf.size) == (4, 4, 4, 0)
    buf.check_invariants()


def test_purge_makes_room_for_a_blocked_sender() -> None:
    buf = filled(2, [1, 2])
    assert buf.add(3, "m3", block=True) is AddStatus.WOULD_BLOCK
    buf.remove_many(nullify=False)
    assert buf.purge(1)
    assert buf.add(3, "m3", block=True) is AddStatus.ADDED and buf.index(3) == buf.index(1)


def test_a_nullifying_remove_after_kept_ones_leaves_no_stale_slot() -> None:
    """Found by the state machine: 1 kept (no nullify), 2 removed with nullify; 1's slot is the
    slot of 3, which must take 3 and not report a duplicate."""
    buf = filled(2, [1, 2])
    assert buf.remove(nullify=False) == "m1" and buf.remove(nullify=True) == "m2"
    assert buf.low == 2 and buf.get(1) is None
    assert buf.add(3, "m3") is AddStatus.ADDED
    buf.check_invariants()


def test_skip_if_walks_hd_over_dont_loopback_messages() -> None:
    buf: FixedBuffer[str] = FixedBuffer(4)
    assert buf.add(2, "skip", skip_if=lambda m: m == "skip") is AddStatus.ADDED
    assert buf.hd == 0  # 1 is missing: hd cannot pass it
    assert buf.add(1, "skip", skip_if=lambda m: m == "skip") is AddStatus.ADDED
    assert (buf.hd, buf.size) == (2, 0)
    buf.check_invariants()


def test_missing_scans_a_bounded_range() -> None:
    buf = filled(16, [1, 3, 5, 7, 9])
    assert buf.missing() == [2, 4, 6, 8]
    assert buf.missing(max_scan=4) == [2, 4]  # seqnos 2..5 scanned
    assert buf.highest_deliverable() == 1


@settings(max_examples=200, deadline=None)
@given(capacity=st.integers(1, 40), offset=st.one_of(st.integers(0, 1000), st.integers(MAX_SEQNO - 2000, MAX_SEQNO)),
       low_ahead=st.integers(0, 500))
def test_slots_are_a_bijection_on_the_valid_range(capacity: int, offset: int, low_ahead: int) -> None:
    """Every window position (low, low + capacity] maps to a different slot, up to MAX_SEQNO."""
    low = min(offset + low_ahead, MAX_SEQNO)
    buf: FixedBuffer[str] = FixedBuffer(capacity, offset)
    valid = range(low + 1, min(low + capacity, MAX_SEQNO) + 1)
    slots = [buf.index(s) for s in valid]
    assert len(set(slots)) == len(slots) and all(0 <= i < capacity for i in slots)


def test_near_the_top_of_the_seqno_range() -> None:
    buf = filled(4, [MAX_SEQNO - 2, MAX_SEQNO - 1, MAX_SEQNO], offset=MAX_SEQNO - 3)
    assert buf.add(MAX_SEQNO + 1, "wrap", block=True) is AddStatus.INVALID
    assert buf.remove_many(nullify=True) == [f"m{MAX_SEQNO - 2}", f"m{MAX_SEQNO - 1}", f"m{MAX_SEQNO}"]
    assert buf.low == MAX_SEQNO
    buf.check_invariants()


class DictModel:
    """The window rules over a plain dict (no ring): what FixedBuffer must agree with."""

    def __init__(self, capacity: int, offset: int, seed_edge: bool) -> None:
        self.capacity, self.seed_edge = capacity, seed_edge
        self.items: dict[int, str] = {}
        self.low = self.hd = self.high = offset
        self.open = True

    def full_for(self, s: int) -> bool:
        return s - self.low >= self.capacity if self.seed_edge else s - self.low > self.capacity

    def add(self, s: int, item: str, block: bool) -> AddStatus:
        if not 0 <= s <= MAX_SEQNO:
            return AddStatus.INVALID
        if s <= self.low:
            return AddStatus.PURGED
        if self.full_for(s):
            return (AddStatus.WOULD_BLOCK if self.open else AddStatus.CLOSED) if block else AddStatus.BEYOND_CAPACITY
        if s in self.items:
            return AddStatus.DUPLICATE
        self.items[s] = item
        self.high = max(self.high, s)
        return AddStatus.ADDED

    def remove(self, nullify: bool) -> str | None:
        item = self.items.get(self.hd + 1)
        if item is None:
            return None
        self.hd += 1
        if nullify:
            self.items = {k: v for k, v in self.items.items() if k > self.hd}
            self.low = self.hd
        return item

    def purge(self, s: int, force: bool) -> bool:
        target = min(s, self.high if force else self.hd)
        if target <= self.low:
            return False
        self.items = {k: v for k, v in self.items.items() if k > target}
        self.low = target
        self.hd = max(self.hd, target)
        return True


class FixedBufferMachine(RuleBasedStateMachine):
    """Random adds (sender and receiver), removes, purges, closes; after every step the buffer
    agrees with the dict model and keeps its invariants (no live slot is ever overwritten)."""

    buf: FixedBuffer[str]
    model: DictModel

    @initialize(capacity=st.integers(1, 8), seed_edge=st.booleans(),
                offset=st.one_of(st.integers(0, 50), st.integers(MAX_SEQNO - 60, MAX_SEQNO)))
    def start(self, capacity: int, offset: int, seed_edge: bool) -> None:
        self.buf = FixedBuffer(capacity, offset, seed_edge=seed_edge)
        self.model = DictModel(capacity, offset, seed_edge)

    @rule(ahead=st.integers(-3, 12), block=st.booleans())
    def add(self, ahead: int, block: bool) -> None:
        s = self.model.low + ahead
        item = f"m{s}"
        assert self.buf.add(s, item, block=block) is self.model.add(s, item, block)

    @rule(nullify=st.booleans())
    def remove(self, nullify: bool) -> None:
        assert self.buf.remove(nullify) == self.model.remove(nullify)

    @rule(ahead=st.integers(-2, 10), force=st.booleans())
    def purge(self, ahead: int, force: bool) -> None:
        s = self.model.low + ahead
        assert self.buf.purge(s, force) == self.model.purge(s, force)

    @precondition(lambda self: self.model.open)
    @rule()
    def close(self) -> None:
        self.buf.close()
        self.model.open = False

    @invariant()
    def agrees_with_the_model(self) -> None:
        if not hasattr(self, "buf"):
            return
        self.buf.check_invariants()
        m = self.model
        assert (self.buf.low, self.buf.hd, self.buf.high) == (m.low, m.hd, m.high)
        assert {s: self.buf.get(s) for s in self.buf.seqnos()} == m.items
        assert self.buf.size == sum(s > m.hd for s in m.items)
        assert self.buf.missing() == [s for s in range(self.buf.highest_deliverable() + 1, m.high)
                                      if s not in m.items]


TestFixedBufferMachine = FixedBufferMachine.TestCase
TestFixedBufferMachine.settings = settings(max_examples=300, stateful_step_count=40, deadline=None)
