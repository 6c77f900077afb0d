"""The NAKACK4 engine's API on its own: blocking sends held and resumed, the ACK purge, the codec's
round trip and its refusals, configuration errors, hostile input, and the names the engine shares
with the spec.

Invariant tested: a send on a full window never blocks the caller and never loses or duplicates
a message: it is held with its seqno and passed down, in seqno order, once ACKs purge the own
window; every member delivers every message exactly once, in order; malformed datagrams are
counted and dropped without changing the state.
"""

from __future__ import annotations

import random
from dataclasses import fields

import pytest

from impl.common import LocalProtocolError, SendWindowFull
from impl.nakack4 import Config, Nakack4Engine, SendStatus, Variant
from impl.nakack4 import tasks as engine_tasks
from impl.nakack4.codec import AckMsg, DecodeError, HighestSeqnoMsg, JoinRspMsg, McastMsg, XmitRspMsg, decode, encode
from impl.nakack4.state import ARMED, READY, STRANDED, STUCK
from spec import nakack4 as spec


def run(engines: dict[int, Nakack4Engine[int]], now: int = 0, drop: set[tuple[int, int]] | None = None,
        rounds: int = 1000) -> None:
    """Move datagrams between ``engines`` until quiet (those from src to dst in ``drop`` are lost)."""
    for _ in range(rounds):
        moved = False
        for src, engine in engines.items():
            for dst, data in engine.datagrams_to_send():
                moved = True
                if drop is None or (src, dst) not in drop:
                    engines[dst].received(src, data, now=now)
        if not moved:
            return
    raise AssertionError("too many rounds")


def group(config: Config, n: int = 3) -> dict[int, Nakack4Engine[int]]:
    return {m: Nakack4Engine(config, me=m, members=range(n), now=0) for m in range(n)}


def test_full_window_holds_the_send_and_an_ack_purge_resumes_it() -> None:
    g = group(Config(capacity=2, send_atomically=True))
    a = g[0]
    assert [a.multicast(p, now=0) for p in (b"1", b"2", b"3")] == [
        (1, SendStatus.SENT), (2, SendStatus.SENT), (3, SendStatus.BLOCKED)]
    assert a.held_sends == (3,)
    run(g)  # capacity 2: threshold 0, every delivery acks at once; the purge releases #3
    assert a.held_sends == ()
    assert a.send_events() == [(3, SendStatus.SENT)]
    for engine in g.values():
        assert [p for _, p in engine.deliveries()] == [b"1", b"2", b"3"]
        engine.check_invariants()
    assert a.snapshot().windows[0][1].low == 3  # everybody acked everything


def test_non_atomic_send_is_passed_down_at_once_when_there_is_room() -> None:
    g = group(Config(capacity=4))
    assert g[0].multicast(b"x", now=0) == (1, SendStatus.SENT)
    assert g[0].send_events() == []


def test_a_silent_member_blocks_the_sender_until_the_view_drops_it() -> None:
    g = group(Config(capacity=2, send_atomically=True))
    for p in (b"1", b"2", b"3"):
        g[0].multicast(p, now=0)
    run(g, drop={(2, 0)})  # C's ACKs never reach A
    assert g[0].held_sends == (3,)
    g[0].install_view([0, 1], now=1)  # JGRP-2853/2854: the view purges, #3 goes
    assert g[0].held_sends == ()
    assert g[0].send_events() == [(3, SendStatus.SENT)]


def test_drop_dont_block_variant_drops_on_a_full_window() -> None:
    cfg = Config(capacity=1, send_atomically=True, dont_block=True, variant=Variant(drop_dont_block=True))
    a = Nakack4Engine(cfg, me=0, members=[0, 1], now=0)
    assert a.multicast(b"1", now=0)[1] is SendStatus.SENT
    assert a.multicast(b"2", now=0) == (2, SendStatus.DROPPED)


def test_disconnect_fails_held_sends() -> None:
    a = Nakack4Engine(Config(capacity=1, send_atomically=True), me=0, members=[0, 1], now=0)
    a.multicast(b"1", now=0)
    assert a.multicast(b"2", now=0) == (2, SendStatus.BLOCKED)
    a.disconnect(now=1)
    assert a.send_events() == [(2, SendStatus.DROPPED)]
    assert a.multicast(b"3", now=1) == (0, SendStatus.NO_WINDOW)


def test_pending_sends_are_bounded() -> None:
    a = Nakack4Engine(Config(capacity=1, send_atomically=True, max_pending_sends=1), me=0, members=[0, 1], now=0)
    a.multicast(b"1", now=0)
    a.multicast(b"2", now=0)
    before = a.snapshot()
    with pytest.raises(SendWindowFull, match="max_pending_sends=1"):
        a.multicast(b"3", now=0)
    assert a.snapshot() == before


def test_lost_copy_is_repaired_by_highest_seqno_and_xmit_req() -> None:
    g = group(Config(capacity=8, ack_threshold=1, send_atomically=True))
    g[0].multicast(b"only", now=0)
    run(g, drop={(0, 2)})
    assert g[2].deliveries() == []
    for t in (1000, 2000, 3000):
        for engine in g.values():
            engine.handle_timer(now=t)
        run(g, now=t)
    assert [p for _, p in g[2].deliveries()] == [b"only"]


def test_delivery_fault_strands_or_sticks() -> None:
    for stuck, state in ((False, STRANDED), (True, STUCK)):
        cfg = Config(capacity=8, deliver_exceptions=True, variant=Variant(deliverer_stuck=stuck))
        g = group(cfg, 2)
        g[1].inject_delivery_fault(0, now=0)
        assert g[1].snapshot().deliverer == ((0, ARMED),)
        g[0].multicast(b"x", now=0)
        run(g)
        assert g[1].deliveries() == [] and g[1].snapshot().deliverer == ((0, state),)
    with pytest.raises(LocalProtocolError, match="not enabled"):
        group(Config(), 2)[1].inject_delivery_fault(0, now=0)
    assert READY == spec.READY


@pytest.mark.parametrize("msg", [McastMsg(7, b"p"), McastMsg(7, b"p", True), XmitRspMsg(1, 7, b"p", True), AckMsg(0),
                                 AckMsg(2**63 - 1), HighestSeqnoMsg(5), JoinRspMsg((1, 2), ((1, 0, 3), (2, 0, 0)))])
def test_codec_round_trip(msg: object) -> None:
    data = encode(msg)  # type: ignore[arg-type]
    assert data[0] == 0x34 and decode(data) == msg


@pytest.mark.parametrize("data", [b"", b"\x34", b"\x4e\x00\x01\x01\x00", b"\x34\x04\x00\x00", b"\x34\x08",
                                  b"\x34\x07", b"\x34\x07\x01\x00", b"\x34\x07\x00\x00",
                                  b"\x34\x81\x01", b"\x34\x87\x01", b"\x34\x84\x00\x00"])
def test_codec_refuses_malformed(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(data)


def test_malformed_datagrams_change_nothing() -> None:
    a = Nakack4Engine(Config(), me=0, members=[0, 1], now=0)
    before = a.snapshot()
    for data in (b"", b"\x34\x07\x09", b"junk", b"\x34\x00" + b"\xff" * 20):
        a.received(1, data, now=0)
    assert a.snapshot() == before and a.stats.malformed == 4


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"Config.capacity: expected >= 1, got 0"):
        Config(capacity=0)
    with pytest.raises(ValueError, match=r"Config.send_atomically: expected a bool"):
        Config(send_atomically=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Config.xmit_interval"):
        Config(xmit_interval=0)


def test_names_agree_with_the_spec() -> None:
    assert [f.name for f in fields(Variant)] == [f.name for f in fields(spec.Variant)]
    assert engine_tasks.TIMER_NAMES == spec.TIMER_NAMES
    assert (engine_tasks.XMIT, engine_tasks.BECOME_SERVER, engine_tasks.SEND, engine_tasks.DELIVER_FAULT) == (
        spec.XMIT, spec.BECOME_SERVER, spec.SEND, spec.DELIVER_FAULT)
    assert (ARMED, STUCK, STRANDED) == (spec.ARMED, spec.STUCK, spec.STRANDED)
    defaults, engine = spec.Config(members=1), Config()
    assert (defaults.capacity, defaults.become_server_queue_size, defaults.use_mcast_xmit, defaults.send_atomically) \
        == (engine.capacity, engine.become_server_queue_size, engine.use_mcast_xmit, engine.send_atomically)


def test_non_atomic_drop_dont_block_drops_at_once() -> None:
    cfg = Config(capacity=1, dont_block=True, variant=Variant(drop_dont_block=True))
    a = Nakack4Engine(cfg, me=0, members=[0, 1], now=0)
    assert a.multicast(b"1", now=0) == (1, SendStatus.SENT)
    assert a.multicast(b"2", now=0) == (2, SendStatus.DROPPED)
    assert a.held_sends == () and a.send_events() == []


def test_non_atomic_send_on_a_full_window_blocks_and_resumes_in_order() -> None:
    g = group(Config(capacity=1), 2)
    assert [g[0].multicast(p, now=0)[1] for p in (b"1", b"2", b"3")] == [
        SendStatus.SENT, SendStatus.BLOCKED, SendStatus.BLOCKED]
    assert g[0].blocked_sends == (2, 3)
    run(g)
    assert g[0].send_events() == [(2, SendStatus.SENT), (3, SendStatus.SENT)]
    assert [p for _, p in g[1].deliveries()] == [b"1", b"2", b"3"]


def test_a_join_under_traffic_with_small_windows_and_loss_delivers_everything() -> None:
    """Real time (handle_timer), seeded loss, windows of 4: A and B multicast, C joins through A,
    then C multicasts too; everybody ends with every message of every sender it has a window for,
    in order, and no send stays held."""
    rng = random.Random(7)
    cfg = Config(capacity=4, xmit_interval=100)
    g = {m: Nakack4Engine(cfg, me=m, members=[0, 1], now=0) for m in range(3)}
    got: dict[tuple[int, int], list[int]] = {}

    def pump(now: int, loss: float) -> None:
        for _ in range(50):
            moved = False
            for src, engine in g.items():
                for dst, data in engine.datagrams_to_send():
                    moved = True
                    if dst == src or rng.random() >= loss:
                        g[dst].received(src, data, now=now)
            for dst, engine in g.items():
                for src, payload in engine.deliveries():
                    got.setdefault((src, dst), []).append(payload[0])
            if not moved:
                return

    now = 0
    for n in range(1, 7):
        g[0].multicast(bytes([n]), now=now)
        g[1].multicast(bytes([n]), now=now)
        pump(now, 0.2)
        if n == 3:  # C joins through A while traffic flows
            g[0].answer_join(2, [0, 1, 2], now=now)
            g[0].install_view([0, 1, 2], now=now)
            g[1].install_view([0, 1, 2], now=now)
            pump(now, 0.0)
            g[2].become_server(now=now)
            g[2].multicast(b"\x01", now=now)
        now += 100
        for engine in g.values():
            engine.handle_timer(now=now)
    for _ in range(60):
        pump(now, 0.0)
        now += 100
        for engine in g.values():
            engine.handle_timer(now=now)
    for engine in g.values():
        assert engine.held_sends == ()
        engine.check_invariants()
    for src in (0, 1):
        for dst in (0, 1):
            assert got[src, dst] == list(range(1, 7)), (src, dst)
        at_c = got[src, 2]  # C's window starts at the join digest's hd: from there on, everything
        assert at_c == list(range(at_c[0], 7)) and dict(g[2].snapshot().windows)[src].delivered == 6, (src, at_c)
    assert all(got[2, dst] == [1] for dst in range(3))


def test_a_payload_too_big_for_a_datagram_is_refused_before_a_seqno_is_taken() -> None:
    from impl.wire import CodecLimits

    limits = CodecLimits(max_datagram=400, max_payload=400)
    a = Nakack4Engine(Config(codec_limits=limits, max_xmit_req_size=64), me=0, members=[0, 1], now=0)
    before = a.snapshot()
    with pytest.raises(LocalProtocolError, match="max_datagram=400"):
        a.multicast(bytes(390), now=0)
    assert a.snapshot() == before
    assert a.multicast(bytes(384), now=0) == (1, SendStatus.SENT)
    with pytest.raises(ValueError, match=r"Config.codec_limits: expected max_datagram >= 1302"):
        Config(codec_limits=limits)


# -- OOB (spec decision 18) ---------------------------------------------------------------------------
def test_an_oob_multicast_is_delivered_on_receipt_and_counts_towards_the_ack() -> None:
    """#1 lost on its way to B, the OOB #2 delivered at once; with ack_threshold 1 its delivery acks at
    once with B's hd from before the removal (0), then the retransmitted #1 delivers #1 alone and
    acks 2; every member ends with both, once each."""
    g = group(Config(capacity=4, ack_threshold=1, send_atomically=True), n=2)
    a, b = g[0], g[1]
    a.multicast(b"1", now=0)
    for dst, data in a.datagrams_to_send():
        if dst == 0:
            a.received(0, data, now=0)  # the loopback; the copy to B is lost
    run(g)  # A's ACK to itself
    a.multicast(b"2", now=0, oob=True)
    sent = a.datagrams_to_send()
    assert [decode(data) for _, data in sent] == [McastMsg(2, b"2", True)] * 2
    for dst, data in sent:
        g[dst].received(0, data, now=0)
    assert [p for _, p in b.deliveries()] == [b"2"]
    assert [decode(data) for dst, data in b.datagrams_to_send() if dst == 0] == [AckMsg(0)]
    window = dict(b.snapshot().windows)[0]
    assert (window.delivered, window.buffered) == (0, ((2, b""),))  # the placeholder: no payload
    for now in range(1, 6):
        b.fire_timer(engine_tasks.XMIT, now=now)
        run(g, now=now)
    assert [p for _, p in b.deliveries()] == [b"1"] and [p for _, p in a.deliveries()] == [b"1", b"2"]
    # B's ACK 2 came; A's own OOB loopback acked its hd from before the removal (1), and with the
    # threshold at 1 nothing acks again: A's window keeps #2 (models/nakack4/oob-ack-threshold-1.toml)
    assert a.snapshot().ack_table == ((0, 1), (1, 2)) and a.snapshot().windows[0][1].low == 1
    for engine in g.values():
        engine.check_invariants()


def test_an_oob_mix_survives_any_one_lost_datagram() -> None:
    """Whichever single datagram between two members is lost (each in turn), every member delivers
    all four multicasts exactly once and no send stays held (capacity 2: senders block; ack_threshold 2,
    since with the default 0 a lost ACK is never resent: models/nakack4/lost-ack-threshold-0.toml)."""
    for k in range(30):
        count = [0]
        g = group(Config(capacity=2, ack_threshold=2, send_atomically=True))
        for n in range(1, 5):
            g[0].multicast(bytes([n]), now=0, oob=n in (2, 3))
        for now in range(0, 40_000, 500):
            for src, engine in g.items():
                for dst, data in engine.datagrams_to_send():
                    if src != dst:
                        count[0] += 1
                        if count[0] == k + 1:
                            continue
                    g[dst].received(src, data, now=now)
            for engine in g.values():
                engine.handle_timer(now=now) if engine.get_timer() <= now else None
        for engine in g.values():
            assert sorted(p for s, p in engine.deliveries() if s == 0) == [bytes([n]) for n in range(1, 5)], k
            assert engine.held_sends == ()
            engine.check_invariants()


def test_multicast_refuses_a_non_bool_oob_without_any_change() -> None:
    a = group(Config())[0]
    before = a.snapshot()
    with pytest.raises(LocalProtocolError, match="oob must be a bool"):
        a.multicast(b"p", now=0, oob="yes")  # type: ignore[arg-type]
    assert a.snapshot() == before and a.datagrams_to_send() == []
