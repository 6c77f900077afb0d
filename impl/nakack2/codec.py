"""NAKACK2 wire format: the message types of ``spec/nakack2.py`` and their strict, canonical bytes.

This module owns the NAKACK2 datagram layout and nothing else (no protocol decisions). The field
encodings, the SeqnoList, the limits and the errors are ``impl/wire.py``'s, shared with the
unicast codecs. ``decode`` is the trust boundary for bytes from the network: every malformed input
raises ``DecodeError`` (and nothing else), and whatever decodes re-encodes to the same bytes.

Datagram layout (digest 1.4 (b) for NakAckHeader2, STABLE's header and GMS's JoinRsp as far as
NAKACK2 reads them; 5.5 for the integer encodings)::

    byte 0   MAGIC (0x4E): format identity and version
    byte 1   type: MSG=0, XMIT_REQ=1, XMIT_RSP=2, HIGHEST_SEQNO=3, STABLE=4, STABILITY=5,
             JOIN_RSP=6; on MSG and XMIT_RSP bit 7 (0x80) is the message's OOB flag (JGroups'
             Message.Flag.OOB, ``spec/nakack2.py`` decision 17): 0x80 and 0x82 (datagrams from
             before the flag decode as before; bit 7 on any other type is malformed)
    MSG            c-long seqno, c-int payload length, payload
    XMIT_REQ       address sender, SeqnoList (``impl/wire.py``)
    XMIT_RSP       address sender, c-long seqno, c-int payload length, payload
    HIGHEST_SEQNO  c-long seqno
    STABLE         view, digest          (a member's vote, to the coordinator)
    STABILITY      view, digest          (the merged digest, from the coordinator)
    JOIN_RSP       view, digest          (the joiner's view and the coordinator's digest)

An *address* is a tag byte then the value: 0 = a non-negative int (c-long), 1 = a string (c-int
length in 1..255, UTF-8). A *view* is a c-int count then that many addresses in strictly
increasing ``address_key`` order; a *digest* is a c-int count then entries (address, long
sequence (hd, hr), hd <= hr), addresses strictly increasing. Both counts are bounded by
``max_members`` (an argument of ``decode`` and ``encode``). Addresses of any other type than int
and str cannot be encoded (the engine refuses them when it is built).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, TypeAlias

from impl.wire import (
    DEFAULT_LIMITS,
    INT_BYTES,
    MAX_CINT,
    MAX_SEQNO,
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

__all__ = [
    "DEFAULT_LIMITS",
    "MAGIC",
    "CodecLimits",
    "DecodeError",
    "EncodeError",
    "HighestSeqnoMsg",
    "JoinRspMsg",
    "McastMsg",
    "NakXmitReqMsg",
    "StabilityMsg",
    "StableMsg",
    "XmitReqMsg",
    "XmitRspMsg",
    "address_key",
    "decode",
    "encode",
    "encode_mcast",
]

MAGIC = 0x4E
TYPE_MSG, TYPE_XMIT_REQ, TYPE_XMIT_RSP, TYPE_HIGHEST_SEQNO, TYPE_STABLE, TYPE_STABILITY, TYPE_JOIN_RSP = range(7)
OOB_BIT = 0x80  # in the type byte of MSG and XMIT_RSP: the OOB flag
_TYPE_NAMES = ("MSG", "XMIT_REQ", "XMIT_RSP", "HIGHEST_SEQNO", "STABLE", "STABILITY", "JOIN_RSP")
MAX_ADDRESS_BYTES = 255
DEFAULT_MAX_MEMBERS = 4096

Address: TypeAlias = Any
"""An int or a str (checked by every message constructor): typed Any so that an engine's generic
address type passes through."""
Digest = tuple[tuple[Address, int, int], ...]
"""(member, hd, hr) per member the digest names, in ``address_key`` order."""


def address_key(address: Any) -> tuple[bool, Any]:
    """The order of addresses on the wire and in views: ints first (by value), then strings."""
    return (type(address) is str, address)


def check_address(owner: str, address: object) -> None:
    """ValueError unless ``address`` is encodable: an int in 0..2**63-1 or a str of 1..255 UTF-8
    bytes."""
    if type(address) is int:
        check_range(owner, "address", address, MAX_SEQNO)
        return
    if type(address) is str:
        try:
            size = len(address.encode("utf-8"))
        except UnicodeEncodeError:
            size = 0
        if 1 <= size <= MAX_ADDRESS_BYTES:
            return
    raise ValueError(f"{owner}.address must be an int in 0..{MAX_SEQNO} or a str of 1..{MAX_ADDRESS_BYTES}"
                     f" UTF-8 bytes, got {address!r}")


# ---------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class McastMsg:
    """MSG: one multicast with its seqno (the sender is the datagram's source) and its OOB flag."""

    seqno: int
    payload: bytes
    oob: bool = False

    def __post_init__(self) -> None:
        check_range("McastMsg", "seqno", self.seqno, MAX_SEQNO)
        if type(self.payload) is not bytes:
            raise ValueError(f"McastMsg.payload must be bytes, got {type(self.payload).__name__}")
        if type(self.oob) is not bool:
            raise ValueError(f"McastMsg.oob must be a bool, got {self.oob!r}")


@dataclass(frozen=True, slots=True)
class NakXmitReqMsg:
    """XMIT_REQ: retransmit ``request.seqnos`` of ``sender`` (the original sender)."""

    sender: Address
    request: XmitReqMsg

    def __post_init__(self) -> None:
        check_address("NakXmitReqMsg", self.sender)
        if type(self.request) is not XmitReqMsg:
            raise ValueError(f"NakXmitReqMsg.request must be an XmitReqMsg, got {self.request!r}")


@dataclass(frozen=True, slots=True)
class XmitRspMsg:
    """XMIT_RSP: a unicast copy of ``sender``'s message ``seqno``, with the original's OOB flag."""

    sender: Address
    seqno: int
    payload: bytes
    oob: bool = False

    def __post_init__(self) -> None:
        check_address("XmitRspMsg", self.sender)
        check_range("XmitRspMsg", "seqno", self.seqno, MAX_SEQNO)
        if type(self.payload) is not bytes:
            raise ValueError(f"XmitRspMsg.payload must be bytes, got {type(self.payload).__name__}")
        if type(self.oob) is not bool:
            raise ValueError(f"XmitRspMsg.oob must be a bool, got {self.oob!r}")


@dataclass(frozen=True, slots=True)
class HighestSeqnoMsg:
    """HIGHEST_SEQNO: the sender's seqno counter."""

    seqno: int

    def __post_init__(self) -> None:
        check_range("HighestSeqnoMsg", "seqno", self.seqno, MAX_SEQNO)


def _check_view_digest(owner: str, view: object, digest: object) -> None:
    if type(view) is not tuple:
        raise ValueError(f"{owner}.view must be a tuple of addresses, got {view!r}")
    for address in view:
        check_address(owner, address)
    if list(view) != sorted(set(view), key=address_key):
        raise ValueError(f"{owner}.view must be strictly increasing (address_key), got {view!r}")
    if type(digest) is not tuple:
        raise ValueError(f"{owner}.digest must be a tuple of (member, hd, hr), got {digest!r}")
    for entry in digest:
        if type(entry) is not tuple or len(entry) != 3:
            raise ValueError(f"{owner}.digest entries must be (member, hd, hr), got {entry!r}")
        check_address(owner, entry[0])
        check_range(owner, "digest hd", entry[1], MAX_SEQNO)
        check_range(owner, "digest hr", entry[2], MAX_SEQNO, entry[1])
    keys = [address_key(e[0]) for e in digest]
    if any(a >= b for a, b in pairwise(keys)):
        raise ValueError(f"{owner}.digest members must be strictly increasing (address_key), got {digest!r}")


@dataclass(frozen=True, slots=True)
class StableMsg:
    """STABLE: a member's digest for the members of its view ``view``, to the coordinator."""

    view: tuple[Address, ...]
    digest: Digest

    def __post_init__(self) -> None:
        _check_view_digest("StableMsg", self.view, self.digest)


@dataclass(frozen=True, slots=True)
class StabilityMsg:
    """STABILITY: the merged digest (min hd, max hr) of one round, from the coordinator."""

    view: tuple[Address, ...]
    digest: Digest

    def __post_init__(self) -> None:
        _check_view_digest("StabilityMsg", self.view, self.digest)


@dataclass(frozen=True, slots=True)
class JoinRspMsg:
    """JOIN_RSP: the view a joiner installs and the coordinator's digest (the joiner at (0, 0))."""

    view: tuple[Address, ...]
    digest: Digest

    def __post_init__(self) -> None:
        _check_view_digest("JoinRspMsg", self.view, self.digest)


WireMsg = McastMsg | NakXmitReqMsg | XmitRspMsg | HighestSeqnoMsg | StableMsg | StabilityMsg | JoinRspMsg
QUEUED_TYPES = (McastMsg, NakXmitReqMsg, XmitRspMsg, HighestSeqnoMsg)  # what the become_server_queue holds


# ---------------------------------------------------------------------------- encoding


def _address(address: Address) -> bytes:
    if type(address) is int:
        return b"\x00" + compact(address)
    raw = str(address).encode("utf-8")
    return b"\x01" + compact(len(raw)) + raw


def _view_digest(view: tuple[Address, ...], digest: Digest, max_members: int) -> bytes:
    if len(view) > max_members or len(digest) > max_members:
        raise EncodeError(f"view of {len(view)} / digest of {len(digest)} members, more than"
                          f" max_members={max_members}")
    parts = [compact(len(view))]
    parts += [_address(a) for a in view]
    parts.append(compact(len(digest)))
    for member, hd, hr in digest:
        parts.append(_address(member))
        parts.append(long_sequence(hd, hr))
    return b"".join(parts)


def _payload(payload: bytes, limits: CodecLimits) -> bytes:
    length = len(payload)
    if length > limits.max_payload:
        raise EncodeError(f"payload is {length} bytes, more than max_payload={limits.max_payload}")
    return (SMALL_COMPACT[length] if length < 256 else compact(length)) + payload


_MSG_HEAD = bytes((MAGIC, TYPE_MSG))
_OOB_MSG_HEAD = bytes((MAGIC, TYPE_MSG | OOB_BIT))


def encode_mcast(seqno: int, payload: bytes, limits: CodecLimits = DEFAULT_LIMITS, oob: bool = False) -> bytes:
    """``encode(McastMsg(seqno, payload, oob))`` without building the message (the per-message path)."""
    if type(seqno) is not int or not 0 <= seqno <= MAX_SEQNO or type(payload) is not bytes or type(oob) is not bool:
        McastMsg(seqno, payload, oob)  # raises the constructor's ValueError
    n = (seqno.bit_length() + 7) >> 3
    head = _OOB_MSG_HEAD if oob else _MSG_HEAD
    data = b"".join((head, (seqno << 8 | n).to_bytes(n + 1, "little"), _payload(payload, limits)))
    return check_encoded_size(data, limits)


def encode(msg: WireMsg, limits: CodecLimits = DEFAULT_LIMITS, max_members: int = DEFAULT_MAX_MEMBERS) -> bytes:
    """The canonical datagram for ``msg``; ``EncodeError`` if it exceeds the limits."""
    if type(msg) is McastMsg:
        return encode_mcast(msg.seqno, msg.payload, limits, msg.oob)
    if type(msg) is NakXmitReqMsg:
        code, body = TYPE_XMIT_REQ, _address(msg.sender) + encode_xmit_req(msg.request, limits)
    elif type(msg) is XmitRspMsg:
        code = TYPE_XMIT_RSP | (OOB_BIT if msg.oob else 0)
        body = _address(msg.sender) + compact(msg.seqno) + _payload(msg.payload, limits)
    elif type(msg) is HighestSeqnoMsg:
        code, body = TYPE_HIGHEST_SEQNO, compact(msg.seqno)
    elif type(msg) in (StableMsg, StabilityMsg, JoinRspMsg):
        assert isinstance(msg, StableMsg | StabilityMsg | JoinRspMsg)
        code = {StableMsg: TYPE_STABLE, StabilityMsg: TYPE_STABILITY, JoinRspMsg: TYPE_JOIN_RSP}[type(msg)]
        body = _view_digest(msg.view, msg.digest, max_members)
    else:
        raise TypeError(f"not a NAKACK2 wire message: {type(msg).__name__}")
    return check_encoded_size(bytes((MAGIC, code)) + body, limits)


# ---------------------------------------------------------------------------- decoding


def _read_address(r: Reader, field: str) -> Address:
    tag = r.byte(field)
    if tag == 0:
        return r.seqno(field)
    if tag != 1:
        raise DecodeError(f"{field}: expected address tag 0 (int) or 1 (str), got {tag}")
    length = r.compact(field + " length", INT_BYTES, MAX_CINT)
    if not 1 <= length <= MAX_ADDRESS_BYTES:
        raise DecodeError(f"{field} length: expected 1..{MAX_ADDRESS_BYTES} bytes, got {length}")
    raw = r.take(length, field)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError(f"{field}: expected UTF-8 text") from None


MIN_VIEW_MEMBER, MIN_DIGEST_ENTRY = 2, 3  # bytes: an address (tag, length 0); and a long sequence (lengths)


def _read_count(r: Reader, field: str, max_members: int, min_bytes: int) -> int:
    """A view's or digest's count, refused by itself before anything is read or built: more than
    ``max_members``, or more entries of at least ``min_bytes`` each than the bytes left hold."""
    count = r.compact(field, INT_BYTES, MAX_CINT)
    if count > max_members:
        raise DecodeError(f"{field}: expected at most max_members={max_members}, got {count}")
    if count * min_bytes > r.remaining:
        raise DecodeError(f"{field}: {count} entries of at least {min_bytes} bytes cannot fit in the"
                          f" {r.remaining} bytes left")
    return count


def _read_view_digest(r: Reader, what: str, max_members: int) -> tuple[tuple[Address, ...], Digest]:
    """The checking path of views and digests (``_fast_view_digest`` is the fast one): it names the
    field and what was expected in its ``DecodeError``."""
    view: list[Address] = []
    for _ in range(_read_count(r, f"{what}.view count", max_members, MIN_VIEW_MEMBER)):
        address = _read_address(r, f"{what}.view member")
        if view and address_key(address) <= address_key(view[-1]):
            raise DecodeError(f"{what}.view: members must be strictly increasing, {address!r} after {view[-1]!r}")
        view.append(address)
    digest: list[tuple[Address, int, int]] = []
    for _ in range(_read_count(r, f"{what}.digest count", max_members, MIN_DIGEST_ENTRY)):
        member = _read_address(r, f"{what}.digest member")
        if digest and address_key(member) <= address_key(digest[-1][0]):
            raise DecodeError(f"{what}.digest: members must be strictly increasing, {member!r} after"
                              f" {digest[-1][0]!r}")
        hd, hr = r.long_sequence(f"{what}.digest (hd, hr)")
        digest.append((member, hd, hr))
    return tuple(view), tuple(digest)


def _read_payload(r: Reader, what: str, limits: CodecLimits) -> bytes:
    length = r.compact(f"{what}.payload length", INT_BYTES, MAX_CINT)
    if length > limits.max_payload:
        raise DecodeError(f"{what}.payload length: expected at most max_payload={limits.max_payload}, got {length}")
    return r.take(length, f"{what}.payload")


# The fast path for MSG, the per-message type: the same checks as the Reader path, inlined. It
# returns None on anything wrong (or merely unusual) and ``decode`` then re-parses with Reader,
# which raises the precise DecodeError, so the fast path only ever accepts what Reader accepts.
# It builds the message from fields it has validated, through the slots' own setters.
_SET_MCAST: tuple[Callable[[McastMsg, Any], None], ...] = tuple(
    getattr(McastMsg, name).__set__ for name in ("seqno", "payload", "oob"))


def _fast_mcast(raw: bytes, limits: CodecLimits) -> McastMsg | None:
    end = len(raw)
    n = raw[2]
    p = 3 + n  # the payload length's length byte
    if n > 8 or p >= end:
        return None
    k = raw[p]
    q = p + 1 + k  # the payload
    if k > INT_BYTES or q > end or (n and not raw[p - 1]) or (k and not raw[q - 1]):
        return None
    seqno = int.from_bytes(raw[3:p], "little")
    length = int.from_bytes(raw[p + 1 : q], "little")
    if seqno > MAX_SEQNO or length > limits.max_payload or q + length != end:
        return None
    msg: McastMsg = object.__new__(McastMsg)
    set_seqno, set_payload, set_oob = _SET_MCAST
    set_seqno(msg, seqno)
    set_payload(msg, raw[q:])
    set_oob(msg, raw[1] == TYPE_MSG | OOB_BIT)
    return msg


# The fast path for views and digests (STABLE, STABILITY, JOIN_RSP): one pass over the bytes,
# every check of ``_read_view_digest`` and of the messages' constructors made on the way (canonical
# integers, ranges, UTF-8, strictly increasing addresses, hd <= hr), counts refused before anything
# is built. Like ``_fast_mcast`` it returns None on anything wrong, and ``decode`` re-parses with
# the checking path, which raises the precise DecodeError.
_STR = 1


def _fast_address(raw: bytes, i: int, end: int) -> tuple[int, Address, int]:
    """(kind, address, next offset) at ``i``; kind -1: not canonical (the caller gives up)."""
    if i + 1 >= end:
        return -1, None, i
    tag, n = raw[i], raw[i + 1]
    if tag == 0:
        j = i + 2 + n
        if n > 8 or j > end or (n and not raw[j - 1]):
            return -1, None, i
        value = int.from_bytes(raw[i + 2 : j], "little")
        return (0 if value <= MAX_SEQNO else -1), value, j
    if tag != 1 or n == 0 or n > INT_BYTES:
        return -1, None, i
    j = i + 2 + n
    if j > end or not raw[j - 1]:
        return -1, None, i
    length = int.from_bytes(raw[i + 2 : j], "little")
    k = j + length
    if not 1 <= length <= MAX_ADDRESS_BYTES or k > end:
        return -1, None, i
    try:
        return _STR, raw[j:k].decode("utf-8"), k
    except UnicodeDecodeError:
        return -1, None, i


def _fast_count(raw: bytes, i: int, end: int, max_members: int, min_bytes: int) -> tuple[int, int]:
    """(count, next offset), count -1 when not canonical or refused by its size."""
    n = raw[i] if i < end else 9
    j = i + 1 + n
    if n > INT_BYTES or j > end or (n and not raw[j - 1]):
        return -1, i
    count = int.from_bytes(raw[i + 1 : j], "little")
    if count > max_members or count * min_bytes > end - j:
        return -1, i
    return count, j


def _fast_view_digest(raw: bytes, i: int, max_members: int) -> tuple[tuple[Address, ...], Digest] | None:
    end = len(raw)
    count, i = _fast_count(raw, i, end, max_members, MIN_VIEW_MEMBER)
    if count < 0:
        return None
    view: list[Address] = []
    last_kind, last = -1, None
    for _ in range(count):
        kind, address, i = _fast_address(raw, i, end)
        if kind < last_kind or kind < 0 or (kind == last_kind and address <= last):
            return None
        view.append(address)
        last_kind, last = kind, address
    count, i = _fast_count(raw, i, end, max_members, MIN_DIGEST_ENTRY)
    if count < 0:
        return None
    digest: list[tuple[Address, int, int]] = []
    last_kind, last = -1, None
    for _ in range(count):
        kind, member, i = _fast_address(raw, i, end)
        if kind < last_kind or kind < 0 or (kind == last_kind and member <= last) or i >= end:
            return None
        lengths = raw[i]
        n, k = lengths >> 4, lengths & 15
        j = i + 1 + n
        m = j + k
        if n > 8 or k > 8 or m > end or (n and not raw[j - 1]) or (k and not raw[m - 1]):
            return None
        hd = int.from_bytes(raw[i + 1 : j], "little")
        hr = hd + int.from_bytes(raw[j:m], "little")
        if hr > MAX_SEQNO:
            return None
        digest.append((member, hd, hr))
        last_kind, last, i = kind, member, m
    return (tuple(view), tuple(digest)) if i == end else None


_SET_VIEW_DIGEST: dict[type, tuple[Callable[[Any, Any], None], ...]] = {
    cls: tuple(getattr(cls, name).__set__ for name in ("view", "digest"))
    for cls in (StableMsg, StabilityMsg, JoinRspMsg)}


def _view_digest_msg(cls: type[StableMsg | StabilityMsg | JoinRspMsg], raw: bytes,
                     max_members: int) -> StableMsg | StabilityMsg | JoinRspMsg | None:
    """The message ``cls`` of ``raw`` by the fast path, built from fields it has checked."""
    found = _fast_view_digest(raw, 2, max_members)
    if found is None:
        return None
    msg = object.__new__(cls)
    set_view, set_digest = _SET_VIEW_DIGEST[cls]
    set_view(msg, found[0])
    set_digest(msg, found[1])
    return msg


_VIEW_DIGEST_TYPES: dict[int, type[StableMsg | StabilityMsg | JoinRspMsg]] = {
    TYPE_STABLE: StableMsg, TYPE_STABILITY: StabilityMsg, TYPE_JOIN_RSP: JoinRspMsg}


def decode(data: bytes | bytearray | memoryview, limits: CodecLimits = DEFAULT_LIMITS,
           max_members: int = DEFAULT_MAX_MEMBERS) -> WireMsg:
    """Parse one datagram; raises ``DecodeError`` (only) if it is not a canonical encoding.
    Passing something that is not bytes-like is a caller bug and raises ``TypeError``."""
    raw = data if type(data) is bytes and len(data) <= limits.max_datagram else datagram_bytes(data, limits)
    if len(raw) > 3 and raw[0] == MAGIC:
        fast: WireMsg | None = None
        if raw[1] == TYPE_MSG or raw[1] == TYPE_MSG | OOB_BIT:
            fast = _fast_mcast(raw, limits)
        elif raw[1] in _VIEW_DIGEST_TYPES:
            fast = _view_digest_msg(_VIEW_DIGEST_TYPES[raw[1]], raw, max_members)
        if fast is not None:
            return fast
    r = Reader(raw)
    magic = r.byte("magic")
    if magic != MAGIC:
        raise DecodeError(f"magic: expected 0x{MAGIC:02x}, got 0x{magic:02x}")
    code = r.byte("type")
    oob = code in (TYPE_MSG | OOB_BIT, TYPE_XMIT_RSP | OOB_BIT)
    if oob:
        code &= ~OOB_BIT
    msg: WireMsg
    if code == TYPE_MSG:
        seqno = r.seqno("MSG.seqno")
        msg = McastMsg(seqno, _read_payload(r, "MSG", limits), oob)
    elif code == TYPE_XMIT_REQ:
        sender = _read_address(r, "XMIT_REQ.sender")
        msg = NakXmitReqMsg(sender, decode_xmit_req(r, limits))
    elif code == TYPE_XMIT_RSP:
        sender = _read_address(r, "XMIT_RSP.sender")
        seqno = r.seqno("XMIT_RSP.seqno")
        msg = XmitRspMsg(sender, seqno, _read_payload(r, "XMIT_RSP", limits), oob)
    elif code == TYPE_HIGHEST_SEQNO:
        msg = HighestSeqnoMsg(r.seqno("HIGHEST_SEQNO.seqno"))
    elif code in (TYPE_STABLE, TYPE_STABILITY, TYPE_JOIN_RSP):
        view, digest = _read_view_digest(r, _TYPE_NAMES[code], max_members)
        if code == TYPE_STABLE:
            msg = StableMsg(view, digest)
        elif code == TYPE_STABILITY:
            msg = StabilityMsg(view, digest)
        else:
            msg = JoinRspMsg(view, digest)
    else:
        raise DecodeError(f"type: expected a message type 0..{len(_TYPE_NAMES) - 1} (0x80 and 0x82: MSG and "
                          f"XMIT_RSP with the OOB flag), got {code}")
    r.finish(_TYPE_NAMES[code])
    return msg

