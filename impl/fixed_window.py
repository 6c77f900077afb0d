"""The fixed-size window of NAKACK4 and UNICAST4: JGroups' ``FixedBuffer``, sans-IO.

This module owns the ring of ``capacity`` slots and the ``low``/``hd``/``high`` bookkeeping of
one window (jgroups-fixed-windows.md section 1, digest 1.0.1 and 5.4) and nothing else: no acks,
no retransmission policy, no threads. Where JGroups' sender *blocks* in ``add`` until a purge
makes room, this buffer returns ``AddStatus.WOULD_BLOCK`` and keeps nothing: the engine holds the
message, and tries again after a ``purge`` that moved ``low`` (``purge`` returns whether it did,
JGroups' ``signalAll``) or fails it once the buffer is closed (``AddStatus.CLOSED``: the message
is dropped and its seqno stays spent).

Vocabulary:

- ``offset``: the seqno just before the first one that can ever be added (fixed at creation);
  seqno ``s`` lives in slot ``(s - offset - 1) mod capacity``.
- ``low``: highest purged seqno (sender: the lowest ACK of all members; receiver: == hd).
- ``hd``: highest delivered (removed) seqno.
- ``high``: highest seqno added (or the target of a forced purge).
- ``size``: stored items in (hd, high]; ``num_missing`` = high - hd - size.
- valid seqnos: ``(low, low + capacity]``. ``seed_edge=True`` is the MCAST seed's edge
  (``s - low >= capacity`` is full), which holds at most ``capacity - 1`` messages; JGroups' code
  (the default) is full only when ``s - low > capacity``, and holds exactly ``capacity``.

64-bit limits, explicit: JGroups' seqnos are Java ``long``s starting at 1 and its comparisons are
differences, which would survive a wrap but a counter never wraps in practice. Here seqnos are
Python ints restricted to ``0 .. MAX_SEQNO`` (2**63 - 1): ``add`` answers ``INVALID`` for a seqno
outside it (a hostile header never crashes an engine), and ``offset`` must lie in it. The slot
arithmetic is exact, so the ring is a bijection between the valid range and the slots right up
to ``MAX_SEQNO`` (tests/impl/test_fixed_window.py checks it there).

Invariants (``check_invariants``): ``offset <= low <= hd <= high <= low + capacity``; every stored
seqno lies in ``(low, high]`` and sits in its own slot; ``size`` counts the stored seqnos above hd;
the slot of ``high`` is occupied whenever ``high > hd``.

Items must not be ``None`` (an empty slot is ``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Generic, TypeVar

T = TypeVar("T")
MAX_SEQNO = 2**63 - 1  # Java Long.MAX_VALUE


class AddStatus(Enum):
    """What ``FixedBuffer.add`` did (JGroups' add returns a bare boolean: ADDED is ``true``)."""

    ADDED = "added"
    DUPLICATE = "duplicate"  # the slot already holds that seqno
    PURGED = "purged"  # seqno <= low: delivered and purged long ago (JGroups: rejected)
    BEYOND_CAPACITY = "beyond capacity"  # a receiver's add above low + capacity: dropped
    WOULD_BLOCK = "would block"  # a sender's add above low + capacity, buffer open: try again
    CLOSED = "closed"  # a sender's add above low + capacity on a closed buffer: dropped
    INVALID = "invalid"  # not a seqno (below 0 or above MAX_SEQNO)


class FixedBuffer(Generic[T]):
    """A ring of ``capacity`` slots keyed by seqno; see the module docstring for the rules."""

    __slots__ = ("_buf", "_capacity", "_hd", "_high", "_low", "_offset", "_open", "_size", "num_blockings",
                 "num_dropped", "seed_edge")

    def __init__(self, capacity: int, offset: int = 0, *, seed_edge: bool = False) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        if not 0 <= offset <= MAX_SEQNO:
            raise ValueError(f"offset must be a seqno in 0..{MAX_SEQNO}, got {offset}")
        self._capacity, self._offset, self.seed_edge = capacity, offset, seed_edge
        self._buf: list[T | None] = [None] * capacity
        self._low = self._hd = self._high = offset
        self._size = 0
        self._open = True
        self.num_blockings = 0  # sender adds that found the window full while it was open
        self.num_dropped = 0  # receiver adds beyond capacity, and sender adds failed by a closed buffer

    # -- read-only state -------------------------------------------------------------------------
    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def low(self) -> int:
        return self._low

    @property
    def hd(self) -> int:
        return self._hd

    @property
    def high(self) -> int:
        return self._high

    @property
    def size(self) -> int:
        return self._size

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def num_missing(self) -> int:
        return self._high - self._hd - self._size

    def index(self, seqno: int) -> int:
        """The slot of ``seqno``: (seqno - offset - 1) mod capacity."""
        return (seqno - self._offset - 1) % self._capacity

    def full_for(self, seqno: int) -> bool:
        """Is ``seqno`` beyond the window (the block edge: ``>`` as JGroups, ``>=`` as the seed)?"""
        distance = seqno - self._low
        return distance >= self._capacity if self.seed_edge else distance > self._capacity

    def get(self, seqno: int) -> T | None:
        """The item stored for ``seqno``, if low < seqno <= high and it is present."""
        if not self._low < seqno <= self._high:
            return None
        return self._buf[self.index(seqno)]

    # -- adding ----------------------------------------------------------------------------------
    def add(self, seqno: int, item: T, *, block: bool = False,
            skip_if: Callable[[T], bool] | None = None) -> AddStatus:
        """Store ``item`` at ``seqno`` (JGroups' ``add(seqno, item, filter, block_if_full)``).

        ``block`` is the sender's add: beyond capacity it answers WOULD_BLOCK while the buffer is
        open (the caller waits for a purge) and CLOSED once it is closed. A receiver's add drops
        beyond capacity. ``skip_if`` is the DONT_LOOPBACK remove filter: after storing, hd walks up
        over stored items it accepts, without removing them."""
        if item is None:
            raise ValueError("items must not be None")
        if not 0 <= seqno <= MAX_SEQNO:
            return AddStatus.INVALID
        if seqno <= self._low:
            return AddStatus.PURGED
        if self.full_for(seqno):
            if not block:
                self.num_dropped += 1
                return AddStatus.BEYOND_CAPACITY
            if not self._open:
                self.num_dropped += 1
                return AddStatus.CLOSED
            self.num_blockings += 1
            return AddStatus.WOULD_BLOCK
        slot = self.index(seqno)
        if self._buf[slot] is not None:
            return AddStatus.DUPLICATE
        self._buf[slot] = item
        self._high = max(self._high, seqno)
        if seqno > self._hd:
            self._size += 1
        if skip_if is not None:
            self._skip_delivered(skip_if)
        return AddStatus.ADDED

    def _skip_delivered(self, skip_if: Callable[[T], bool]) -> None:
        while self._hd < self._high:
            item = self._buf[self.index(self._hd + 1)]
            if item is None or not skip_if(item):
                return
            self._hd += 1
            self._size -= 1

    # -- removing, purging -----------------------------------------------------------------------
    def remove(self, nullify: bool) -> T | None:
        """Take the item at hd + 1, if present: hd advances; with ``nullify`` its slot is emptied
        and low follows hd (a receive window), without it the item stays until a purge (the own
        window, kept for retransmission). A nullifying removal after non-nullifying ones also
        empties the slots of the items kept below it (JGroups nulls only the removed slot and
        never mixes the modes on one window; here a stale item could otherwise occupy the slot
        of a seqno capacity higher)."""
        if self._hd >= self._high:
            return None
        slot = self.index(self._hd + 1)
        item = self._buf[slot]
        if item is None:
            return None
        self._hd += 1
        self._size -= 1
        if nullify:
            for s in range(self._low + 1, self._hd + 1):
                self._buf[self.index(s)] = None
            self._low = self._hd
        return item

    def remove_many(self, nullify: bool, max_items: int = 0) -> list[T]:
        """``remove`` up to the first gap, or ``max_items`` items (0: no limit)."""
        taken: list[T] = []
        while not max_items or len(taken) < max_items:
            item = self.remove(nullify)
            if item is None:
                break
            taken.append(item)
        return taken

    def purge(self, seqno: int, force: bool = False) -> bool:
        """Drop every item <= ``seqno``, clamped to hd (or, ``force``, to high): low rises to it and
        hd follows. Returns whether low moved (JGroups then wakes blocked senders)."""
        target = min(seqno, self._high if force else self._hd)
        if target <= self._low:
            return False
        for s in range(self._low + 1, target + 1):
            self._buf[self.index(s)] = None
        self._low = target
        self._hd = max(self._hd, self._low)
        if force:
            self._size = sum(self._buf[self.index(s)] is not None for s in range(self._hd + 1, self._high + 1))
        return True

    def open(self, is_open: bool) -> None:
        """Open or close the buffer: a closed one fails every sender add beyond capacity."""
        self._open = is_open

    def close(self) -> None:
        self.open(False)

    # -- gap repair ------------------------------------------------------------------------------
    def highest_deliverable(self) -> int:
        """The largest s with hd+1 .. s all present (hd if hd+1 is missing)."""
        s = self._hd
        while s < self._high and self._buf[self.index(s + 1)] is not None:
            s += 1
        return s

    def missing(self, max_scan: int = 0) -> list[int]:
        """``getMissing(max)``: the empty slots from highest_deliverable + 1 up to high - 1, over at
        most ``max_scan`` seqnos (0: all). ``max`` bounds the range scanned, not the gaps found."""
        start = self.highest_deliverable() + 1
        end = self._high if not max_scan else min(self._high, start + max_scan)
        return [s for s in range(start, end) if self._buf[self.index(s)] is None]

    def seqnos(self) -> list[int]:
        """Every stored seqno, ascending."""
        return [s for s in range(self._low + 1, self._high + 1) if self._buf[self.index(s)] is not None]

    def check_invariants(self) -> None:
        """Raise AssertionError if a window rule is broken (tests call this after every step)."""
        low, hd, high = self._low, self._hd, self._high
        assert self._offset <= low <= hd <= high <= low + self._capacity, (self._offset, low, hd, high)
        assert high <= MAX_SEQNO
        stored = {s for s in range(low + 1, high + 1) if self._buf[self.index(s)] is not None}
        assert sum(item is not None for item in self._buf) == len(stored), "an item outside (low, high]"
        assert self._size == sum(s > hd for s in stored), (self._size, stored)
        assert high == hd or high in stored, "high's slot is empty above hd"

    def __repr__(self) -> str:
        return (f"FixedBuffer(capacity={self._capacity}, offset={self._offset}, low={self._low}, hd={self._hd}, "
                f"high={self._high}, size={self._size}, open={self._open})")
