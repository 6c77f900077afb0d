"""NAKACK4 wire format: NAKACK2's message types plus ACK, with their strict, canonical bytes.

JGroups' NAKACK4 shares NakAckHeader with NAKACK2 and adds ACK; so does this codec. This module
owns the NAKACK4 datagram layout and reuses ``impl/nakack2/codec.py`` for every type the two
share (MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO and GMS's JOIN_RSP), exchanging only the magic
byte: a NAKACK4 datagram is never mistaken for a NAKACK2 one (``seqcheck``'s tools find a codec
by its magic). ``decode`` is the trust boundary for bytes: every malformed input raises
``DecodeError`` (and nothing else), and whatever decodes re-encodes to the same bytes.

Datagram layout::

    byte 0   MAGIC (0x34, "4"): format identity and version
    byte 1   type: MSG=0, XMIT_REQ=1, XMIT_RSP=2, HIGHEST_SEQNO=3, JOIN_RSP=6, ACK=7; MSG and
             XMIT_RSP with the OOB flag 0x80 and 0x82 (as NAKACK2's)
             (4 and 5, NAKACK2's STABLE and STABILITY, are not NAKACK4 messages: malformed)
    ACK      c-long seqno (the receiver's highest delivered seqno of the destination's messages)
    others   as ``impl/nakack2/codec.py``
"""

from __future__ import annotations

from dataclasses import dataclass

from impl.nakack2 import codec as n2
from impl.nakack2.codec import (
    DEFAULT_MAX_MEMBERS,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    XmitRspMsg,
    address_key,
    check_address,
)
from impl.wire import (
    DEFAULT_LIMITS,
    MAX_SEQNO,
    CodecLimits,
    DecodeError,
    EncodeError,
    Reader,
    XmitReqMsg,
    check_encoded_size,
    check_range,
    compact,
    datagram_bytes,
)

__all__ = [
    "MAGIC",
    "AckMsg",
    "DecodeError",
    "EncodeError",
    "HighestSeqnoMsg",
    "JoinRspMsg",
    "McastMsg",
    "NakXmitReqMsg",
    "WireMsg",
    "XmitReqMsg",
    "XmitRspMsg",
    "address_key",
    "check_address",
    "decode",
    "encode",
    "encode_mcast",
]

MAGIC = 0x34
TYPE_ACK = 7
_NAKACK2_ONLY = (n2.TYPE_STABLE, n2.TYPE_STABILITY)
_OOB_TYPES = (n2.TYPE_MSG | n2.OOB_BIT, n2.TYPE_XMIT_RSP | n2.OOB_BIT)
_N2_MAGIC = bytes((n2.MAGIC,))
_OWN_MAGIC = bytes((MAGIC,))


@dataclass(frozen=True, slots=True)
class AckMsg:
    """ACK: the receiver's highest delivered seqno (hd) of the destination's messages."""

    seqno: int

    def __post_init__(self) -> None:
        check_range("AckMsg", "seqno", self.seqno, MAX_SEQNO)


WireMsg = McastMsg | NakXmitReqMsg | XmitRspMsg | HighestSeqnoMsg | AckMsg | JoinRspMsg
QUEUED_TYPES = (McastMsg, NakXmitReqMsg, XmitRspMsg, HighestSeqnoMsg, AckMsg)  # what the become_server_queue holds


def encode_mcast(seqno: int, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS, oob: bool = False) -> bytes:
    """``encode(McastMsg(seqno, payload, oob))`` without building the message (the per-message path)."""
    return _OWN_MAGIC + n2.encode_mcast(seqno, payload, limits, oob)[1:]


def encode(msg: WireMsg, limits: CodecLimits = DEFAULT_LIMITS, max_members: int = DEFAULT_MAX_MEMBERS) -> bytes:
    """The canonical datagram for ``msg``; ``EncodeError`` if it exceeds the limits."""
    if type(msg) is AckMsg:
        return check_encoded_size(bytes((MAGIC, TYPE_ACK)) + compact(msg.seqno), limits)
    if not isinstance(msg, McastMsg | NakXmitReqMsg | XmitRspMsg | HighestSeqnoMsg | JoinRspMsg):
        raise TypeError(f"not a NAKACK4 wire message: {type(msg).__name__}")
    return _OWN_MAGIC + n2.encode(msg, limits, max_members)[1:]


def decode(data: bytes | bytearray | memoryview, limits: CodecLimits = DEFAULT_LIMITS,
           max_members: int = DEFAULT_MAX_MEMBERS) -> WireMsg:
    """Parse one datagram; raises ``DecodeError`` (only) if it is not a canonical encoding.
    Passing something that is not bytes-like is a caller bug and raises ``TypeError``."""
    raw = data if type(data) is bytes and len(data) <= limits.max_datagram else datagram_bytes(data, limits)
    if len(raw) < 2:
        raise DecodeError(f"header: truncated, expected 2 bytes (magic, type), got {len(raw)}")
    if raw[0] != MAGIC:
        raise DecodeError(f"magic: expected 0x{MAGIC:02x}, got 0x{raw[0]:02x}")
    code = raw[1]
    if code == TYPE_ACK:
        r = Reader(raw)
        r.take(2, "header")
        seqno = r.seqno("ACK.seqno")
        r.finish("ACK")
        return AckMsg(seqno)
    if code in _NAKACK2_ONLY or (code > TYPE_ACK and code not in _OOB_TYPES):
        raise DecodeError(f"type: expected a NAKACK4 message type (0, 1, 2, 3, 6 or 7; 0x80 and 0x82: MSG and "
                          f"XMIT_RSP with the OOB flag), got {code}")
    msg = n2.decode(_N2_MAGIC + raw[1:], limits, max_members)
    assert not isinstance(msg, n2.StableMsg | n2.StabilityMsg)
    return msg
