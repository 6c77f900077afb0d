"""NAKACK2 engine: ``received_batch`` (spec ``on_batch``, decision 16: JGroups' ``up(MessageBatch)``).

Invariants tested: a batch of MSGs (any order) delivers the in-order run once, in order; a batch's
HIGHEST_SEQNO is handled before its MSGs (an XMIT_REQ for a MSG of the same batch); XMIT_RSPs in a batch
are added (from their original sender only); a joiner queues every message of a batch; malformed
datagrams are counted and the rest received; a non-bytes datagram is refused before anything changes;
the loopback batch delivers the own window; an honest group losing any one datagram, all traffic in
bundles, under the smallest byte limits its window needs, delivers everything.
"""

from __future__ import annotations

import pytest

from impl.common import HELD_OVERHEAD, LocalProtocolError
from impl.nakack2 import Config, Nakack2Engine, spec_payload
from impl.nakack2.codec import HighestSeqnoMsg, NakXmitReqMsg, XmitRspMsg, decode, encode, encode_mcast
from impl.wire import XmitReqMsg

LIMITS = Config().codec_limits


def engine(me: str = "B", members: tuple[str, ...] = ("A", "B"), **settings: int | bool) -> Nakack2Engine[str]:
    return Nakack2Engine[str](Config(**settings), me=me, members=members, now=0)  # type: ignore[arg-type]


def mcast(seqno: int) -> bytes:
    return encode_mcast(seqno, spec_payload(seqno), LIMITS)


def delivered(e: Nakack2Engine[str]) -> list[int]:
    return [int.from_bytes(p, "big") for _, p in e.deliveries()]


def test_a_batch_delivers_its_run_once_in_order() -> None:
    b = engine()
    b.received_batch("A", [mcast(3), mcast(1), mcast(5), mcast(2), mcast(1)], now=1)
    assert delivered(b) == [1, 2, 3] and b.stats.old_or_duplicate == 1
    b.received_batch("A", [mcast(4)], now=1)
    assert delivered(b) == [4, 5]
    b.check_invariants()


def test_highest_seqno_of_a_batch_is_handled_before_its_msgs() -> None:
    b = engine()
    b.received_batch("A", [mcast(1), encode(HighestSeqnoMsg(1), LIMITS)], now=1)
    assert delivered(b) == [1]
    sent = [decode(d, LIMITS) for _, d in b.datagrams_to_send()]
    assert sent == [NakXmitReqMsg("A", XmitReqMsg((1,)))]


def test_xmit_rsps_in_a_batch_from_their_sender_only() -> None:
    b = engine(use_mcast_xmit=False)
    rsp = [encode(XmitRspMsg(s, n, spec_payload(n)), LIMITS) for s, n in (("A", 2), ("A", 1), ("C", 3))]
    b.received_batch("A", rsp, now=1)
    assert delivered(b) == [1, 2] and b.stats.xmit_rsp_foreign == 1


def test_a_joiner_queues_every_message_of_a_batch() -> None:
    b = engine(me="C", members=("A", "B"))
    b.received_batch("A", [mcast(1), encode(HighestSeqnoMsg(1), LIMITS), mcast(2)], now=1)
    assert b.stats.queued == 3 and delivered(b) == []


def test_bad_datagrams_are_counted_and_the_rest_received() -> None:
    b = engine()
    b.received_batch("A", [b"\x00garbage", mcast(1), b"", mcast(2)], now=1)
    assert delivered(b) == [1, 2]
    assert b.stats.malformed == 2 and b.stats.datagrams_received == 4
    b.received_batch("Z", [mcast(1), mcast(2)], now=1)  # a non-member's batch
    assert delivered(b) == [] and b.stats.data_without_window == 2


def test_a_non_bytes_datagram_is_refused_before_anything_changes() -> None:
    b = engine()
    with pytest.raises(LocalProtocolError, match="received_batch: each datagram must be bytes, got str"):
        b.received_batch("A", [mcast(1), "nope"], now=1)  # type: ignore[list-item]
    assert delivered(b) == [] and b.stats.datagrams_received == 0


def test_the_loopback_batch_delivers_the_own_window() -> None:
    a = engine(me="A")
    for n in (1, 2, 3):
        a.multicast(spec_payload(n), now=1)
    own = [d for peer, d in a.datagrams_to_send() if peer == "A"]
    a.received_batch("A", own[:2], now=1)
    assert delivered(a) == [1, 2, 3]
    a.received_batch("A", own[2:], now=1)
    assert delivered(a) == []


def _bundles(engines: dict[str, Nakack2Engine[str]], now: int, lose: list[int]) -> None:
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


@pytest.mark.parametrize("lost", range(1, 16))
def test_an_honest_group_losing_any_one_datagram_of_its_bundles_gets_everything(lost: int) -> None:
    held = 4 * (8 + HELD_OVERHEAD)  # the smallest limits a window of four undelivered needs
    engines = {n: engine(me=n, members=("A", "B", "C"), max_window_bytes=held, max_receive_bytes=2 * held,
                         xmit_interval=100, stable_interval=300) for n in ("A", "B", "C")}
    for n in (1, 2, 3, 4):
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
        assert [n for s, n in got[name] if s == "A"] == [1, 2, 3, 4], (name, lost)
        assert [n for s, n in got[name] if s == "B"] == [1], (name, lost)
        engines[name].check_invariants()
