"""The engine's message cache (JGRP-2327, ``impl/unicast3/cache.py``): what it does for an honest
sender, and its limits against a hostile one.

Invariants tested: a reordered first message costs no retransmission; the cache is a set (a copy
adds nothing); a drain drops DATA of another connection; the cache never holds more than
``max_cached_messages`` DATA or ``max_cache_bytes`` bytes, whatever a flood sends, and the memory it
takes stays within its byte bound (tracemalloc); a full cache evicts only senders idle for
``cache_evict_idle``; and whatever the limits refuse costs latency only: an honest sender that loses
any one datagram of a run still gets every message to the receiver, in order, once.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import pytest
from u3_link import Link

from impl.unicast3 import Config, Unicast3Engine, Variant, spec_payload
from impl.unicast3.cache import CACHE_OVERHEAD, QUEUE_OVERHEAD
from impl.unicast3.codec import DataMsg, SendFirstSeqnoMsg, WireMsg, encode


def data(seqno: int, conn_id: int = 0, payload: bytes | None = None) -> bytes:
    """A non-first DATA (a first one when ``seqno`` is 1)."""
    return encode(DataMsg(seqno, conn_id, seqno == 1, spec_payload(seqno) if payload is None else payload))


def cached(engine: Unicast3Engine[str]) -> dict[str, set[int]]:
    return {peer: {seqno for seqno, _, _ in msgs} for peer, msgs in engine.snapshot(now=0).cache}


def test_a_reordered_first_message_costs_no_retransmission() -> None:
    first_held = Link(hold=lambda src, dst, msg: isinstance(msg, DataMsg) and msg.seqno == 1 and src == "A")
    first_held.send("A", "B", 1, 2, 3)
    assert cached(first_held["B"]) == {"A": {2, 3}} and first_held.got("B") == []
    first_held.release()
    assert first_held.got("B") == [1, 2, 3] and cached(first_held["B"]) == {}
    first_held.run_until(5_000)
    sent = [m.seqno for m in first_held.sent(DataMsg, "A")]
    assert sorted(sent) == [1, 1, 2, 3]  # the originals and the first-marked answer to SEND_FIRST_SEQNO
    assert dict(first_held["A"].snapshot(now=5_000).send)["B"].unacked == ()


def test_the_cache_is_a_set_and_a_drain_drops_other_connections() -> None:
    b = Unicast3Engine[str](Config(), members=["A", "B"], now=0)
    for datagram in (data(2), data(2), data(3), data(2, conn_id=5)):
        b.received("A", datagram, now=0)
    assert b.stats.cached == 3 and cached(b) == {"A": {2, 3}}
    b.received("A", data(1), now=0)  # the first DATA of connection 0 drains the cache
    assert [payload for _, payload in b.deliveries()] == [spec_payload(s) for s in (1, 2, 3)]
    assert b.stats.cache_dropped == 1 and cached(b) == {}
    b.check_invariants()


def test_no_message_cache_drops_as_3x_did() -> None:
    b = Unicast3Engine[str](Config(variant=Variant(no_message_cache=True)), members=["A", "B"], now=0)
    b.received("A", data(2), now=0)
    assert b.stats.cached == 0 and b.stats.data_without_window == 1 and cached(b) == {}


def test_one_sender_cannot_cache_more_than_max_cached_messages() -> None:
    b = Unicast3Engine[str](Config(max_cached_messages=100), members=["B"], now=0)
    for seqno in range(2, 10_002):
        b.received("H", data(seqno, conn_id=3), now=0)
    assert b.stats.cached == 100 and b.stats.cache_full == 9_900
    b.check_invariants()


def test_a_flood_from_many_senders_stays_within_max_cache_bytes() -> None:
    """10,000 senders, each sending DATA of 4,000 bytes without a window: the cache holds at most
    ``max_cache_bytes`` as it counts them, and the memory it keeps, measured, stays below that."""
    limit = 1 << 20
    b = Unicast3Engine[str](Config(max_cache_bytes=limit, max_receive_entries=64), members=["B"], now=0)
    flood = [(f"S{i:05d}", data(2 + i % 7, conn_id=1, payload=bytes([i % 251]) * 4_000)) for i in range(10_000)]
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for sender, datagram in flood:
            b.received(sender, datagram, now=0)
        b.datagrams_to_send()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    b.check_invariants()
    held = sum(len(msgs) * (4_000 + CACHE_OVERHEAD) + QUEUE_OVERHEAD for _, msgs in b.snapshot(now=0).cache)
    assert held <= limit and b.stats.cached == limit // (4_000 + CACHE_OVERHEAD + QUEUE_OVERHEAD)
    assert b.stats.cache_full == 10_000 - b.stats.cached
    assert grown < limit + (64 << 10)  # the cache, the 64-peer rate-limit table and little else


def test_a_full_cache_evicts_only_senders_idle_for_cache_evict_idle() -> None:
    b = Unicast3Engine[str](Config(max_cached_messages=4, cache_evict_idle=60_000), members=["A", "B"], now=0)
    for seqno in range(2, 6):
        b.received("D", data(seqno, conn_id=2), now=0)  # D never comes back
    b.received("A", data(2), now=59_999)
    assert b.stats.cache_full == 1 and cached(b) == {"D": {2, 3, 4, 5}}
    b.received("A", data(2), now=60_000)  # D has been idle for cache_evict_idle: evicted whole
    assert b.stats.cache_evicted == 4 and cached(b) == {"A": {2}}
    b.check_invariants()
    c = Unicast3Engine[str](Config(max_cached_messages=4, cache_evict_idle=0), members=["A", "B"], now=0)
    for seqno in range(2, 6):
        c.received("D", data(seqno, conn_id=2), now=0)
    c.received("A", data(2), now=10**9)
    assert c.stats.cache_evicted == 0 and c.stats.cache_full == 1  # 0: never evicts


def _flooded(engine: Unicast3Engine[str]) -> None:
    """A hostile sender fills the whole cache (and keeps it: no eviction in this configuration)."""
    seqno = 2
    while engine.stats.cache_full == 0:
        engine.received("H", data(seqno, conn_id=9), now=0)
        seqno += 1
    engine.datagrams_to_send()  # its SEND_FIRST_SEQNO to H, which is no engine of the link


LIMITED: dict[str, tuple[Config, Callable[[Unicast3Engine[str]], None] | None]] = {
    "roomy": (Config(), None),
    "one message": (Config(max_cached_messages=1), None),
    "full of a flood": (Config(max_cached_messages=64, cache_evict_idle=0), _flooded),
}


def _honest_run(config: Config, flood: Callable[[Unicast3Engine[str]], None] | None, lost: int) -> tuple[Link, int]:
    """A sends #1..#5 to B, then B's window is removed and A sends #6..#8 (the cache's two uses: a
    reordered first message, a sender without a window); datagram number ``lost`` of the run is
    lost (-1: none). Returns the link after every retransmission ran, and how many datagrams went."""
    counter = iter(range(10**6))

    def drop(src: str, dst: str, msg: WireMsg) -> bool:
        return next(counter) == lost

    link = Link(config, drop=drop)
    if flood is not None:
        flood(link["B"])
    link.send("A", "B", 1, 2, 3, 4, 5)
    link.run_until(1_000)
    link["B"].remove_receive_connection("A")
    link.send("A", "B", 6, 7, 8)
    link.run_until(60_000)
    return link, next(counter)


@pytest.mark.parametrize("setting", sorted(LIMITED))
def test_an_honest_sender_losing_any_one_datagram_still_gets_everything_through(setting: str) -> None:
    """The limits only cost latency: whichever datagram of the run is lost (DATA, first-marked
    answer, SEND_FIRST_SEQNO, ACK, XMIT_REQ), B delivers #1..#5 and then, in its new window, #6..#8
    (and A's #1..#5 again only if the new window began below them: never here, #1..#5 were acked
    before the removal, or are resent marked first)."""
    config, flood = LIMITED[setting]
    _, datagrams = _honest_run(config, flood, -1)
    assert datagrams > 8
    for lost in range(datagrams):
        link, _ = _honest_run(config, flood, lost)
        got = link.got("B")
        assert got[:5] == [1, 2, 3, 4, 5] and got[-3:] == [6, 7, 8], (setting, lost, got)
        assert sorted(set(got)) == list(range(1, 9)) and len(got) <= 8 + 5, (setting, lost, got)
        assert dict(link["A"].snapshot(now=link.now).send)["B"].unacked == (), (setting, lost)
        link["B"].check_invariants()


def test_the_limits_are_exercised_by_the_honest_runs() -> None:
    """The runs above really meet the limits: the flooded cache refuses the honest sender's DATA,
    and recovery then needs the SEND_FIRST_SEQNO path."""
    link, _ = _honest_run(*LIMITED["full of a flood"], -1)
    assert link["B"].stats.cache_full == 1 + 3  # the flood's last one, then A's #6..#8
    assert link.sent(SendFirstSeqnoMsg, "B")
    roomy, _ = _honest_run(*LIMITED["roomy"], -1)
    assert roomy["B"].stats.cached >= 2 and roomy["B"].stats.cache_full == 0
