"""Tests for impl/unicast2/codec.py (on the shared primitives of impl/wire.py): round trips, exact
layouts, the signed conn_id, one test per rejection, and a random/mutated-bytes fuzzer.

Invariant fuzzed (as h11's fuzz harness states its own): whatever bytes arrive, ``decode`` either
returns a message that re-encodes to exactly those bytes or raises ``DecodeError``, never anything
else.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impl.unicast2.codec import (
    DEFAULT_LIMITS,
    MAGIC,
    NO_CONN,
    AckMsg,
    CodecLimits,
    DataMsg,
    DecodeError,
    EncodeError,
    SendFirstSeqnoMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    decode,
    encode,
    encode_data,
)
from impl.unicast3 import codec as unicast3_codec
from impl.wire import MAX_CONN_ID, MAX_SEQNO, MAX_TIMESTAMP

SMALL = CodecLimits(max_datagram=64, max_payload=32, max_xmit_seqnos=16, max_xmit_span=64)

seqnos = st.one_of(st.integers(0, 300), st.integers(0, MAX_SEQNO))
conn_ids = st.integers(NO_CONN, MAX_CONN_ID)
timestamps = st.one_of(st.just(0), st.integers(0, MAX_TIMESTAMP))


@st.composite
def stables(draw: st.DrawFn) -> StableMsg:
    hd = draw(seqnos)
    hr = draw(st.integers(hd, MAX_SEQNO))
    return StableMsg(hd, hr, draw(conn_ids), draw(timestamps))


messages: st.SearchStrategy[WireMsg] = st.one_of(
    st.builds(DataMsg, seqnos, conn_ids, st.booleans(), st.binary(max_size=300)),
    st.builds(lambda lo, offs: XmitReqMsg.of(lo + o for o in offs), st.integers(0, 2**40),
              st.sets(st.integers(0, 5_000), max_size=60)),
    st.builds(SendFirstSeqnoMsg, seqnos, timestamps),
    stables(),
    st.builds(AckMsg, seqnos, conn_ids),
)


@settings(max_examples=500, database=None)
@given(messages)
def test_round_trip(msg: WireMsg) -> None:
    data = encode(msg)
    assert decode(data) == msg
    assert encode(decode(data)) == data
    assert decode(bytearray(data)) == msg
    assert decode(memoryview(data)) == msg


@pytest.mark.parametrize(
    ("msg", "hex_bytes"),
    [
        (DataMsg(1, 0, True, b"hi"), "32 00 0101 0000 01 0102 6869"),
        (DataMsg(2, NO_CONN, False, b""), "32 00 0102 ffff 00 00"),
        (DataMsg(MAX_SEQNO, MAX_CONN_ID, True, b""), "32 00 08ffffffffffffff7f 7fff 01 00"),
        (XmitReqMsg((5, 7, 13)), "32 01 0103 0105 0102 0501"),
        (XmitReqMsg(()), "32 01 00"),
        (SendFirstSeqnoMsg(3, 0), "32 02 0103 00"),
        (SendFirstSeqnoMsg(256, MAX_TIMESTAMP), "32 02 020001 04ffffff7f"),
        (StableMsg(0, 0, 0, 0), "32 03 00 0000 00"),
        (StableMsg(2, 5, 1, 7), "32 03 11 02 03 0001 0107"),
        (StableMsg(256, 256, NO_CONN, 0), "32 03 20 0001 ffff 00"),
        (AckMsg(1, 4), "32 04 0101 0004"),
        (AckMsg(1, NO_CONN), "32 04 0101 ffff"),
    ],
)
def test_exact_layout(msg: WireMsg, hex_bytes: str) -> None:
    data = bytes.fromhex(hex_bytes)
    assert encode(msg) == data
    assert decode(data) == msg


def test_encode_data_is_encode_of_the_message() -> None:
    for seqno, conn_id, first, payload in [(1, 0, True, b""), (7, NO_CONN, False, b"x" * 300), (2**40, 9, False, b"y")]:
        assert encode_data(seqno, conn_id, first, payload) == encode(DataMsg(seqno, conn_id, first, payload))


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: DataMsg(-1, 0, True, b""), "DataMsg.seqno"),
        (lambda: DataMsg(1, -2, True, b""), r"DataMsg.conn_id must be an int in -1..32767"),
        (lambda: DataMsg(1, 32768, True, b""), "DataMsg.conn_id"),
        (lambda: DataMsg(1, 0, 1, b""), "DataMsg.first"),  # type: ignore[arg-type]
        (lambda: DataMsg(1, 0, True, bytearray()), "DataMsg.payload"),  # type: ignore[arg-type]
        (lambda: StableMsg(3, 2, 0, 0), r"StableMsg.hr must be an int in 3\.\."),
        (lambda: StableMsg(0, 0, -5, 0), "StableMsg.conn_id"),
        (lambda: StableMsg(0, 0, 0, 2**31), "StableMsg.timestamp"),
        (lambda: SendFirstSeqnoMsg(1, -1), "SendFirstSeqnoMsg.timestamp"),
        (lambda: AckMsg(1, -3), "AckMsg.conn_id"),
        (lambda: encode_data(1, -2, True, b""), "DataMsg.conn_id"),
    ],
)
def test_constructors_reject_out_of_range_fields(build: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize(
    ("hex_bytes", "match"),
    [
        ("", "magic: truncated"),
        ("55 04 0000", r"magic: expected 0x32 \(UNICAST2\), got 0x55"),
        ("32 05", "type: expected a message type 0..4, got 5"),
        ("32 00 0101 fffe 00 00", r"DATA.conn_id: expected a conn id in 0..32767 or -1 \(none\), got -2"),
        ("32 00 0101 8000 00 00", "got -32768"),
        ("32 00 0101 0000 02 00", "DATA.first: expected a bool byte 0 or 1, got 2"),
        ("32 00 0101 0000 01 0103 6869", "DATA.payload: truncated"),
        ("32 00 020100 0000 00 00", "DATA.seqno: non-canonical"),
        ("32 02 0103", "SEND_FIRST_SEQNO.timestamp: truncated"),
        ("32 02 0103 00 00", "SEND_FIRST_SEQNO: 1 trailing byte"),
        ("32 03 90", "STABLE.hd/hr: expected lengths 0..8 in the first byte, got 9 and 0"),
        ("32 03 10 00 0000 00", "STABLE.hd/hr: non-canonical"),
        ("32 03 01 00 0000 00", "STABLE.hd/hr: non-canonical"),
        ("32 03 81 ffffffffffffff7f 01 0000 00", r"STABLE.hd/hr: expected values in 0\.\."),
        ("32 03 11 02", "STABLE.hd/hr: truncated"),
        ("32 03 00 ffff 0400000080", "STABLE.timestamp: expected a value in 0..2147483647"),
        ("32 04 0101 00", "ACK.conn_id: truncated"),
        ("32 04 0101 0000 00", "ACK: 1 trailing byte"),
        ("32 01 0101 0105 0101 02", r"XMIT_REQ.bitset: expected bit 0 set"),
    ],
)
def test_decode_rejects(hex_bytes: str, match: str) -> None:
    with pytest.raises(DecodeError, match=match) as info:
        decode(bytes.fromhex(hex_bytes))
    assert "\n" not in str(info.value)


def test_the_two_protocols_reject_each_others_datagrams() -> None:
    mine = encode(DataMsg(1, 0, True, b"x"))
    theirs = unicast3_codec.encode(unicast3_codec.DataMsg(1, 0, True, b"x"))
    with pytest.raises(DecodeError, match="magic"):
        decode(theirs)
    with pytest.raises(DecodeError, match="magic"):
        unicast3_codec.decode(mine)


@pytest.mark.parametrize(
    ("msg", "match"),
    [
        (DataMsg(1, 0, True, bytes(33)), "max_payload=32"),
        (XmitReqMsg(tuple(range(17))), "max_xmit_seqnos=16"),
        (XmitReqMsg((0, 64)), "max_xmit_span=64"),
        (DataMsg(1, 0, True, bytes(32)), None),  # fits max_payload and max_datagram
    ],
)
def test_encode_enforces_limits(msg: WireMsg, match: str | None) -> None:
    if match is None:
        assert decode(encode(msg, SMALL), SMALL) == msg
        return
    with pytest.raises(EncodeError, match=match):
        encode(msg, SMALL)


def test_decode_enforces_limits() -> None:
    with pytest.raises(DecodeError, match=r"DATA\.payload length: expected at most max_payload=32"):
        decode(bytes.fromhex("32 00 00 0000 00 0121") + bytes(33), SMALL)
    with pytest.raises(DecodeError, match="max_datagram=64 bytes"):
        decode(bytes(65), SMALL)


def test_every_truncation_of_every_layout_is_rejected() -> None:
    samples: list[WireMsg] = [DataMsg(MAX_SEQNO, 7, True, b"payload"), XmitReqMsg((3, 4, 200)),
                              SendFirstSeqnoMsg(1 << 40, 5), StableMsg(3, 1 << 33, NO_CONN, 9), AckMsg(1 << 20, 3)]
    for msg in samples:
        data = encode(msg)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(data[:cut])


def test_type_errors_are_the_callers() -> None:
    with pytest.raises(TypeError, match="not a UNICAST2 wire message"):
        encode(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expects bytes"):
        decode("32 04")  # type: ignore[arg-type]


# ---------------------------------------------------------------- fuzzing

FUZZ_SEED = 20_250_301
FUZZ_CASES = 50_000


def _random_message(rng: random.Random) -> WireMsg:
    def seqno() -> int:
        return rng.choice([0, 1, rng.randrange(256), rng.randrange(1 << 40), MAX_SEQNO])

    conn_id = rng.choice([NO_CONN, 0, rng.randrange(MAX_CONN_ID + 1)])
    ts = rng.choice([0, 1, rng.randrange(MAX_TIMESTAMP + 1)])
    kind = rng.randrange(5)
    if kind == 0:
        return DataMsg(seqno(), conn_id, rng.random() < 0.5, rng.randbytes(rng.choice([0, 1, rng.randrange(40)])))
    if kind == 1:
        lowest = rng.randrange(1 << 40)
        return XmitReqMsg.of(lowest + rng.randrange(60) for _ in range(rng.randrange(12)))
    if kind == 2:
        return SendFirstSeqnoMsg(seqno(), ts)
    if kind == 3:
        hd = seqno()
        return StableMsg(hd, rng.choice([hd, min(MAX_SEQNO, hd + rng.randrange(1000))]), conn_id, ts)
    return AckMsg(seqno(), conn_id)


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        pos = rng.randrange(len(buf) + 1)
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif op == 1:
            del buf[pos:]
        elif op == 2:
            buf += rng.randbytes(rng.randrange(1, 6))
        elif op == 3:
            buf.insert(pos, rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)]))
        elif buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def test_fuzz_decode_raises_only_decode_error_and_is_canonical() -> None:
    rng = random.Random(FUZZ_SEED)
    corpus = [encode(_random_message(rng)) for _ in range(300)]
    accepted = rejected = 0
    for i in range(FUZZ_CASES):
        roll = rng.random()
        if roll < 0.1:
            data = rng.randbytes(rng.randrange(20))
        elif roll < 0.2:
            data = bytes([MAGIC, rng.randrange(6)]) + rng.randbytes(rng.randrange(20))
        else:
            data = _mutate(rng, rng.choice(corpus))
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
    assert accepted > FUZZ_CASES // 50 and rejected > FUZZ_CASES // 2, (accepted, rejected)
