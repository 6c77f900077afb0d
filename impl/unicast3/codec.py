"""UNICAST3 wire format: the five message types and their strict, canonical byte encoding.

This module owns the UNICAST3 datagram layout and nothing else (no protocol decisions); the
field encodings, the SeqnoList, the limits and the errors are ``impl/wire.py``'s, shared with the
UNICAST2 codec (their names are re-exported here). ``decode`` is the trust boundary for bytes from
the network: every malformed input raises ``DecodeError`` (and nothing else), and whatever decodes
re-encodes to exactly the same bytes (one encoding per message), so a decoded message can be
logged, hashed or compared by its bytes.

Datagram layout (digest 1.2 (b) for the fields, 5.5 for the integer encoding)::

    byte 0   MAGIC (0x55): format identity and version; bump it on any incompatible change
    byte 1   type: DATA=0, ACK=1, SEND_FIRST_SEQNO=2, XMIT_REQ=3, CLOSE=4
    DATA              c-long seqno, conn_id, flags, c-int payload length, payload bytes
    ACK               c-long seqno, conn_id, c-int timestamp
    SEND_FIRST_SEQNO  c-int timestamp
    XMIT_REQ          SeqnoList: c-int count; if count > 0: c-long lowest, c-int nbytes, bitset
    CLOSE             conn_id

DATA's flags byte: bit 0 ``first``, bit 1 ``oob`` (the message's OOB flag: JGroups carries it in
the message's flags, not in UnicastHeader3; our datagram has one byte for both), the other bits 0.
Before the OOB flag the byte was a bool (0 or 1): those datagrams decode as before.
conn_id is 0..32767 (2 bytes big-endian); see ``impl/wire.py`` for every field encoding and for
``CodecLimits``; ``encode`` enforces the same limits as ``decode``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from impl.wire import (
    DEFAULT_LIMITS,
    INT_BYTES,
    LONG_BYTES,
    MAX_CINT,
    MAX_CONN_ID,
    MAX_SEQNO,
    MAX_TIMESTAMP,
    SMALL_COMPACT,
    CodecLimits,
    DecodeError,
    EncodeError,
    Reader,
    XmitReqMsg,
    check_encoded_size,
    check_range,
    compact,
    datagram_bytes,
    decode_xmit_req,
    encode_xmit_req,
)

MAGIC = 0x55

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

# ---------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class DataMsg:
    """DATA: one application message; ``first`` marks the opening message of a connection, ``oob``
    a message the receiver delivers on receipt (JGroups' Message.Flag.OOB)."""

    seqno: int
    conn_id: int
    first: bool
    payload: bytes
    oob: bool = False

    def __post_init__(self) -> None:
        seqno, conn_id = self.seqno, self.conn_id
        if not (
            type(seqno) is int
            and 0 <= seqno <= MAX_SEQNO
            and type(conn_id) is int
            and 0 <= conn_id <= MAX_CONN_ID
            and type(self.first) is bool
            and type(self.payload) is bytes
            and type(self.oob) is bool
        ):
            self._reject()

    def _reject(self) -> None:
        """Raise the ValueError naming the first bad field (the checks, one at a time)."""
        check_range("DataMsg", "seqno", self.seqno, MAX_SEQNO)
        check_range("DataMsg", "conn_id", self.conn_id, MAX_CONN_ID)
        if type(self.first) is not bool:
            raise ValueError(f"DataMsg.first must be a bool, got {self.first!r}")
        if type(self.oob) is not bool:
            raise ValueError(f"DataMsg.oob must be a bool, got {self.oob!r}")
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
            check_range("AckMsg", "seqno", seqno, MAX_SEQNO)
            check_range("AckMsg", "conn_id", conn_id, MAX_CONN_ID)
            check_range("AckMsg", "timestamp", ts, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class SendFirstSeqnoMsg:
    """SEND_FIRST_SEQNO: the receiver asks the sender to resend its lowest unacked message."""

    timestamp: int

    def __post_init__(self) -> None:
        check_range("SendFirstSeqnoMsg", "timestamp", self.timestamp, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class CloseMsg:
    """CLOSE: the sender removed connection ``conn_id``; the receiver drops its matching entry."""

    conn_id: int

    def __post_init__(self) -> None:
        check_range("CloseMsg", "conn_id", self.conn_id, MAX_CONN_ID)


WireMsg = DataMsg | AckMsg | SendFirstSeqnoMsg | XmitReqMsg | CloseMsg

# The decoder's fast paths build DATA and ACK from fields it has already validated, skipping the
# constructors' checks (they would only repeat them): the slots' own setters, which the frozen
# dataclass' __setattr__ does not guard.
_new = object.__new__
_SET_DATA: tuple[Callable[[DataMsg, Any], None], ...] = tuple(
    getattr(DataMsg, name).__set__ for name in ("seqno", "conn_id", "first", "payload", "oob")
)
_SET_ACK: tuple[Callable[[AckMsg, Any], None], ...] = tuple(
    getattr(AckMsg, name).__set__ for name in ("seqno", "conn_id", "timestamp")
)


def _trusted_data(seqno: int, conn_id: int, first: bool, payload: bytes, oob: bool) -> DataMsg:
    msg: DataMsg = _new(DataMsg)
    set_seqno, set_conn_id, set_first, set_payload, set_oob = _SET_DATA
    set_seqno(msg, seqno)
    set_conn_id(msg, conn_id)
    set_first(msg, first)
    set_payload(msg, payload)
    set_oob(msg, oob)
    return msg


def _trusted_ack(seqno: int, conn_id: int, timestamp: int) -> AckMsg:
    msg: AckMsg = _new(AckMsg)
    set_seqno, set_conn_id, set_timestamp = _SET_ACK
    set_seqno(msg, seqno)
    set_conn_id(msg, conn_id)
    set_timestamp(msg, timestamp)
    return msg


# ---------------------------------------------------------------------------- encoding


def _encode_body(msg: WireMsg, limits: CodecLimits) -> tuple[int, bytes]:
    """(type code, encoded fields) for one message."""
    match msg:
        case DataMsg(seqno, conn_id, first, payload, oob):
            if len(payload) > limits.max_payload:
                raise EncodeError(
                    f"DATA payload is {len(payload)} bytes, more than"
                    f" max_payload={limits.max_payload}"
                )
            head = compact(seqno) + conn_id.to_bytes(2, "big") + bytes((first | oob << 1,))
            return TYPE_DATA, head + compact(len(payload)) + payload
        case AckMsg(seqno, conn_id, timestamp):
            return TYPE_ACK, compact(seqno) + conn_id.to_bytes(2, "big") + compact(timestamp)
        case SendFirstSeqnoMsg(timestamp):
            return TYPE_SEND_FIRST_SEQNO, compact(timestamp)
        case XmitReqMsg():
            return TYPE_XMIT_REQ, encode_xmit_req(msg, limits)
        case CloseMsg(conn_id):
            return TYPE_CLOSE, conn_id.to_bytes(2, "big")
    raise TypeError(f"not a wire message: {type(msg).__name__}")


# Fast paths for the two per-message types: one int.to_bytes per compact integer, where the
# length byte rides along as the lowest byte ((value << 8 | n).to_bytes(n + 1, "little") is
# compact(value)), and a table for payload lengths below 256. When a limit is exceeded they
# leave it to the generic path, which raises.
_DATA_HEAD = bytes((MAGIC, TYPE_DATA))
_ACK_HEAD = bytes((MAGIC, TYPE_ACK))


def encode_data(
    seqno: int, conn_id: int, first: bool, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS,
    oob: bool = False,
) -> bytes:
    """``encode(DataMsg(seqno, conn_id, first, payload, oob), limits)`` without building the
    message: the same bytes, and the same exceptions (``ValueError`` from the constructor's checks,
    ``EncodeError`` from the limits)."""
    if (
        type(seqno) is int
        and 0 <= seqno <= MAX_SEQNO
        and type(conn_id) is int
        and 0 <= conn_id <= MAX_CONN_ID
        and type(first) is bool
        and type(payload) is bytes
        and type(oob) is bool
    ):
        length = len(payload)
        if length <= limits.max_payload:
            n = (seqno.bit_length() + 7) >> 3
            data = b"".join((
                _DATA_HEAD,
                (seqno << 8 | n).to_bytes(n + 1, "little"),
                (conn_id << 8 | first | oob << 1).to_bytes(3, "big"),
                SMALL_COMPACT[length] if length < 256 else compact(length),
                payload,
            ))
            if len(data) <= limits.max_datagram:
                return data
    return _encode_generic(DataMsg(seqno, conn_id, first, payload, oob), limits)


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
        return encode_data(msg.seqno, msg.conn_id, msg.first, msg.payload, limits, msg.oob)
    if type(msg) is AckMsg:
        return _encode_ack(msg, limits)
    return _encode_generic(msg, limits)


def _encode_generic(msg: WireMsg, limits: CodecLimits) -> bytes:
    code, body = _encode_body(msg, limits)
    return check_encoded_size(bytes((MAGIC, code)) + body, limits)


# ---------------------------------------------------------------------------- decoding


def _decode_data(r: Reader, limits: CodecLimits) -> DataMsg:
    seqno = r.seqno("DATA.seqno")
    conn_id = r.conn_id("DATA.conn_id")
    flags = r.byte("DATA.flags")
    if flags > 3:
        raise DecodeError(f"DATA.flags: expected 0..3 (bit 0 first, bit 1 OOB), got {flags}")
    length = r.compact("DATA.payload length", INT_BYTES, MAX_CINT)
    if length > limits.max_payload:
        raise DecodeError(
            f"DATA.payload length: expected at most max_payload={limits.max_payload}, got {length}"
        )
    return DataMsg(seqno, conn_id, bool(flags & 1), r.take(length, "DATA.payload"), flags > 1)


def _decode_ack(r: Reader) -> AckMsg:
    seqno = r.seqno("ACK.seqno")
    conn_id = r.conn_id("ACK.conn_id")
    return AckMsg(seqno, conn_id, r.timestamp("ACK.timestamp"))


# Fast paths for DATA and ACK: the same checks as the Reader path, inlined. They return None on
# anything wrong (or merely unusual) and ``decode`` then re-parses with Reader, which raises the
# precise DecodeError, so the fast paths only ever accept what Reader accepts.


def _fast_data(raw: bytes, limits: CodecLimits) -> DataMsg | None:
    """DATA (header already checked): the message if ``raw`` is canonical, else None."""
    end = len(raw)
    n = raw[2]
    p = 3 + n  # conn_id
    if n > LONG_BYTES or p + 4 > end:
        return None
    k = raw[p + 3]
    q = p + 4 + k  # payload
    if k > INT_BYTES or q > end or (n and not raw[p - 1]) or (k and not raw[q - 1]):
        return None
    seqno = int.from_bytes(raw[3:p], "little")
    conn_id = raw[p] << 8 | raw[p + 1]
    flag = raw[p + 2]
    length = int.from_bytes(raw[p + 4 : q], "little")
    if (
        seqno > MAX_SEQNO
        or conn_id > MAX_CONN_ID
        or flag > 3
        or length > MAX_CINT
        or length > limits.max_payload
        or q + length != end
    ):
        return None
    return _trusted_data(seqno, conn_id, bool(flag & 1), raw[q:], flag > 1)


def _fast_ack(raw: bytes) -> AckMsg | None:
    """ACK (header already checked): the message if ``raw`` is canonical, else None."""
    n = raw[2]
    p = 3 + n  # conn_id
    if n > LONG_BYTES or p + 3 > len(raw):
        return None
    k = raw[p + 2]
    q = p + 3 + k  # end
    if k > INT_BYTES or q != len(raw) or (n and not raw[p - 1]) or (k and not raw[q - 1]):
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
    # datagram_bytes, inlined for the common case
    raw = data if type(data) is bytes and len(data) <= limits.max_datagram else datagram_bytes(data, limits)
    if len(raw) > 2 and raw[0] == MAGIC:
        fast: WireMsg | None = None
        if raw[1] == TYPE_DATA:
            fast = _fast_data(raw, limits)
        elif raw[1] == TYPE_ACK:
            fast = _fast_ack(raw)
        if fast is not None:
            return fast
    r = Reader(raw)
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
        msg = decode_xmit_req(r, limits)
    elif code == TYPE_CLOSE:
        msg = CloseMsg(r.conn_id("CLOSE.conn_id"))
    else:
        raise DecodeError(f"type: expected a message type 0..4, got {code}")
    r.finish(_TYPE_NAMES[code])
    return msg
