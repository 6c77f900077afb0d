"""The per-peer message window: ``Table``, messages keyed by 64-bit seqno.

This module owns storage and the ``low``/``hd``/``hr`` bookkeeping of one window (digest 1.0.1
and 5.3) and nothing else: no acks, no retransmission policy, no connection state. The protocol
engines decide *when* to add, remove and purge; the Table only guarantees the window rules.

Vocabulary (all seqnos are plain Python ints, so there is no overflow to worry about):

- ``offset``: the seqno just before the first one that can ever be added (fixed at creation).
- ``low``: highest purged seqno; nothing <= low is stored or returned.
- ``hd``: highest delivered (removed) seqno; ``add`` rejects anything <= hd.
- ``hr``: highest seqno ever added (or the target of a forced purge, which clamps to it).
- ``size``: stored items in (hd, hr]; ``num_missing`` = hr - hd - size.

Invariants (``check_invariants`` verifies them): ``offset <= low <= hd <= hr``, every slot <= hd
is empty, and the slot of ``hr`` is occupied whenever ``hr > hd``. Because ``remove_many`` always
empties the slots it consumes and sets ``low = hd``, and a forced purge moves ``hd`` with ``low``,
this API in fact keeps ``low == hd`` after every call; a non-forced purge is therefore a no-op.
The general clamping rules are still implemented as specified.

Storage: seqno ``s`` lives at index ``s - offset - 1`` of a matrix of rows of ``msgs_per_row``
slots (a power of two). Rows are allocated when the first item lands in them, freed when they
empty, and rows wholly <= low are discarded from the front, so memory follows the live span
(hd, hr], never the absolute seqno. ``max_span`` caps ``seqno - low`` for ``add``: a hostile seqno
near 2**63 raises ``WindowSpanError`` instead of allocating.

Items must not be ``None`` (an empty slot is ``None``).
"""

from __future__ import annotations

from typing import Generic, TypeVar, cast

T = TypeVar("T")


class WindowSpanError(ValueError):
    """``add`` was asked to store a seqno more than ``max_span`` above ``low``."""


class Table(Generic[T]):
    """A window of items keyed by seqno; see the module docstring for the rules."""

    __slots__ = (
        "_counts",
        "_first_row",
        "_hd",
        "_hr",
        "_low",
        "_mask",
        "_max_span",
        "_offset",
        "_rows",
        "_shift",
        "_size",
    )

    def __init__(
        self,
        offset: int = 0,
        *,
        msgs_per_row: int = 1024,
        initial_rows: int = 16,
        max_span: int = 1 << 20,
    ) -> None:
        if msgs_per_row < 1:
            raise ValueError(f"msgs_per_row must be >= 1, got {msgs_per_row}")
        if initial_rows < 1:
            raise ValueError(f"initial_rows must be >= 1, got {initial_rows}")
        if max_span < 1:
            raise ValueError(f"max_span must be >= 1, got {max_span}")
        self._offset = offset
        self._low = offset
        self._hd = offset
        self._hr = offset
        self._size = 0
        # msgs_per_row rounded up to a power of two: 1 << _shift.
        self._shift = (msgs_per_row - 1).bit_length()
        self._mask = (1 << self._shift) - 1
        self._max_span = max_span
        # _rows[i] holds absolute row _first_row + i; None = no item in that row.
        # _counts[i] = number of non-None slots in _rows[i].
        self._rows: list[list[T | None] | None] = [None] * initial_rows
        self._counts: list[int] = [0] * initial_rows
        self._first_row = 0

    # ------------------------------------------------------------------ read-only state

    @property
    def offset(self) -> int:
        """The seqno just before the first addable one (fixed at creation)."""
        return self._offset

    @property
    def low(self) -> int:
        """Highest purged seqno."""
        return self._low

    @property
    def hd(self) -> int:
        """Highest delivered (removed) seqno."""
        return self._hd

    @property
    def hr(self) -> int:
        """Highest received seqno."""
        return self._hr

    @property
    def size(self) -> int:
        """Number of stored items in (hd, hr]."""
        return self._size

    @property
    def num_missing(self) -> int:
        """Number of empty slots in (hd, hr]."""
        return self._hr - self._hd - self._size

    @property
    def msgs_per_row(self) -> int:
        """Slots per row (the constructor argument rounded up to a power of two)."""
        return self._mask + 1

    @property
    def max_span(self) -> int:
        """Largest allowed ``seqno - low`` for ``add``."""
        return self._max_span

    @property
    def allocated_slots(self) -> int:
        """Slots currently allocated (allocated rows x msgs_per_row); follows the live span."""
        return sum(row is not None for row in self._rows) << self._shift

    def __bool__(self) -> bool:
        raise TypeError("Table has no truth value; test .size, .num_missing or .hr > .hd")

    def __repr__(self) -> str:
        return (
            f"Table(offset={self._offset}, low={self._low}, hd={self._hd}, hr={self._hr},"
            f" size={self._size}, rows={len(self._rows)})"
        )

    # ------------------------------------------------------------------ slot addressing

    def _locate(self, seqno: int) -> tuple[int, int]:
        """(local row index, column) of ``seqno``; only meaningful for seqno > low."""
        index = seqno - self._offset - 1
        return (index >> self._shift) - self._first_row, index & self._mask

    def _slot(self, seqno: int) -> T | None:
        """The item at ``seqno`` or None; caller guarantees low < seqno."""
        r, c = self._locate(seqno)
        if r >= len(self._rows):
            return None  # beyond the allocated rows: nothing stored there
        row = self._rows[r]
        return None if row is None else row[c]

    def _clear_slot(self, r: int, c: int) -> None:
        """Empty an occupied slot, freeing its row when it was the row's last item."""
        row = self._rows[r]
        assert row is not None and row[c] is not None
        row[c] = None
        self._counts[r] -= 1
        self._size -= 1
        if self._counts[r] == 0:
            self._rows[r] = None  # empty row: free it, it is re-allocated on demand

    def _discard_below_low(self) -> None:
        """Drop the rows whose seqnos are all <= low (so row 0 holds low + 1)."""
        k = ((self._low - self._offset) >> self._shift) - self._first_row
        if k <= 0:
            return  # low + 1 still lives in the first row
        # Every dropped row is already empty (all slots <= low are), so size is unaffected.
        del self._rows[:k]
        del self._counts[:k]
        self._first_row += k

    # ------------------------------------------------------------------ operations

    def add(self, seqno: int, item: T) -> bool:
        """Store ``item`` at ``seqno``; False if seqno <= hd or the slot is already taken.

        Raises ``WindowSpanError`` if ``seqno - low > max_span`` (checked before allocating).
        """
        if item is None:
            raise ValueError("Table items must not be None (None marks an empty slot)")
        if seqno <= self._hd:
            return False  # already delivered (or purged): an old duplicate
        if seqno - self._low > self._max_span:
            raise WindowSpanError(
                f"seqno {seqno} is {seqno - self._low} above low={self._low},"
                f" more than max_span={self._max_span}"
            )
        index = seqno - self._offset - 1  # _locate, inlined: add is on every message's path
        r = (index >> self._shift) - self._first_row
        c = index & self._mask
        rows = self._rows
        if r >= len(rows):
            # grow: append empty rows up to and including r (rows are allocated lazily)
            grow = r + 1 - len(rows)
            rows.extend([None] * grow)
            self._counts.extend([0] * grow)
        row = rows[r]
        if row is None:
            row = [None] * (self._mask + 1)
            rows[r] = row
        elif row[c] is not None:
            return False  # duplicate: first copy wins
        row[c] = item
        self._counts[r] += 1
        self._size += 1
        if seqno > self._hr:
            self._hr = seqno
        return True

    def get(self, seqno: int) -> T | None:
        """The item at ``seqno`` if ``low < seqno <= hr`` and stored, else None."""
        if seqno <= self._low or seqno > self._hr:
            return None
        return self._slot(seqno)

    def remove_many(self, max_items: int = 0) -> list[T]:
        """Remove and return consecutive items from hd + 1 up (stops at the first gap).

        Each removed slot is emptied and ``hd`` and ``low`` advance to the last removed seqno.
        ``max_items`` > 0 caps the number of items returned; 0 means unbounded.
        """
        if max_items < 0:
            raise ValueError(f"max_items must be >= 0, got {max_items}")
        hd = self._hd
        limit = self._hr if max_items == 0 else min(self._hr, hd + max_items)
        out: list[T] = []
        if limit <= hd:
            return out
        gaps = self._hr - hd != self._size  # no gaps: all of (hd, hr] is stored
        rows, counts, width = self._rows, self._counts, self._mask + 1
        seqno = hd + 1
        while seqno <= limit:  # one row per iteration; every row up to hr's is in _rows
            r, c = self._locate(seqno)
            row = rows[r]
            if row is None:
                break  # first gap: everything above must wait for it
            stop = min(c + limit - seqno + 1, width)  # column after the last one wanted
            if gaps:  # stop at the first empty slot (by identity: items' __eq__ is not ours)
                end = c
                while end < stop and row[end] is not None:
                    end += 1
                stop = end
            n = stop - c
            if n == 0:
                break
            out += cast("list[T]", row[c:stop])
            row[c:stop] = [None] * n
            counts[r] -= n
            if counts[r] == 0:
                rows[r] = None  # empty row: free it
            seqno += n
            if stop < width:
                break  # a gap or the limit
        if out:
            self._size -= len(out)
            self._hd = self._low = seqno - 1
            self._discard_below_low()
        return out

    def add_remove_many(self, seqno: int, item: T) -> list[T]:
        """``add(seqno, item)`` then ``remove_many()`` (a receiver's step for each message).

        The common case, the next seqno arriving at a window holding nothing, is done without
        touching the rows: the item would be stored and removed at once.
        """
        if (
            seqno == self._hd + 1
            and self._size == 0
            and item is not None
            and seqno - self._low <= self._max_span  # always (low == hd), as add checks it
        ):
            self._hd = self._hr = self._low = seqno
            if not (seqno - self._offset) & self._mask:
                self._discard_below_low()  # low + 1 is the first seqno of the next row
            return [item]
        self.add(seqno, item)
        return self.remove_many()

    def purge(self, seqno: int, *, force: bool = False) -> None:
        """Forget everything <= ``seqno`` (garbage collection after acknowledgement/stability).

        Not forced: seqno is clamped to hd (only delivered items are dropped).
        Forced: seqno is clamped to hr and hd is raised to it (undelivered items are dropped too;
        this is how a sender window records an ACK). Then low := seqno.
        """
        if seqno <= self._low:
            return  # already purged that far
        if force:
            seqno = min(seqno, self._hr)
            self._hd = max(self._hd, seqno)
        else:
            seqno = min(seqno, self._hd)
        if seqno <= self._low:
            return  # clamped down to low: nothing to drop
        self._clear_through(seqno)
        self._low = seqno
        self._discard_below_low()

    def _clear_through(self, seqno: int) -> None:
        """Empty every slot in (low, seqno]; O(rows + slots in the last row) per call."""
        last_r, last_c = self._locate(seqno)
        # Rows before last_r lie wholly in (low, seqno]: drop their items in bulk.
        for r in range(min(last_r, len(self._rows))):
            if self._rows[r] is not None:
                self._size -= self._counts[r]
                self._rows[r] = None
                self._counts[r] = 0
        if last_r >= len(self._rows) or self._rows[last_r] is None:
            return  # the last row holds nothing
        # The last row: only columns from low + 1 (if low + 1 is in this row) to seqno.
        first_c = 0
        if last_r == 0:
            first_c = (self._low - self._offset) & self._mask
        row = self._rows[last_r]
        assert row is not None
        n = sum(1 for item in row[first_c : last_c + 1] if item is not None)
        row[first_c : last_c + 1] = [None] * (last_c + 1 - first_c)
        self._size -= n
        self._counts[last_r] -= n
        if self._counts[last_r] == 0:
            self._rows[last_r] = None  # empty row: free it

    def highest_deliverable(self) -> int:
        """Largest s such that hd + 1 .. s are all stored (hd if hd + 1 is missing)."""
        seqno = self._hd
        while seqno < self._hr and self._slot(seqno + 1) is not None:
            seqno += 1
        return seqno

    def missing(self, max_scan: int = 0) -> list[int]:
        """Empty seqnos in (highest_deliverable, hr), ascending.

        ``max_scan`` > 0 bounds the *scanned range* (starting at highest_deliverable + 1), not the
        number of gaps reported: 25 gaps in 1..50 with max_scan=10 reports the 5 gaps in 1..10.
        """
        if max_scan < 0:
            raise ValueError(f"max_scan must be >= 0, got {max_scan}")
        start = self.highest_deliverable() + 1
        end = self._hr - 1  # hr itself is always stored when hr > hd
        if max_scan > 0:
            end = min(end, start + max_scan - 1)
        gaps: list[int] = []
        seqno = start
        while seqno <= end:
            r, c = self._locate(seqno)
            row_end = min(end, seqno + (self._mask - c))  # last seqno of this row to scan
            row = self._rows[r] if r < len(self._rows) else None
            if row is None:
                gaps.extend(range(seqno, row_end + 1))  # whole (part of a) row is empty
            else:
                gaps.extend(s for s in range(seqno, row_end + 1) if row[c + s - seqno] is None)
            seqno = row_end + 1
        return gaps

    # ------------------------------------------------------------------ testing aid

    def check_invariants(self) -> None:
        """Raise AssertionError unless every structural invariant holds (O(memory); for tests)."""

        def require(cond: bool, what: str) -> None:
            if not cond:
                raise AssertionError(f"Table invariant violated: {what} in {self!r}")

        require(self._offset <= self._low <= self._hd <= self._hr, "offset <= low <= hd <= hr")
        require(len(self._rows) == len(self._counts), "one count per row")
        require(
            self._first_row == (self._low - self._offset) >> self._shift,
            "first row holds low + 1",
        )
        total = 0
        base = self._offset + 1 + (self._first_row << self._shift)  # seqno of rows[0][0]
        for r, row in enumerate(self._rows):
            if row is None:
                require(self._counts[r] == 0, f"count of freed row {r} is 0")
                continue
            require(self._counts[r] > 0, f"allocated row {r} is non-empty")
            for c, item in enumerate(row):
                if item is not None:
                    s = base + (r << self._shift) + c
                    require(self._hd < s <= self._hr, f"stored seqno {s} in (hd, hr]")
                    total += 1
            require(sum(x is not None for x in row) == self._counts[r], f"count of row {r}")
        require(total == self._size, f"size {self._size} == stored items {total}")
        if self._hr > self._hd:
            require(self._slot(self._hr) is not None, "hr is stored")
