"""Hostile and broken input to the UNICAST2 engine: bounded work and memory, never a crash.

Invariant tested: whatever bytes arrive, ``received`` returns normally; malformed datagrams are
counted in ``stats.malformed`` and change nothing; well-formed but hostile ones are bounded by the
``Config`` limits, each counted when it bites.
"""

from __future__ import annotations

import random

import pytest
from u2_link import Link

from impl.unicast2 import Config, SendWindowFull, Unicast2Engine, spec_payload
from impl.unicast2.codec import (
    NO_CONN,
    AckMsg,
    DataMsg,
    SendFirstSeqnoMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    decode,
    encode,
)
from impl.unicast3 import codec as unicast3_codec
from impl.wire import MAX_SEQNO


def engine(config: Config | None = None) -> Unicast2Engine[str]:
    return Unicast2Engine(config, members=["A", "B"], now=0)


def first(seqno: int, conn_id: int = 0, payload: bytes = b"x") -> bytes:
    return encode(DataMsg(seqno, conn_id, True, payload))


def sender_with_unacked(n: int, config: Config | None = None) -> Unicast2Engine[str]:
    a = engine(config)
    for i in range(1, n + 1):
        a.send("B", spec_payload(i), now=0)
    a.datagrams_to_send()
    return a


def resent(a: Unicast2Engine[str]) -> list[int]:
    return [m.seqno for _, d in a.datagrams_to_send() if isinstance(m := decode(d), DataMsg)]


def test_first_message_near_2_63_opens_a_window_there_in_constant_memory() -> None:
    b = engine()
    b.received("A", first(MAX_SEQNO), now=0)
    assert b.deliveries() == [("A", b"x")] and b.allocated_slots() == 0
    assert [decode(d) for _, d in b.datagrams_to_send()] == [AckMsg(MAX_SEQNO, 0)]
    b.check_invariants()


def test_data_far_above_the_window_is_dropped_before_allocating() -> None:
    b = engine(Config(max_receive_span=1_000))
    b.received("A", first(1), now=0)
    b.received("A", encode(DataMsg(2**62, 0, False, b"far")), now=0)
    b.received("A", encode(DataMsg(1_002, 0, False, b"just beyond")), now=0)
    b.received("A", encode(DataMsg(1_001, 0, False, b"last in span")), now=0)
    assert b.stats.beyond_window == 2 and b.allocated_slots() <= 2 * 2_048
    assert [s for s, _, _ in b.snapshot().recv[0][1].buffered] == [1_001]
    b.check_invariants()


def test_seqno_zero_is_dropped() -> None:
    b = engine()
    b.received("A", first(0), now=0)
    assert b.stats.bad_seqno == 1 and b.snapshot().recv == () and b.datagrams_to_send() == []


@pytest.mark.parametrize(
    ("msg", "served"),
    [
        (XmitReqMsg(tuple(range(1, 8_001))), 100),  # asks for 8000 stored seqnos
        (XmitReqMsg(tuple(range(10_000, 12_000))), 0),  # none stored: costs nothing
        (SendFirstSeqnoMsg(MAX_SEQNO, 0), 100),  # "resend everything up to 2**63 - 1"
        (StableMsg(0, 0, 0, 0), 100),  # "I received nothing": resend the whole window
    ],
)
def test_one_message_causes_at_most_max_xmit_served_resends(msg: WireMsg, served: int) -> None:
    a = sender_with_unacked(8_000, Config(max_xmit_served=100, resend_factor=0))  # resend_factor: its own test
    a.received("B", encode(msg), now=0)
    out = resent(a)
    assert len(out) == served and out == sorted(out)
    assert a.stats.xmit_seqnos_ignored == (8_000 - served if served else 0)


def test_the_receive_table_is_bounded() -> None:
    b = Unicast2Engine[int](Config(max_receive_entries=100), members=[], now=0)
    for peer in range(5_000):
        b.received(peer, first(1), now=0)
    assert len(b.snapshot().recv) == 100 and b.stats.receive_table_full == 4_900
    b.check_invariants()


def test_the_send_window_is_bounded() -> None:
    a = sender_with_unacked(10, Config(max_send_window=10))
    with pytest.raises(SendWindowFull, match="max_send_window"):
        a.send("B", b"one too many", now=0)
    a.received("B", encode(StableMsg(4, 10, 0, 0)), now=0)  # 4 purged: room again
    assert a.send("B", b"fits", now=0) == 11


def test_foreign_and_unknown_connections_change_nothing() -> None:
    a = sender_with_unacked(3)
    before = a.snapshot()
    for msg in (StableMsg(3, 3, 7, 0), AckMsg(1, 7), StableMsg(3, 3, NO_CONN, 0)):
        a.received("B", encode(msg), now=0)
    a.received("C", encode(StableMsg(3, 3, 0, 0)), now=0)
    assert a.snapshot() == before and a.datagrams_to_send() == []
    assert a.stats.foreign_stables == 3 and a.stats.foreign_acks == 1


def test_a_unicast3_datagram_is_malformed_here() -> None:
    b = engine()
    b.received("A", unicast3_codec.encode(unicast3_codec.DataMsg(1, 0, True, b"x")), now=0)
    assert b.stats.malformed == 1 and b.snapshot().recv == () and b.datagrams_to_send() == []


FUZZ_SEED = 7_777


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice([1, 1, 2])):
        if buf and rng.random() < 0.5:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif rng.random() < 0.5:
            del buf[rng.randrange(len(buf) + 1):]
        else:
            buf.insert(rng.randrange(len(buf) + 1), rng.randrange(256))
    return bytes(buf)


def test_random_and_mutated_datagrams_never_crash_and_leave_a_working_engine() -> None:
    """Garbage (random bytes, and mutations of real datagrams: many still decode, with odd seqnos,
    conn_ids and flags) interleaved with a conforming exchange: no exception, invariants hold."""
    rng = random.Random(FUZZ_SEED)
    link = Link(Config(max_receive_span=4_096, max_xmit_served=64))
    samples: list[WireMsg] = [DataMsg(1, 0, True, spec_payload(900)), DataMsg(5, 0, False, spec_payload(901)),
                              XmitReqMsg((1, 2, 9)), SendFirstSeqnoMsg(4, 0), StableMsg(1, 6, 0, 0), AckMsg(1, 0)]
    corpus = [encode(m) for m in samples]
    garbage = 0
    for n in range(1, 3_001):
        if n % 10 == 0:
            link.send("A", "B", n // 10)
        for dst, src in (("A", "B"), ("B", "A")):
            data = rng.randbytes(rng.randrange(12)) if rng.random() < 0.3 else _mutate(rng, rng.choice(corpus))
            link[dst].received(src, data, now=link.now)
            garbage += 1
        link.transfer()
        if n % 100 == 0:
            link.run_until(link.now + 1_000)
            for e in link.engines.values():
                e.check_invariants()
    stats = [link[name].stats for name in "AB"]
    assert sum(s.datagrams_received for s in stats) >= garbage
    assert 0 < sum(s.malformed for s in stats) < garbage  # both outcomes exercised
