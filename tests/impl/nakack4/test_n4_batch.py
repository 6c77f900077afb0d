"""NAKACK4 engine: ``received_batch`` (spec ``on_batch``, decision 17: JGroups' ``up(MessageBatch)``).

Invariants tested: a batch of MSGs delivers the in-order run once, in order, as one delivered batch that
counts once towards the ACK (three at ack_threshold 2: ACK(3) at once and nothing pending, where one by
one leaves one pending); a batch's ACKs are taken as the highest one, and a sender blocked on a full
window is released by it; a batch's HIGHEST_SEQNO is handled before its MSGs; a failing deliverer strands
the whole batch; malformed datagrams are counted and the rest received; a non-bytes datagram is refused
before anything changes; an honest group losing any one datagram, all traffic in bundles, under the
smallest byte limits its windows need, delivers everything.
"""

from __future__ import annotations

import pytest

from impl.common import HELD_OVERHEAD, LocalProtocolError, spec_payload
from impl.nakack4 import Config, Nakack4Engine
from impl.nakack4.codec import AckMsg, HighestSeqnoMsg, NakXmitReqMsg, decode, encode, encode_mcast
from impl.wire import XmitReqMsg

LIMITS = Config().codec_limits


def engine(me: str = "B", members: tuple[str, ...] = ("A", "B"), **settings: int | bool) -> Nakack4Engine[str]:
    return Nakack4Engine[str](Config(**settings), me=me, members=members, now=0)  # type: ignore[arg-type]


def mcast(seqno: int) -> bytes:
    return encode_mcast(seqno, spec_payload(seqno), LIMITS)


def delivered(e: Nakack4Engine[str]) -> list[int]:
    return [int.from_bytes(p, "big") for _, p in e.deliveries()]


def sent(e: Nakack4Engine[str]) -> list[object]:
    return [decode(d, LIMITS) for _, d in e.datagrams_to_send()]


def test_one_ack_decision_per_delivered_batch() -> None:
    b = engine(ack_threshold=2)
    b.received_batch("A", [mcast(2), mcast(1), mcast(3)], now=1)
    assert delivered(b) == [1, 2, 3] and sent(b) == [AckMsg(3)]
    view = b.snapshot()
    assert view.ack_pending == frozenset() and view.acks_counted == ()
    one = engine(ack_threshold=2)
    for n in (1, 2, 3):
        one.received("A", mcast(n), now=1)
    assert sent(one) == [AckMsg(2)] and one.snapshot().ack_pending == frozenset({"A"})


def test_the_highest_ack_of_a_batch_releases_a_blocked_sender() -> None:
    a = engine(me="A", capacity=1, send_atomically=True)
    a.multicast(spec_payload(1), now=1)
    for _ in range(2):  # the own copy, then the own ACK, loop back
        for dst, data in a.datagrams_to_send():
            if dst == "A":
                a.received("A", data, now=1)
    a.multicast(spec_payload(2), now=1)  # blocked: the window holds #1 until B acks it
    assert [p for p, _ in a.datagrams_to_send()] == []
    a.received_batch("B", [encode(AckMsg(0), LIMITS), encode(AckMsg(1), LIMITS)], now=2)
    assert sorted(p for p, _ in a.datagrams_to_send()) == ["A", "B"]


def test_highest_seqno_of_a_batch_is_handled_before_its_msgs() -> None:
    b = engine(ack_threshold=5)
    b.received_batch("A", [mcast(1), encode(HighestSeqnoMsg(1), LIMITS)], now=1)
    assert delivered(b) == [1] and sent(b) == [NakXmitReqMsg("A", XmitReqMsg((1,)))]
    assert b.snapshot().acks_counted == (("A", 2),)


def test_a_failing_deliverer_strands_the_whole_batch() -> None:
    b = engine(ack_threshold=5, deliver_exceptions=True)
    b.inject_delivery_fault("A", now=1)  # the next batch throws
    b.received_batch("A", [mcast(1), mcast(2)], now=1)
    assert delivered(b) == []
    b.received("A", mcast(2), now=1)  # a duplicate runs the removal again
    assert delivered(b) == [1, 2]


def test_bad_datagrams_are_counted_and_the_rest_received() -> None:
    b = engine()
    b.received_batch("A", [b"\x00garbage", mcast(1), b"", mcast(2)], now=1)
    assert delivered(b) == [1, 2] and b.stats.malformed == 2 and b.stats.datagrams_received == 4


def test_a_non_bytes_datagram_is_refused_before_anything_changes() -> None:
    b = engine()
    with pytest.raises(LocalProtocolError, match="received_batch: each datagram must be bytes, got int"):
        b.received_batch("A", [mcast(1), 7], now=1)  # type: ignore[list-item]
    assert delivered(b) == [] and b.stats.datagrams_received == 0


def _bundles(engines: dict[str, Nakack4Engine[str]], now: int, lose: list[int]) -> None:
    """Every engine's output handed over as one batch per (sender, destination); the datagram whose
    running number is ``lose[0]`` (counted over the traffic between members: a loopback copy is
    never lost, multicast world rule 3) is lost."""
    for src, e in engines.items():
        out: dict[str, list[bytes]] = {}
        for dst, data in e.datagrams_to_send():
            lose[1] += dst != src
            if dst == src or lose[1] != lose[0]:
                out.setdefault(dst, []).append(data)
        for dst, batch in out.items():
            engines[dst].received_batch(src, batch, now=now)


@pytest.mark.parametrize("lost", range(1, 20))
def test_an_honest_group_losing_any_one_datagram_of_its_bundles_gets_everything(lost: int) -> None:
    held = 4 * (8 + HELD_OVERHEAD)  # the smallest limits a window of four undelivered needs
    engines = {n: engine(me=n, members=("A", "B", "C"), capacity=4, ack_threshold=2, max_held_bytes=held,
                         max_receive_bytes=2 * held, xmit_interval=100) for n in ("A", "B", "C")}
    for n in (1, 2, 3, 4, 5, 6):
        engines["A"].multicast(spec_payload(n), now=1)
    engines["B"].multicast(spec_payload(1), now=1)
    got: dict[str, list[tuple[str, int]]] = {n: [] for n in engines}
    lose = [lost, 0]
    for now in range(1, 60):
        _bundles(engines, now * 100, lose)
        for name, e in engines.items():
            got[name] += [(s, int.from_bytes(p, "big")) for s, p in e.deliveries()]
            e.handle_timer(now=max(e.get_timer(), now * 100))
    for name in engines:
        assert [n for s, n in got[name] if s == "A"] == [1, 2, 3, 4, 5, 6], (name, lost)
        assert [n for s, n in got[name] if s == "B"] == [1], (name, lost)
        engines[name].check_invariants()
