"""NAKACK4's byte bound on undelivered data (issue 28, item 2): a member that never sends seqno 1
made every receiver keep everything it multicast, up to ``capacity`` x 65,000 bytes per window (two
such members grew a process from 18 MB to 2.1 GB). ``max_held_bytes`` (per window) and
``max_receive_bytes`` (all windows) bound the bytes stored undelivered, counting and dropping what
would pass them (``held_bytes_full``); a drop is like a loss, so an honest sender's messages come
again by retransmission and everything is delivered, in order, once.

Memory is measured with ``tracemalloc`` (bytes allocated by Python, deterministic), not RSS.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from impl.common import HELD_OVERHEAD, spec_payload
from impl.nakack4 import Config, Nakack4Engine
from impl.nakack4.codec import encode_mcast

sys.path.insert(0, str(Path(__file__).parent.parent))  # tests/impl: the one_loss helper
from one_loss import Case, Net, sweep

BIG = 65_000
PER_MESSAGE = BIG + HELD_OVERHEAD


def flood(engine: Nakack4Engine[str], sender: str, count: int, payload: bytes) -> None:
    """``sender`` multicasts seqnos 2 .. count + 1 and never seqno 1: all of it lies above a gap."""
    for seqno in range(2, count + 2):
        engine.received(sender, encode_mcast(seqno, payload), now=2)


def held(engine: Nakack4Engine[str]) -> int:
    return sum(len(view.buffered) for _, view in engine.snapshot().windows[1:]) * PER_MESSAGE


def test_the_issue_reproduction_is_bounded_by_max_held_bytes() -> None:
    """The issue's reproduction at the default Config (one window: 64 MiB instead of 1 GB)."""
    engine = Nakack4Engine(Config(), me="A", members=["A", "B", "X"], now=0)
    limit = Config().max_held_bytes
    count = limit // PER_MESSAGE + 50  # 50 more than the bound admits
    flood(engine, "X", count, bytes(BIG))
    assert engine.stats.held_bytes_full == 50
    assert limit - PER_MESSAGE < held(engine) <= limit
    engine.check_invariants()


def test_a_flood_from_several_members_stays_within_the_bounds_in_memory() -> None:
    """Three members flooding 200 messages of 65,000 bytes each above a gap (39 MB unbounded):
    Python's allocations stay within max_receive_bytes (plus one datagram and a little bookkeeping),
    and each window within max_held_bytes."""
    per_window, total = 4 << 20, 6 << 20
    config = Config(max_held_bytes=per_window, max_receive_bytes=total)
    members = ["A", "X", "Y", "Z"]
    tracemalloc.start()
    try:
        engine = Nakack4Engine(config, me="A", members=members, now=0)
        baseline = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        payload = bytes(BIG)
        for sender in members[1:]:
            flood(engine, sender, 200, payload)
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()
    assert peak <= total + 4 * PER_MESSAGE, f"peak {peak} bytes"
    windows = dict(engine.snapshot().windows)
    assert all(len(windows[s].buffered) * PER_MESSAGE <= per_window for s in members[1:])
    assert held(engine) <= total and engine.stats.held_bytes_full == 600 - total // PER_MESSAGE
    engine.check_invariants()


def test_a_view_without_the_member_frees_what_its_window_held() -> None:
    engine = Nakack4Engine(Config(max_held_bytes=4 << 20, max_receive_bytes=4 << 20), me="A",
                           members=["A", "X", "Y"], now=0)
    flood(engine, "X", 100, bytes(BIG))
    flood(engine, "Y", 10, bytes(BIG))
    assert engine.stats.held_bytes_full > 0  # X filled the total: Y's were refused too
    engine.install_view(["A", "Y"], now=2)
    before = engine.stats.held_bytes_full
    flood(engine, "Y", 40, bytes(BIG))  # room again, for Y
    assert engine.stats.held_bytes_full == before
    engine.check_invariants()


@pytest.mark.parametrize("field", ["max_held_bytes", "max_receive_bytes"])
def test_the_bounds_are_validated(field: str) -> None:
    with pytest.raises(ValueError, match=f"Config.{field}: expected >= 1, got 0"):
        Config(**{field: 0})  # type: ignore[arg-type]


def test_a_bound_that_bites_costs_no_honest_message() -> None:
    """The liveness test: three members, A multicasts 30 messages of 20 kB with room for three held
    per window; every run with any one datagram lost delivers everything at B and C, in order,
    once, and the bound was reached."""
    size = 20_000
    config = Config(max_held_bytes=3 * (size + HELD_OVERHEAD), max_receive_bytes=3 * (size + HELD_OVERHEAD),
                    capacity=64, send_atomically=True)
    names = ("A", "B", "C")

    def payload(n: int) -> bytes:
        return spec_payload(n) + bytes(size - 8)

    def mcast(net: Net) -> None:
        for n in range(1, 31):
            net.engines["A"].multicast(payload(n), now=net.now)

    case = Case(lambda: {n: Nakack4Engine(config, me=n, members=names, now=0) for n in names}, [mcast],
                {(r, "A"): [payload(n) for n in range(1, 31)] for r in names}, 600_000, "held_bytes_full")
    outcome = sweep(case)
    assert outcome.failures == [], "\n".join(outcome.failures[:5])
    assert outcome.bites > 0


def test_the_own_window_is_not_bounded_by_it() -> None:
    """The bound concerns receive windows only: the own window is the send window (bounded by
    capacity and max_pending_sends), so a member's own multicasts are never refused by it."""
    engine = Nakack4Engine(Config(max_held_bytes=1, max_receive_bytes=1, send_atomically=True), me="A",
                           members=["A", "B"], now=0)
    for _ in range(5):
        engine.multicast(bytes(BIG), now=0)
    for dst, data in engine.datagrams_to_send():
        if dst == "A":
            engine.received("A", data, now=0)
    assert len(engine.deliveries()) == 5 and engine.stats.held_bytes_full == 0
