"""Tests for impl/unicast3/codec.py: round trips, exact layouts, one test per rejection, a byte fuzzer."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impl.unicast3.codec import (
    DEFAULT_LIMITS,
    MAGIC,
    MAX_CONN_ID,
    MAX_SEQNO,
    MAX_TIMESTAMP,
    AckMsg,
    CloseMsg,
    CodecLimits,
    DataMsg,
    DecodeError,
    EncodeError,
    SendFirstSeqnoMsg,
    WireMsg,
    XmitReqMsg,
    decode,
    encode,
)

SMALL = CodecLimits(max_datagram=64, max_payload=32, max_xmit_seqnos=16, max_xmit_span=64)

# ---------------------------------------------------------------- strategies and round trips

seqnos = st.one_of(st.integers(0, 300), st.integers(0, MAX_SEQNO), st.just(MAX_SEQNO))
conn_ids = st.integers(0, MAX_CONN_ID)
timestamps = st.one_of(st.integers(0, 300), st.integers(0, MAX_TIMESTAMP))


@st.composite
def xmit_reqs(draw: st.DrawFn) -> XmitReqMsg:
    offsets = draw(st.sets(st.integers(0, DEFAULT_LIMITS.max_xmit_span - 1), max_size=100))
    lowest = draw(st.integers(0, MAX_SEQNO - DEFAULT_LIMITS.max_xmit_span))
    if offsets:
        lowest -= min(offsets)
        lowest = max(lowest, 0)
    return XmitReqMsg.of(lowest + o for o in offsets)


messages: st.SearchStrategy[WireMsg] = st.one_of(
    st.builds(DataMsg, seqnos, conn_ids, st.booleans(), st.binary(max_size=300), st.booleans()),
    st.builds(AckMsg, seqnos, conn_ids, timestamps),
    st.builds(SendFirstSeqnoMsg, timestamps),
    xmit_reqs(),
    st.builds(CloseMsg, conn_ids),
)


@settings(max_examples=500, database=None)
@given(messages)
def test_round_trip(msg: WireMsg) -> None:
    data = encode(msg)
    assert decode(data) == msg
    assert encode(decode(data)) == data
    assert decode(bytearray(data)) == msg
    assert decode(memoryview(data)) == msg


@settings(max_examples=100, database=None)
@given(st.integers(0, MAX_SEQNO - 70_000), st.data())
def test_round_trip_of_a_maximal_xmit_req(lowest: int, data: st.DataObject) -> None:
    span = DEFAULT_LIMITS.max_xmit_span
    inner = data.draw(st.sets(st.integers(1, span - 2), max_size=50))
    msg = XmitReqMsg.of({lowest, lowest + span - 1} | {lowest + i for i in inner})
    assert decode(encode(msg)) == msg


# ---------------------------------------------------------------- exact layouts and boundaries


@pytest.mark.parametrize(
    ("msg", "hex_bytes"),
    [
        (DataMsg(1, 0, True, b"hi"), "55 00 0101 0000 01 0102 6869"),
        (DataMsg(0, 5, False, b""), "55 00 00 0005 00 00"),
        (DataMsg(MAX_SEQNO, MAX_CONN_ID, True, b""), "55 00 08ffffffffffffff7f 7fff 01 00"),
        # the OOB flag is bit 1 of the flags byte (a datagram without it is the same as before)
        (DataMsg(2, 1, False, b"hi", oob=True), "55 00 0102 0001 02 0102 6869"),
        (DataMsg(1, 0, True, b"", oob=True), "55 00 0101 0000 03 00"),
        (AckMsg(256, 2, 3), "55 01 020001 0002 0103"),
        (AckMsg(0, 0, MAX_TIMESTAMP), "55 01 00 0000 04ffffff7f"),
        (SendFirstSeqnoMsg(0), "55 02 00"),
        (SendFirstSeqnoMsg(MAX_TIMESTAMP), "55 02 04ffffff7f"),
        (XmitReqMsg(()), "55 03 00"),
        (XmitReqMsg((5,)), "55 03 0101 0105 0101 01"),
        (XmitReqMsg((5, 7, 13)), "55 03 0103 0105 0102 0501"),
        (CloseMsg(MAX_CONN_ID), "55 04 7fff"),
        (CloseMsg(0), "55 04 0000"),
    ],
)
def test_exact_layout(msg: WireMsg, hex_bytes: str) -> None:
    data = bytes.fromhex(hex_bytes)
    assert encode(msg) == data
    assert decode(data) == msg


def test_magic_is_the_first_byte() -> None:
    assert encode(CloseMsg(1))[0] == MAGIC


def test_xmit_req_of_sorts_and_deduplicates() -> None:
    assert XmitReqMsg.of([9, 3, 3, 7]).seqnos == (3, 7, 9)


def test_xmit_req_at_the_top_of_the_seqno_range() -> None:
    msg = XmitReqMsg.of([MAX_SEQNO - 100, MAX_SEQNO])
    assert decode(encode(msg)) == msg


# ---------------------------------------------------------------- message constructors


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: DataMsg(-1, 0, True, b""), "DataMsg.seqno"),
        (lambda: DataMsg(2**63, 0, True, b""), "DataMsg.seqno"),
        (lambda: DataMsg(1, -1, True, b""), "DataMsg.conn_id"),
        (lambda: DataMsg(1, 32768, True, b""), "DataMsg.conn_id"),
        (lambda: DataMsg(1, 0, 1, b""), "DataMsg.first"),  # type: ignore[arg-type]
        (lambda: DataMsg(1, 0, True, bytearray()), "DataMsg.payload"),  # type: ignore[arg-type]
        (lambda: DataMsg(1, 0, True, b"", 1), "DataMsg.oob"),  # type: ignore[arg-type]
        (lambda: DataMsg(True, 0, True, b""), "DataMsg.seqno"),
        (lambda: AckMsg(1, 0, -1), "AckMsg.timestamp"),
        (lambda: AckMsg(1, 0, 2**31), "AckMsg.timestamp"),
        (lambda: AckMsg(-5, 0, 1), "AckMsg.seqno"),
        (lambda: SendFirstSeqnoMsg(-1), "SendFirstSeqnoMsg.timestamp"),
        (lambda: CloseMsg(40000), "CloseMsg.conn_id"),
        (lambda: XmitReqMsg([1, 2]), "tuple"),  # type: ignore[arg-type]
        (lambda: XmitReqMsg((2, 1)), "strictly increasing"),
        (lambda: XmitReqMsg((1, 1)), "strictly increasing"),
        (lambda: XmitReqMsg((-1,)), r"seqnos\[\]"),
    ],
)
def test_constructors_reject_out_of_range_fields(build: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()


# ---------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_datagram": 0}, "max_datagram must be a positive int"),
        ({"max_payload": -1}, "max_payload must be a positive int"),
        ({"max_xmit_seqnos": True}, "max_xmit_seqnos must be a positive int"),
        ({"max_xmit_span": 1.5}, "max_xmit_span must be a positive int"),
        ({"max_datagram": 100, "max_payload": 101}, "must not exceed max_datagram"),
        ({"max_xmit_seqnos": 10, "max_xmit_span": 9}, "must not exceed max_xmit_span"),
        ({"max_datagram": 2**32, "max_payload": 2**31}, "c-int"),
    ],
)
def test_limits_are_validated(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        CodecLimits(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("msg", "match"),
    [
        (DataMsg(1, 0, True, bytes(33)), "max_payload=32"),
        (XmitReqMsg(tuple(range(17))), "max_xmit_seqnos=16"),
        (XmitReqMsg((0, 64)), "max_xmit_span=64"),
    ],
)
def test_encode_enforces_limits(msg: WireMsg, match: str) -> None:
    with pytest.raises(EncodeError, match=match):
        encode(msg, SMALL)


def test_encode_enforces_max_datagram() -> None:
    limits = CodecLimits(max_datagram=40, max_payload=40)
    assert len(encode(DataMsg(1, 0, True, bytes(31)), limits)) == 40  # 9-byte header
    with pytest.raises(EncodeError, match="max_datagram=40"):
        encode(DataMsg(1, 0, True, bytes(32)), limits)


def test_encode_accepts_the_limits_exactly() -> None:
    assert decode(encode(XmitReqMsg((0, 63)), SMALL), SMALL) == XmitReqMsg((0, 63))
    full = XmitReqMsg(tuple(range(16)))
    assert decode(encode(full, SMALL), SMALL) == full


# ---------------------------------------------------------------- decode rejections


@pytest.mark.parametrize(
    ("hex_bytes", "match"),
    [
        ("", "magic: truncated"),
        ("56 04 0000", "magic: expected 0x55, got 0x56"),
        ("55", "type: truncated"),
        ("55 05", "type: expected a message type 0..4, got 5"),
        ("55 ff", "got 255"),
        ("55 04 00", "CLOSE.conn_id: truncated"),
        ("55 04 0000 00", "CLOSE: 1 trailing byte"),
        ("55 02 00 0000", "SEND_FIRST_SEQNO: 2 trailing byte"),
        ("55 04 8000", r"CLOSE.conn_id: expected a conn id in 0..32767, got 32768"),
        ("55 00 09 000000000000000001 0000 00 00", "DATA.seqno: expected compact length 0..8"),
        ("55 00 020100 0000 00 00", "DATA.seqno: non-canonical"),
        ("55 00 01 00 0000 00 00", "DATA.seqno: non-canonical"),
        ("55 00 0101 0000 04 00", r"DATA.flags: expected 0..3 \(bit 0 first, bit 1 OOB\), got 4"),
        ("55 00 0101 0000 01 0103 6869", "DATA.payload: truncated"),
        ("55 00 0101 0000 01 0102 686969", "DATA: 1 trailing byte"),
        ("55 00 0101 0000 01 050000000001", "DATA.payload length: expected compact length 0..4"),
        ("55 01 0105 0000 0400000080", r"ACK.timestamp: expected a value in 0..2147483647"),
        ("55 01 0105 0000 050000000001", "ACK.timestamp: expected compact length 0..4"),
        ("55 02 0400000080", "SEND_FIRST_SEQNO.timestamp: expected a value"),
        ("55 03 02 0000", "XMIT_REQ.count: non-canonical"),
        ("55 03 0101 0105 00", "XMIT_REQ.bitset length: expected 1..8192 bytes, got 0"),
        ("55 03 0101 0105 0101 02", r"XMIT_REQ.bitset: expected bit 0 set"),
        ("55 03 0101 0105 0102 0100", "XMIT_REQ.bitset: non-canonical, last byte is 0"),
        ("55 03 0102 0105 0101 01", "XMIT_REQ.bitset: expected 2 bits set"),
        ("55 03 0101 0105 0101", "XMIT_REQ.bitset: truncated"),
        ("55 03 0101 0105", "XMIT_REQ.bitset length: truncated"),
        ("55 03 0101", "XMIT_REQ.lowest: truncated"),
        ("55 03 0102 08ffffffffffffff7f 0101 03", r"highest seqno exceeds"),
        ("55 03 0101 0105 0101 01 00", "XMIT_REQ: 1 trailing byte"),
    ],
)
def test_decode_rejects(hex_bytes: str, match: str) -> None:
    with pytest.raises(DecodeError, match=match) as info:
        decode(bytes.fromhex(hex_bytes))
    assert "\n" not in str(info.value)


def test_decode_rejects_a_value_above_the_seqno_range() -> None:
    expected = r"DATA.seqno: expected a value in 0..9223372036854775807, got 9223372036854775808"
    with pytest.raises(DecodeError, match=expected):
        decode(bytes.fromhex("55 00 080000000000000080 0000 00 00"))


@pytest.mark.parametrize(
    ("hex_bytes", "match"),
    [
        ("55 00 00 0000 00 0121" + "00" * 33, "DATA.payload length: expected at most max_payload"),
        ("55 03 0111", "XMIT_REQ.count: expected at most max_xmit_seqnos=16"),
        ("55 03 0101 00 0109", "XMIT_REQ.bitset length: expected 1..8 bytes, got 9"),
        ("55 03 0102 00 0108 01000000000000ff", "XMIT_REQ.bitset: expected 2 bits set"),
    ],
)
def test_decode_enforces_limits(hex_bytes: str, match: str) -> None:
    with pytest.raises(DecodeError, match=match):
        decode(bytes.fromhex(hex_bytes), SMALL)


def test_decode_enforces_max_datagram_before_parsing() -> None:
    with pytest.raises(DecodeError, match="datagram: expected at most max_datagram=64 bytes, got"):
        decode(bytes(65), SMALL)
    with pytest.raises(DecodeError, match="max_datagram=65507"):
        decode(bytes(65_508))


def test_decode_enforces_the_exact_xmit_span() -> None:
    limits = CodecLimits(max_xmit_seqnos=4, max_xmit_span=10)
    ok = bytes.fromhex("55 03 0102 00 0102 0102")  # {0, 9}: span 10
    assert decode(ok, limits) == XmitReqMsg((0, 9))
    too_wide = bytes.fromhex("55 03 0102 00 0102 0104")  # {0, 10}: span 11, still 2 bytes
    with pytest.raises(DecodeError, match="span of at most max_xmit_span=10 seqnos, got 11"):
        decode(too_wide, limits)


def test_a_request_for_a_million_seqnos_is_rejected_from_its_header() -> None:
    count = (1_000_000).to_bytes(3, "little")
    with pytest.raises(DecodeError, match="max_xmit_seqnos=8192, got 1000000"):
        decode(bytes([MAGIC, 3, 3]) + count)
    # A bitset claiming a million-seqno span is rejected from its length field, before reading.
    nbytes = (125_000).to_bytes(3, "little")
    with pytest.raises(DecodeError, match=r"expected 1\.\.8192 bytes, got 125000"):
        decode(bytes([MAGIC, 3, 1, 1, 0, 3]) + nbytes)


def test_every_truncation_of_every_layout_is_rejected() -> None:
    samples: list[WireMsg] = [
        DataMsg(MAX_SEQNO, 7, True, b"payload"),
        AckMsg(1 << 40, 3, 99),
        SendFirstSeqnoMsg(1 << 20),
        XmitReqMsg((3, 4, 200)),
        CloseMsg(1),
    ]
    for msg in samples:
        data = encode(msg)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(data[:cut])


def test_encode_rejects_non_messages_as_a_type_error() -> None:
    with pytest.raises(TypeError, match="not a wire message"):
        encode(object())  # type: ignore[arg-type]


def test_decode_rejects_non_bytes_as_a_type_error() -> None:
    with pytest.raises(TypeError, match="expects bytes"):
        decode("55 04 0000")  # type: ignore[arg-type]


# ---------------------------------------------------------------- fuzzing

FUZZ_SEED = 20_240_607
FUZZ_CASES = 100_000


def _random_message(rng: random.Random) -> WireMsg:
    def seqno() -> int:
        return rng.choice([0, 1, rng.randrange(256), rng.randrange(1 << 40), MAX_SEQNO])

    kind = rng.randrange(5)
    if kind == 0:
        payload = rng.randbytes(rng.choice([0, 1, rng.randrange(40)]))
        return DataMsg(seqno(), rng.randrange(MAX_CONN_ID + 1), rng.random() < 0.5, payload)
    if kind == 1:
        return AckMsg(seqno(), rng.randrange(MAX_CONN_ID + 1), rng.randrange(MAX_TIMESTAMP + 1))
    if kind == 2:
        return SendFirstSeqnoMsg(rng.choice([0, 1, rng.randrange(MAX_TIMESTAMP + 1)]))
    if kind == 3:
        lowest = rng.randrange(1 << 40)
        count = rng.randrange(0, 12)
        return XmitReqMsg.of(lowest + rng.randrange(60) for _ in range(count))
    return CloseMsg(rng.randrange(MAX_CONN_ID + 1))


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.randrange(6)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip one bit
            pos = rng.randrange(len(buf))
            buf[pos] ^= 1 << rng.randrange(8)
        elif op == 1:  # truncate
            del buf[pos:]
        elif op == 2:  # extend
            buf += rng.randbytes(rng.randrange(1, 6))
        elif op == 3:  # insert a byte
            buf.insert(pos, rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)]))
        elif op == 4 and buf:  # overwrite a byte
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 5:  # delete a byte
            del buf[pos : pos + 1]
    return bytes(buf)


def _fuzz_input(rng: random.Random, corpus: list[bytes]) -> bytes:
    roll = rng.random()
    if roll < 0.1:
        return rng.randbytes(rng.randrange(20))  # pure noise (mostly bad magic)
    if roll < 0.2:  # plausible header, random body
        return bytes([MAGIC, rng.randrange(6)]) + rng.randbytes(rng.randrange(20))
    return _mutate(rng, rng.choice(corpus))


def test_fuzz_decode_raises_only_decode_error_and_is_canonical() -> None:
    print(f"codec fuzz: seed={FUZZ_SEED} cases={FUZZ_CASES}")
    rng = random.Random(FUZZ_SEED)
    corpus = [encode(_random_message(rng)) for _ in range(300)]
    accepted = rejected = 0
    started = time.perf_counter()
    for i in range(FUZZ_CASES):
        data = _fuzz_input(rng, corpus)
        limits = SMALL if i % 4 == 0 else DEFAULT_LIMITS
        where = f"seed={FUZZ_SEED} case={i} input={data.hex()}"
        try:
            msg = decode(data, limits)
        except DecodeError as e:
            assert "\n" not in str(e), where
            rejected += 1
            continue
        except Exception as e:
            pytest.fail(f"{type(e).__name__}: {e} ({where})")
        assert encode(msg, limits) == data, where
        accepted += 1
    elapsed = time.perf_counter() - started
    print(f"codec fuzz: accepted={accepted} rejected={rejected} in {elapsed:.1f}s")
    # Both outcomes must be well represented, or the fuzzer is not exercising the decoder.
    assert accepted > FUZZ_CASES // 50
    assert rejected > FUZZ_CASES // 2


def test_unicast4_carries_the_oob_flag() -> None:
    """UNICAST4's codec shares UNICAST3's layout, the OOB flag in bit 1 of DATA's flags byte included
    (spec/unicast4.py decision 10): it round-trips, the bytes after the magic are UNICAST3's, and
    flags above 3 stay malformed."""
    from impl.unicast4 import codec as u4

    plain = u4.encode(DataMsg(2, 1, False, b"hi"))
    assert u4.decode(plain) == DataMsg(2, 1, False, b"hi")
    flagged = plain[:6] + b"\x02" + plain[7:]  # magic, type, seqno (2 bytes), conn_id (2), flags
    assert encode(DataMsg(2, 1, False, b"hi", oob=True))[1:] == flagged[1:]
    assert u4.decode(flagged) == DataMsg(2, 1, False, b"hi", oob=True)
    assert u4.encode(DataMsg(2, 1, True, b"hi", oob=True)) == u4.encode_data(2, 1, True, b"hi", oob=True)
    with pytest.raises(DecodeError, match=r"DATA.flags: expected 0..3"):
        u4.decode(plain[:6] + b"\x04" + plain[7:])
