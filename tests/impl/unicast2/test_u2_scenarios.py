"""UNICAST2 engine scenarios on a virtual clock with JGroups' real durations (xmit_interval 1000 ms,
stable_interval 60000 ms): what happens, and *when*, for each loss pattern the protocol has an
answer to, and the variants that take the answer away."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from u2_link import Link

from impl.unicast2 import Config, LocalProtocolError, Unicast2Engine, Variant, spec_payload
from impl.unicast2.codec import AckMsg, DataMsg, SendFirstSeqnoMsg, StableMsg, XmitReqMsg, decode, encode
from spec import unicast2 as spec


def once(kind: type, **fields: object) -> Callable[[str, str, object], bool]:
    """A drop predicate losing the first datagram of ``kind`` with those fields, and nothing else."""
    done: list[bool] = []

    def drop(src: str, dst: str, msg: object) -> bool:
        if done or not isinstance(msg, kind) or any(getattr(msg, k) != v for k, v in fields.items()):
            return False
        done.append(True)
        return True

    return drop


def test_timers_run_at_their_real_periods() -> None:
    a = Unicast2Engine[str](Config(), members=["A", "B"], now=0)
    assert a.get_timer() == 1_000
    a.handle_timer(now=999)  # not due: nothing moves
    assert a.get_timer() == 1_000
    a.handle_timer(now=1_000)
    assert a.get_timer() == 2_000
    a.handle_timer(now=59_999)  # late: runs once, next one period after this run
    assert a.get_timer() == 60_000
    a.handle_timer(now=60_000)  # the stable task alone (the retransmit task is due at 60999)
    assert a.get_timer() == 60_999
    a.handle_timer(now=60_999)
    assert a.get_timer() == 61_999
    reaper = Unicast2Engine[str](Config(conn_expiry_timeout=300), members=["A"], now=0)
    assert reaper.get_timer() == 300


def test_first_message_is_delivered_and_acked_at_once() -> None:
    link = Link()
    link.send("A", "B", 1)
    assert link.got("B") == [1]
    assert [m for _, m in link.sent(AckMsg, "B")] == [AckMsg(1, 0)]
    (_, view), = link["A"].snapshot().send
    assert view.ack_received and view.unacked == (spec_payload(1),)


def test_lost_first_message_is_resent_by_the_retransmit_task() -> None:
    """JGRP-1563: until the first message is ACKed, each retransmit run resends it (marked first)."""
    link = Link(drop=once(DataMsg, seqno=1))
    link.send("A", "B", 1)
    assert link.got("B") == []
    link.run_until(1_000)
    assert link.got("B") == [1]
    link.run_until(5_000)
    assert [t for t, m in link.sent(DataMsg, "A")] == [0, 1_000]  # ACKed: no more resends


def test_without_the_first_message_ack_a_lost_first_message_is_never_recovered() -> None:
    link = Link(Config(variant=Variant(no_first_ack=True)), drop=once(DataMsg, seqno=1))
    link.send("A", "B", 1)
    link.run_until(600_000)
    assert link.got("B") == [] and link.sent(AckMsg) == []


def test_a_gap_is_asked_for_on_the_second_retransmit_run() -> None:
    """Previous-batch retransmission (JGRP-1539): the gap seen at 1000 is requested at 2000."""
    link = Link(drop=once(DataMsg, seqno=2))
    link.send("A", "B", 1, 2, 3)
    assert link.got("B") == [1]
    link.run_until(1_999)
    assert link.sent(XmitReqMsg) == []
    link.run_until(2_000)
    assert [(t, m.seqnos) for t, m in link.sent(XmitReqMsg, "B")] == [(2_000, (2,))]
    assert link.got("B") == [1, 2, 3]


def test_before_jgrp1539_a_gap_is_asked_for_on_the_first_run() -> None:
    link = Link(Config(variant=Variant(xmit_all_gaps=True)), drop=once(DataMsg, seqno=2))
    link.send("A", "B", 1, 2, 3)
    link.run_until(1_000)
    assert [(t, m.seqnos) for t, m in link.sent(XmitReqMsg, "B")] == [(1_000, (2,))]
    assert link.got("B") == [1, 2, 3]


@pytest.mark.parametrize(("stale", "asked_at"), [(False, 4_000), (True, 3_000)])
def test_jgrp2573_a_gap_above_a_stale_record_is_asked_for_at_once(stale: bool, asked_at: int) -> None:
    """Gap #2 is recorded at 1000, asked for and filled at 2000 (the record stays 2, below hd 3);
    #4 is lost at 2000. The previous-batch rule records it at 3000 and asks at 4000;
    stale_xmit_record_asks_all (JGroups 3.6 to 5.1) asks at 3000."""
    lost = [once(DataMsg, seqno=2), once(DataMsg, seqno=4)]
    link = Link(Config(variant=Variant(stale_xmit_record_asks_all=stale)),
                drop=lambda src, dst, msg: any([d(src, dst, msg) for d in lost]))
    link.send("A", "B", 1, 2, 3)
    link.run_until(2_000)
    assert link.got("B") == [1, 2, 3]
    link.send("A", "B", 4, 5)
    link.run_until(4_000)
    assert [(t, m.seqnos) for t, m in link.sent(XmitReqMsg, "B")] == [(2_000, (2,)), (asked_at, (4,))]
    assert link.got("B") == [1, 2, 3, 4, 5]


def test_a_lost_last_message_is_recovered_by_the_stable_task() -> None:
    """No gap to see: B's STABLE(hd=1, hr=1) at 60000 makes A purge #1 and resend #2."""
    link = Link(drop=once(DataMsg, seqno=2))
    link.send("A", "B", 1, 2)
    link.run_until(59_999)
    assert link.got("B") == [1]
    link.run_until(60_000)
    assert [m for _, m in link.sent(StableMsg, "B")] == [StableMsg(1, 1, 0, 0)]
    assert link.got("B") == [1, 2]
    (_, view), = link["A"].snapshot().send
    assert view.acked == 1 and view.unacked == (spec_payload(2),)
    link.run_until(120_000)  # STABLE(2, 2): the send window empties
    (_, view), = link["A"].snapshot().send
    assert view.acked == 2 and view.unacked == ()


@pytest.mark.parametrize("fixed", [False, True])
def test_jgrp1548_stables_capped_for_an_unchanged_hr(fixed: bool) -> None:
    """The last message and every STABLE lost until max_stable_msgs is used up: UNICAST2 as shipped
    never recovers it; the HS resend of UNICAST3 (fix_resend_highest) does within two runs."""
    state = {"data": False}

    def drop(src: str, dst: str, msg: object) -> bool:
        if isinstance(msg, DataMsg) and msg.seqno == 2 and not state["data"]:
            state["data"] = True
            return True
        return isinstance(msg, StableMsg) and link.now <= 150_000

    link = Link(Config(max_stable_msgs=2, variant=Variant(fix_resend_highest=fixed)), drop=drop)
    link.send("A", "B", 1, 2)
    link.run_until(600_000)
    if fixed:
        assert link.got("B") == [1, 2]
        assert [t for t, m in link.sent(DataMsg, "A") if m.seqno == 2][:2] == [0, 2_000]
    else:
        assert link.got("B") == [1]
        assert [t for t, _ in link.sent(StableMsg, "B")] == [60_000, 120_000]  # then capped


def test_receiver_reset_is_repaired_through_send_first_seqno() -> None:
    link = Link()
    link.send("A", "B", 1, 2)
    link["B"].remove_receive_connection("A")  # final STABLE(2, 2): A purges both
    link.transfer()
    assert link["A"].snapshot().send[0][1].acked == 2
    link.send("A", "B", 3)
    assert [m for _, m in link.sent(SendFirstSeqnoMsg, "B")] == [SendFirstSeqnoMsg(3, 0)]
    assert [m.first for _, m in link.sent(DataMsg, "A")][-1] is True  # #3 resent marked first
    assert link.got("B") == [1, 2, 3]


@pytest.mark.parametrize(("lowest_only", "resent"), [(False, [1, 2, 3, 4, 5, 6]), (True, [1])])
def test_jgrp1874_send_first_seqno_is_answered_with_the_whole_window(lowest_only: bool, resent: list[int]) -> None:
    """B lost its window (the final STABLE lost too): A still holds #1..#5, so #6 makes B ask, and A
    resends everything up to #6 (the seed's rule 4, fix_sync_lowest_only: the lowest only)."""
    link = Link(Config(variant=Variant(fix_sync_lowest_only=lowest_only)),
                drop=lambda src, dst, msg: isinstance(msg, StableMsg))
    link.send("A", "B", 1, 2, 3, 4, 5)
    link["B"].remove_receive_connection("A")
    link.send("A", "B", 6)
    answer = [m.seqno for t, m in link.sent(DataMsg, "A")][6:]
    assert answer[: len(resent)] == resent
    assert link.got("B")[:5] == [1, 2, 3, 4, 5]


def test_a_view_change_drops_both_connections_of_a_peer_that_left() -> None:
    link = Link()
    link.send("A", "B", 1, 2)
    link.send("B", "A", 1)
    link["B"].install_view(["B"], now=0)  # final STABLE for A's window, B's send entry discarded
    link.transfer()
    assert [m for _, m in link.sent(StableMsg, "B")] == [StableMsg(2, 2, 0, 0)]
    view = link["B"].snapshot()
    assert view.send == () and view.recv == () and view.members == frozenset({"B"})
    assert link["B"].stats.unacked_discarded == 1
    assert link["A"].snapshot().send[0][1].unacked == ()  # purged by the final STABLE


def test_the_reaper_removes_idle_connections_every_conn_expiry_timeout() -> None:
    link = Link(Config(conn_expiry_timeout=5_000))
    link.send("A", "B", 1)
    link.run_until(4_999)
    assert link["A"].snapshot().send and link["B"].snapshot().recv
    link.run_until(5_000)
    assert link["A"].snapshot().send == () and link["B"].snapshot().recv == ()
    assert [t for t, _ in link.sent(StableMsg, "B")] == [5_000]  # the receive side's final STABLE


def test_max_bytes_triggers_a_stable_before_the_stable_interval() -> None:
    link = Link(Config(max_bytes=16))  # two 8-byte payloads
    link.send("A", "B", 1, 2, 3)
    assert [m for _, m in link.sent(StableMsg, "B")] == [StableMsg(1, 2, 0, 0)]  # before #2 is delivered
    assert link["B"].stats.stables_by_bytes == 1 and link.got("B") == [1, 2, 3]
    assert link["A"].snapshot().send[0][1].acked == 1


def test_age_out_cache_removes_connections_to_a_non_member() -> None:
    link = Link(Config(max_retransmit_time=3_000), names=("A", "B", "C"))
    link["A"].install_view(["A", "B"], now=0)
    link.send("A", "C", 1)
    link.run_until(2_999)
    assert [p for p, _ in link["A"].snapshot().send] == ["C"]
    link.run_until(3_000)
    assert link["A"].snapshot().send == () and link["A"].stats.aged_out == 1


def test_fix_timestamps_ignores_a_stale_stable() -> None:
    a = Unicast2Engine[str](Config(variant=Variant(fix_timestamps=True)), members=["A", "B"], now=0)
    for n in (1, 2, 3):
        a.send("B", spec_payload(n), now=0)
    conn_id = decode(a.datagrams_to_send()[0][1]).conn_id  # type: ignore[union-attr]
    a.received("B", encode(StableMsg(1, 3, conn_id, 5)), now=0)
    a.received("B", encode(StableMsg(3, 3, conn_id, 4)), now=0)  # older: ignored
    assert a.snapshot().send[0][1].acked == 1 and a.stats.stale_timestamps == 1
    assert a.snapshot().send[0][1].last_ts == 5


def test_conn_ids_wrap_after_32767() -> None:
    a = Unicast2Engine[str](Config(), members=["A", "B"], now=0)
    for _ in range(2**15 + 1):
        a.send("B", b"x", now=0)
        a.fire_timer(spec.IDLE_SEND, "B", now=0)
    a.send("B", b"x", now=0)
    assert a.snapshot().send[0][1].conn_id == 1 and a.snapshot().next_conn_id == 2


def test_misuse_is_a_local_protocol_error() -> None:
    a = Unicast2Engine[str](Config(), members=["A", "B"], now=10)
    with pytest.raises(LocalProtocolError, match="time went backwards"):
        a.send("B", b"x", now=9)
    with pytest.raises(LocalProtocolError, match="payload must be bytes"):
        a.send("B", "x", now=10)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="no entry"):
        a.fire_timer(spec.IDLE_RECV, "B", now=10)
    with pytest.raises(LocalProtocolError, match="needs a peer"):
        a.fire_timer(spec.IDLE_SEND, now=10)
    with pytest.raises(LocalProtocolError, match="unknown timer"):
        a.fire_timer(9, now=10)
    with pytest.raises(LocalProtocolError, match="now must be an int"):
        Unicast2Engine[str](Config(), now=1.5)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="data must be bytes"):
        a.received("B", "x", now=10)  # type: ignore[arg-type]
