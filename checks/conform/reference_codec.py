"""An independent encoding of the spec's messages, written from the documented datagram layouts.

The lockstep harness compares the bytes an engine emits with the bytes of the spec's packet. If
both came from the engine's own encoder, a defect made symmetrically in its encoder and decoder
(a field in the wrong byte order on both sides) could never diverge. This module owns a second
encoder, written from the layouts in the codecs' docstrings (``impl/unicast3/codec.py``,
``impl/unicast2/codec.py``, ``impl/unicast4/codec.py``, ``impl/nakack2/codec.py``, ``impl/nakack4/codec.py``) and
``impl/wire.py``'s field encodings with ``int.to_bytes`` and nothing of ``impl/``: the harness
takes the spec side's bytes from here (issue 19, item 6), so the engine's encoder must produce
them and its decoder must read them.

Field encodings (``impl/wire.py``):

- c-long, c-int: a length byte n, then the n least significant bytes of the value, little-endian,
  n minimal (0 for the value 0);
- conn_id: 2 bytes, big-endian two's complement (UNICAST2's "none" is -1, ``ff ff``);
- bool: one byte 0 or 1;
- long sequence (hd, hr): one byte ``len(hd) << 4 | len(hr - hd)``, then hd's and hr - hd's bytes as
  in a c-long (without their length bytes);
- SeqnoList: c-int count; if count > 0: c-long lowest, c-int nbytes, then a bitset whose bit i
  (byte i // 8, bit i % 8, least significant first) stands for lowest + i.

Payload n of the spec is its 8-byte big-endian number (``impl.common.spec_payload``'s rule, restated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from models.world import Packet
from spec import unicast2 as u2
from spec import unicast3 as u3
from spec import unicast4 as u4

UNICAST3_MAGIC, UNICAST2_MAGIC, UNICAST4_MAGIC = 0x55, 0x32, 0x75


def _minimal(value: int) -> bytes:
    if value < 0:
        raise ValueError(f"negative value {value} has no compact encoding")
    return value.to_bytes((value.bit_length() + 7) // 8, "little")


def c_number(value: int) -> bytes:
    """A c-long or c-int: length byte, then the minimal little-endian bytes."""
    body = _minimal(value)
    return bytes((len(body),)) + body


def conn_id(value: int) -> bytes:
    return value.to_bytes(2, "big", signed=True)


def flag(value: bool) -> bytes:
    return b"\x01" if value else b"\x00"


def long_sequence(hd: int, hr: int) -> bytes:
    a, b = _minimal(hd), _minimal(hr - hd)
    return bytes((len(a) << 4 | len(b),)) + a + b


def seqno_list(seqnos: tuple[int, ...]) -> bytes:
    if not seqnos:
        return c_number(0)
    lowest = seqnos[0]
    bits = 0
    for s in seqnos:
        bits |= 1 << (s - lowest)
    bitset = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    return c_number(len(seqnos)) + c_number(lowest) + c_number(len(bitset)) + bitset


def payload(number: int) -> bytes:
    body = number.to_bytes(8, "big")
    return c_number(len(body)) + body


def unicast3(msg: Any) -> bytes:
    """UNICAST3: MAGIC 0x55, type DATA=0, ACK=1, SEND_FIRST_SEQNO=2, XMIT_REQ=3, CLOSE=4; DATA's
    flags byte has ``first`` in bit 0 and ``oob`` in bit 1."""
    head = bytes((UNICAST3_MAGIC,))
    if isinstance(msg, u3.Data):
        flags = bytes((int(msg.first) | int(msg.oob) << 1,))
        return head + b"\x00" + c_number(msg.seqno) + conn_id(msg.conn_id) + flags + payload(msg.payload)
    if isinstance(msg, u3.Ack):
        return head + b"\x01" + c_number(msg.seqno) + conn_id(msg.conn_id) + c_number(msg.ts)
    if isinstance(msg, u3.SendFirstSeqno):
        return head + b"\x02" + c_number(msg.ts)
    if isinstance(msg, u3.XmitReq):
        return head + b"\x03" + seqno_list(msg.seqnos)
    if isinstance(msg, u3.Close):
        return head + b"\x04" + conn_id(msg.conn_id)
    raise TypeError(f"not a UNICAST3 message: {msg!r}")


def unicast4(msg: Any) -> bytes:
    """UNICAST4: MAGIC 0x75, then UNICAST3's types and fields (UnicastHeader is shared; DATA's flags
    byte has ``first`` in bit 0 and ``oob`` in bit 1)."""
    head = bytes((UNICAST4_MAGIC,))
    if isinstance(msg, u4.Data):
        flags = bytes((int(msg.first) | int(msg.oob) << 1,))
        return head + b"\x00" + c_number(msg.seqno) + conn_id(msg.conn_id) + flags + payload(msg.payload)
    if isinstance(msg, u4.Ack):
        return head + b"\x01" + c_number(msg.seqno) + conn_id(msg.conn_id) + c_number(msg.ts)
    if isinstance(msg, u4.SendFirstSeqno):
        return head + b"\x02" + c_number(msg.ts)
    if isinstance(msg, u4.XmitReq):
        return head + b"\x03" + seqno_list(msg.seqnos)
    if isinstance(msg, u4.Close):
        return head + b"\x04" + conn_id(msg.conn_id)
    raise TypeError(f"not a UNICAST4 message: {msg!r}")


def unicast2(msg: Any) -> bytes:
    """UNICAST2: MAGIC 0x32, type DATA=0, XMIT_REQ=1, SEND_FIRST_SEQNO=2, STABLE=3, ACK=4."""
    head = bytes((UNICAST2_MAGIC,))
    if isinstance(msg, u2.Data):
        return head + b"\x00" + c_number(msg.seqno) + conn_id(msg.conn_id) + flag(msg.first) + payload(msg.payload)
    if isinstance(msg, u2.XmitReq):
        return head + b"\x01" + seqno_list(msg.seqnos)
    if isinstance(msg, u2.SendFirstSeqno):
        return head + b"\x02" + c_number(msg.seqno) + c_number(msg.ts)
    if isinstance(msg, u2.Stable):
        return head + b"\x03" + long_sequence(msg.hd, msg.hr) + conn_id(msg.conn_id) + c_number(msg.ts)
    if isinstance(msg, u2.Ack):
        return head + b"\x04" + c_number(msg.seqno) + conn_id(msg.conn_id)
    raise TypeError(f"not a UNICAST2 message: {msg!r}")


# -- the multicast codecs (impl/nakack2/codec.py, impl/nakack4/codec.py) --------------------------------
# address: a tag byte (0: an int, as c-long; the harness's members are ints), view: c-int count then the
# addresses ascending, digest: c-int count then (address, long sequence (hd, hr)) per member named.
NAKACK2_MAGIC, NAKACK4_MAGIC = 0x4E, 0x34
MCAST_TYPES = {"Data": 0, "XmitReq": 1, "XmitRsp": 2, "HighestSeqno": 3, "StableVote": 4, "Stability": 5,
               "JoinRsp": 6, "Ack": 7}


def address(member: int) -> bytes:
    return b"\x00" + c_number(member)


def view_and_digest(view: Any, digest: Any) -> bytes:
    named = [(member, entry) for member, entry in enumerate(digest) if entry is not None]
    return (c_number(len(view)) + b"".join(address(m) for m in sorted(view)) + c_number(len(named))
            + b"".join(address(m) + long_sequence(hd, hr) for m, (hd, hr) in named))


def _multicast(msg: Any, magic: int, allowed: frozenset[str]) -> bytes:
    kind = type(msg).__name__
    if kind not in allowed:
        raise TypeError(f"not a message of this multicast codec: {msg!r}")
    head = bytes((magic, MCAST_TYPES[kind] | (0x80 if getattr(msg, "oob", False) else 0)))  # OOB: bit 7
    if kind == "Data":
        return head + c_number(msg.seqno) + payload(msg.payload)
    if kind == "XmitReq":
        return head + address(msg.sender) + seqno_list(msg.seqnos)
    if kind == "XmitRsp":
        return head + address(msg.sender) + c_number(msg.seqno) + payload(msg.payload)
    if kind in ("HighestSeqno", "Ack"):
        return head + c_number(msg.seqno)
    return head + view_and_digest(msg.view, msg.digest)  # StableVote, Stability, JoinRsp


def nakack2(msg: Any) -> bytes:
    """NAKACK2: MAGIC 0x4E, type MSG=0, XMIT_REQ=1, XMIT_RSP=2, HIGHEST_SEQNO=3, STABLE=4, STABILITY=5,
    JOIN_RSP=6; MSG and XMIT_RSP with bit 7 set when OOB."""
    return _multicast(msg, NAKACK2_MAGIC, frozenset(MCAST_TYPES) - {"Ack"})


def nakack4(msg: Any) -> bytes:
    """NAKACK4: MAGIC 0x34, NAKACK2's types but STABLE and STABILITY, plus ACK=7."""
    return _multicast(msg, NAKACK4_MAGIC, frozenset(MCAST_TYPES) - {"StableVote", "Stability"})


def packet_encoder(encode_msg: Callable[[Any], bytes]) -> Callable[[Packet], bytes]:
    """The datagram of a world packet, by ``encode_msg`` of its message."""
    return lambda packet: encode_msg(packet.msg)


# -- large field values ---------------------------------------------------------------------------
# The models' values are small: every seqno, conn_id and timestamp fits in one byte, where big- and
# little-endian agree. ``enlarged`` moves each field of a spec message far up its range (keeping
# the message valid), so that comparing the encodings of the enlarged message tells byte orders,
# lengths and field widths apart.
SEQNO_SHIFT = 2**40 + 0x1234_5678  # several distinct bytes: a swapped order shows
TS_SHIFT = 2**30 + 0x0102_0304  # timestamps stay below 2**31
CONN_SHIFT = 0x7000 + 0x0A0  # conn_ids below 0x0F00 stay below 32768
PAYLOAD_SHIFT = 2**60 + 0x0BAD_F00D


def enlarged(msg: Any) -> Any:
    """``msg`` (a spec message, a NamedTuple) with its numeric fields moved up their ranges."""
    changes: dict[str, Any] = {}
    for name, value in msg._asdict().items():
        if name in ("seqno", "hd", "hr") and isinstance(value, int):
            changes[name] = value + SEQNO_SHIFT
        elif name == "seqnos":
            changes[name] = tuple(s + SEQNO_SHIFT for s in value)
        elif name == "ts" and 0 <= value < 2**30:
            changes[name] = value + TS_SHIFT
        elif name == "conn_id" and 0 <= value < 0x0F00:
            changes[name] = value + CONN_SHIFT
        elif name == "payload":
            changes[name] = value + PAYLOAD_SHIFT
        elif name == "digest":  # a multicast digest: per member (hd, hr) or None
            changes[name] = tuple(None if e is None else (e[0] + SEQNO_SHIFT, e[1] + SEQNO_SHIFT) for e in value)
    return msg._replace(**changes)


def disagreement(msg: Any, reference: Callable[[Any], bytes], wire_message: Callable[[Any], Any],
                 encode: Callable[[Any], bytes], decode: Callable[[bytes], Any]) -> str | None:
    """Where the engine's codec departs from the reference on ``msg`` enlarged: its encoding of
    the message, or its decoding of the reference bytes; None if it agrees."""
    big = enlarged(msg)
    want, expected = reference(big), wire_message(big)
    got = encode(expected)
    if got != want:
        return f"encodes {big!r} as {got.hex()}, the layout says {want.hex()}"
    try:
        back = decode(want)
    except ValueError as error:
        return f"rejects the layout's bytes {want.hex()} of {big!r}: {error}"
    if back != expected:
        return f"decodes the layout's bytes {want.hex()} of {big!r} as {back!r}"
    return None
