"""UNICAST4 wire format: UnicastHeader's five message types, UNICAST3's bytes under a magic of its own.

JGroups' UNICAST4 (ReliableUnicast) keeps UNICAST3's UnicastHeader: DATA, ACK, SEND_FIRST_SEQNO,
XMIT_REQ and CLOSE with the same fields. This module owns the UNICAST4 datagram identity and
reuses ``impl/unicast3/codec.py`` for every field, exchanging only the magic byte, so that a
UNICAST4 datagram is never mistaken for a UNICAST3 one (``seqcheck``'s tools find a codec by its
magic). ``decode`` is the trust boundary for bytes: every malformed input raises ``DecodeError``
(and nothing else), and whatever decodes re-encodes to the same bytes.

Datagram layout::

    byte 0   MAGIC (0x75, "u"): format identity and version
    byte 1.. as ``impl/unicast3/codec.py`` (type, then the fields): DATA's flags byte has
             ``first`` in bit 0 and the message's OOB flag in bit 1 (spec/unicast4.py decision 10)
"""

from __future__ import annotations

from impl.unicast3 import codec as u3
from impl.unicast3.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg
from impl.wire import DEFAULT_LIMITS, CodecLimits, DecodeError, EncodeError, XmitReqMsg, datagram_bytes

__all__ = ["MAGIC", "AckMsg", "CloseMsg", "DataMsg", "DecodeError", "EncodeError", "SendFirstSeqnoMsg", "WireMsg",
           "XmitReqMsg", "decode", "encode", "encode_data"]

MAGIC = 0x75
_OWN = bytes((MAGIC,))
_U3 = bytes((u3.MAGIC,))


def encode_data(seqno: int, conn_id: int, first: bool, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS,
                oob: bool = False) -> bytes:
    """``encode(DataMsg(seqno, conn_id, first, payload, oob))`` without building the message."""
    return _OWN + u3.encode_data(seqno, conn_id, first, payload, limits, oob)[1:]


def encode(msg: WireMsg, limits: CodecLimits = DEFAULT_LIMITS) -> bytes:
    """The canonical datagram for ``msg``; ``EncodeError`` if it exceeds ``limits``."""
    return _OWN + u3.encode(msg, limits)[1:]


def decode(data: bytes | bytearray | memoryview, limits: CodecLimits = DEFAULT_LIMITS) -> WireMsg:
    """Parse one datagram; raises ``DecodeError`` (only) if it is not a canonical encoding.
    Passing something that is not bytes-like is a caller bug and raises ``TypeError``."""
    raw = data if type(data) is bytes and len(data) <= limits.max_datagram else datagram_bytes(data, limits)
    if not raw:
        raise DecodeError("magic: truncated, expected 1 byte, got 0")
    if raw[0] != MAGIC:
        raise DecodeError(f"magic: expected 0x{MAGIC:02x}, got 0x{raw[0]:02x}")
    return u3.decode(_U3 + raw[1:], limits)
