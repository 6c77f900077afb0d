"""No amplification between honest UNICAST2 engines (issue 18, item 2): once a receiver's table is
full, every DATA from a peer without a window used to answer with a SEND_FIRST_SEQNO, and every
SEND_FIRST_SEQNO with the whole unacknowledged range (JGRP-1874), so two honest engines exchanged
more datagrams every round without end. ``sync_min_interval`` bounds the requests per peer and
interval; the traffic per round then stays bounded, and once the table makes room (eviction)
everything is delivered, in order, once."""

from __future__ import annotations

from impl.unicast2 import Config, Unicast2Engine, codec

ROUND = 1_000  # ms between rounds: the retransmit task's period


def run_rounds(cfg: Config, rounds: int) -> tuple[list[int], list[bytes]]:
    """A sends five messages to B, whose receive table attackers filled at time 0; each round
    every datagram in flight arrives, then both retransmit tasks run. Datagrams per round, and what
    B delivered from A."""
    a = Unicast2Engine[str](cfg, members=["A", "B"], now=0)
    b = Unicast2Engine[str](cfg, members=["A", "B"], now=0)
    for i in range(cfg.max_receive_entries):
        b.received(f"X{i}", codec.encode(codec.DataMsg(1, 0, True, b"x")), now=0)
    b.datagrams_to_send()
    b.deliveries()
    for n in range(5):
        a.send("B", b"m%d" % n, now=0)
    flight = [("A", dst, d) for dst, d in a.datagrams_to_send()]
    per_round = []
    now = 0
    for _ in range(rounds):
        for src, dst, datagram in flight:
            (b if dst == "B" else a).received(src, datagram, now=now)
        now += ROUND
        a.handle_timer(now=now)
        b.handle_timer(now=now)
        flight = [("A", dst, d) for dst, d in a.datagrams_to_send()] + [
            ("B", dst, d) for dst, d in b.datagrams_to_send()]
        per_round.append(len(flight))
    return per_round, [payload for src, payload in b.deliveries() if src == "A"]


def test_the_unlimited_protocol_amplifies() -> None:
    """The behaviour the limit removes, kept visible: UNICAST2 as shipped (sync_min_interval = 0)."""
    per_round, _ = run_rounds(Config(max_receive_entries=4, receive_evict_idle=0, sync_min_interval=0), 12)
    assert per_round[-1] > 10 * per_round[0]


def test_traffic_stays_bounded_and_everything_arrives_once_there_is_room() -> None:
    per_round, delivered = run_rounds(Config(max_receive_entries=4, receive_evict_idle=10 * ROUND), 40)
    assert max(per_round) <= 10
    assert delivered == [b"m%d" % n for n in range(5)]
