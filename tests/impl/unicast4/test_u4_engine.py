"""The UNICAST4 engine on its own: blocking sends tied to the connection, counted ACKs, the
16-bit conn_id wrap, JGRP-2929 and JGRP-2873 as the engine shows them, config and codec errors.

Invariants tested: a send on a full window is held (BLOCKED) and goes out, in seqno order, when an
ACK makes room; a connection that closes (CLOSED after CLOSING and conn_close_timeout, or the
channel stopping) fails every send blocked on it and says so (``failed_sends``), while CLOSING
alone keeps them blocked; with both timeouts 0 a send blocked on a dead peer stays blocked.
"""

from __future__ import annotations

import pytest
from u4_link import Link

from impl.common import SendWindowFull, spec_payload
from impl.unicast3.codec import encode as u3_encode
from impl.unicast4 import Config, SendStatus, Unicast4Engine, Variant
from impl.unicast4.codec import MAGIC, AckMsg, DataMsg, DecodeError, XmitReqMsg, decode, encode


def test_blocked_sends_go_out_in_order_when_acks_make_room() -> None:
    link = Link(Config(capacity=2))
    a = link.engines["A"]
    statuses = [a.send("B", spec_payload(n), now=0)[1] for n in range(1, 6)]
    assert statuses == [SendStatus.SENT] * 2 + [SendStatus.BLOCKED] * 3
    assert a.blocked_sends() == [("B", 3), ("B", 4), ("B", 5)]
    link._collect()
    link.run(rounds=5)
    assert link.got("A", "B") == [spec_payload(n) for n in range(1, 6)]
    assert a.blocked_sends() == [] and a.stats.sends_blocked == 3


def test_closing_keeps_blocked_sends_and_closed_fails_them() -> None:
    cfg = Config(capacity=1, conn_expiry_timeout=0, conn_close_timeout=1_000)
    a = Unicast4Engine(cfg, members=["A", "B"], now=0)
    a.send("B", b"1", now=0)
    assert a.send("B", b"2", now=0) == (2, SendStatus.BLOCKED)
    a.install_view(["A"], now=0)  # B left: CLOSING, the buffer stays open
    a.handle_timer(now=500)
    assert a.blocked_sends() == [("B", 2)] and a.failed_sends() == []
    a.handle_timer(now=1_000)  # conn_close_timeout: CLOSED
    assert a.blocked_sends() == [] and a.failed_sends() == [("B", 2, b"2")]
    assert a.snapshot(now=1_000).send == ()
    a.check_invariants()


def test_stop_fails_every_blocked_send() -> None:
    a = Unicast4Engine(Config(capacity=1), members=["A", "B", "C"], now=0)
    for dst in ("B", "C"):
        a.send(dst, b"x", now=0)
        a.send(dst, b"y", now=0)
    a.stop()
    assert sorted(a.failed_sends()) == [("B", 2, b"y"), ("C", 2, b"y")]
    a.check_invariants()


@pytest.mark.parametrize(("timeouts", "released"), [((0, 0), False), ((10_000, 10_000), True)])
def test_jgrp2929_a_dead_peer_releases_a_blocked_send_only_with_timeouts(timeouts: tuple[int, int],
                                                                       released: bool) -> None:
    expiry, close = timeouts
    a = Unicast4Engine(Config(capacity=1, conn_expiry_timeout=expiry, conn_close_timeout=close),
                       members=["A", "B"], now=0)
    a.send("B", b"1", now=0)
    a.send("B", b"2", now=0)  # B is dead: nothing ever acknowledges #1
    for t in range(500, 60_001, 500):
        a.handle_timer(now=t)
    assert (a.blocked_sends() == []) is released
    assert (a.failed_sends() == [("B", 2, b"2")]) is released


def test_zero_conn_timeouts_variant_ignores_the_configured_timeouts() -> None:
    a = Unicast4Engine(Config(capacity=1, variant=Variant(zero_conn_timeouts=True)), members=["A", "B"], now=0)
    a.send("B", b"1", now=0)
    a.send("B", b"2", now=0)
    for t in range(500, 60_001, 500):
        a.handle_timer(now=t)
    assert a.blocked_sends() == [("B", 2)]


def test_jgrp2873_dont_block_drops_only_under_the_variant() -> None:
    fixed = Unicast4Engine(Config(capacity=1, dont_block=True), members=["A", "B"], now=0)
    fixed.send("B", b"1", now=0)
    assert fixed.send("B", b"2", now=0) == (2, SendStatus.BLOCKED)
    old = Unicast4Engine(Config(capacity=1, dont_block=True, variant=Variant(drop_dont_block=True)),
                         members=["A", "B"], now=0)
    old.send("B", b"1", now=0)
    assert old.send("B", b"2", now=0) == (2, SendStatus.DROPPED)
    assert old.send("B", b"3", now=0) == (3, SendStatus.DROPPED)  # the seqno stays spent
    assert old.snapshot(now=0).send[0][1].seqno == 3


def test_conn_id_wrap_a_lower_conn_id_is_ignored_until_the_old_window_goes() -> None:
    link = Link(configs={"A": Config(first_conn_id=32_767, conn_expiry_timeout=0, conn_close_timeout=500),
                         "B": Config(conn_expiry_timeout=0, conn_close_timeout=0)})
    a, b = link.engines["A"], link.engines["B"]
    link.send("A", "B", b"1")
    link.run(rounds=2)
    a.install_view(["A"], now=link.now)  # A alone: the entry closes and is removed (no CLOSE: B left)
    link.run(rounds=3)
    assert a.snapshot(now=link.now).send == ()
    a.install_view(["A", "B"], now=link.now)
    link.send("A", "B", b"2")  # conn_id 0 after 32767
    link.run(rounds=5)
    assert link.got("A", "B") == [b"1"] and b.stats.lower_conn_id >= 1
    b.remove_receive_connection("A")  # B's old window goes (in JGroups: its expiry)
    link.run(rounds=5)
    assert link.got("A", "B") == [b"1", b"2"]


def test_counted_acks_ack_at_once_at_the_threshold_and_pend_below_it() -> None:
    b = Unicast4Engine(Config(capacity=8, ack_threshold=3), members=["A", "B"], now=0)
    b.received("A", encode(DataMsg(1, 0, True, b"1")), now=0)  # counts 1 (add) + 1 (delivered): pending
    assert b.datagrams_to_send() == [] and b.snapshot(now=0).recv[0][1].ack_pending
    b.received("A", encode(DataMsg(2, 0, False, b"2")), now=0)  # 3: ACK on add, with hd 1
    assert [decode(d) for _, d in b.datagrams_to_send()] == [AckMsg(1, 0, 1)]
    b.received("A", encode(DataMsg(2, 0, False, b"2")), now=0)  # a duplicate counts too
    assert b.snapshot(now=0).recv[0][1].acks_counted == 2


def test_send_limits_raise_without_changing_state() -> None:
    a = Unicast4Engine(Config(capacity=1, max_blocked_sends=2, max_blocked_bytes=10), members=["A", "B"], now=0)
    a.send("B", b"1", now=0)
    a.send("B", b"22222", now=0)
    with pytest.raises(SendWindowFull, match="max_blocked_bytes"):
        a.send("B", b"333333", now=0)
    a.send("B", b"3", now=0)
    before = a.snapshot(now=0)
    with pytest.raises(SendWindowFull, match="max_blocked_sends"):
        a.send("B", b"4", now=0)
    assert a.snapshot(now=0) == before


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("capacity", 0, ">= 1"), ("xmit_interval", 0, "> 0"), ("first_conn_id", 40_000, "in 0..32767"),
    ("dont_block", 1, "a bool"), ("max_blocked_bytes", 0, ">= 1"), ("conn_close_timeout", -1, ">= 0"),
])
def test_a_bad_config_is_one_line_naming_the_field(field: str, value: object, expected: str) -> None:
    with pytest.raises(ValueError) as error:
        Config(**{field: value})  # type: ignore[arg-type]
    assert field in str(error.value) and expected in str(error.value) and "\n" not in str(error.value)


def test_codec_has_its_own_magic_and_round_trips() -> None:
    for msg in (DataMsg(7, 32_767, True, b"p"), AckMsg(2**40, 3, 2**31 - 1), XmitReqMsg((3, 5, 900))):
        data = encode(msg)
        assert data[0] == MAGIC and decode(data) == msg
    with pytest.raises(DecodeError, match="magic"):
        decode(u3_encode(DataMsg(1, 0, True, b"p")))  # a UNICAST3 datagram is not a UNICAST4 one
    with pytest.raises(DecodeError):
        decode(b"")
