"""Hostile and broken input on the UNICAST4 engine: bounded memory (bytes and counts) and work,
never a crash, and no limit that costs an honest peer its liveness.

Invariants tested: whatever bytes arrive, ``received`` returns normally and malformed datagrams
change nothing; each limit of ``Config`` bites on hostile input (counted in ``stats``), and with
each limit set tight, an honest sender whose any one datagram is lost still gets everything
delivered (the liveness test per limit, as CONVENTIONS.md asks).
"""

from __future__ import annotations

import random

import pytest
from u4_link import Link

from impl.common import HELD_OVERHEAD, spec_payload
from impl.unicast4 import Config, Unicast4Engine
from impl.unicast4.codec import DataMsg, SendFirstSeqnoMsg, XmitReqMsg, encode

SENDS = 6
PAYLOAD = 20
# Each limit set as tight as an honest run of SENDS messages of PAYLOAD bytes allows.
TIGHT = {
    "capacity": Config(capacity=2),
    "max_receive_entries": Config(max_receive_entries=1, receive_evict_idle=1_000),
    "max_window_bytes": Config(max_window_bytes=PAYLOAD + 8 + HELD_OVERHEAD),
    "max_receive_bytes": Config(max_receive_bytes=PAYLOAD + 8 + HELD_OVERHEAD),
    "max_xmit_served": Config(max_xmit_served=1),
    "resend_factor": Config(resend_factor=1, max_resend_bytes=65_507),
    "max_blocked_sends": Config(capacity=2, max_blocked_sends=SENDS),
    "max_blocked_bytes": Config(capacity=2, max_blocked_bytes=SENDS * (PAYLOAD + 8)),
}


def honest_run(config: Config, lose: int | None) -> Link:
    link = Link(config)
    for n in range(1, SENDS + 1):
        link.send("A", "B", spec_payload(n) + bytes(PAYLOAD))
    link.run(rounds=40, lose=lose)
    return link


@pytest.mark.parametrize("limit", sorted(TIGHT))
def test_an_honest_peer_losing_any_one_datagram_gets_everything(limit: str) -> None:
    config = TIGHT[limit]
    total = honest_run(config, None).sent
    for lose in range(1, total + 1):
        link = honest_run(config, lose)
        assert link.got("A", "B") == [spec_payload(n) + bytes(PAYLOAD) for n in range(1, SENDS + 1)], (limit, lose)
        assert link.engines["A"].blocked_sends() == [] and link.failed == []


def test_malformed_datagrams_never_crash_and_change_nothing() -> None:
    rng = random.Random(30)  # a fixed seed: every run sees the same 3,000 datagrams
    b = Unicast4Engine(members=["A", "B"], now=0)
    b.received("A", encode(DataMsg(1, 0, True, b"x")), now=0)
    before = b.snapshot(now=0)
    for _ in range(3_000):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
        if data[:1] == b"\x75":
            data = b"\x00" + data[1:]
        b.received("A", data, now=0)
    assert b.snapshot(now=0) == before and b.stats.malformed == 3_000
    b.check_invariants()


def test_seqno_zero_and_data_beyond_capacity_are_dropped() -> None:
    b = Unicast4Engine(Config(capacity=4), members=["A", "B"], now=0)
    b.received("A", encode(DataMsg(0, 0, True, b"zero")), now=0)
    b.received("A", encode(DataMsg(1, 0, True, b"1")), now=0)
    b.received("A", encode(DataMsg(6, 0, False, b"far")), now=0)  # 6 - low 1 > capacity 4
    b.received("A", encode(DataMsg(2**62, 0, False, b"far")), now=0)
    assert b.stats.bad_seqno == 1 and b.stats.beyond_capacity == 2
    assert b.snapshot(now=0).recv[0][1].buffered == ()
    b.check_invariants()


def test_held_bytes_bound_a_window_and_the_total() -> None:
    b = Unicast4Engine(Config(capacity=1_000, max_window_bytes=1_000, max_receive_bytes=1_500),
                       members=["A", "B", "C"], now=0)
    for src in ("A", "C"):
        b.received(src, encode(DataMsg(1, 0, True, b"1")), now=0)
        for seqno in range(3, 30):  # #2 withheld: everything above it would be held
            b.received(src, encode(DataMsg(seqno, 0, False, bytes(400))), now=0)
    assert b.stats.held_bytes_full > 0
    assert sum(len(r.buffered) for _, r in b.snapshot(now=0).recv) * (400 + HELD_OVERHEAD) <= 1_500
    b.check_invariants()


def test_receive_entries_are_bounded_and_an_idle_one_is_evicted() -> None:
    b = Unicast4Engine(Config(max_receive_entries=2, receive_evict_idle=1_000), members=["A", "B"], now=0)
    for i, src in enumerate(("X", "Y", "Z")):
        b.received(src, encode(DataMsg(1, 0, True, b"p")), now=i)
    assert b.stats.receive_table_full == 1 and len(b.snapshot(now=2).recv) == 2
    b.received("Z", encode(DataMsg(1, 0, True, b"p")), now=2_000)
    assert b.stats.receive_evicted == 1 and [p for p, _ in b.snapshot(now=2_000).recv] == ["Y", "Z"]


def test_an_xmit_req_is_served_for_a_bounded_number_of_seqnos_and_bytes() -> None:
    a = Unicast4Engine(Config(capacity=64, max_xmit_served=5, resend_factor=2), members=["A", "B"], now=0)
    for _ in range(40):
        a.send("B", bytes(200), now=0)
    a.datagrams_to_send()
    request = encode(XmitReqMsg(tuple(range(1, 41))))
    a.received("B", request, now=0)
    out = a.datagrams_to_send()
    assert len(out) <= 5 and a.stats.xmit_seqnos_ignored == 35
    assert sum(len(d) for _, d in out) <= max(2 * len(request), a.config.codec_limits.max_datagram)
    a.received("B", encode(SendFirstSeqnoMsg(7)), now=0)  # answered within the same budget rules
    a.check_invariants()
