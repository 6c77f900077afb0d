"""Tests for impl/window.py: unit tests per branch, then a stateful comparison with a dict model."""

from __future__ import annotations

import random

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from impl.window import Table, WindowSpanError


def filled(seqnos: list[int], **kwargs: int) -> Table[str]:
    """A Table holding ``f"m{s}"`` at every seqno in ``seqnos``."""
    t: Table[str] = Table(**kwargs)
    for s in seqnos:
        assert t.add(s, f"m{s}")
    t.check_invariants()
    return t


def state(t: Table[str]) -> tuple[int, int, int, int, int]:
    return (t.low, t.hd, t.hr, t.size, t.num_missing)


# ---------------------------------------------------------------- construction


def test_initial_state_follows_offset() -> None:
    t: Table[str] = Table(5)
    assert (t.offset, *state(t)) == (5, 5, 5, 5, 0, 0)
    assert t.highest_deliverable() == 5
    assert t.missing() == []
    t.check_invariants()


@pytest.mark.parametrize(("asked", "rounded"), [(1, 1), (2, 2), (3, 4), (1000, 1024), (1024, 1024)])
def test_msgs_per_row_rounds_up_to_power_of_two(asked: int, rounded: int) -> None:
    assert Table(msgs_per_row=asked).msgs_per_row == rounded


@pytest.mark.parametrize("kwargs", [{"msgs_per_row": 0}, {"initial_rows": 0}, {"max_span": 0}])
def test_constructor_rejects_non_positive_sizes(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Table(**kwargs)


def test_no_truth_value_and_no_len() -> None:
    t: Table[str] = Table()
    with pytest.raises(TypeError, match="truth value"):
        bool(t)
    with pytest.raises(TypeError):
        len(t)  # type: ignore[arg-type]


def test_repr_shows_the_counters() -> None:
    assert repr(filled([1, 3])) == "Table(offset=0, low=0, hd=0, hr=3, size=2, rows=16)"


# ---------------------------------------------------------------- add / get


def test_add_rejects_duplicate_and_keeps_first_copy() -> None:
    t = filled([1, 2])
    assert not t.add(2, "again")
    assert t.get(2) == "m2"
    assert t.size == 2


def test_add_rejects_seqnos_at_or_below_hd() -> None:
    t = filled([1, 2, 3])
    assert t.remove_many() == ["m1", "m2", "m3"]
    assert not t.add(3, "old")
    assert not t.add(1, "older")
    assert not t.add(0, "offset itself")
    assert not t.add(-(2**70), "absurd")  # far below: rejected, not raised
    assert state(t) == (3, 3, 3, 0, 0)


def test_add_rejects_offset_itself() -> None:
    t: Table[str] = Table(10)
    assert not t.add(10, "x")
    assert t.add(11, "y")


def test_add_rejects_none_item() -> None:
    t: Table[str | None] = Table()
    with pytest.raises(ValueError, match="None"):
        t.add(1, None)


def test_add_updates_hr_only_upwards() -> None:
    t = filled([5, 2])
    assert (t.hr, t.size, t.num_missing) == (5, 2, 3)


def test_span_limit_is_inclusive_and_measured_from_low() -> None:
    t: Table[str] = Table(max_span=100)
    assert t.add(100, "edge")
    with pytest.raises(WindowSpanError, match="max_span=100"):
        t.add(101, "over")
    assert t.add(1, "m1")
    assert t.remove_many() == ["m1"]  # low = 1 now
    assert t.add(101, "now fits")
    t.check_invariants()


def test_hostile_seqno_near_2_pow_63_does_not_allocate() -> None:
    t: Table[str] = Table()
    with pytest.raises(WindowSpanError):
        t.add(2**63 - 1, "hostile")
    assert issubclass(WindowSpanError, ValueError)
    assert t.allocated_slots == 0
    assert state(t) == (0, 0, 0, 0, 0)
    t.check_invariants()


def test_get_only_inside_low_hr() -> None:
    t = filled([1, 2, 4])
    assert [t.get(s) for s in range(6)] == [None, "m1", "m2", None, "m4", None]
    t.remove_many()
    assert t.get(1) is None  # removed
    assert t.get(2**63) is None


def test_large_offset_near_the_top_of_int64() -> None:
    base = 2**63 - 20
    t: Table[str] = Table(base, msgs_per_row=4)
    for s in range(base + 19, base, -1):
        assert t.add(s, f"m{s}")
    assert len(t.remove_many()) == 19
    assert t.hd == 2**63 - 1
    t.check_invariants()


# ---------------------------------------------------------------- remove_many


def test_remove_many_stops_at_first_gap() -> None:
    t = filled([1, 2, 4, 5])
    assert t.remove_many() == ["m1", "m2"]
    assert state(t) == (2, 2, 5, 2, 1)
    assert t.remove_many() == []  # gap at 3: nothing moves
    assert state(t) == (2, 2, 5, 2, 1)
    assert t.add(3, "m3")
    assert t.remove_many() == ["m3", "m4", "m5"]
    assert state(t) == (5, 5, 5, 0, 0)
    t.check_invariants()


def test_remove_many_respects_max_items() -> None:
    t = filled(list(range(1, 11)))
    assert t.remove_many(3) == ["m1", "m2", "m3"]
    assert (t.low, t.hd) == (3, 3)
    assert t.remove_many(0) == [f"m{s}" for s in range(4, 11)]
    with pytest.raises(ValueError, match="max_items"):
        t.remove_many(-1)


# ---------------------------------------------------------------- purge


def test_purge_at_or_below_low_is_a_no_op() -> None:
    t = filled([1, 2, 3])
    t.remove_many(2)
    t.purge(2)
    t.purge(1, force=True)
    assert state(t) == (2, 2, 3, 1, 0)


def test_unforced_purge_clamps_to_hd() -> None:
    t = filled(list(range(1, 11)))
    t.remove_many(3)
    t.purge(8)  # only delivered messages may go: clamped to hd = 3
    assert state(t) == (3, 3, 10, 7, 0)
    assert t.get(4) == "m4"
    t.check_invariants()


def test_forced_purge_clamps_to_hr() -> None:
    t = filled([1, 2, 3, 5, 8])
    t.purge(100, force=True)
    assert state(t) == (8, 8, 8, 0, 0)
    assert [t.get(s) for s in range(1, 9)] == [None] * 8
    assert t.allocated_slots == 0
    t.check_invariants()


def test_forced_purge_raises_hd_and_drops_undelivered() -> None:
    t = filled([s for s in range(1, 11) if s != 4])
    t.purge(6, force=True)  # like an ACK for 6 on a sender window
    assert state(t) == (6, 6, 10, 4, 0)
    assert t.get(6) is None
    assert t.get(7) == "m7"
    assert not t.add(4, "late")  # now below hd
    t.check_invariants()


def test_forced_purge_inside_a_row_keeps_the_rest_of_the_row() -> None:
    t = filled(list(range(1, 17)), msgs_per_row=8)
    t.purge(3, force=True)
    t.purge(5, force=True)
    t.purge(11, force=True)
    assert state(t) == (11, 11, 16, 5, 0)
    assert t.remove_many() == [f"m{s}" for s in range(12, 17)]
    t.check_invariants()


# ---------------------------------------------------------------- growth and memory


def test_growth_across_many_rows_in_random_order() -> None:
    seqnos = list(range(1, 1001))
    random.Random(1).shuffle(seqnos)
    t = filled(seqnos, msgs_per_row=4, initial_rows=1)
    assert (t.size, t.num_missing) == (1000, 0)
    assert t.remove_many() == [f"m{s}" for s in range(1, 1001)]
    t.check_invariants()


def test_receiver_style_stream_keeps_memory_bounded() -> None:
    t: Table[int] = Table(msgs_per_row=8, initial_rows=2, max_span=64)
    rng = random.Random(2)
    next_seqno = 1
    for _ in range(20_000):
        # add a burst slightly out of order, then deliver what is contiguous
        burst = list(range(next_seqno, next_seqno + 5))
        rng.shuffle(burst)
        for s in burst:
            t.add(s, s)
        next_seqno += 5
        t.remove_many()
        assert t.allocated_slots <= 16
    assert t.hd == 100_000
    t.check_invariants()


def test_sender_style_forced_purges_keep_memory_bounded() -> None:
    t: Table[int] = Table(msgs_per_row=16, max_span=256)
    for s in range(1, 50_001):
        t.add(s, s)
        if s % 10 == 0:
            t.purge(s - 20, force=True)  # ACKs trail the sends by 20
        assert t.allocated_slots <= 4 * 16
    assert (t.low, t.hd, t.hr, t.size) == (49_980, 49_980, 50_000, 20)
    t.check_invariants()


def test_sparse_rows_are_not_allocated() -> None:
    t: Table[str] = Table(msgs_per_row=4)
    t.add(1, "a")
    t.add(1000, "b")
    assert t.allocated_slots == 8
    assert t.missing() == list(range(2, 1000))
    t.check_invariants()


# ---------------------------------------------------------------- highest_deliverable / missing


def test_highest_deliverable() -> None:
    t = filled([1, 2, 3, 5, 6], msgs_per_row=2)
    assert t.highest_deliverable() == 3
    t.remove_many(1)
    assert t.highest_deliverable() == 3
    t.add(4, "m4")
    assert t.highest_deliverable() == 6


def test_missing_max_scan_bounds_the_range_not_the_count() -> None:
    # Digest 1.0.1: 25 gaps in 1..50, max_scan=10 reports 5.
    t = filled(list(range(2, 51, 2)), msgs_per_row=8)
    assert len(t.missing()) == 25
    assert t.missing(10) == [1, 3, 5, 7, 9]
    assert t.missing(1) == [1]
    assert t.missing(1000) == list(range(1, 50, 2))
    with pytest.raises(ValueError, match="max_scan"):
        t.missing(-1)


def test_missing_starts_after_highest_deliverable() -> None:
    t = filled([1, 2, 5, 9])
    assert t.missing() == [3, 4, 6, 7, 8]
    assert t.missing(3) == [3, 4]
    assert t.num_missing == 5


def test_check_invariants_detects_corruption() -> None:
    t = filled([1, 2])
    t._size = 7  # deliberately corrupt a private counter
    with pytest.raises(AssertionError, match="size"):
        t.check_invariants()


# ---------------------------------------------------------------- stateful comparison with a model


class RefWindow:
    """The digest's rules written as directly as possible over a dict."""

    def __init__(self, offset: int, max_span: int) -> None:
        self.low = self.hd = self.hr = offset
        self.max_span = max_span
        self.items: dict[int, str] = {}

    @property
    def size(self) -> int:
        return sum(1 for s in self.items if self.hd < s <= self.hr)

    def add(self, seqno: int, item: str) -> bool:
        if seqno <= self.hd:
            return False
        if seqno - self.low > self.max_span:
            raise WindowSpanError("span")
        if seqno in self.items:
            return False
        self.items[seqno] = item
        self.hr = max(self.hr, seqno)
        return True

    def get(self, seqno: int) -> str | None:
        return self.items.get(seqno) if self.low < seqno <= self.hr else None

    def remove_many(self, max_items: int) -> list[str]:
        out: list[str] = []
        while (max_items == 0 or len(out) < max_items) and self.hd + 1 in self.items:
            self.hd += 1
            out.append(self.items.pop(self.hd))
            self.low = self.hd
        return out

    def purge(self, seqno: int, force: bool) -> None:
        if seqno <= self.low:
            return
        if force:
            seqno = min(seqno, self.hr)
            self.hd = max(self.hd, seqno)
        else:
            seqno = min(seqno, self.hd)
        self.items = {s: m for s, m in self.items.items() if s > seqno}
        self.low = seqno

    def highest_deliverable(self) -> int:
        s = self.hd
        while s + 1 in self.items:
            s += 1
        return s

    def missing(self, max_scan: int) -> list[int]:
        start = self.highest_deliverable() + 1
        end = self.hr - 1 if max_scan == 0 else min(self.hr - 1, start + max_scan - 1)
        return [s for s in range(start, end + 1) if s not in self.items]


class TableComparison(RuleBasedStateMachine):
    """Every rule is applied to a Table and to RefWindow; they must agree after every step."""

    table: Table[str]
    ref: RefWindow
    counter: int

    @initialize(
        offset=st.one_of(st.just(0), st.integers(0, 10**6), st.just(2**63 - 200)),
        msgs_per_row=st.sampled_from([1, 2, 3, 4, 8]),
        initial_rows=st.integers(1, 4),
        max_span=st.integers(1, 80),
    )
    def create(self, offset: int, msgs_per_row: int, initial_rows: int, max_span: int) -> None:
        self.table = Table(
            offset, msgs_per_row=msgs_per_row, initial_rows=initial_rows, max_span=max_span
        )
        self.ref = RefWindow(offset, max_span)
        self.counter = 0

    @rule(delta=st.integers(-3, 90))
    def add(self, delta: int) -> None:
        seqno = self.ref.hd + delta
        self.counter += 1
        item = f"m{seqno}#{self.counter}"
        try:
            expected: bool | str = self.ref.add(seqno, item)
        except WindowSpanError:
            expected = "span"
        try:
            got: bool | str = self.table.add(seqno, item)
        except WindowSpanError:
            got = "span"
        assert got == expected

    @rule(max_items=st.integers(0, 6))
    def remove_many(self, max_items: int) -> None:
        assert self.table.remove_many(max_items) == self.ref.remove_many(max_items)

    @rule(delta=st.integers(-3, 90), force=st.booleans())
    def purge(self, delta: int, force: bool) -> None:
        seqno = self.ref.low + delta
        self.table.purge(seqno, force=force)
        self.ref.purge(seqno, force)

    @rule(delta=st.integers(-3, 90))
    def get(self, delta: int) -> None:
        seqno = self.ref.low + delta
        assert self.table.get(seqno) == self.ref.get(seqno)

    @rule(max_scan=st.integers(0, 20))
    def missing(self, max_scan: int) -> None:
        assert self.table.missing(max_scan) == self.ref.missing(max_scan)

    @invariant()
    def agree(self) -> None:
        self.table.check_invariants()
        t, r = self.table, self.ref
        assert (t.low, t.hd, t.hr, t.size) == (r.low, r.hd, r.hr, r.size)
        assert t.num_missing == r.hr - r.hd - r.size
        assert t.highest_deliverable() == r.highest_deliverable()


TableComparison.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None, database=None
)
TestTableComparison = TableComparison.TestCase
