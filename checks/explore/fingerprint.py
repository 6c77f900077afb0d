"""State fingerprints: 64 bits of a real hash over a canonical encoding of the state.

The checker keeps visited states as fingerprints only (``checks/explore/search.py``), so two distinct
states with one fingerprint would be merged and the rest of the space behind one of them never
explored. Fingerprints are therefore never Python's ``hash()`` (``hash(-1) == hash(-2)``, frozensets
hash by XOR), but one of two encodings, both deterministic across processes and machines:

- *lanes*: a system whose states are tuples of exactly ``state_width`` ints in ``0 .. 2**31 - 1``
  (``checks.explore.system.PackedStates``) is encoded as those ints, each a 64-bit lane, and hashed
  with the xxHash64 construction (per lane: multiply, rotate, multiply, fold into the accumulator;
  then xxHash64's avalanche), vectorised over a batch of states with numpy;
- *canonical text*: any other state is written by ``Canonical`` (ints, strings, floats, bytes,
  bools, None, tuples, lists, sets, named tuples and dataclasses; sets in sorted order, so equal
  values give equal texts whatever their insertion history) and hashed with BLAKE2b (hashlib) to
  64 bits.

With n distinct states, the probability that some two share a fingerprint is at most
n(n - 1) / 2**65 (the birthday bound of an ideal 64-bit hash): ``collision_probability``, which every
verdict reports, as TLC does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import fields, is_dataclass
from itertools import chain
from typing import Any, cast

import numpy as np
import numpy.typing as npt

Fingerprints = npt.NDArray[np.int64]

PRIMITIVE = (int, str, bool, type(None), float, bytes)  # encoded by repr(), which is exact for each


def canonical_text(value: Any) -> str:
    """``value`` (ints, strings, bools, None, tuples, lists, sets, named tuples and dataclass
    instances of those) as text independent of set order: equal values, equal texts; values of
    different types or structure, different texts."""
    return Canonical()(value)


class Canonical:
    """``canonical_text`` with a memo by identity: the spec shares the parts of a state a step did
    not change, so most parts of a new state were seen as objects, and a new composite's text is
    put together from its parts' texts. Nothing is keyed by value: hashing a composite value
    walks all of it, and most composites are met once. The memo holds the values it keys, so an
    id is never reused while its entry exists; mutable values (lists, sets) are not memoised.

    ``zeroed`` (type -> field names) encodes those fields of those types as 0: the text of a value
    with its timestamps stripped, without building the stripped value."""

    def __init__(self, zeroed: dict[type, frozenset[str]] | None = None) -> None:
        self.zeroed = dict(zeroed or {})
        self.by_id: dict[int, tuple[Any, str]] = {}
        self.shapes: dict[type, tuple[str, tuple[tuple[str, bool], ...]]] = {}  # name, (field, zeroed)

    def __call__(self, value: Any) -> str:
        kind = type(value)
        if kind in PRIMITIVE:
            return repr(value)
        seen = self.by_id.get(id(value))
        if seen is not None:
            return seen[1]
        if kind is tuple or kind is list:
            text = "(" + ",".join(map(self, value)) + ")"
        elif kind is frozenset or kind is set:
            text = "{" + ",".join(sorted(map(self, value))) + "}"
        else:
            shape = self.shapes.get(kind)
            if shape is None:
                shape = self.shapes[kind] = self._shape(kind, value)
            name, names = shape
            text = name + "(" + ",".join(["0" if zero else self(getattr(value, field)) for field, zero in names]) + ")"
        if kind is not list and kind is not set:  # mutable values may change under the same id
            self.by_id[id(value)] = (value, text)
        return text

    def _shape(self, kind: type, value: Any) -> tuple[str, tuple[tuple[str, bool], ...]]:
        """A named tuple's or dataclass's name and fields, each with whether it is zeroed."""
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            names: tuple[str, ...] = value._fields
        elif is_dataclass(value) and not isinstance(value, type):
            names = tuple(f.name for f in fields(value))
        else:
            raise TypeError(f"no canonical encoding for {kind.__name__}")
        zero = self.zeroed.get(kind, frozenset())
        return kind.__name__, tuple((name, name in zero) for name in names)


def digest64(data: bytes) -> int:
    """A signed 64-bit integer (Spark's LongType, numpy's int64) from BLAKE2b."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big", signed=True)


def collision_probability(states: int) -> float:
    """The birthday bound: the probability that some two of ``states`` distinct states share a
    64-bit fingerprint, for an ideal hash."""
    return states * (states - 1) / 2.0**65


_P1, _P2, _P3 = np.uint64(0x9E3779B185EBCA87), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9)
_P4, _P5 = np.uint64(0x85EBCA77C2B2AE63), np.uint64(0x27D4EB2F165667C5)


def lane_fingerprints(states: Sequence[Hashable] | npt.NDArray[np.integer[Any]], width: int) -> Fingerprints:
    """Fingerprints of ``states``, each a tuple of ``width`` ints in ``0 .. 2**31 - 1`` (the lanes),
    or the rows of an integer array of ``width`` columns."""
    count = len(states)
    if not count:
        return np.empty(0, dtype=np.int64)
    lanes = _lanes(states, width)
    with np.errstate(over="ignore"):
        lanes *= _P2  # every lane's round at once (xxHash64's round: multiply, rotate, multiply) ...
        rotated = lanes >> np.uint64(33)
        lanes <<= np.uint64(31)
        lanes |= rotated
        lanes *= _P1
        acc = np.full(count, _P5 + np.uint64(8 * width), dtype=np.uint64)
        spare = np.empty(count, dtype=np.uint64)
        for column in lanes.T:  # ... then folded into the accumulator in order
            acc ^= column
            np.right_shift(acc, np.uint64(37), out=spare)
            acc <<= np.uint64(27)
            acc |= spare
            acc *= _P1
            acc += _P4
        np.right_shift(acc, np.uint64(33), out=spare)
        acc ^= spare
        acc *= _P2
        np.right_shift(acc, np.uint64(29), out=spare)
        acc ^= spare
        acc *= _P3
        np.right_shift(acc, np.uint64(32), out=spare)
        acc ^= spare
    return acc.view(np.int64)


def _lanes(states: Sequence[Hashable] | npt.NDArray[np.integer[Any]], width: int) -> npt.NDArray[np.uint64]:
    """``states`` as a fresh ``(count, width)`` array of 64-bit lanes, without a Python object per
    lane: the tuples' ints are streamed into the array (about 120 ns per state of five ints, the width
    check included, where ``np.array`` over the tuples took about 175). A state of another width is a
    ``ValueError``."""
    count = len(states)
    if isinstance(states, np.ndarray):
        if states.ndim != 2 or states.shape[1] != width:
            raise ValueError(f"packed states must be rows of exactly {width} ints, not shape {states.shape}")
        return states.astype(np.uint64)
    tuples = cast("Sequence[tuple[int, ...]]", states)  # PackedStates: tuples of ints
    if set(map(len, tuples)) != {width}:
        raise ValueError(f"packed states must be tuples of exactly {width} ints")
    flat = np.fromiter(chain.from_iterable(tuples), dtype=np.uint64, count=count * width)
    return flat.reshape(count, width)


def fingerprinter(system: Any) -> Callable[[Sequence[Hashable]], Fingerprints]:
    """The fingerprint function of ``system``'s states, for batches: lanes for packed states,
    canonical text otherwise (a fresh memo per batch, so memory does not grow with the search)."""
    width = getattr(system, "state_width", None)
    if isinstance(width, int):
        return lambda states: lane_fingerprints(states, width)

    def texts(states: Sequence[Hashable]) -> Fingerprints:
        canonical = Canonical()
        return np.fromiter((digest64(canonical(s).encode()) for s in states), dtype=np.int64, count=len(states))

    return texts
