"""A set of 64-bit state fingerprints, each mapped to the state's discovery index.

The checker looks fingerprints up and adds them a batch at a time (one batch per chunk of the BFS
frontier), so the set is a hash table worked on by whole numpy batches, never by a Python loop per
fingerprint. It owns:

- ``_fps``, the fingerprints in the order they were added. The i-th added has *position* i, which is
  its discovery index (a caller numbering batches otherwise, which the checker never does, gets a
  per-batch offset), so ``fingerprint_of`` is one array read;
- ``_table``, a bucketed cuckoo hash table of uint32 entries, ``BUCKET`` to a bucket, ``EMPTY`` where
  unused. A fingerprint lives in one of two buckets, one per 32-bit half of its SplitMix64 mix (test
  fingerprints are often small consecutive integers), scaled to the number of buckets by a
  multiply-shift, so that number need not be a power of two. An entry is the fingerprint's position
  in its low bits and a tag, low bits of the mix, above them. Every int64 is a legal fingerprint:
  emptiness is in the entries, never in a fingerprint value;
- a stash: the few fingerprints not placed in the table yet (see below), sorted.

Lookup: one gather reads both buckets of every fingerprint of the batch; only the entries whose tag
matches have their fingerprint compared in ``_fps``. There is no probe sequence, so the work per
fingerprint is the same at any size and load (an unrelated entry passes the tag with odds about
2^-tag bits: 1/64 at 50 million fingerprints, 1/2048 at a million).

Insert: rounds over the keys of the batch still pending. A key takes the next free slot of the
emptier of its two buckets (a bucket fills from slot 0, so that slot is the bucket's count); keys
wanting the same slot all write it and read it back, the one whose write survived has it and the
others try again next round. A key whose buckets are both full evicts, of ``CANDIDATES`` of their
entries, one whose other bucket has room, so the evicted key settles in the next round (a random
one if none has room: a random-walk cuckoo insertion). Keys still pending after ``MAX_ROUNDS``
rounds (rarely any below the load bound, but keys sharing both buckets can overflow them) wait
in the stash, which lookups search too, and are placed again with the next batch.

Growth: before more than ``MAX_LOAD`` of its slots would be used, the table grows by ``GROWTH`` and
every fingerprint is reinserted from ``_fps`` in chunks. The old table is dropped first (``_fps`` has
all it held), so growing holds one table and a chunk's temporaries. The load stays between 0.76 and
0.95.

Memory per fingerprint: 8 bytes in ``_fps`` (grown by 1/16 at a time: under half a byte of slack)
and 4 / load in ``_table``, 4.2 to 5.3 bytes: 12.2 to 13.8 bytes in all (measured 12.7 to 13.2 from
1 to 50 million). The project's 12 would need a load of 1, which a hash table with constant-time
lookups does not reach; these constants trade time for bytes, as measured by ``checks/bench/fpset.py``
and the checker:

- buckets of 8 rather than 4: a lookup costs 5 to 25 ns more, but evictions near a load of 0.9 stay
  rare (with 4, inserts took 2 to 3 times as long);
- growing by 1.25 rather than 2: up to 3 bytes per fingerprint less, for about 4 reinsertions of each
  fingerprint over the table's life rather than 1 (about 0.3 µs per state added, 2% of the checker's
  time per state);
- linear probing over int32 positions in a doubling table, the first version of this rewrite, needed
  a numpy round per probe step: lookups of absent fingerprints 2 to 4.5 times slower, of present ones
  up to 1.5 times, and 14.7 to 15.9 bytes per fingerprint at a load bound of 0.75.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Fingerprints = npt.NDArray[np.int64]
Indices = npt.NDArray[np.int64]
Entries = npt.NDArray[np.uint32]
Mixed = npt.NDArray[np.uint64]

BUCKET = 8  # slots to a bucket (the fill count of a bucket is read as 8 bytes at once)
MAX_LOAD = 0.95  # the table grows before more than this share of its slots is used
GROWTH = 1.25  # factor by which the number of buckets grows
MIN_BUCKETS = 64
FPS_GROWTH = 16  # ``_fps`` grows by 1/FPS_GROWTH of its length (or what a batch needs) at a time
MAX_ROUNDS = 24  # insert rounds per batch; the keys left over wait in the stash
CANDIDATES = 4  # entries an insert into two full buckets considers evicting
REHASH_CHUNK = 1 << 12  # fingerprints reinserted per step when the table grows, at least
MAX_POSITIONS = 1 << 30  # keeps a tag of at least one bit above the position in an entry

EMPTY = np.uint32(0xFFFFFFFF)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31, _S32, _S56 = (np.uint64(n) for n in (27, 30, 31, 32, 56))
_LOW32 = np.uint64(0xFFFFFFFF)
_BYTE_SUM = np.uint64(0x0101010101010101)  # times 8 bytes of 0/1: their sum in the top byte


def _mix(keys: Fingerprints) -> Mixed:
    """The SplitMix64 finaliser of each key (a bijection of 64-bit words)."""
    bits = keys.view(np.uint64)
    mixed = bits ^ (bits >> _S30)
    mixed *= _M1
    mixed ^= mixed >> _S27
    mixed *= _M2
    mixed ^= mixed >> _S31
    return mixed


class FingerprintSet:
    """Fingerprint -> discovery index, for batches."""

    def __init__(self) -> None:
        self._fps: Fingerprints = np.zeros(0, dtype=np.int64)  # by position; the first ``count`` are used
        self._table: Entries = np.zeros(0, dtype=np.uint32)
        self._buckets = np.uint64(0)
        self._position_bits = np.uint32(0)  # an entry is tag << position_bits | position
        self._position_mask = np.uint32(0)
        self._tag_mask = np.uint64(0)
        self._count = 0
        self._stash_fps: Fingerprints = np.zeros(0, dtype=np.int64)  # sorted; not in the table yet
        self._stash_positions: Indices = np.zeros(0, dtype=np.int64)
        self._random = np.random.default_rng(0)  # which entry an insert evicts
        # positions where index - position changes, and its value from there on (none: index = position)
        self._offset_at: list[int] = []
        self._offset: list[int] = []

    @property
    def count(self) -> int:
        return self._count

    def lookup(self, fingerprints: Fingerprints) -> Indices:
        """The index of each fingerprint, or -1 where it is not in the set."""
        found = np.full(len(fingerprints), -1, dtype=np.int64)
        if self._count == 0 or len(fingerprints) == 0:
            return found
        keys = np.asarray(fingerprints, dtype=np.int64)
        mixed = _mix(keys)
        entries = np.take(self._table.reshape(-1, BUCKET), self._homes(mixed), axis=0)  # (keys, 2, BUCKET)
        candidates = np.flatnonzero((entries >> self._position_bits) == self._tags(mixed)[:, None, None])
        of_key = candidates // (2 * BUCKET)
        positions = np.take(entries.reshape(-1), candidates) & self._position_mask
        hit = np.take(self._fps, positions) == keys[of_key]
        found[of_key[hit]] = positions[hit]
        if len(self._stash_fps):
            missed = np.flatnonzero(found < 0)
            at = np.minimum(np.searchsorted(self._stash_fps, keys[missed]), len(self._stash_fps) - 1)
            hit = self._stash_fps[at] == keys[missed]
            found[missed[hit]] = self._stash_positions[at[hit]]
        if self._offset:
            hit = found >= 0
            found[hit] = self._to_index(found[hit])
        return found

    def add_new(self, fingerprints: Fingerprints, first_index: int) -> None:
        """Add distinct fingerprints (none already present), numbered from ``first_index`` on."""
        added = len(fingerprints)
        if added == 0:
            return
        start = self._count
        if start + added > MAX_POSITIONS:
            raise OverflowError(f"more than {MAX_POSITIONS} fingerprints")
        self._reserve(start + added)
        self._fps[start:start + added] = fingerprints
        self._note_offset(start, first_index)
        self._count = start + added
        pending = np.concatenate((self._stash_positions, np.arange(start, start + added, dtype=np.int64)))
        self._stash_fps, self._stash_positions = self._stash_fps[:0], self._stash_positions[:0]
        self._place(pending)

    def fingerprint_of(self, index: int) -> int:
        """The fingerprint stored with ``index``."""
        position = self._to_position(index)
        if not 0 <= position < self._count:
            raise KeyError(index)
        return int(self._fps[position])

    def nbytes(self) -> int:
        return self._fps.nbytes + self._table.nbytes + self._stash_fps.nbytes + self._stash_positions.nbytes

    def _homes(self, mixed: Mixed) -> npt.NDArray[np.int64]:
        """The two buckets of each mixed key (a bucket per 32-bit half, by multiply-shift), as (keys, 2)."""
        homes = np.empty((len(mixed), 2), dtype=np.uint64)
        np.multiply(mixed >> _S32, self._buckets, out=homes[:, 0])
        np.multiply(mixed & _LOW32, self._buckets, out=homes[:, 1])
        homes >>= _S32
        return homes.view(np.int64)  # below 2^32

    def _tags(self, mixed: Mixed) -> Entries:
        """The tag of each mixed key: its low bits, never all ones (``EMPTY``'s tag)."""
        return np.minimum(mixed & self._tag_mask, self._tag_mask - np.uint64(1)).astype(np.uint32)

    def _place(self, positions: Indices) -> None:
        """Put the fingerprints at ``positions`` in the table; those left after ``MAX_ROUNDS`` go to the stash."""
        for _ in range(MAX_ROUNDS):
            positions = self._insert_round(positions)
            if len(positions) == 0:
                return
        keys = np.concatenate((self._stash_fps, self._fps[positions]))
        order = np.argsort(keys)
        self._stash_fps = keys[order]
        self._stash_positions = np.concatenate((self._stash_positions, positions))[order]

    def _insert_round(self, positions: Indices) -> Indices:
        """One step of every pending key: into a free slot, or evicting an entry; the keys pending after it."""
        table = self._table
        mixed = _mix(np.take(self._fps, positions))
        homes = self._homes(mixed)
        entries = (self._tags(mixed) << self._position_bits) | positions.astype(np.uint32)
        fills = self._fills(homes)
        second = fills[:, 1] < fills[:, 0]
        fill = np.where(second, fills[:, 1], fills[:, 0])
        slots = np.where(second, homes[:, 1], homes[:, 0]) * BUCKET + fill
        claim = np.flatnonzero(fill < BUCKET)
        table[slots[claim]] = entries[claim]  # of the keys writing one slot, one write survives
        lost = claim[table[slots[claim]] != entries[claim]]
        kick = np.flatnonzero(fill == BUCKET)
        if len(kick) == 0:
            return positions[lost]
        slots = self._victims(homes[kick])
        evicted = table[slots]
        table[slots] = entries[kick]
        won = table[slots] == entries[kick]
        return np.concatenate((positions[lost], positions[kick[~won]],
                               (evicted[won] & self._position_mask).astype(np.int64)))

    def _fills(self, buckets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """How many slots of each bucket are used (a bucket fills from its first slot on)."""
        used = np.take(self._table.reshape(-1, BUCKET), buckets, axis=0) != EMPTY
        fills: npt.NDArray[np.int64] = ((used.view(np.uint64) * _BYTE_SUM) >> _S56).view(np.int64)
        return fills.reshape(buckets.shape)

    def _victims(self, homes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """For keys whose two buckets are full, the slot of the entry each evicts: of ``CANDIDATES``
        entries spread over both buckets from a random one on, one whose other bucket has the most
        room (so that it settles in the next round), or a random one if none has room."""
        count = len(homes)
        spread = 2 * BUCKET // CANDIDATES
        picks = self._random.integers(0, spread, count)[:, None] + np.arange(0, 2 * BUCKET, spread)
        here = np.where(picks < BUCKET, homes[:, :1], homes[:, 1:])  # (keys, CANDIDATES): the bucket of each
        slots = (here * BUCKET + picks % BUCKET).reshape(-1)
        residents = np.take(self._fps, np.take(self._table, slots) & self._position_mask)
        theirs = self._homes(_mix(residents))
        room = self._fills(np.where(theirs[:, 0] == here.reshape(-1), theirs[:, 1], theirs[:, 0]))
        best = np.arange(0, count * CANDIDATES, CANDIDATES) + room.reshape(count, CANDIDATES).argmin(axis=1)
        stuck = room[best] == BUCKET
        best[stuck] += self._random.integers(0, CANDIDATES, int(stuck.sum())) - best[stuck] % CANDIDATES
        return slots[best]

    def _reserve(self, total: int) -> None:
        """Room for ``total`` fingerprints in ``_fps`` and, within the load bound, in ``_table``."""
        if total > len(self._fps):
            self._fps.resize(max(total, len(self._fps) + len(self._fps) // FPS_GROWTH), refcheck=False)
        buckets = max(int(self._buckets), MIN_BUCKETS)
        while total > MAX_LOAD * buckets * BUCKET:
            buckets = math.ceil(buckets * GROWTH)
        if buckets != int(self._buckets):
            self._rehash(buckets)

    def _rehash(self, buckets: int) -> None:
        """A table of ``buckets`` buckets holding every fingerprint added so far."""
        self._table = np.zeros(0, dtype=np.uint32)  # dropped first: ``_fps`` has all it held
        self._table = np.full(buckets * BUCKET, EMPTY, dtype=np.uint32)
        self._buckets = np.uint64(buckets)
        bits = int(MAX_LOAD * buckets * BUCKET).bit_length()  # every position below the load bound fits
        self._position_bits, self._position_mask = np.uint32(bits), np.uint32((1 << bits) - 1)
        self._tag_mask = np.uint64((1 << (32 - bits)) - 1)
        self._stash_fps, self._stash_positions = self._stash_fps[:0], self._stash_positions[:0]
        chunk = max(REHASH_CHUNK, buckets // 64)  # few keys of a chunk share a bucket; little memory
        for start in range(0, self._count, chunk):
            self._place(np.arange(start, min(start + chunk, self._count), dtype=np.int64))

    def _note_offset(self, position: int, first_index: int) -> None:
        offset = first_index - position
        if offset != (self._offset[-1] if self._offset else 0):
            self._offset_at.append(position)
            self._offset.append(offset)

    def _to_index(self, positions: Indices) -> Indices:
        at = np.searchsorted(np.array(self._offset_at), positions, side="right")
        offsets = np.array([0, *self._offset], dtype=np.int64)
        result: Indices = positions + offsets[at]
        return result

    def _to_position(self, index: int) -> int:
        """The position stored with ``index`` (the first, if a caller reused indices), or -1."""
        bounds = [0, *self._offset_at, self._count]
        offsets = [0, *self._offset]
        for low, high, offset in zip(bounds, bounds[1:], offsets):
            if low <= index - offset < high:
                return index - offset
        return -1
