"""The handlers of spec/nakack2.py one by one: the own window, XMIT_REQ and XMIT_RSP, the
previous-batch rule (JGRP-1539), HIGHEST_SEQNO's limits, views and merge digests. STABLE and the
join are in ``test_nakack2_stable.py``. Digest 1.4 (c) is the reference.
"""

from __future__ import annotations

from test_nakack2_group import Group, Packet, to, typed

from spec import nakack2 as nk
from spec.effects import Deliver, Send, WindowCreated, WindowRemoved

A, B, C = 0, 1, 2
ALL = (A, B, C)


# ---------------------------------------------------------------------------------------------
# The own window.
def test_own_messages_are_delivered_by_the_loopback_copy_once_and_kept_until_stable() -> None:
    g = Group(3)
    g.send(A, 2)
    assert g.nodes[A].windows[A] == nk.Window(0, 0, (), (nk.Data(1, 1), nk.Data(2, 2)))
    assert typed(g.deliver(to(A, seqno=2), keep=True)) == typed((Deliver(A, 1), Deliver(A, 2)))
    assert typed(g.deliver(to(A, seqno=2))) == typed(())  # the duplicate delivers nothing
    assert typed(g.deliver(to(A, seqno=1))) == typed(())
    assert g.nodes[A].windows[A] == nk.Window(0, 2, (nk.Data(1, 1), nk.Data(2, 2)), ())


def test_a_dont_loopback_send_walks_the_own_hd_over_it_and_sends_no_copy_to_self() -> None:
    """Decision 15: Table.add's remove filter passes the message at once (kept, not delivered); the
    digest's own entry and so STABLE's purge move; the receivers deliver it as any message."""
    g = Group(3, dont_loopback=True)
    effects = g.send(A, 2)
    assert typed(effects) == typed((Send(B, nk.Data(2, 2)), Send(C, nk.Data(2, 2))))
    assert g.nodes[A].windows[A] == nk.Window(0, 2, (nk.Data(1, 1), nk.Data(2, 2)), ())
    assert nk.digest_of(g.nodes[A])[A] == (2, 2)
    assert typed(g.deliver(to(B, seqno=1), keep=True)) == typed((Deliver(A, 1),))
    assert not any(p.dst == A for p in g.wire)
    own = g.nodes[A].windows[A]
    assert own is not None and nk.purge(own, 2) == nk.Window(2, 2, (), ())


def test_a_mixed_dont_loopback_send_waits_for_the_earlier_loopback_whose_removal_passes_it() -> None:
    """Decision 15, a per-send flag: #2's add cannot walk hd past #1 (still to come back); #1's
    loopback runs removeAndDeliver, whose filter passes #2 undelivered."""
    g = Group(2)
    g.send(A)
    step = nk.on_send(g.cfg, g.nodes[A], 2, dont_loopback=True)
    assert typed(step.effects) == typed((Send(B, nk.Data(2, 2)),))
    own = step.node.windows[A]
    assert own is not None and (own.delivered, own.highest_received) == (0, 2) and step.node.dont_loopback == {2}
    back = nk.on_receive(g.cfg, step.node, A, nk.Data(1, 1))
    assert typed(back.effects) == typed((Deliver(A, 1),))
    own = back.node.windows[A]
    assert own is not None and own.delivered == 2
    purged = nk.on_stability(g.cfg, back.node, B, nk.Stability((A, B), ((2, 2), (0, 0))))
    assert purged.node.dont_loopback == frozenset()


def test_a_dont_loopback_message_re_multicast_skips_its_sender() -> None:
    """The re-multicast is the stored original, whose transient flag the transport still sees."""
    g = Group(3, dont_loopback=True)
    g.send(A, 1)
    effects = g.receive(Packet(B, A, nk.XmitReq(A, (1,))))
    assert typed(effects) == typed((Send(B, nk.Data(1, 1)), Send(C, nk.Data(1, 1))))


def test_a_member_without_its_own_window_drops_its_applications_multicast() -> None:
    g = Group(3, founders=(A, B))
    assert typed(g.send(C)) == typed(()) and g.sent[C] == 0 and g.nodes[C].seqno == 0


def test_a_receiver_rejects_duplicates_and_seqnos_at_or_below_hd() -> None:
    g = Group(3)
    g.send(A, 2)
    assert typed(g.deliver(to(B, seqno=1), keep=True)) == typed((Deliver(A, 1),))
    assert typed(g.deliver(to(B, seqno=1))) == typed(())
    assert typed(g.deliver(to(B, seqno=2), keep=True)) == typed((Deliver(A, 2),))
    assert typed(g.deliver(to(B, seqno=2))) == typed(())
    assert g.nodes[B].windows[A] == nk.Window(2, 2, (), ())  # delivered messages are nulled at once


# ---------------------------------------------------------------------------------------------
# XMIT_REQ and XMIT_RSP.
def test_xmit_req_is_answered_by_re_multicasting_the_original() -> None:
    """use_mcast_xmit (default): the original goes to the whole view, repairing every receiver;
    seqnos not stored (here: never sent) are not found."""
    g = Group(3)
    g.send(A, 2)
    effects = g.receive(Packet(B, A, nk.XmitReq(A, (2, 3))))
    assert typed(effects) == typed(tuple(Send(m, nk.Data(2, 2)) for m in ALL))


def test_xmit_req_without_mcast_xmit_is_answered_by_an_xmit_rsp_to_the_requester() -> None:
    g = Group(3, use_mcast_xmit=False)
    g.send(A, 2)
    g.lose(to(B, seqno=1))
    assert typed(g.receive(Packet(B, A, nk.XmitReq(A, (1,))))) == typed((Send(B, nk.XmitRsp(A, 1, 1)),))
    g.flush()
    assert g.log[A, B] == [1, 2]


def test_xmit_rsp_counts_as_the_original_senders_message() -> None:
    """XMIT_RSP is turned back into the original MSG: it fills the window of ``sender``, whoever
    forwarded it."""
    g = Group(3, use_mcast_xmit=False)
    g.send(A, 2)
    g.lose(to(C, seqno=1))
    g.deliver(to(C, seqno=2))
    assert typed(g.receive(Packet(B, C, nk.XmitRsp(A, 1, 1)))) == typed((Deliver(A, 1), Deliver(A, 2)))


def test_purged_messages_are_not_found() -> None:
    g = Group(3)
    g.send(A, 2)
    g.flush()
    for member in (B, C, A):
        g.fire(member, nk.STABLE)
    g.flush()
    assert typed(g.receive(Packet(B, A, nk.XmitReq(A, (1, 2))))) == typed(())


def test_previous_batch_a_gap_is_requested_on_the_run_after_it_was_seen() -> None:
    """JGRP-1539: the first run that sees a gap only records its highest seqno; the next run asks
    for the gaps up to that record, not for one that appeared in between."""
    g = Group(3)
    g.send(A, 5)
    g.lose(to(B, seqno=2))
    g.lose(to(B, seqno=4))
    g.deliver(to(B, seqno=1))
    g.deliver(to(B, seqno=3))
    assert typed(g.fire(B, nk.XMIT)) == typed(())
    assert g.nodes[B].xmit_last[A] == 2
    g.deliver(to(B, seqno=5))  # gap #4 now shows
    assert typed(g.fire(B, nk.XMIT)) == typed((Send(A, nk.XmitReq(A, (2,))),))
    assert typed(g.fire(B, nk.XMIT)) == typed((Send(A, nk.XmitReq(A, (2, 4))),))


def test_jgrp1539_variant_requests_every_gap_at_once() -> None:
    """Before JGRP-1539: the first run asks for a gap whose message may still be in flight."""
    g = Group(3, variant=nk.Variant(xmit_all_gaps=True))
    g.send(A, 3)
    g.deliver(to(B, seqno=3))
    assert typed(g.fire(B, nk.XMIT)) == typed((Send(A, nk.XmitReq(A, (1, 2))),))
    assert g.in_flight(to(B, seqno=1))  # the message was never lost


# ---------------------------------------------------------------------------------------------
# HIGHEST_SEQNO (LastSeqnoResender).
def _xmit(g: Group, member: int) -> tuple[object, ...]:
    return tuple(e for e in g.fire(member, nk.XMIT) if isinstance(e, Send))


def test_highest_seqno_nothing_before_the_first_send() -> None:
    g = Group(3)
    assert _xmit(g, A) == ()


def test_highest_seqno_skipped_after_a_send_then_announced_once_per_value() -> None:
    """Not on the run after an application send; then the counter once (max_times 1), to the view
    without the sender itself; a new value is announced again."""
    g = Group(3)
    g.send(A, 2)
    assert _xmit(g, A) == ()
    assert typed(_xmit(g, A)) == typed((Send(B, nk.HighestSeqno(2)), Send(C, nk.HighestSeqno(2))))
    assert _xmit(g, A) == () and _xmit(g, A) == ()
    g.send(A)
    assert _xmit(g, A) == ()
    assert typed(_xmit(g, A)) == typed((Send(B, nk.HighestSeqno(3)), Send(C, nk.HighestSeqno(3))))


def test_highest_seqno_max_times_bounds_the_announcements_of_one_value() -> None:
    g = Group(3, resend_last_seqno_max_times=3)
    g.send(A)
    _xmit(g, A)
    assert [len(_xmit(g, A)) for _ in range(5)] == [2, 2, 2, 0, 0]


def test_highest_seqno_off_never_announces() -> None:
    g = Group(3, resend_last_seqno=False)
    g.send(A)
    assert [len(_xmit(g, A)) for _ in range(3)] == [0, 0, 0]


def test_highest_seqno_receiver_asks_for_that_seqno_only_when_behind() -> None:
    g = Group(3)
    g.send(A, 3)
    g.deliver(to(B, seqno=1))
    assert typed(g.receive(Packet(A, B, nk.HighestSeqno(3)))) == typed((Send(A, nk.XmitReq(A, (3,))),))
    g.flush()
    assert typed(g.receive(Packet(A, B, nk.HighestSeqno(3)))) == typed(())
    assert typed(g.receive(Packet(A, B, nk.HighestSeqno(2)))) == typed(())


# ---------------------------------------------------------------------------------------------
# Views and merge digests.
def test_a_view_drops_the_windows_of_non_members_and_creates_windows_for_new_ones() -> None:
    g = Group(3, founders=(A, B))
    g.send(B)
    effects = g.view(A, (A, C))
    assert typed(effects) == typed((WindowRemoved(B), WindowCreated(C, 0, 0)))
    assert g.nodes[A].windows[B] is None and g.nodes[A].windows[C] == nk.new_window(0)
    assert typed(g.deliver(to(A, src=B))) == typed(())  # a non-member's message is dropped
    effects = g.view(A, (B, C))  # the own window is never removed
    assert g.nodes[A].windows[A] is not None and typed(effects) == typed((WindowCreated(B, 0, 0),))


def test_merge_digest_replaces_only_windows_below_the_digest() -> None:
    g = Group(3)
    g.send(B, 2)
    g.flush()
    node = g.nodes[A]
    step = nk.on_merge_digest(g.cfg, node, ((9, 9), (1, 1), (5, 7)))
    assert step.node.windows[A] == node.windows[A]  # the own window is kept
    assert step.node.windows[B] == node.windows[B]  # hd 2 >= 1: kept
    assert step.node.windows[C] == nk.new_window(5)
    assert typed(step.effects) == typed((WindowRemoved(C), WindowCreated(C, 0, 5)))
