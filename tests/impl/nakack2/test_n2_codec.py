"""The NAKACK2 codec: every message round-trips (Hypothesis), one encoding per message, every
malformed datagram is a ``DecodeError`` naming its field, and the limits hold both ways."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impl.nakack2.codec import (
    DEFAULT_LIMITS,
    MAGIC,
    CodecLimits,
    DecodeError,
    EncodeError,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    StabilityMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    _fast_mcast,
    address_key,
    decode,
    encode,
    encode_mcast,
)
from impl.wire import MAX_SEQNO

seqnos = st.integers(0, MAX_SEQNO)
payloads = st.binary(max_size=300)
addresses = st.one_of(st.integers(0, MAX_SEQNO),
                      st.text(min_size=1, max_size=20).filter(lambda s: len(s.encode("utf-8")) <= 255))


@st.composite
def views(draw: st.DrawFn) -> tuple[object, ...]:
    members = draw(st.sets(addresses, max_size=6))
    return tuple(sorted(members, key=address_key))


@st.composite
def digests(draw: st.DrawFn) -> tuple[tuple[object, int, int], ...]:
    members = sorted(draw(st.sets(addresses, max_size=6)), key=address_key)
    out = []
    for member in members:
        hd = draw(seqnos)
        out.append((member, hd, draw(st.integers(hd, MAX_SEQNO))))
    return tuple(out)


xmit_reqs = st.sets(st.integers(1, 5000), max_size=40).map(lambda s: XmitReqMsg(tuple(sorted(s))))
messages: st.SearchStrategy[WireMsg] = st.one_of(
    st.builds(McastMsg, seqnos, payloads),
    st.builds(NakXmitReqMsg, addresses, xmit_reqs),
    st.builds(XmitRspMsg, addresses, seqnos, payloads),
    st.builds(HighestSeqnoMsg, seqnos),
    st.builds(StableMsg, views(), digests()),
    st.builds(StabilityMsg, views(), digests()),
    st.builds(JoinRspMsg, views(), digests()),
)


@settings(max_examples=300)
@given(messages)
def test_every_message_round_trips(msg: WireMsg) -> None:
    data = encode(msg)
    assert data[0] == MAGIC
    assert decode(data) == msg
    assert encode(decode(data)) == data
    if isinstance(msg, McastMsg):
        assert encode_mcast(msg.seqno, msg.payload) == data


@settings(max_examples=500)
@given(st.binary(max_size=80))
def test_random_bytes_decode_canonically_or_raise_decode_error(data: bytes) -> None:
    try:
        msg = decode(data)
    except DecodeError:
        return
    assert encode(msg) == data


@settings(max_examples=300)
@given(messages, st.data())
def test_a_mutated_datagram_is_canonical_or_a_decode_error(msg: WireMsg, data: st.DataObject) -> None:
    raw = bytearray(encode(msg))
    i = data.draw(st.integers(0, len(raw) - 1))
    raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    for candidate in (bytes(raw), bytes(raw[:cut])):
        try:
            decoded = decode(candidate)
        except DecodeError:
            continue
        assert encode(decoded) == candidate


@pytest.mark.parametrize(("data", "field"), [
    (b"", "magic"),
    (b"\x55\x00", "magic"),
    (bytes((MAGIC, 9)), "type"),
    (bytes((MAGIC, 0, 1, 0)), "MSG.seqno"),  # non-canonical compact: most significant byte 0
    (bytes((MAGIC, 0, 1, 5, 1, 9)), "MSG.payload"),  # says 9 bytes, has none
    (bytes((MAGIC, 0, 1, 5, 0, 0)), "trailing"),
    (bytes((MAGIC, 1, 2, 0)), "XMIT_REQ.sender"),  # unknown address tag
    (bytes((MAGIC, 1, 1, 0)), "XMIT_REQ.sender length"),  # empty string address
    (bytes((MAGIC, 1, 1, 1, 1, 0xFF)), "UTF-8"),
    (bytes((MAGIC, 4, 1, 2, 0, 1, 2, 0, 1, 1, 0)), "strictly increasing"),  # view (2, 1)
    (bytes((MAGIC, 4, 0, 1, 1, 0, 1, 5, 0x11, 5, 0)), r"STABLE.digest \(hd, hr\): non-canonical"),
])
def test_malformed_datagrams_name_their_field(data: bytes, field: str) -> None:
    with pytest.raises(DecodeError, match=field):
        decode(data)


def test_views_and_digests_are_bounded_by_max_members() -> None:
    msg = StableMsg(tuple(range(10)), tuple((i, 0, 1) for i in range(10)))
    data = encode(msg, max_members=10)
    with pytest.raises(DecodeError, match="max_members=9"):
        decode(data, max_members=9)
    with pytest.raises(EncodeError, match="max_members=9"):
        encode(msg, max_members=9)


def test_payload_limits_hold_both_ways() -> None:
    limits = CodecLimits(max_datagram=200, max_payload=100)
    with pytest.raises(EncodeError, match="max_payload"):
        encode_mcast(1, bytes(101), limits)
    data = encode_mcast(1, bytes(101))
    with pytest.raises(DecodeError, match="max_payload"):
        decode(data, limits)


@pytest.mark.parametrize("bad", [
    lambda: McastMsg(-1, b""),
    lambda: McastMsg(1, "text"),  # type: ignore[arg-type]
    lambda: XmitRspMsg(("h", 1), 1, b""),
    lambda: StableMsg((2, 1), ()),
    lambda: StableMsg((), ((1, 5, 4),)),
    lambda: JoinRspMsg((), ((2, 0, 0), (1, 0, 0))),
    lambda: NakXmitReqMsg("A", (1, 2)),  # type: ignore[arg-type]
])
def test_constructors_reject_what_cannot_be_encoded(bad: object) -> None:
    with pytest.raises(ValueError):
        bad()  # type: ignore[operator]


@settings(max_examples=500)
@given(st.binary(max_size=30))
def test_the_msg_fast_path_accepts_only_what_the_reader_accepts(tail: bytes) -> None:
    data = bytes((MAGIC, 0)) + tail
    fast = _fast_mcast(data, DEFAULT_LIMITS) if len(data) > 3 else None  # decode's guard
    try:
        slow = decode(data, DEFAULT_LIMITS) if fast is None else None
    except DecodeError:
        return
    msg = fast if fast is not None else slow
    assert msg is not None and encode(msg) == data
    if fast is not None:
        assert McastMsg(fast.seqno, fast.payload) == fast
