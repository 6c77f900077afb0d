"""Scenario tests: two engines on a virtual clock, loss by omission, state asserted along the way.

Each test names the JGroups behaviour (or historical bug) it pins. Times are ms; with the
default xmit_interval the retransmit task runs at 500, 1000, 1500, ...
"""

from __future__ import annotations

import pytest
from u3_link import Drop, Link

from impl.unicast3 import Config, RecvView, SendView, Variant, spec_payload
from impl.unicast3.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg
from spec import unicast3 as u3


def data(seqno: int) -> Drop:
    """A drop/hold predicate: the first transmission of DATA ``seqno`` from A."""
    seen: set[int] = set()

    def match(src: str, dst: str, msg: WireMsg) -> bool:
        if isinstance(msg, DataMsg) and msg.seqno == seqno and seqno not in seen:
            seen.add(seqno)
            return True
        return False

    return match


def payloads(*ns: int) -> tuple[bytes, ...]:
    return tuple(spec_payload(n) for n in ns)


def test_normal_delivery_then_one_ack_then_quiet() -> None:
    link = Link()
    link.send("A", "B", 1, 2, 3)
    assert link.got("B") == [1, 2, 3]
    assert [m.seqno for m in link.sent(DataMsg)] == [1, 2, 3]
    assert [m.first for m in link.sent(DataMsg)] == [True, False, False]
    assert dict(link["A"].snapshot(now=0).send)["B"] == SendView(0, u3.OPEN, 0, payloads(1, 2, 3), (0, 0), 0)
    assert dict(link["B"].snapshot(now=0).recv)["A"] == RecvView(0, u3.OPEN, 3, (), True)
    assert link["A"].get_timer() == 500
    link.run_until(500)
    assert link.sent(AckMsg) == [AckMsg(3, 0, 1)]  # one cumulative ACK, timestamp 1
    # A's run at 500 came before the ACK arrived: its watermark is still (HA, HS) = (0, 3).
    assert dict(link["A"].snapshot(now=500).send)["B"] == SendView(0, u3.OPEN, 3, (), (0, 3), 1)
    link.run_until(5_000)
    assert len(link.log) == 4  # nothing more: no retransmission, no further ACK
    assert link["A"].get_timer() == 5_500  # the run at 5000 happened


@pytest.mark.parametrize("cached", [True, False], ids=["as-shipped", "no_message_cache"])
def test_first_message_lost_is_recovered_by_send_first_seqno(cached: bool) -> None:
    """JGRP-1563/1875: B has no window for non-first DATA and asks A once (rate limit). As shipped
    (JGRP-2327) B caches #2 and #3 and delivers them with the first-marked #1; without the cache
    (3.x) it drops them and they come back by the HS resend and an XMIT_REQ."""
    link = Link(Config(variant=Variant(no_message_cache=not cached)), drop=data(1))
    link.send("A", "B", 1, 2, 3)
    assert link.sent(SendFirstSeqnoMsg, "B") == [SendFirstSeqnoMsg(1)]  # for 2; 3 is rate-limited
    assert link["B"].stats.data_without_window == 2
    assert link["B"].stats.cached == (2 if cached else 0)
    # A answered with its lowest unacked message marked first: B opened the window and delivered 1.
    assert link.sent(DataMsg, "A")[-1] == DataMsg(1, 0, True, spec_payload(1))
    assert link.got("B") == ([1, 2, 3] if cached else [1])
    assert link["B"].snapshot(now=0).sync_sent == frozenset({"A"})
    assert link["B"].snapshot(now=0).cache == ()
    link.run_until(3_000)
    assert link.got("B") == [1, 2, 3]  # without the cache: 3 by HS resend, then 2 by XMIT_REQ
    assert (XmitReqMsg((2,)) in link.sent(XmitReqMsg, "B")) is not cached
    assert (link.sent(DataMsg, "A", since=1) == []) is cached  # no retransmission after the first-marked 1
    assert dict(link["A"].snapshot(now=3_000).send)["B"].unacked == ()
    assert link["B"].snapshot(now=3_000).sync_sent == frozenset()  # sync_min_interval passed


@pytest.mark.parametrize("variant", [Variant(), Variant(no_hs_resend=True)], ids=["default", "no_hs_resend"])
def test_last_message_lost_comes_back_by_hs_resend(variant: Variant) -> None:
    """JGRP-1548: nobody sees a gap after the last message; A resends HS while (HA, HS) stalls."""
    link = Link(Config(variant=variant), drop=data(3))
    link.send("A", "B", 1, 2, 3)
    assert link.got("B") == [1, 2]
    link.run_until(500)  # B acks 2; A records watermark (0, 3) before the ACK arrives
    assert dict(link["A"].snapshot(now=500).send)["B"].watermark == (0, 3)
    link.run_until(1_000)  # (2, 3) differs from (0, 3): watermark moves, nothing resent
    assert [m.seqno for m in link.sent(DataMsg, "A", since=1)] == []
    link.run_until(1_500)  # (2, 3) unchanged: resend 3 with its original header
    if variant.no_hs_resend:
        link.run_until(20_000)
        assert link.got("B") == [1, 2]  # the historical bug: 3 is never delivered
        return
    assert link.sent(DataMsg, "A", since=1) == [DataMsg(3, 0, False, spec_payload(3))]
    assert link.got("B") == [1, 2, 3]
    link.run_until(2_500)
    assert dict(link["A"].snapshot(now=2_500).send)["B"].unacked == ()


def test_receiver_reset_resyncs_with_send_first_seqno() -> None:
    """removeReceiveConnection at B: the next DATA from A finds no window; A resends its lowest
    unacked message as first and B opens a new window there (no duplicates: 1..3 were acked)."""
    link = Link()
    link.send("A", "B", 1, 2, 3)
    link.run_until(1_000)
    link["B"].remove_receive_connection("A")
    assert link["B"].snapshot(now=1_000).recv == ()
    link.send("A", "B", 4)
    assert link.sent(SendFirstSeqnoMsg, "B") == [SendFirstSeqnoMsg(2)]  # ts 1 was the ACK
    assert link.sent(DataMsg, "A")[-1] == DataMsg(4, 0, True, spec_payload(4))
    assert link.got("B") == [1, 2, 3, 4]
    assert dict(link["B"].snapshot(now=1_000).recv)["A"] == RecvView(0, u3.OPEN, 4, (), True)


@pytest.mark.parametrize("timestamps", [True, False], ids=["timestamps", "no_timestamps"])
def test_delayed_ack_from_before_a_reset_is_ignored(timestamps: bool) -> None:
    """JGRP-1873: an ACK from B's old window, delayed past B's reset and resync, must not purge
    what B's new window still needs. With timestamps it is older than the SEND_FIRST_SEQNO and
    ignored; without them (the historical bug) it purges 2 and B's new window stalls forever."""
    link = Link(Config(variant=Variant(no_timestamps=not timestamps)))
    link.hold = lambda s, d, m: isinstance(m, AckMsg)
    link.send("A", "B", 1, 2)
    link.run_until(500)
    assert len(link.held) == 1  # ACK(2) is in the network
    link.hold = None
    link["B"].remove_receive_connection("A")
    link.drop = data(3)  # so B's new window must start below 3
    link.send("A", "B", 3)
    link.run_until(1_499)  # at 1000 A's watermark moved to (0, 3); no resend yet
    assert link.got("B") == [1, 2]
    link.run_until(1_500)  # HS resend of 3 -> B: no window -> SEND_FIRST_SEQNO -> A resends 1 (first)
    assert link.sent(SendFirstSeqnoMsg, "B") == [SendFirstSeqnoMsg(0 if not timestamps else 2)]
    assert link.got("B") == [1, 2, 1]  # B's new window starts at 0: 1 is a new-incarnation duplicate
    link.release()  # the old ACK(2) arrives now
    send = dict(link["A"].snapshot(now=1_500).send)["B"]
    link.run_until(10_000)
    if timestamps:
        assert send.acked < 2 and link["A"].stats.stale_timestamps == 1
        assert link.got("B") == [1, 2, 1, 2, 3]
        assert dict(link["A"].snapshot(now=10_000).send)["B"].unacked == ()
    else:
        assert send.acked == 2  # spurious purge: 2 is gone from A, B's window needs it
        assert link.got("B") == [1, 2, 1]
        assert dict(link["B"].snapshot(now=10_000).recv)["A"].delivered == 1


def test_view_change_closes_and_removes_without_close_for_non_members() -> None:
    """JGRP-1586: a view without B makes A's entries CLOSING (still retransmitting); after
    conn_close_timeout they are removed, and no CLOSE goes to a non-member."""
    link = Link(Config(conn_expiry_timeout=0, conn_close_timeout=2_000))
    link.drop = data(2)
    link.send("A", "B", 1, 2)
    link.drop = None
    link["A"].install_view(["A"], now=0)
    assert dict(link["A"].snapshot(now=0).send)["B"].state == u3.CLOSING
    link.run_until(1_500)
    assert link.got("B") == [1, 2]  # CLOSING still retransmits (HS resend at 1000)
    link.run_until(2_000)  # age 2000: removed
    assert link["A"].snapshot(now=2_000).send == ()
    assert link.sent(CloseMsg) == []
    link.send("A", "B", 3)  # a new connection, conn_id 1, opens a new window at B
    assert link.sent(DataMsg, "A")[-1] == DataMsg(1, 1, True, spec_payload(3))
    assert dict(link["B"].snapshot(now=2_000).recv)["A"].conn_id == 1
    assert link["B"].stats.windows_replaced == 1


def test_view_change_back_reopens_and_close_connection_sends_close() -> None:
    """A CLOSING entry reopens when the peer is back in the view; closeConnection on a member
    leads to removal with CLOSE(conn_id), which removes B's matching receive entry."""
    link = Link(Config(conn_expiry_timeout=0, conn_close_timeout=2_000))
    link.send("A", "B", 1)
    link["A"].install_view(["A"], now=0)
    link.run_until(1_000)
    link["A"].install_view(["A", "B"], now=1_000)
    assert dict(link["A"].snapshot(now=1_000).send)["B"].state == u3.OPEN
    link["A"].close_connection("B", now=1_000)
    link.run_until(2_999)
    assert link["A"].snapshot(now=2_999).send != ()  # CLOSING for 1999 ms only
    link.run_until(3_000)
    assert link.sent(CloseMsg, "A") == [CloseMsg(0)]
    assert link["A"].snapshot(now=3_000).send == ()
    assert link["B"].snapshot(now=3_000).recv == ()


def test_receiver_side_closing_flushes_acks_then_removes() -> None:
    link = Link(Config(conn_expiry_timeout=0, conn_close_timeout=1_000))
    link.send("A", "B", 1)
    link["B"].install_view(["B"], now=0)
    assert dict(link["B"].snapshot(now=0).recv)["A"] == RecvView(0, u3.CLOSING, 1, (), True)
    link.run_until(1_000)
    assert link.sent(AckMsg, "B") == [AckMsg(1, 0, 1)]
    assert link["B"].snapshot(now=1_000).recv == ()
    link.send("A", "B", 2)  # no window any more: B resyncs
    assert link.got("B") == [1, 2]


def test_idle_connections_expire_then_reopen_with_a_new_conn_id() -> None:
    """conn_expiry_timeout: idle OPEN -> CLOSING; conn_close_timeout later: removed, CLOSE sent
    (B is a member). Minimum lifetime after the last activity is the sum of the two."""
    link = Link(Config(conn_expiry_timeout=1_000, conn_close_timeout=2_000))
    link.send("A", "B", 1)
    link.run_until(999)
    assert dict(link["A"].snapshot(now=999).send)["B"].state == u3.OPEN
    link.run_until(1_000)
    assert dict(link["A"].snapshot(now=1_000).send)["B"].state == u3.CLOSING
    assert dict(link["B"].snapshot(now=1_000).recv)["A"].state == u3.CLOSING
    link.run_until(2_999)
    assert link["A"].snapshot(now=2_999).send != ()
    link.run_until(3_000)
    assert link.sent(CloseMsg, "A") == [CloseMsg(0)]
    assert link["A"].snapshot(now=3_000).send == () and link["B"].snapshot(now=3_000).recv == ()
    link.send("A", "B", 2)
    assert link.sent(DataMsg, "A")[-1] == DataMsg(1, 1, True, spec_payload(2))
    assert link.got("B") == [1, 2]


def test_traffic_keeps_a_connection_open() -> None:
    link = Link(Config(conn_expiry_timeout=1_000, conn_close_timeout=2_000))
    for t in range(0, 5_000, 400):
        link.run_until(t)
        link.send("A", "B", t)
    assert dict(link["A"].snapshot(now=link.now).send)["B"].state == u3.OPEN
    assert len(link.got("B")) == 13


def test_sending_on_a_closing_entry_reopens_it() -> None:
    link = Link(Config(conn_expiry_timeout=1_000, conn_close_timeout=5_000))
    link.send("A", "B", 1)
    link.run_until(1_000)
    assert dict(link["A"].snapshot(now=1_000).send)["B"].state == u3.CLOSING
    link.send("A", "B", 2)
    assert dict(link["A"].snapshot(now=1_000).send)["B"] == SendView(0, u3.OPEN, 1, payloads(2), (1, 1), 1)
    assert link.got("B") == [1, 2]


def test_age_out_closes_connections_to_non_members() -> None:
    """max_retransmit_time (AgeOutCache, off by default): a connection opened to a non-member
    becomes CLOSING after that long, unless the peer joins the view first."""
    link = Link(Config(max_retransmit_time=1_000, conn_expiry_timeout=0, conn_close_timeout=0))
    link["A"].install_view(["A"], now=0)
    link.send("A", "B", 1)
    link.run_until(1_000)
    assert dict(link["A"].snapshot(now=1_000).send)["B"].state == u3.CLOSING


def test_timer_schedule_is_fixed_delay() -> None:
    link = Link()
    engine = link["A"]
    engine.handle_timer(now=499)  # early: nothing
    assert engine.get_timer() == 500
    engine.handle_timer(now=730)  # late: runs, next one interval later
    assert engine.get_timer() == 1_230
