"""UNICAST3 wire format: the five message types and their strict, canonical byte encoding.

This module owns the datagram layout and nothing else (no protocol decisions). ``decode`` is the
trust boundary for bytes from the network: every malformed input raises ``DecodeError`` (and
nothing else), and whatever decodes re-encodes to exactly the same bytes (one encoding per
message), so a decoded message can be logged, hashed or compared by its bytes.

Datagram layout (digest 1.2 (b) for the fields, 5.5 for the integer encoding)::

    byte 0   MAGIC (0x55): format identity and version; bump it on any incompatible change
    byte 1   type: DATA=0, ACK=1, SEND_FIRST_SEQNO=2, XMIT_REQ=3, CLOSE=4
    DATA              c-long seqno, conn_id, bool first, c-int payload length, payload bytes
    ACK               c-long seqno, conn_id, c-int timestamp
    SEND_FIRST_SEQNO  c-int timestamp
    XMIT_REQ          c-int count; if count > 0: c-long lowest, c-int nbytes, nbytes bitset bytes
    CLOSE             conn_id

Field encodings:

- c-long / c-int (compact integers): one length byte n, then n little-endian bytes; n = 0 means
  the value 0. n is at most 8 (c-long) or 4 (c-int) and must be minimal: the last byte is
  non-zero. Negative values are rejected on both sides (JGroups would write them as 8/4 bytes):
  our seqnos are 0..2**63-1 and timestamps 0..2**31-1 (the protocol engine wraps its timestamp
  counter inside that range).
- conn_id: 2 bytes big-endian (network order, like Java's writeShort), 0..32767 only.
- bool: one byte, exactly 0 or 1.
- XMIT_REQ bitset (like JGroups' SeqnoList: count, lowest seqno, then bits relative to it): bit i
  (byte i // 8, bit i % 8, least significant first) set <=> seqno lowest + i is requested. Canonical
  form: bit 0 set (lowest is in the set), last byte non-zero, popcount == count. An empty request
  is just count = 0.

Limits (``CodecLimits``) bound what one datagram may make us allocate; ``encode`` enforces the
same limits as ``decode`` so we never send what a peer with the same limits must reject.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

MAGIC = 0x55
MAX_SEQNO = 2**63 - 1
MAX_CONN_ID = 2**15 - 1
MAX_TIMESTAMP = 2**31 - 1
MAX_CINT = 2**31 - 1  # largest c-int: timestamps, payload lengths, counts

TYPE_DATA = 0
TYPE_ACK = 1
TYPE_SEND_FIRST_SEQNO = 2
TYPE_XMIT_REQ = 3
TYPE_CLOSE = 4

_TYPE_NAMES = {
    TYPE_DATA: "DATA",
    TYPE_ACK: "ACK",
    TYPE_SEND_FIRST_SEQNO: "SEND_FIRST_SEQNO",
    TYPE_XMIT_REQ: "XMIT_REQ",
    TYPE_CLOSE: "CLOSE",
}

_LONG_BYTES = 8
_INT_BYTES = 4


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


# ---------------------------------------------------------------------------- messages


def _check_range(owner: str, field: str, value: object, hi: int) -> None:
    if type(value) is not int or not 0 <= value <= hi:
        raise ValueError(f"{owner}.{field} must be an int in 0..{hi}, got {value!r}")


@dataclass(frozen=True, slots=True)
class DataMsg:
    """DATA: one application message; ``first`` marks the opening message of a connection."""

    seqno: int
    conn_id: int
    first: bool
    payload: bytes

    def __post_init__(self) -> None:
        seqno, conn_id = self.seqno, self.conn_id
        if not (
            type(seqno) is int
            and 0 <= seqno <= MAX_SEQNO
            and type(conn_id) is int
            and 0 <= conn_id <= MAX_CONN_ID
            and type(self.first) is bool
            and type(self.payload) is bytes
        ):
            self._reject()

    def _reject(self) -> None:
        """Raise the ValueError naming the first bad field (the checks, one at a time)."""
        _check_range("DataMsg", "seqno", self.seqno, MAX_SEQNO)
        _check_range("DataMsg", "conn_id", self.conn_id, MAX_CONN_ID)
        if type(self.first) is not bool:
            raise ValueError(f"DataMsg.first must be a bool, got {self.first!r}")
        raise ValueError(f"DataMsg.payload must be bytes, got {type(self.payload).__name__}")


@dataclass(frozen=True, slots=True)
class AckMsg:
    """ACK: cumulative acknowledgement of ``seqno`` on connection ``conn_id``."""

    seqno: int
    conn_id: int
    timestamp: int

    def __post_init__(self) -> None:
        seqno, conn_id, ts = self.seqno, self.conn_id, self.timestamp
        if not (
            type(seqno) is int
            and 0 <= seqno <= MAX_SEQNO
            and type(conn_id) is int
            and 0 <= conn_id <= MAX_CONN_ID
            and type(ts) is int
            and 0 <= ts <= MAX_TIMESTAMP
        ):
            _check_range("AckMsg", "seqno", seqno, MAX_SEQNO)
            _check_range("AckMsg", "conn_id", conn_id, MAX_CONN_ID)
            _check_range("AckMsg", "timestamp", ts, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class SendFirstSeqnoMsg:
    """SEND_FIRST_SEQNO: the receiver asks the sender to resend its lowest unacked message."""

    timestamp: int

    def __post_init__(self) -> None:
        _check_range("SendFirstSeqnoMsg", "timestamp", self.timestamp, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class XmitReqMsg:
    """XMIT_REQ: retransmission request; ``seqnos`` strictly increasing (use ``XmitReqMsg.of``)."""

    seqnos: tuple[int, ...]

    def __post_init__(self) -> None:
        if type(self.seqnos) is not tuple:
            raise ValueError(f"XmitReqMsg.seqnos must be a tuple, got {type(self.seqnos).__name__}")
        prev = -1
        for s in self.seqnos:
            _check_range("XmitReqMsg", "seqnos[]", s, MAX_SEQNO)
            if s <= prev:
                raise ValueError(f"XmitReqMsg.seqnos must be strictly increasing, {s} after {prev}")
            prev = s

    @classmethod
    def of(cls, seqnos: Iterable[int]) -> XmitReqMsg:
        """Build from any iterable of seqnos (sorted, duplicates removed)."""
        return cls(tuple(sorted(set(seqnos))))


@dataclass(frozen=True, slots=True)
class CloseMsg:
    """CLOSE: the sender removed connection ``conn_id``; the receiver drops its matching entry."""

    conn_id: int

    def __post_init__(self) -> None:
        _check_range("CloseMsg", "conn_id", self.conn_id, MAX_CONN_ID)


WireMsg = DataMsg | AckMsg | SendFirstSeqnoMsg | XmitReqMsg | CloseMsg

# The decoder's fast paths build DATA and ACK from fields it has already validated, skipping the
# constructors' checks (they would only repeat them): the slots' own setters, which the frozen
# dataclass' __setattr__ does not guard.
_new = object.__new__
_SET_DATA: tuple[Callable[[DataMsg, Any], None], ...] = tuple(
    getattr(DataMsg, name).__set__ for name in ("seqno", "conn_id", "first", "payload")
)
_SET_ACK: tuple[Callable[[AckMsg, Any], None], ...] = tuple(
    getattr(AckMsg, name).__set__ for name in ("seqno", "conn_id", "timestamp")
)


def _trusted_data(seqno: int, conn_id: int, first: bool, payload: bytes) -> DataMsg:
    msg: DataMsg = _new(DataMsg)
    set_seqno, set_conn_id, set_first, set_payload = _SET_DATA
    set_seqno(msg, seqno)
    set_conn_id(msg, conn_id)
    set_first(msg, first)
    set_payload(msg, payload)
    return msg


def _trusted_ack(seqno: int, conn_id: int, timestamp: int) -> AckMsg:
    msg: AckMsg = _new(AckMsg)
    set_seqno, set_conn_id, set_timestamp = _SET_ACK
    set_seqno(msg, seqno)
    set_conn_id(msg, conn_id)
    set_timestamp(msg, timestamp)
    return msg


# ---------------------------------------------------------------------------- encoding


def _compact(value: int) -> bytes:
    """Compact encoding of a non-negative int: minimal length byte + little-endian bytes."""
    n = (value.bit_length() + 7) // 8
    return bytes((n,)) + value.to_bytes(n, "little")


def _bitset(seqnos: tuple[int, ...]) -> bytes:
    """Bits relative to seqnos[0], least significant bit first (caller ensures non-empty)."""
    lowest = seqnos[0]
    bits = bytearray((seqnos[-1] - lowest) // 8 + 1)
    for s in seqnos:
        i = s - lowest
        bits[i >> 3] |= 1 << (i & 7)
    return bytes(bits)


def _encode_xmit_req(msg: XmitReqMsg, limits: CodecLimits) -> bytes:
    count = len(msg.seqnos)
    if count == 0:
        return _compact(0)
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
    return _compact(count) + _compact(msg.seqnos[0]) + _compact(len(bits)) + bits


def _encode_body(msg: WireMsg, limits: CodecLimits) -> tuple[int, bytes]:
    """(type code, encoded fields) for one message."""
    match msg:
        case DataMsg(seqno, conn_id, first, payload):
            if len(payload) > limits.max_payload:
                raise EncodeError(
                    f"DATA payload is {len(payload)} bytes, more than"
                    f" max_payload={limits.max_payload}"
                )
            head = _compact(seqno) + conn_id.to_bytes(2, "big") + bytes((int(first),))
            return TYPE_DATA, head + _compact(len(payload)) + payload
        case AckMsg(seqno, conn_id, timestamp):
            return TYPE_ACK, _compact(seqno) + conn_id.to_bytes(2, "big") + _compact(timestamp)
        case SendFirstSeqnoMsg(timestamp):
            return TYPE_SEND_FIRST_SEQNO, _compact(timestamp)
        case XmitReqMsg():
            return TYPE_XMIT_REQ, _encode_xmit_req(msg, limits)
        case CloseMsg(conn_id):
            return TYPE_CLOSE, conn_id.to_bytes(2, "big")
    raise TypeError(f"not a wire message: {type(msg).__name__}")


# Fast paths for the two per-message types: one int.to_bytes per compact integer, where the
# length byte rides along as the lowest byte ((value << 8 | n).to_bytes(n + 1, "little") is
# _compact(value)), and a table for payload lengths below 256. When a limit is exceeded they
# leave it to the generic path, which raises.
_DATA_HEAD = bytes((MAGIC, TYPE_DATA))
_ACK_HEAD = bytes((MAGIC, TYPE_ACK))
_SMALL_COMPACT = tuple(_compact(i) for i in range(256))


def encode_data(
    seqno: int, conn_id: int, first: bool, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS
) -> bytes:
    """``encode(DataMsg(seqno, conn_id, first, payload), limits)`` without building the message:
    the same bytes, and the same exceptions (``ValueError`` from the constructor's checks,
    ``EncodeError`` from the limits)."""
    if (
        type(seqno) is int
        and 0 <= seqno <= MAX_SEQNO
        and type(conn_id) is int
        and 0 <= conn_id <= MAX_CONN_ID
        and type(first) is bool
        and type(payload) is bytes
    ):
        length = len(payload)
        if length <= limits.max_payload:
            n = (seqno.bit_length() + 7) >> 3
            data = b"".join((
                _DATA_HEAD,
                (seqno << 8 | n).to_bytes(n + 1, "little"),
                (conn_id << 8 | first).to_bytes(3, "big"),
                _SMALL_COMPACT[length] if length < 256 else _compact(length),
                payload,
            ))
            if len(data) <= limits.max_datagram:
                return data
    return _encode_generic(DataMsg(seqno, conn_id, first, payload), limits)


def _encode_ack(msg: AckMsg, limits: CodecLimits) -> bytes:
    seqno, timestamp = msg.seqno, msg.timestamp
    n = (seqno.bit_length() + 7) >> 3
    k = (timestamp.bit_length() + 7) >> 3
    data = b"".join((
        _ACK_HEAD,
        (seqno << 8 | n).to_bytes(n + 1, "little"),
        msg.conn_id.to_bytes(2, "big"),
        (timestamp << 8 | k).to_bytes(k + 1, "little"),
    ))
    return data if len(data) <= limits.max_datagram else _encode_generic(msg, limits)


def encode(msg: WireMsg, limits: CodecLimits = DEFAULT_LIMITS) -> bytes:
    """The canonical datagram for ``msg``; ``EncodeError`` if it exceeds ``limits``.

    Field ranges are already guaranteed by the message constructors.
    """
    if type(msg) is DataMsg:
        return encode_data(msg.seqno, msg.conn_id, msg.first, msg.payload, limits)
    if type(msg) is AckMsg:
        return _encode_ack(msg, limits)
    return _encode_generic(msg, limits)


def _encode_generic(msg: WireMsg, limits: CodecLimits) -> bytes:
    code, body = _encode_body(msg, limits)
    data = bytes((MAGIC, code)) + body
    if len(data) > limits.max_datagram:
        raise EncodeError(
            f"datagram is {len(data)} bytes, more than max_datagram={limits.max_datagram}"
        )
    return data


# ---------------------------------------------------------------------------- decoding


class _Reader:
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

    def compact(self, field: str, max_bytes: int, max_value: int) -> int:
        """A canonical compact integer in 0..max_value of at most max_bytes value bytes."""
        n = self.byte(field)
        if n > max_bytes:
            raise DecodeError(f"{field}: expected compact length 0..{max_bytes}, got {n}")
        raw = self.take(n, field)
        if n > 0 and raw[-1] == 0:
            raise DecodeError(f"{field}: non-canonical compact integer (most significant byte 0)")
        value = int.from_bytes(raw, "little")
        if value > max_value:
            raise DecodeError(f"{field}: expected a value in 0..{max_value}, got {value}")
        return value

    def seqno(self, field: str) -> int:
        return self.compact(field, _LONG_BYTES, MAX_SEQNO)

    def timestamp(self, field: str) -> int:
        return self.compact(field, _INT_BYTES, MAX_TIMESTAMP)

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

    def finish(self, what: str) -> None:
        extra = len(self._data) - self._pos
        if extra:
            raise DecodeError(f"{what}: {extra} trailing byte(s) after the last field")


def _decode_data(r: _Reader, limits: CodecLimits) -> DataMsg:
    seqno = r.seqno("DATA.seqno")
    conn_id = r.conn_id("DATA.conn_id")
    first = r.flag("DATA.first")
    length = r.compact("DATA.payload length", _INT_BYTES, MAX_CINT)
    if length > limits.max_payload:
        raise DecodeError(
            f"DATA.payload length: expected at most max_payload={limits.max_payload}, got {length}"
        )
    return DataMsg(seqno, conn_id, first, r.take(length, "DATA.payload"))


def _decode_ack(r: _Reader) -> AckMsg:
    seqno = r.seqno("ACK.seqno")
    conn_id = r.conn_id("ACK.conn_id")
    return AckMsg(seqno, conn_id, r.timestamp("ACK.timestamp"))


def _decode_xmit_req(r: _Reader, limits: CodecLimits) -> XmitReqMsg:
    count = r.compact("XMIT_REQ.count", _INT_BYTES, MAX_CINT)
    if count == 0:
        return XmitReqMsg(())
    if count > limits.max_xmit_seqnos:
        raise DecodeError(
            f"XMIT_REQ.count: expected at most max_xmit_seqnos={limits.max_xmit_seqnos},"
            f" got {count}"
        )
    lowest = r.seqno("XMIT_REQ.lowest")
    max_bytes = (limits.max_xmit_span + 7) // 8
    nbytes = r.compact("XMIT_REQ.bitset length", _INT_BYTES, MAX_CINT)
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
    seqnos = tuple(
        lowest + (i << 3) + bit
        for i, byte in enumerate(bits)
        if byte
        for bit in range(8)
        if byte >> bit & 1
    )
    return XmitReqMsg(seqnos)


# Fast paths for DATA and ACK: the same checks as the _Reader path, inlined. They return None on
# anything wrong (or merely unusual) and ``decode`` then re-parses with _Reader, which raises the
# precise DecodeError, so the fast paths only ever accept what _Reader accepts.


def _fast_data(raw: bytes, limits: CodecLimits) -> DataMsg | None:
    """DATA (header already checked): the message if ``raw`` is canonical, else None."""
    end = len(raw)
    n = raw[2]
    p = 3 + n  # conn_id
    if n > _LONG_BYTES or p + 4 > end:
        return None
    k = raw[p + 3]
    q = p + 4 + k  # payload
    if k > _INT_BYTES or q > end or (n and not raw[p - 1]) or (k and not raw[q - 1]):
        return None
    seqno = int.from_bytes(raw[3:p], "little")
    conn_id = raw[p] << 8 | raw[p + 1]
    flag = raw[p + 2]
    length = int.from_bytes(raw[p + 4 : q], "little")
    if (
        seqno > MAX_SEQNO
        or conn_id > MAX_CONN_ID
        or flag > 1
        or length > MAX_CINT
        or length > limits.max_payload
        or q + length != end
    ):
        return None
    return _trusted_data(seqno, conn_id, flag == 1, raw[q:])


def _fast_ack(raw: bytes) -> AckMsg | None:
    """ACK (header already checked): the message if ``raw`` is canonical, else None."""
    n = raw[2]
    p = 3 + n  # conn_id
    if n > _LONG_BYTES or p + 3 > len(raw):
        return None
    k = raw[p + 2]
    q = p + 3 + k  # end
    if k > _INT_BYTES or q != len(raw) or (n and not raw[p - 1]) or (k and not raw[q - 1]):
        return None
    seqno = int.from_bytes(raw[3:p], "little")
    conn_id = raw[p] << 8 | raw[p + 1]
    timestamp = int.from_bytes(raw[p + 3 : q], "little")
    if seqno > MAX_SEQNO or conn_id > MAX_CONN_ID or timestamp > MAX_TIMESTAMP:
        return None
    return _trusted_ack(seqno, conn_id, timestamp)


def decode(
    data: bytes | bytearray | memoryview, limits: CodecLimits = DEFAULT_LIMITS
) -> WireMsg:
    """Parse one datagram; raises ``DecodeError`` (only) if it is not a canonical encoding.

    Passing something that is not bytes-like is a caller bug and raises ``TypeError``.
    """
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
    if len(raw) > 2 and raw[0] == MAGIC:
        fast: WireMsg | None = None
        if raw[1] == TYPE_DATA:
            fast = _fast_data(raw, limits)
        elif raw[1] == TYPE_ACK:
            fast = _fast_ack(raw)
        if fast is not None:
            return fast
    r = _Reader(raw)
    magic = r.byte("magic")
    if magic != MAGIC:
        raise DecodeError(f"magic: expected 0x{MAGIC:02x}, got 0x{magic:02x}")
    code = r.byte("type")
    msg: WireMsg
    if code == TYPE_DATA:
        msg = _decode_data(r, limits)
    elif code == TYPE_ACK:
        msg = _decode_ack(r)
    elif code == TYPE_SEND_FIRST_SEQNO:
        msg = SendFirstSeqnoMsg(r.timestamp("SEND_FIRST_SEQNO.timestamp"))
    elif code == TYPE_XMIT_REQ:
        msg = _decode_xmit_req(r, limits)
    elif code == TYPE_CLOSE:
        msg = CloseMsg(r.conn_id("CLOSE.conn_id"))
    else:
        raise DecodeError(f"type: expected a message type 0..4, got {code}")
    r.finish(_TYPE_NAMES[code])
    return msg
