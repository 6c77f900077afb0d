"""UNICAST2 wire format: the five message types and their strict, canonical byte encoding.

This module owns the UNICAST2 datagram layout and nothing else (no protocol decisions); the
field encodings, the SeqnoList, the limits and the errors are ``impl/wire.py``'s, shared with the
UNICAST3 codec. ``decode`` is the trust boundary for bytes from the network: every malformed
input raises ``DecodeError`` (and nothing else), and whatever decodes re-encodes to exactly the
same bytes.

Datagram layout (Unicast2Header, digest 1.1 (b) and 5.5; type codes are UNICAST2's, not UNICAST3's)::

    byte 0   MAGIC (0x32, "2"): format identity and version; a UNICAST3 datagram (0x55) is rejected
    byte 1   type: DATA=0, XMIT_REQ=1, SEND_FIRST_SEQNO=2, STABLE=3, ACK=4
    DATA              c-long seqno, conn_id, bool first, c-int payload length, payload bytes
    XMIT_REQ          SeqnoList (impl/wire.py)
    SEND_FIRST_SEQNO  c-long seqno (of the DATA that triggered it), c-int timestamp
    STABLE            long sequence (hd, hr), conn_id, c-int timestamp
    ACK               c-long seqno, conn_id

- conn_id: Java's short, 2 bytes big-endian two's complement. 0..32767 is a connection; -1
  (0xffff) means "no conn_id" (``NO_CONN``: only the variants ``no_conn_ids`` and
  ``conn_id_first_only`` send it); any other negative value is rejected.
- timestamp: 0 means none (UNICAST2 as shipped); only the variant ``fix_timestamps`` sends others.
  JGroups' Unicast2Header has no timestamp; it is the one field we add, so that the fix of
  JGRP-1873 (UNICAST3's timestamps) can be run on the same wire format.
- STABLE: hd <= hr (a receive window never delivered more than it received), as the long
  sequence requires.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    long_sequence,
)

MAGIC = 0x32
NO_CONN = -1  # the conn_id of a header that carries none (spec.unicast2.NO_CONN)

TYPE_DATA = 0
TYPE_XMIT_REQ = 1
TYPE_SEND_FIRST_SEQNO = 2
TYPE_STABLE = 3
TYPE_ACK = 4

_TYPE_NAMES = {
    TYPE_DATA: "DATA",
    TYPE_XMIT_REQ: "XMIT_REQ",
    TYPE_SEND_FIRST_SEQNO: "SEND_FIRST_SEQNO",
    TYPE_STABLE: "STABLE",
    TYPE_ACK: "ACK",
}

__all__ = [
    "DEFAULT_LIMITS", "MAGIC", "NO_CONN", "AckMsg", "CodecLimits", "DataMsg", "DecodeError", "EncodeError",
    "SendFirstSeqnoMsg", "StableMsg", "WireMsg", "XmitReqMsg", "decode", "encode", "encode_data",
]


# ---------------------------------------------------------------------------- messages


def _check_conn_id(owner: str, conn_id: object) -> None:
    check_range(owner, "conn_id", conn_id, MAX_CONN_ID, NO_CONN)


@dataclass(frozen=True, slots=True)
class DataMsg:
    """DATA: one application message; ``first`` marks the opening message of a connection."""

    seqno: int
    conn_id: int  # NO_CONN: none (variants)
    first: bool
    payload: bytes

    def __post_init__(self) -> None:
        check_range("DataMsg", "seqno", self.seqno, MAX_SEQNO)
        _check_conn_id("DataMsg", self.conn_id)
        if type(self.first) is not bool:
            raise ValueError(f"DataMsg.first must be a bool, got {self.first!r}")
        if type(self.payload) is not bytes:
            raise ValueError(f"DataMsg.payload must be bytes, got {type(self.payload).__name__}")


@dataclass(frozen=True, slots=True)
class SendFirstSeqnoMsg:
    """SEND_FIRST_SEQNO: DATA ``seqno`` found no matching receive window; resend from the first."""

    seqno: int
    timestamp: int  # 0: none

    def __post_init__(self) -> None:
        check_range("SendFirstSeqnoMsg", "seqno", self.seqno, MAX_SEQNO)
        check_range("SendFirstSeqnoMsg", "timestamp", self.timestamp, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class StableMsg:
    """STABLE: the receiver delivered up to ``hd`` and received up to ``hr`` on ``conn_id``."""

    hd: int
    hr: int
    conn_id: int  # NO_CONN: none (variant conn_id_first_only)
    timestamp: int  # 0: none

    def __post_init__(self) -> None:
        check_range("StableMsg", "hd", self.hd, MAX_SEQNO)
        check_range("StableMsg", "hr", self.hr, MAX_SEQNO, self.hd)
        _check_conn_id("StableMsg", self.conn_id)
        check_range("StableMsg", "timestamp", self.timestamp, MAX_TIMESTAMP)


@dataclass(frozen=True, slots=True)
class AckMsg:
    """ACK: the first message ``seqno`` of connection ``conn_id`` arrived (JGRP-1563)."""

    seqno: int
    conn_id: int

    def __post_init__(self) -> None:
        check_range("AckMsg", "seqno", self.seqno, MAX_SEQNO)
        _check_conn_id("AckMsg", self.conn_id)


WireMsg = DataMsg | XmitReqMsg | SendFirstSeqnoMsg | StableMsg | AckMsg


# ---------------------------------------------------------------------------- encoding


def _short(conn_id: int) -> bytes:
    return (conn_id & 0xFFFF).to_bytes(2, "big")


def _encode_body(msg: WireMsg, limits: CodecLimits) -> tuple[int, bytes]:
    """(type code, encoded fields) for one message (not DATA: ``encode_data`` does it)."""
    match msg:
        case XmitReqMsg():
            return TYPE_XMIT_REQ, encode_xmit_req(msg, limits)
        case SendFirstSeqnoMsg(seqno, timestamp):
            return TYPE_SEND_FIRST_SEQNO, compact(seqno) + compact(timestamp)
        case StableMsg(hd, hr, conn_id, timestamp):
            return TYPE_STABLE, long_sequence(hd, hr) + _short(conn_id) + compact(timestamp)
        case AckMsg(seqno, conn_id):
            return TYPE_ACK, compact(seqno) + _short(conn_id)
    raise TypeError(f"not a UNICAST2 wire message: {type(msg).__name__}")


_DATA_HEAD = bytes((MAGIC, TYPE_DATA))


def encode_data(
    seqno: int, conn_id: int, first: bool, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS
) -> bytes:
    """``encode(DataMsg(seqno, conn_id, first, payload), limits)`` without building the message:
    the same bytes and the same exceptions (``ValueError`` for a bad field, ``EncodeError`` for
    the limits)."""
    if not (type(seqno) is int and 0 <= seqno <= MAX_SEQNO and type(conn_id) is int
            and NO_CONN <= conn_id <= MAX_CONN_ID and type(first) is bool and type(payload) is bytes):
        DataMsg(seqno, conn_id, first, payload)  # raises the ValueError naming the field
    length = len(payload)
    if length > limits.max_payload:
        raise EncodeError(f"DATA payload is {length} bytes, more than max_payload={limits.max_payload}")
    n = (seqno.bit_length() + 7) >> 3
    data = b"".join((
        _DATA_HEAD,
        (seqno << 8 | n).to_bytes(n + 1, "little"),  # compact(seqno): the length byte rides along
        ((conn_id & 0xFFFF) << 8 | first).to_bytes(3, "big"),
        SMALL_COMPACT[length] if length < 256 else compact(length),
        payload,
    ))
    return check_encoded_size(data, limits)


def encode(msg: WireMsg, limits: CodecLimits = DEFAULT_LIMITS) -> bytes:
    """The canonical datagram for ``msg``; ``EncodeError`` if it exceeds ``limits``."""
    if type(msg) is DataMsg:
        return encode_data(msg.seqno, msg.conn_id, msg.first, msg.payload, limits)
    code, body = _encode_body(msg, limits)
    return check_encoded_size(bytes((MAGIC, code)) + body, limits)


# ---------------------------------------------------------------------------- decoding


def _conn_id(r: Reader, field: str) -> int:
    value = r.short(field)
    if value < NO_CONN:
        raise DecodeError(f"{field}: expected a conn id in 0..{MAX_CONN_ID} or -1 (none), got {value}")
    return value


def _decode_data(r: Reader, limits: CodecLimits) -> DataMsg:
    seqno = r.seqno("DATA.seqno")
    conn_id = _conn_id(r, "DATA.conn_id")
    first = r.flag("DATA.first")
    length = r.compact("DATA.payload length", INT_BYTES, MAX_CINT)
    if length > limits.max_payload:
        raise DecodeError(
            f"DATA.payload length: expected at most max_payload={limits.max_payload}, got {length}"
        )
    return DataMsg(seqno, conn_id, first, r.take(length, "DATA.payload"))


def _decode_stable(r: Reader) -> StableMsg:
    hd, hr = r.long_sequence("STABLE.hd/hr")
    conn_id = _conn_id(r, "STABLE.conn_id")
    return StableMsg(hd, hr, conn_id, r.timestamp("STABLE.timestamp"))


def _fast_data(raw: bytes, limits: CodecLimits) -> DataMsg | None:
    """DATA (header already checked): the message if ``raw`` is canonical, else None (``decode``
    then re-parses with ``Reader``, which names what is wrong)."""
    end = len(raw)
    n = raw[2]
    p = 3 + n  # conn_id
    if n > LONG_BYTES or p + 4 > end:
        return None
    k = raw[p + 3]
    q = p + 4 + k  # payload
    if k > INT_BYTES or q > end or (n and not raw[p - 1]) or (k and not raw[q - 1]):
        return None
    length = int.from_bytes(raw[p + 4 : q], "little")
    flag = raw[p + 2]
    conn_id = int.from_bytes(raw[p : p + 2], "big", signed=True)
    if flag > 1 or conn_id < NO_CONN or length > limits.max_payload or q + length != end:
        return None
    seqno = int.from_bytes(raw[3:p], "little")
    if seqno > MAX_SEQNO:
        return None
    return DataMsg(seqno, conn_id, flag == 1, raw[q:])


def decode(data: bytes | bytearray | memoryview, limits: CodecLimits = DEFAULT_LIMITS) -> WireMsg:
    """Parse one datagram; raises ``DecodeError`` (only) if it is not a canonical encoding.

    Passing something that is not bytes-like is a caller bug and raises ``TypeError``.
    """
    raw = datagram_bytes(data, limits)
    if len(raw) > 2 and raw[0] == MAGIC and raw[1] == TYPE_DATA:
        fast = _fast_data(raw, limits)
        if fast is not None:
            return fast
    r = Reader(raw)
    magic = r.byte("magic")
    if magic != MAGIC:
        raise DecodeError(f"magic: expected 0x{MAGIC:02x} (UNICAST2), got 0x{magic:02x}")
    code = r.byte("type")
    msg: WireMsg
    if code == TYPE_DATA:
        msg = _decode_data(r, limits)
    elif code == TYPE_XMIT_REQ:
        msg = decode_xmit_req(r, limits)
    elif code == TYPE_SEND_FIRST_SEQNO:
        seqno = r.seqno("SEND_FIRST_SEQNO.seqno")
        msg = SendFirstSeqnoMsg(seqno, r.timestamp("SEND_FIRST_SEQNO.timestamp"))
    elif code == TYPE_STABLE:
        msg = _decode_stable(r)
    elif code == TYPE_ACK:
        seqno = r.seqno("ACK.seqno")
        msg = AckMsg(seqno, _conn_id(r, "ACK.conn_id"))
    else:
        raise DecodeError(f"type: expected a message type 0..4, got {code}")
    r.finish(_TYPE_NAMES[code])
    return msg
