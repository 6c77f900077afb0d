"""A full receive table does not lock an honest peer out (issue 18, item 4), both engines: with
``max_receive_entries`` windows held by one-datagram connections, a new sender's first DATA evicts
the entry idle longest once it has been idle ``receive_evict_idle``; a busy entry is never the one
evicted, and the evicted sender's traffic goes on (it resynchronises, nothing is lost or doubled)."""

from __future__ import annotations

from typing import Any

import pytest

from impl import common
from impl import unicast2 as u2
from impl import unicast3 as u3
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec

PROTOCOLS: dict[str, tuple[Any, Any, Any]] = {
    "unicast3": (u3.Config, u3.Unicast3Engine, u3_codec),
    "unicast2": (u2.Config, u2.Unicast2Engine, u2_codec),
}
ATTACKERS = [f"X{i}" for i in range(4)]


def first(codec: Any, payload: bytes, seqno: int = 1) -> bytes:
    return bytes(codec.encode(codec.DataMsg(seqno, 0, True, payload)))


def full_table(protocol: str, idle: int) -> tuple[Any, Any]:
    """Engine B whose four receive entries (the maximum) were opened at time 0 by attackers."""
    config, engine_class, codec = PROTOCOLS[protocol]
    b = engine_class(config(max_receive_entries=4, receive_evict_idle=idle), members=["B", "H"], now=0)
    for attacker in ATTACKERS:
        b.received(attacker, first(codec, attacker.encode()), now=0)
    b.deliveries()
    return b, codec


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_honest_peer_gets_in_once_an_entry_is_idle_long_enough(protocol: str) -> None:
    b, codec = full_table(protocol, idle=1_000)
    b.received("X0", bytes(codec.encode(codec.DataMsg(2, 0, False, b"busy"))), now=900)  # X0 stays busy
    b.received("H", first(codec, b"early"), now=999)  # every entry younger than 1 s: refused
    assert b.deliveries() == [("X0", b"busy")] and b.stats.receive_table_full == 1
    b.received("H", first(codec, b"hello"), now=1_000)  # X1 (idle since 0) makes room
    assert b.deliveries() == [("H", b"hello")]
    assert b.stats.receive_evicted == 1
    assert sorted(peer for peer, _ in b.snapshot(now=1_000).recv) == ["H", "X0", "X2", "X3"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_eviction_off_keeps_the_table_as_it_is(protocol: str) -> None:
    b, codec = full_table(protocol, idle=0)
    b.received("H", first(codec, b"hello"), now=10**9)
    assert b.deliveries() == [] and b.stats.receive_table_full == 1 and b.stats.receive_evicted == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_refused_first_messages_do_not_rescan_the_table(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """After one look found no entry idle enough, none can be until the earliest one ages: refused
    first DATA in between cost no scan (bounded work per attacker datagram)."""
    b, codec = full_table(protocol, idle=1_000)
    looks = []
    real_min = min

    def counting_min(*args: Any, **kwargs: Any) -> Any:
        looks.append(1)
        return real_min(*args, **kwargs)

    monkeypatch.setattr(common, "min", counting_min, raising=False)  # the scan is impl.common.evict_idlest's
    for now in range(100, 1_000, 100):
        b.received("H", first(codec, b"again"), now=now)
    assert len(looks) == 1 and b.stats.receive_table_full == 9
    b.received("H", first(codec, b"in"), now=1_000)
    assert len(looks) == 2 and b.deliveries() == [("H", b"in")]


def _exchange(engines: dict[str, Any], now: int) -> None:
    """Deliver every datagram in flight among ``engines`` (to members of the dict) until none."""
    moved = True
    while moved:
        moved = False
        for name, engine in engines.items():
            for dst, datagram in engine.datagrams_to_send():
                if dst in engines:
                    engines[dst].received(name, datagram, now=now)
                    moved = True


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_evicted_sender_resynchronises_and_loses_nothing(protocol: str) -> None:
    config, engine_class, codec = PROTOCOLS[protocol]
    cfg = config(max_receive_entries=4, receive_evict_idle=1_000)
    a = engine_class(cfg, members=["A", "B", "H"], now=0)
    b = engine_class(cfg, members=["A", "B", "H"], now=0)
    a.send("B", b"m1", now=0)
    _exchange({"A": a, "B": b}, now=0)
    for attacker in ATTACKERS[:3]:  # the table is full: A and three attackers
        b.received(attacker, first(codec, b"x"), now=10)
    b.received("H", first(codec, b"h"), now=1_000)  # A, idle since 0, is evicted
    assert b.stats.receive_evicted == 1
    for number in (2, 3):
        a.send("B", b"m%d" % number, now=1_100)
    now = 1_100
    for _ in range(20):  # retransmission runs until everything is delivered
        _exchange({"A": a, "B": b}, now=now)
        now += 5_000
        for engine in (a, b):
            engine.handle_timer(now=now)
    delivered = [payload for src, payload in b.deliveries() if src == "A"]
    assert delivered == [b"m1", b"m2", b"m3"]
