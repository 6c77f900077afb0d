"""The NAKACK2 codec: every message round-trips (Hypothesis), one encoding per message, every
malformed datagram is a ``DecodeError`` naming its field, and the limits hold both ways."""

from __future__ import annotations

import tracemalloc

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
    st.builds(McastMsg, seqnos, payloads, st.booleans()),
    st.builds(NakXmitReqMsg, addresses, xmit_reqs),
    st.builds(XmitRspMsg, addresses, seqnos, payloads, st.booleans()),
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
        assert encode_mcast(msg.seqno, msg.payload, DEFAULT_LIMITS, msg.oob) == data


def test_the_oob_flag_is_bit_7_of_msg_and_xmit_rsp_alone() -> None:
    """spec/nakack2.py decision 17: 0x80 and 0x82; a datagram from before the flag decodes as before."""
    assert encode(McastMsg(1, b"p", True)) == bytes((MAGIC, 0x80)) + encode(McastMsg(1, b"p"))[2:]
    assert encode(XmitRspMsg(3, 1, b"p", True)) == bytes((MAGIC, 0x82)) + encode(XmitRspMsg(3, 1, b"p"))[2:]
    assert decode(encode(McastMsg(1, b"p"))) == McastMsg(1, b"p", False)
    for code in (0x81, 0x83, 0x84, 0x85, 0x86):
        with pytest.raises(DecodeError, match="type"):
            decode(bytes((MAGIC, code)) + encode(HighestSeqnoMsg(1))[2:])


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
    lambda: McastMsg(1, b"", 1),  # type: ignore[arg-type]
    lambda: XmitRspMsg(1, 1, b"", None),  # type: ignore[arg-type]
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
@given(st.sampled_from((0, 0x80)), st.binary(max_size=30))
def test_the_msg_fast_path_accepts_only_what_the_reader_accepts(code: int, tail: bytes) -> None:
    data = bytes((MAGIC, code)) + tail
    fast = _fast_mcast(data, DEFAULT_LIMITS) if len(data) > 3 else None  # decode's guard
    try:
        slow = decode(data, DEFAULT_LIMITS) if fast is None else None
    except DecodeError:
        return
    msg = fast if fast is not None else slow
    assert msg is not None and encode(msg) == data
    if fast is not None:
        assert McastMsg(fast.seqno, fast.payload, code == 0x80) == fast


# ---------------------------------------------------------------- views and digests in one pass (issue 28, item 4)
VIEW_DIGEST_TYPES = (StableMsg, StabilityMsg, JoinRspMsg)


def _checked(data: bytes) -> WireMsg | DecodeError:
    """What the checking path (Reader, then the constructor's checks) makes of ``data``."""
    from impl.nakack2 import codec as n2
    from impl.wire import Reader

    r = Reader(data)
    try:
        r.take(2, "header")
        view, digest = n2._read_view_digest(r, "X", n2.DEFAULT_MAX_MEMBERS)
        r.finish("X")
        return n2._VIEW_DIGEST_TYPES[data[1]](view, digest)
    except (DecodeError, ValueError) as error:
        return DecodeError(str(error))


@settings(max_examples=400)
@given(st.sampled_from(VIEW_DIGEST_TYPES), views(), digests(), st.data())
def test_the_view_digest_fast_path_agrees_with_the_checking_path(cls: type, view: tuple[object, ...],
                                                                  digest: tuple[tuple[object, int, int], ...],
                                                                  data: st.DataObject) -> None:
    """On any datagram (a valid one, or one mutated: a byte changed, cut or inserted), the fast path
    either builds exactly what the checking path builds, or gives up where the checking path
    refuses: never accepts what it refuses, never differs."""
    from impl.nakack2 import codec as n2

    raw = bytearray(encode(cls(view, digest)))
    for _ in range(data.draw(st.integers(0, 2))):
        at = data.draw(st.integers(2, len(raw)))
        op = data.draw(st.integers(0, 2))
        if op == 0 and at < len(raw):
            raw[at] = data.draw(st.integers(0, 255))
        elif op == 1:
            del raw[at:]
        else:
            raw[at:at] = bytes([data.draw(st.integers(0, 255))])
    raw_bytes = bytes(raw)
    fast = n2._view_digest_msg(n2._VIEW_DIGEST_TYPES[raw_bytes[1]], raw_bytes, n2.DEFAULT_MAX_MEMBERS)
    checked = _checked(raw_bytes)
    if fast is not None:
        assert fast == checked and encode(fast) == raw_bytes
    if not isinstance(checked, DecodeError):
        assert fast == checked  # the fast path takes every canonical view and digest


@pytest.mark.parametrize("cls", VIEW_DIGEST_TYPES)
def test_a_view_or_digest_is_decoded_in_one_pass(cls: type, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worst views and digests (4,096 members; 65 kB) decode without the checking path and
    without the constructor's second pass over what was decoded (it checked everything on the way)."""
    from checks.bench.engine import worst_datagrams
    from impl.nakack2 import codec as n2

    def second_pass(*args: object) -> None:
        raise AssertionError("a second pass over the view and digest")

    names: dict[type, str] = {StableMsg: "STABLE", StabilityMsg: "STABILITY", JoinRspMsg: "JOIN_RSP"}
    name = names[cls]
    cases = {k: v for k, v in worst_datagrams()["nakack2"].items() if k.startswith(name + " ")}
    monkeypatch.setattr(n2, "_read_view_digest", second_pass)
    monkeypatch.setattr(n2, "_check_view_digest", second_pass)
    for case in ("4,096 members", "65 kB"):
        msg = decode(cases[f"{name} {case}"])
        assert type(msg) is cls and len(msg.view) == len(msg.digest) > 1_000  # type: ignore[union-attr]


@pytest.mark.parametrize(("count_at", "field"), [(2, "view count"), (3, "digest count")])
def test_an_oversized_count_is_refused_before_anything_is_built(count_at: int, field: str) -> None:
    """A count the bytes left cannot hold (every member takes 2 bytes, every digest entry 3) is
    refused by the count alone, naming it; nothing of its size is materialised."""
    empty = encode(JoinRspMsg((), ()))  # magic, type, view count 0, digest count 0
    data = empty[:count_at] + bytes((2,)) + (4_000).to_bytes(2, "little") + b"\x00" * 40
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match=f"JOIN_RSP.{field}: 4000 entries of at least [23] bytes cannot fit"):
            decode(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024, peak
