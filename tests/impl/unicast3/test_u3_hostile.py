"""Hostile and broken input: bounded work and memory, never a crash, never a lost or duplicated
delivery because of a malformed datagram.

Invariant tested (as h11's fuzz harness states its own): whatever bytes arrive, ``received``
returns normally; malformed datagrams are counted in ``stats.malformed`` and change nothing;
well-formed but hostile ones are bounded by the ``Config`` limits.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
from u3_link import Link

from impl.unicast3 import Config, Unicast3Engine, spec_payload
from impl.unicast3.codec import (
    MAX_SEQNO,
    AckMsg,
    CloseMsg,
    CodecLimits,
    DataMsg,
    DecodeError,
    SendFirstSeqnoMsg,
    WireMsg,
    XmitReqMsg,
    decode,
    encode,
)


def engine(config: Config | None = None) -> Unicast3Engine[str]:
    return Unicast3Engine(config, members=["A", "B"], now=0)


def first(seqno: int, conn_id: int = 0, payload: bytes = b"x") -> bytes:
    return encode(DataMsg(seqno, conn_id, True, payload))


def test_first_message_near_2_63_opens_a_window_there_in_constant_memory() -> None:
    b = engine()
    b.received("A", first(MAX_SEQNO), now=0)
    assert b.deliveries() == [("A", b"x")]
    assert b.allocated_slots() == 0  # delivered and freed at once
    b.received("A", encode(DataMsg(MAX_SEQNO - 5, 0, False, b"old")), now=0)  # below the window
    b.handle_timer(now=500)
    assert [decode(d) for _, d in b.datagrams_to_send()] == [AckMsg(MAX_SEQNO, 0, 1)]
    b.check_invariants()


def test_data_far_above_the_window_is_dropped_before_allocating() -> None:
    b = engine(Config(max_receive_span=1_000))
    b.received("A", first(1), now=0)
    b.received("A", encode(DataMsg(2**62, 0, False, b"far")), now=0)
    b.received("A", encode(DataMsg(1_002, 0, False, b"just beyond")), now=0)
    b.received("A", encode(DataMsg(1_001, 0, False, b"last in span")), now=0)
    assert b.stats.beyond_window == 2
    assert b.allocated_slots() <= 2 * 1_024
    assert b.snapshot(now=0).recv[0][1].buffered == (1_001,)
    b.handle_timer(now=500)  # gap scan is bounded by max_xmit_req_size, not by the span
    b.handle_timer(now=1_000)
    (req,) = [decode(d) for _, d in b.datagrams_to_send() if isinstance(decode(d), XmitReqMsg)]
    assert isinstance(req, XmitReqMsg) and req.seqnos == tuple(range(2, 1_001))
    b.check_invariants()


def test_seqno_zero_is_rejected() -> None:
    b = engine()
    b.received("A", first(0), now=0)
    assert b.stats.bad_seqno == 1 and b.snapshot(now=0).recv == () and b.deliveries() == []


def _sender_with_unacked(n: int, config: Config | None = None) -> Unicast3Engine[str]:
    a = engine(config)
    for i in range(n):
        a.send("B", spec_payload(i), now=0)
    a.datagrams_to_send()
    return a


def test_xmit_req_for_a_million_seqnos_is_rejected_by_the_codec() -> None:
    big = CodecLimits(max_datagram=1 << 18, max_payload=1 << 16, max_xmit_seqnos=1 << 20, max_xmit_span=1 << 21)
    request = encode(XmitReqMsg(tuple(range(1, 1_000_001))), big)
    a = _sender_with_unacked(10)
    tracemalloc.start()  # refused by its count before it is decoded: nothing the size of a million seqnos is built
    try:
        a.received("B", request, now=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, peak  # a tuple of a million seqnos would be 8 MB and more
    assert a.stats.malformed == 1 and a.datagrams_to_send() == []


def test_xmit_req_service_is_capped_by_max_xmit_served() -> None:
    big = CodecLimits(max_datagram=1 << 18, max_payload=1 << 16, max_xmit_seqnos=1 << 20, max_xmit_span=1 << 21)
    a = _sender_with_unacked(3_000, Config(codec_limits=big, max_xmit_served=1_000))
    a.received("B", encode(XmitReqMsg(tuple(range(1, 1_000_001))), big), now=0)
    resent = [decode(d, big) for _, d in a.datagrams_to_send()]
    assert [m.seqno for m in resent if isinstance(m, DataMsg)] == list(range(1, 1_001))
    assert a.stats.xmit_seqnos_ignored == 2_000  # the rest that was stored; unknown ones cost nothing


def test_conn_id_churn_from_one_peer_keeps_one_window() -> None:
    b = engine()
    for i in range(5_000):
        b.received("A", first(1 + i % 7, conn_id=i % 32_768), now=i)
    assert len(b.snapshot(now=5_000).recv) == 1
    assert b.stats.windows_replaced == 4_999
    assert b.allocated_slots() == 0
    b.check_invariants()


def test_conn_id_churn_guard() -> None:
    b = engine(Config(min_window_replace_interval=1_000))
    b.received("A", first(1, conn_id=1), now=0)
    b.received("A", first(1, conn_id=2), now=999)
    assert b.stats.replace_refused == 1 and b.snapshot(now=999).recv[0][1].conn_id == 1
    b.received("A", first(1, conn_id=2), now=1_000)
    assert b.snapshot(now=1_000).recv[0][1].conn_id == 2


def test_flood_of_senders_is_bounded_by_max_receive_entries() -> None:
    b = engine(Config(max_receive_entries=100))
    for i in range(5_000):
        b.received(f"P{i}", first(1), now=0)
        b.received(f"Q{i}", encode(DataMsg(5, 0, False, b"")), now=0)  # non-first: asks for seqno
    assert len(b.snapshot(now=0).recv) == 100 and b.stats.receive_table_full == 4_900
    requests = [d for _, d in b.datagrams_to_send() if isinstance(decode(d), SendFirstSeqnoMsg)]
    assert len(requests) == 100 and b.stats.sync_table_full == 4_900
    b.received("Q-late", encode(DataMsg(5, 0, False, b"")), now=2_000)  # old requests expired
    assert len(b.datagrams_to_send()) == 1
    b.check_invariants()


def _random_valid(rng: random.Random) -> WireMsg:
    seqno = rng.choice([0, 1, 2, 3, 7, 1_000, 2**31, MAX_SEQNO - 1, MAX_SEQNO, rng.randrange(MAX_SEQNO)])
    conn_id = rng.choice([0, 1, 32_767, rng.randrange(32_768)])
    ts = rng.choice([0, 1, 2, 2**30, 2**31 - 1, rng.randrange(2**31)])
    kind = rng.randrange(5)
    if kind == 0:
        return DataMsg(seqno, conn_id, rng.random() < 0.5, rng.randbytes(rng.randrange(4)))
    if kind == 1:
        return AckMsg(seqno, conn_id, ts)
    if kind == 2:
        return SendFirstSeqnoMsg(ts)
    if kind == 3:
        low = rng.choice([1, 2, MAX_SEQNO - 100, rng.randrange(1, 1_000)])
        return XmitReqMsg.of(rng.sample(range(low, min(low + 500, MAX_SEQNO + 1)), rng.randrange(0, 50)))
    return CloseMsg(conn_id)


def test_random_well_formed_messages_never_crash_the_engine() -> None:
    rng = random.Random(7)
    e = _sender_with_unacked(20)
    e.received("B", first(1), now=0)
    for i in range(5_000):
        e.received(rng.choice(["B", "C"]), encode(_random_valid(rng)), now=i)
        if i % 100 == 0:
            e.handle_timer(now=i)
            e.check_invariants()
            assert e.allocated_slots() <= 64 * 1_024
    e.datagrams_to_send()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_garbage_on_the_wire_never_loses_or_duplicates_a_delivery(seed: int) -> None:
    """A sends 200 messages to B over a link that loses 20% of packets, while random bytes,
    truncated and bit-flipped copies of real datagrams are injected at both ends."""
    rng = random.Random(seed)
    link = Link(drop=lambda s, d, m: rng.random() < 0.2)
    garbage = 0
    for n in range(1, 201):
        link.send("A", "B", n)
        real = [encode(m) for _, _, _, m in link.log[-5:]]
        for _ in range(20):
            junk = _junk(rng, real)
            try:
                decode(junk)
                continue  # well formed after all: not the garbage this test is about
            except DecodeError:
                garbage += 1
            link[rng.choice("AB")].received(rng.choice("AB"), junk, now=link.now)
        if n % 10 == 0:
            link.run_until(link.now + 500)
    link.drop = None
    link.run_until(link.now + 5_000)
    assert link.got("B") == list(range(1, 201))
    assert link["A"].stats.malformed + link["B"].stats.malformed == garbage > 3_000
    assert dict(link["A"].snapshot(now=link.now).send)["B"].unacked == ()


def _junk(rng: random.Random, real: list[bytes]) -> bytes:
    choice = rng.randrange(4)
    if choice == 0 or not real:
        return rng.randbytes(rng.randrange(40))
    data = rng.choice(real)
    if choice == 1:
        return data[: rng.randrange(len(data))]  # truncated
    if choice == 2:
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]  # bit flip
    return data + rng.randbytes(rng.randrange(1, 5))  # trailing bytes
