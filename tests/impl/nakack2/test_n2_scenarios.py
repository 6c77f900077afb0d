"""Scenario tests: three NAKACK2 engines on a virtual clock, loss by omission, state asserted along
the way. Each test names the JGroups behaviour it pins. Times are ms: with the defaults the
retransmit task runs at 1000, 2000, ... and STABLE's round at 20000, 40000, ...
"""

from __future__ import annotations

import pytest
from n2_group import Drop, Group

from impl.nakack2 import Config, LocalProtocolError, Variant, spec_payload
from impl.nakack2.codec import (
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    StabilityMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    encode,
)


def first_copy(seqno: int, to: str, sender: str = "A") -> Drop:
    """A drop/hold predicate: the first copy of ``sender``'s MSG ``seqno`` to ``to``."""
    seen: list[bool] = []

    def match(src: str, dst: str, msg: WireMsg) -> bool:
        if not seen and src == sender and dst == to and isinstance(msg, McastMsg) and msg.seqno == seqno:
            seen.append(True)
            return True
        return False

    return match


def every_copy(seqno: int, to: str, sender: str = "A") -> Drop:
    def match(src: str, dst: str, msg: WireMsg) -> bool:
        return src == sender and dst == to and isinstance(msg, McastMsg) and msg.seqno == seqno

    return match


# ---------------------------------------------------------------------------------------------
# Retransmission.
def test_lost_message_recovered_by_a_remulticast_after_two_runs() -> None:
    """Previous-batch rule (JGRP-1539): the first run that sees the gap only records it; the second
    asks the original sender, which re-multicasts the original to the whole view."""
    g = Group(drop=first_copy(2, "C"))
    g.mcast("A", 1, 2, 3)
    assert g.got("C") == [1] and g.got("B") == [1, 2, 3]
    g.run_until(1000)
    assert g.sent(NakXmitReqMsg) == [] and g.got("C") == [1]
    g.run_until(2000)
    [req] = g.sent(NakXmitReqMsg)
    assert req.sender == "A" and req.request.seqnos == (2,)
    assert [d for _, s, d, m in g.log if isinstance(m, McastMsg) and m.seqno == 2] == ["A", "B", "C", "A", "B", "C"]
    assert g.got("C") == [1, 2, 3] and g.got("B") == [1, 2, 3] and g.got("A") == [1, 2, 3]
    assert g["B"].stats.old_or_duplicate == 1  # the re-multicast copy, dropped by B's window
    g.check()


def test_lost_message_recovered_by_an_xmit_rsp_without_mcast_xmit() -> None:
    g = Group(config=Config(use_mcast_xmit=False), drop=first_copy(2, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(2000)
    [rsp] = g.sent(XmitRspMsg)
    assert rsp == XmitRspMsg("A", 2, spec_payload(2))
    assert [d for _, s, d, m in g.log if isinstance(m, XmitRspMsg)] == ["C"]
    assert g.got("C") == [1, 2, 3] and g["B"].stats.old_or_duplicate == 0


def test_lost_last_message_recovered_through_highest_seqno() -> None:
    """JGRP-1904: no gap shows a lost last message; the counter announced by HIGHEST_SEQNO does.
    The first run after a multicast is skipped; the value is announced once."""
    g = Group(drop=first_copy(3, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(1000)
    assert g.sent(HighestSeqnoMsg) == [] and g.got("C") == [1, 2]
    g.run_until(2000)
    assert [(d, m.seqno) for _, s, d, m in g.log if isinstance(m, HighestSeqnoMsg)] == [("B", 3), ("C", 3)]
    [req] = g.sent(NakXmitReqMsg)
    assert req.request.seqnos == (3,) and g.got("C") == [1, 2, 3]
    g.run_until(10_000)
    assert len(g.sent(HighestSeqnoMsg)) == 2  # resend_last_seqno_max_times = 1
    g.check()


def test_without_highest_seqno_stable_recovers_the_last_message_one_round_later() -> None:
    """JGRP-2678: STABLE asks for the *previous* round's hr, so the first round only remembers 3
    and the second asks for it."""
    g = Group(config=Config(resend_last_seqno=False), drop=first_copy(3, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(20_000)
    assert g.got("C") == [1, 2] and g.sent(NakXmitReqMsg) == []
    assert dict(g["C"].snapshot().stable_xmit)["A"] == 3
    g.run_until(40_000)
    assert [m.request.seqnos for m in g.sent(NakXmitReqMsg, src="C")] == [(3,)]
    assert g.got("C") == [1, 2, 3]


def test_the_jgrp2678_variant_asks_for_the_current_hr_at_once() -> None:
    g = Group(config=Config(resend_last_seqno=False, variant=Variant(stable_xmit_current_hr=True)),
              drop=first_copy(3, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(20_000)
    assert g.got("C") == [1, 2, 3]


# ---------------------------------------------------------------------------------------------
# STABLE.
def test_stable_purges_only_what_every_member_delivered() -> None:
    g = Group(hold=every_copy(3, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(20_000)
    assert len(g.sent(StableMsg)) == 2 and len(g.sent(StabilityMsg)) == 2  # B's and C's votes; to B and C
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.low, own.delivered, own.kept) == (2, 3, (spec_payload(3),))  # C has not delivered 3
    assert g["A"].stats.stable_purged == 2
    g.release()
    assert g.got("C") == [1, 2, 3]
    g.hold = None
    g.run_until(40_000)
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.low, own.kept) == (3, ())
    g.check()


def test_a_vote_for_another_view_is_ignored_and_the_round_waits() -> None:
    g = Group()
    g.mcast("A", 1)
    g["A"].received("B", encode(StableMsg(("A", "B"), (("A", 1, 1), ("B", 0, 0)))), now=0)
    assert g["A"].stats.votes_ignored == 1 and g["A"].snapshot().votes == frozenset()


# ---------------------------------------------------------------------------------------------
# Joins and the become_server_queue.
def join_group(config: Config, before_rsp: tuple[int, ...]) -> Group:
    """A and B founders multicast 1, 2 (A's); A admits C (JOIN_RSP held), installs the 3-member view
    (so does B) and multicasts ``before_rsp``, which C queues; then the JOIN_RSP arrives."""
    g = Group(config=config, founders=("A", "B"))
    g.mcast("A", 1, 2)
    g.hold = lambda src, dst, msg: isinstance(msg, JoinRspMsg)
    g["A"].answer_join("C", ("A", "B", "C"), now=0)
    for name in ("A", "B"):
        g[name].install_view(("A", "B", "C"), now=0)
    g.mcast("A", *before_rsp)
    g.hold = None
    g.release()
    return g


def test_a_join_creates_windows_from_the_digest_and_replays_the_queue() -> None:
    g = join_group(Config(), (3, 4))
    c = g["C"].snapshot()
    assert [m for _, m in c.queue] == [McastMsg(3, spec_payload(3)), McastMsg(4, spec_payload(4))]
    assert dict(c.windows)["A"].delivered == 2 and c.become_server_pending and g.got("C") == []
    g["C"].become_server(now=0)
    g.collect()
    assert g.got("C") == [3, 4] and g.got("B") == [1, 2, 3, 4]
    assert g["C"].snapshot().queue == () and not g["C"].snapshot().become_server_pending
    g.mcast("C", 30)
    assert g.got("A", "C") == [30] and g.got("B", "C") == [30]
    g.check()


def test_the_bounded_queue_drops_the_newest_and_retransmission_fills_the_gap() -> None:
    g = join_group(Config(become_server_queue_size=2), (3, 4, 5))
    assert g["C"].stats.queue_dropped == 1
    g["C"].become_server(now=0)
    g.mcast("A", 6)
    assert g.got("C") == [3, 4]
    g.run_until(3000)
    assert g.got("C") == [3, 4, 5, 6]


def test_jgrp2675_bounded_queue_without_retransmission_leaves_a_permanent_gap() -> None:
    """Seed 004: with xmit_interval <= 0 the queue must be unbounded; the JGRP-2675 variant keeps it
    bounded, and the message it drops is never recovered: C's window for A grows for ever."""
    g = join_group(Config(xmit_interval=0, become_server_queue_size=2, variant=Variant(bounded_queue_no_xmit=True)),
                   (3, 4, 5))
    g["C"].become_server(now=0)
    g.mcast("A", 6, 7, 8)
    g.run_until(100_000)
    assert g.got("C") == [3, 4]
    window = dict(g["C"].snapshot().windows)["A"]
    assert window.delivered == 4 and [s for s, _ in window.buffered] == [6, 7, 8]
    assert g.sent(NakXmitReqMsg) == [] and g.sent(HighestSeqnoMsg) == []


def test_without_retransmission_the_queue_is_unbounded() -> None:
    g = join_group(Config(xmit_interval=0, become_server_queue_size=2), (3, 4, 5))
    assert g["C"].stats.queue_dropped == 0 and len(g["C"].snapshot().queue) == 3
    g["C"].become_server(now=0)
    g.mcast("A", 6)
    assert g.got("C") == [3, 4, 5, 6]
    g.run_until(100_000)
    assert g.sent(NakXmitReqMsg) == [] and g.sent(HighestSeqnoMsg) == []
    assert g["A"].get_timer() == 120_000  # only STABLE's round is scheduled


def test_the_queue_drops_oldest_variant_loses_the_first_message() -> None:
    g = join_group(Config(xmit_interval=0, become_server_queue_size=2,
                          variant=Variant(bounded_queue_no_xmit=True, queue_drops_oldest=True)), (3, 4, 5))
    assert [m.seqno for _, m in g["C"].snapshot().queue if isinstance(m, McastMsg)] == [4, 5]
    g["C"].become_server(now=0)
    g.collect()
    assert g.got("C") == []  # 3 is missing: 4 and 5 wait above the gap


def test_a_late_join_rsp_is_ignored() -> None:
    g = join_group(Config(), ())
    before = g["C"].snapshot()
    g["C"].received("A", encode(JoinRspMsg(("A", "C"), (("A", 50, 50),))), now=0)
    assert g["C"].snapshot() == before and g["C"].stats.join_rsp_ignored == 1


def test_a_view_change_drops_the_window_of_a_member_that_left() -> None:
    g = Group(drop=first_copy(2, "C"))
    g.mcast("B", 1, 2, 3)
    for name in g.names:
        g[name].install_view(("A", "C"), now=0)
    assert "B" not in dict(g["C"].snapshot().windows)
    g.mcast("B", 4)  # B still multicasts to its own view; A and C drop it (no window)
    assert g["C"].stats.data_without_window == 1


def test_without_retransmission_stable_purges_but_never_asks() -> None:
    """Seed 004: with xmit_interval <= 0, stable() triggers no retransmission: a lost last message
    stays lost through any number of rounds, and nothing above it is purged at its sender."""
    g = Group(config=Config(xmit_interval=0), drop=first_copy(3, "C"))
    g.mcast("A", 1, 2, 3)
    g.run_until(100_000)
    assert len(g.sent(StabilityMsg)) == 2 * 5  # five rounds, to B and C each
    assert g.got("C") == [1, 2] and g.sent(NakXmitReqMsg) == [] and g.sent(HighestSeqnoMsg) == []
    assert g["C"].snapshot().stable_xmit == ()  # not even remembered
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.low, own.kept) == (2, (spec_payload(3),))


# ---------------------------------------------------------------------------------------------
# DONT_LOOPBACK (spec decision 15).
def test_dont_loopback_the_sender_never_delivers_its_own_the_others_recover_a_loss() -> None:
    """No copy to A (first or re-multicast), A's own hd passes each message at the send, B and C
    deliver everything once; the datagrams are the bytes of a plain multicast (a transient flag)."""
    g = Group(config=Config(dont_loopback=True), drop=first_copy(2, "C"))
    g.mcast("A", 1, 2, 3)
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.low, own.delivered) == (0, 3)
    g.run_until(2000)
    assert g.got("A") == [] and g.got("B") == [1, 2, 3] and g.got("C") == [1, 2, 3]
    assert [d for _, s, d, m in g.log if isinstance(m, McastMsg) and m.seqno == 2] == ["B", "C", "B", "C"]
    assert not any(d == "A" for _, s, d, m in g.log if s == "A" and isinstance(m, McastMsg))
    plain = Group()
    plain.mcast("A", 1)
    assert plain.log[1][3] == g.log[0][3] and encode(plain.log[1][3]) == encode(g.log[0][3])
    g.check()


def test_dont_loopback_stable_purges_the_senders_own_window() -> None:
    """The own hd moved at the send, so A's digest names it and STABLE's round purges it all."""
    g = Group(config=Config(dont_loopback=True))
    g.mcast("A", 1, 2)
    g.run_until(40_000)
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.low, own.delivered, own.kept) == (2, 2, ())
    assert g.got("A") == [] and g.got("B") == [1, 2]
    g.check()


def test_dont_loopback_per_send_the_earlier_loopback_passes_over_it() -> None:
    """A plain #1 and a DONT_LOOPBACK #2: #2's add cannot move hd past #1, whose loopback delivers
    #1 alone and passes #2; a re-multicast of #2 skips A, one of #1 does not."""
    g = Group(hold=lambda src, dst, msg: src == dst == "A")
    g.mcast("A", 1)
    g["A"].multicast(spec_payload(2), now=g.now, dont_loopback=True)
    g.transfer()
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.delivered, g.got("A"), g.got("B")) == (0, [], [1, 2])
    g.hold = None
    g.release()
    own = dict(g["A"].snapshot().windows)["A"]
    assert (own.delivered, g.got("A")) == (2, [1])
    before = len(g.log)
    g["A"].received("B", encode(NakXmitReqMsg("A", XmitReqMsg((1, 2)))), now=g.now)
    g.transfer()
    resent = [(m.seqno, d) for _, s, d, m in g.log[before:] if isinstance(m, McastMsg)]
    assert resent == [(1, "A"), (1, "B"), (1, "C"), (2, "B"), (2, "C")] and g.got("A") == [1]
    g.check()


# ---------------------------------------------------------------------------------------------
# OOB (spec decision 17).
def oob_mcast(g: Group, src: str, *payloads: int, oob: tuple[int, ...]) -> None:
    for p in payloads:
        g[src].multicast(spec_payload(p), now=g.now, oob=p in oob)
    g.transfer()


def test_oob_is_delivered_on_receipt_once_and_its_placeholder_passed_over() -> None:
    """#1 held on its way to B; the OOB #2 is delivered at once, its slot a payload-free placeholder;
    #1's arrival delivers #1 alone. The datagram carries the flag (type byte 0x80)."""
    g = Group(hold=first_copy(1, "B"))
    oob_mcast(g, "A", 1, 2, oob=(2,))
    assert g.got("B") == [2] and g.got("C") == [1, 2] and g.got("A") == [1, 2]
    window = dict(g["B"].snapshot().windows)["A"]
    assert (window.delivered, window.buffered) == (0, ((2, b""),))
    assert [encode(m)[1] for _, s, d, m in g.log if isinstance(m, McastMsg) and d == "B"] == [0x00, 0x80]
    g.release()
    assert g.got("B") == [2, 1]
    window = dict(g["B"].snapshot().windows)["A"]
    assert (window.low, window.delivered, window.buffered) == (2, 2, ())
    g["B"].received("A", encode(McastMsg(2, spec_payload(2), True)), now=g.now)  # a late duplicate
    g.collect()
    assert g.got("B") == [2, 1]
    g.check()


def test_a_lost_oob_message_is_retransmitted_as_oob() -> None:
    g = Group(drop=first_copy(1, "C"))
    oob_mcast(g, "A", 1, 2, oob=(1,))
    assert g.got("C") == []
    g.run_until(2000)
    assert g.got("C") == [1, 2]
    resent = [m for _, s, d, m in g.log if isinstance(m, McastMsg) and m.seqno == 1]
    assert len(resent) == 6 and all(m.oob for m in resent)  # the original to A, B, C, then the re-multicast
    g.check()


def test_an_own_oob_loopback_coming_back_first_delivers_it_first_and_once() -> None:
    g = Group(hold=first_copy(1, "A"))
    oob_mcast(g, "A", 1, 2, oob=(2,))
    assert g.got("A") == [2, 1]  # #2's loopback: OOB first, then the removal from hd+1 (#1) passes #2
    g.release()
    assert g.got("A") == [2, 1]
    g.check()


def test_oob_with_dont_loopback_is_never_delivered_at_its_sender() -> None:
    g = Group()
    g["A"].multicast(spec_payload(1), now=0, oob=True, dont_loopback=True)
    g.transfer()
    assert g.got("A") == [] and g.got("B") == [1] and g.got("C") == [1]
    g.check()


def test_an_oob_mix_survives_any_one_lost_datagram() -> None:
    """Liveness under the smallest fault: whichever single datagram of the run is lost (each in
    turn), B and C deliver all four messages exactly once and A its own."""
    for k in range(40):
        count = [0]

        def kth(src: str, dst: str, msg: WireMsg, k: int = k, count: list[int] = count) -> bool:
            if src == dst:
                return False  # loopback copies are not lost (the transport's own path)
            count[0] += 1
            return count[0] == k + 1

        g = Group(drop=kth)
        oob_mcast(g, "A", 1, 2, 3, 4, oob=(2, 3))
        g.run_until(60_000)
        for name in ("A", "B", "C"):
            assert sorted(g.got(name)) == [1, 2, 3, 4], (k, name, g.got(name))
        g.check()


def test_multicast_refuses_a_non_bool_oob_without_any_change() -> None:
    g = Group()
    before = g["A"].snapshot()
    with pytest.raises(LocalProtocolError, match="oob must be a bool"):
        g["A"].multicast(spec_payload(1), now=0, oob=1)  # type: ignore[arg-type]
    assert g["A"].snapshot() == before and g["A"].datagrams_to_send() == []
