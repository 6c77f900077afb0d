"""Wire primitives shared by the protocol codecs: integer encodings, the strict reader, the
SeqnoList bitset (XMIT_REQ), the long sequence (hd, hr), the limits and the codec errors.

This module owns how *fields* are laid out and what makes them canonical; the codecs
(``impl/unicast3/codec.py`` for UNICAST3, ``impl/unicast2/codec.py`` for UNICAST2) own the datagrams: their
magic byte, type codes and which fields each message has. Nothing here knows a protocol.

Field encodings (digest 5.5):

- c-long / c-int (compact integers): one length byte n, then n little-endian bytes; n = 0 means
  the value 0. n is at most 8 (c-long) or 4 (c-int) and must be minimal: the last byte is
  non-zero. Negative values are rejected on both sides (JGroups would write them as 8/4 bytes):
  seqnos are 0..2**63-1 and timestamps 0..2**31-1.
- conn_id: 2 bytes big-endian (network order, like Java's writeShort), 0..32767; ``Reader.short``
  reads the signed value for codecs that give a negative conn_id a meaning.
- bool: one byte, exactly 0 or 1.
- long sequence (JGroups' Bits.writeLongSequence, digest 5.5 "Digest"): one byte
  ``len(a) << 4 | len(b - a)``, then the minimal little-endian bytes of a, then of b - a; a <= b.
- SeqnoList (an XMIT_REQ body, like JGroups': count, lowest seqno, then bits relative to it):
  c-int count; if count > 0: c-long lowest, c-int nbytes, nbytes bitset bytes. Bit i (byte i // 8,
  bit i % 8, least significant first) set <=> seqno lowest + i is requested. Canonical form: bit 0
  set (lowest is in the set), last byte non-zero, popcount == count. An empty request is count = 0.
  A decoded request keeps its bitset: decoding checks it with a few C-level passes, and
  ``XmitReqMsg.between`` serves a range from it (no Python step per seqno asked, issue 18 item 7).

Limits (``CodecLimits``) bound what one datagram may make us allocate; every codec's ``encode``
enforces the same limits as its ``decode`` so we never send what a peer with the same limits must
reject.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

MAX_SEQNO = 2**63 - 1
MAX_CONN_ID = 2**15 - 1
MAX_TIMESTAMP = 2**31 - 1
MAX_CINT = 2**31 - 1  # largest c-int: timestamps, payload lengths, counts

LONG_BYTES = 8
INT_BYTES = 4


class DecodeError(ValueError):
    """A datagram is not a valid encoding; the message names the field and what was expected."""


class EncodeError(ValueError):
    """A message exceeds the ``CodecLimits`` used for encoding (a local error, not the peer's)."""


# ---------------------------------------------------------------------------- limits


@dataclass(frozen=True, slots=True)
class CodecLimits:
    """Upper bounds on one datagram, enforced by ``encode`` and ``decode``."""

    max_datagram: int = 65_507
    max_payload: int = 65_000
    max_xmit_seqnos: int = 8192
    max_xmit_span: int = 65_536

    def __post_init__(self) -> None:
        for name in ("max_datagram", "max_payload", "max_xmit_seqnos", "max_xmit_span"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"CodecLimits.{name} must be a positive int, got {value!r}")
        if self.max_payload > self.max_datagram:
            raise ValueError(
                f"CodecLimits.max_payload ({self.max_payload}) must not exceed max_datagram"
                f" ({self.max_datagram})"
            )
        if self.max_payload > MAX_CINT:
            raise ValueError(f"CodecLimits.max_payload must be at most {MAX_CINT} (a c-int)")
        if self.max_xmit_seqnos > self.max_xmit_span:
            raise ValueError(
                f"CodecLimits.max_xmit_seqnos ({self.max_xmit_seqnos}) must not exceed"
                f" max_xmit_span ({self.max_xmit_span}): n distinct seqnos span at least n"
            )


DEFAULT_LIMITS = CodecLimits()


def check_range(owner: str, field: str, value: object, hi: int, lo: int = 0) -> None:
    """Raise the constructor's ValueError unless ``value`` is an int in ``lo..hi``."""
    if type(value) is not int or not lo <= value <= hi:
        raise ValueError(f"{owner}.{field} must be an int in {lo}..{hi}, got {value!r}")


# ---------------------------------------------------------------------------- XMIT_REQ


class XmitReqMsg:
    """XMIT_REQ: retransmission request; ``seqnos`` strictly increasing (use ``XmitReqMsg.of``).

    The same message in every protocol that asks for gaps by a SeqnoList; each codec gives it its
    own type code. Immutable, compared and hashed by ``seqnos``. A decoded one keeps the bitset it
    came in and makes the tuple only when ``seqnos`` is read: the engines serve a request through
    ``between``, which reads only the bits of the stored range, so a request costs its decoder a
    few passes over its bytes in C (no Python step per seqno) and its server a Python step per
    seqno served, not per seqno asked."""

    __slots__ = ("_bits", "_count", "_lowest", "_seqnos")
    __match_args__ = ("seqnos",)
    _bits: bytes
    _count: int
    _lowest: int
    _seqnos: tuple[int, ...] | None

    def __init__(self, seqnos: tuple[int, ...]) -> None:
        if type(seqnos) is not tuple:
            raise ValueError(f"XmitReqMsg.seqnos must be a tuple, got {type(seqnos).__name__}")
        prev = -1
        for s in seqnos:
            check_range("XmitReqMsg", "seqnos[]", s, MAX_SEQNO)
            if s <= prev:
                raise ValueError(f"XmitReqMsg.seqnos must be strictly increasing, {s} after {prev}")
            prev = s
        _init(self, seqnos, b"", len(seqnos), seqnos[0] if seqnos else 0)

    @classmethod
    def of(cls, seqnos: Iterable[int]) -> XmitReqMsg:
        """Build from any iterable of seqnos (sorted, duplicates removed)."""
        return cls(tuple(sorted(set(seqnos))))

    @classmethod
    def from_bitset(cls, lowest: int, bits: bytes, count: int) -> XmitReqMsg:
        """The request a canonical SeqnoList body stands for; only ``decode_xmit_req`` calls it,
        after checking that ``bits`` is canonical, has ``count`` bits set and ends at most at
        MAX_SEQNO (nothing here checks it again)."""
        msg: XmitReqMsg = object.__new__(cls)
        _init(msg, None, bits, count, lowest)
        return msg

    @property
    def seqnos(self) -> tuple[int, ...]:
        if self._seqnos is None:
            object.__setattr__(self, "_seqnos", tuple(_bit_positions(self._bits, 0, len(self._bits), self._lowest)))
        assert self._seqnos is not None
        return self._seqnos

    @property
    def count(self) -> int:
        """How many seqnos are asked for."""
        return self._count

    def between(self, low: int, high: int, cap: int) -> tuple[Sequence[int], int]:
        """The first ``cap`` of the listed seqnos s with ``low < s <= high``, and how many such
        seqnos there are: work in Python steps bounded by what is returned (and the bytes of the
        range), not by what is listed."""
        if self._seqnos is not None:
            seqnos = self._seqnos
            lo = bisect_right(seqnos, low)
            hi = bisect_right(seqnos, high, lo)
            return seqnos[lo : min(hi, lo + cap)], hi - lo
        lowest, bits = self._lowest, self._bits
        first, last = max(low + 1 - lowest, 0), min(high - lowest, len(bits) * 8 - 1)  # bit indexes
        if first > last:
            return [], 0
        start, stop = first >> 3, (last >> 3) + 1
        window = int.from_bytes(bits[start:stop], "little") >> (first & 7)
        asked = (window & ((1 << (last - first + 1)) - 1)).bit_count()
        return list(islice((s for s in _bit_positions(bits, start, stop, lowest) if low < s <= high), cap)), asked

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"XmitReqMsg is immutable (cannot set {name})")

    def __reduce__(self) -> tuple[type[XmitReqMsg], tuple[tuple[int, ...]]]:
        """Pickled and copied as the tuple it stands for (as when it was a frozen dataclass)."""
        return XmitReqMsg, (self.seqnos,)

    def __eq__(self, other: object) -> bool:
        return type(other) is XmitReqMsg and self.seqnos == other.seqnos

    def __hash__(self) -> int:
        return hash((XmitReqMsg, self.seqnos))

    def __repr__(self) -> str:
        return f"XmitReqMsg(seqnos={self.seqnos!r})"


def _init(msg: XmitReqMsg, seqnos: tuple[int, ...] | None, bits: bytes, count: int, lowest: int) -> None:
    for name, value in (("_seqnos", seqnos), ("_bits", bits), ("_count", count), ("_lowest", lowest)):
        object.__setattr__(msg, name, value)


# The bit positions set in each byte value, least significant first (SeqnoList order).
_POSITIONS = tuple(tuple(bit for bit in range(8) if value >> bit & 1) for value in range(256))


def _bit_positions(bits: bytes, start: int, stop: int, lowest: int) -> Iterator[int]:
    """The seqnos of the bits set in ``bits[start:stop]``, in increasing order."""
    positions = _POSITIONS
    for i in range(start, stop):
        byte = bits[i]
        if byte:
            base = lowest + (i << 3)
            for bit in positions[byte]:
                yield base + bit


# ---------------------------------------------------------------------------- encoding


def compact(value: int) -> bytes:
    """Compact encoding of a non-negative int: minimal length byte + little-endian bytes."""
    n = (value.bit_length() + 7) // 8
    return bytes((n,)) + value.to_bytes(n, "little")


SMALL_COMPACT = tuple(compact(i) for i in range(256))  # for payload lengths below 256


def long_sequence(a: int, b: int) -> bytes:
    """The long sequence (a, b), 0 <= a <= b (caller ensures): lengths byte, a, then b - a."""
    delta = b - a
    n, k = (a.bit_length() + 7) // 8, (delta.bit_length() + 7) // 8
    return bytes((n << 4 | k,)) + a.to_bytes(n, "little") + delta.to_bytes(k, "little")


def _bitset(seqnos: tuple[int, ...]) -> bytes:
    """Bits relative to seqnos[0], least significant bit first (caller ensures non-empty)."""
    lowest = seqnos[0]
    bits = bytearray((seqnos[-1] - lowest) // 8 + 1)
    for s in seqnos:
        i = s - lowest
        bits[i >> 3] |= 1 << (i & 7)
    return bytes(bits)


def encode_xmit_req(msg: XmitReqMsg, limits: CodecLimits) -> bytes:
    """The SeqnoList body of ``msg``; ``EncodeError`` beyond max_xmit_seqnos / max_xmit_span."""
    count = len(msg.seqnos)
    if count == 0:
        return compact(0)
    if count > limits.max_xmit_seqnos:
        raise EncodeError(
            f"XMIT_REQ lists {count} seqnos, more than max_xmit_seqnos={limits.max_xmit_seqnos}"
        )
    span = msg.seqnos[-1] - msg.seqnos[0] + 1
    if span > limits.max_xmit_span:
        raise EncodeError(
            f"XMIT_REQ spans {span} seqnos, more than max_xmit_span={limits.max_xmit_span}"
        )
    bits = _bitset(msg.seqnos)
    return compact(count) + compact(msg.seqnos[0]) + compact(len(bits)) + bits


def check_encoded_size(data: bytes, limits: CodecLimits) -> bytes:
    """``data`` if it fits ``limits.max_datagram``, else ``EncodeError``."""
    if len(data) > limits.max_datagram:
        raise EncodeError(
            f"datagram is {len(data)} bytes, more than max_datagram={limits.max_datagram}"
        )
    return data


# ---------------------------------------------------------------------------- decoding


def datagram_bytes(data: bytes | bytearray | memoryview, limits: CodecLimits) -> bytes:
    """``data`` as bytes, within max_datagram (``DecodeError``); not bytes-like: ``TypeError``
    (a caller bug, not the peer's)."""
    if type(data) is bytes:
        raw = data
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
    else:
        raise TypeError(f"decode expects bytes, got {type(data).__name__}")
    if len(raw) > limits.max_datagram:
        raise DecodeError(
            f"datagram: expected at most max_datagram={limits.max_datagram} bytes,"
            f" got {len(raw)}"
        )
    return raw


class Reader:
    """A cursor over one datagram; every read failure is a DecodeError naming the field."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def take(self, n: int, field: str) -> bytes:
        end = self._pos + n
        if end > len(self._data):
            raise DecodeError(
                f"{field}: truncated, expected {n} byte(s) at offset {self._pos},"
                f" only {len(self._data) - self._pos} left"
            )
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def byte(self, field: str) -> int:
        return self.take(1, field)[0]

    @property
    def remaining(self) -> int:
        """Bytes not read yet."""
        return len(self._data) - self._pos

    def _minimal(self, n: int, field: str) -> int:
        """n little-endian bytes, minimal (most significant byte non-zero)."""
        raw = self.take(n, field)
        if n > 0 and raw[-1] == 0:
            raise DecodeError(f"{field}: non-canonical compact integer (most significant byte 0)")
        return int.from_bytes(raw, "little")

    def compact(self, field: str, max_bytes: int, max_value: int) -> int:
        """A canonical compact integer in 0..max_value of at most max_bytes value bytes."""
        n = self.byte(field)
        if n > max_bytes:
            raise DecodeError(f"{field}: expected compact length 0..{max_bytes}, got {n}")
        value = self._minimal(n, field)
        if value > max_value:
            raise DecodeError(f"{field}: expected a value in 0..{max_value}, got {value}")
        return value

    def seqno(self, field: str) -> int:
        return self.compact(field, LONG_BYTES, MAX_SEQNO)

    def timestamp(self, field: str) -> int:
        return self.compact(field, INT_BYTES, MAX_TIMESTAMP)

    def short(self, field: str) -> int:
        """A 2-byte big-endian signed short (Java's readShort)."""
        return int.from_bytes(self.take(2, field), "big", signed=True)

    def conn_id(self, field: str) -> int:
        value = int.from_bytes(self.take(2, field), "big")
        if value > MAX_CONN_ID:
            raise DecodeError(f"{field}: expected a conn id in 0..{MAX_CONN_ID}, got {value}")
        return value

    def flag(self, field: str) -> bool:
        value = self.byte(field)
        if value > 1:
            raise DecodeError(f"{field}: expected a bool byte 0 or 1, got {value}")
        return value == 1

    def long_sequence(self, field: str) -> tuple[int, int]:
        """A canonical long sequence (a, b) with 0 <= a <= b <= MAX_SEQNO."""
        lengths = self.byte(field)
        n, k = lengths >> 4, lengths & 15
        if n > LONG_BYTES or k > LONG_BYTES:
            raise DecodeError(f"{field}: expected lengths 0..{LONG_BYTES} in the first byte, got {n} and {k}")
        a = self._minimal(n, field)
        b = a + self._minimal(k, field)
        if b > MAX_SEQNO:
            raise DecodeError(f"{field}: expected values in 0..{MAX_SEQNO}, got ({a}, {b})")
        return a, b

    def finish(self, what: str) -> None:
        extra = len(self._data) - self._pos
        if extra:
            raise DecodeError(f"{what}: {extra} trailing byte(s) after the last field")


def decode_xmit_req(r: Reader, limits: CodecLimits) -> XmitReqMsg:
    """A canonical SeqnoList within ``limits`` (fields named XMIT_REQ.*)."""
    count = r.compact("XMIT_REQ.count", INT_BYTES, MAX_CINT)
    if count == 0:
        return XmitReqMsg(())
    if count > limits.max_xmit_seqnos:
        raise DecodeError(
            f"XMIT_REQ.count: expected at most max_xmit_seqnos={limits.max_xmit_seqnos},"
            f" got {count}"
        )
    lowest = r.seqno("XMIT_REQ.lowest")
    max_bytes = (limits.max_xmit_span + 7) // 8
    nbytes = r.compact("XMIT_REQ.bitset length", INT_BYTES, MAX_CINT)
    if not 1 <= nbytes <= max_bytes:
        raise DecodeError(f"XMIT_REQ.bitset length: expected 1..{max_bytes} bytes, got {nbytes}")
    bits = r.take(nbytes, "XMIT_REQ.bitset")
    if not bits[0] & 1:
        raise DecodeError("XMIT_REQ.bitset: expected bit 0 set (lowest seqno is requested)")
    if bits[-1] == 0:
        raise DecodeError("XMIT_REQ.bitset: non-canonical, last byte is 0")
    popcount = int.from_bytes(bits, "little").bit_count()
    if popcount != count:
        raise DecodeError(f"XMIT_REQ.bitset: expected {count} bits set (count), got {popcount}")
    span = (nbytes - 1) * 8 + bits[-1].bit_length()
    if span > limits.max_xmit_span:
        raise DecodeError(
            f"XMIT_REQ.bitset: expected a span of at most max_xmit_span={limits.max_xmit_span}"
            f" seqnos, got {span}"
        )
    if lowest + span - 1 > MAX_SEQNO:
        raise DecodeError(f"XMIT_REQ.bitset: highest seqno exceeds {MAX_SEQNO}")
    return XmitReqMsg.from_bitset(lowest, bits, count)
