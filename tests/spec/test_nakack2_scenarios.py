"""Seed 004 (NAKACK2 without retransmission, JGRP-2675) at node level, step by step.

Every section of the seed is a test here: what still works without retransmission (seqnos,
ordering by the window, STABLE's purge), what is switched off (the retransmit task, STABLE's
retransmission, the last-seqno sender), the become_server_queue example with the seed's own
numbers (B at 100, 70 more, a queue of 50) under each queue policy and with retransmission on,
and the requirement that nothing drop a message below NAKACK2 (the thread-pool rejection and
LastMessageDroppedTest). Digest 1.5 and 3.10 are the reading of the seed these tests follow.
The seed's TCP_NIO2 note (the sender's gather buffer must not drop) is the same requirement seen
from the sending side: to NAKACK2 a copy dropped there is a copy that never arrives, which the
drop tests below already cover. The seed's wish to change xmit_interval at runtime was never
implemented (digest 6.17); the spec takes it as static configuration.
"""

from __future__ import annotations

from test_nakack2_group import Group, to, typed

from spec import nakack2 as nk
from spec.effects import Deliver, Send

A, B, C = 0, 1, 2


# ---------------------------------------------------------------------------------------------
# Implementation: what stays.
def test_without_retransmission_seqnos_are_still_assigned_and_the_window_orders() -> None:
    """Seqnos are still added; a receiver holds a message above a gap and delivers in order once
    the gap fills (by the network's own late arrival: nothing asks for it)."""
    g = Group(3, xmit_interval=0)
    effects = g.send(A, 3)
    assert typed(effects) == typed(tuple(Send(m, nk.Data(3, 3)) for m in (A, B, C)))
    assert typed(g.deliver(to(B, src=A, seqno=3))) == typed(())
    assert typed(g.deliver(to(B, src=A, seqno=2))) == typed(())
    assert nk.held_undelivered(g.nodes[B], A) == 2
    assert typed(g.deliver(to(B, src=A, seqno=1))) == typed(tuple(Deliver(A, p) for p in (1, 2, 3)))
    assert g.log[A, B] == [1, 2, 3]


def test_without_retransmission_stable_still_purges_what_everyone_delivered() -> None:
    """Digests received by STABLE purge what every member has seen; nothing is purged at a
    sender before that (its own window is its retransmission store)."""
    g = Group(3, xmit_interval=0)
    g.send(A, 2)
    g.flush()
    assert g.nodes[A].windows[A] == nk.Window(0, 2, (nk.Data(1, 1), nk.Data(2, 2)), ())
    for member in (B, C, A):
        g.fire(member, nk.STABLE)
    g.flush()
    assert g.nodes[A].windows[A] == nk.Window(2, 2, (), ())


def test_without_retransmission_there_is_no_retransmit_task() -> None:
    """xmit_interval <= 0: the retransmit task is not running (no XMIT_REQ, no last-seqno sender)."""
    assert nk.XMIT not in [t.kind for t in nk.enabled_timers(nk.Config(3, xmit_interval=0), Group(3).nodes[A])]
    assert nk.XMIT in [t.kind for t in nk.enabled_timers(nk.Config(3), Group(3).nodes[A])]


def test_without_retransmission_stable_triggers_no_retransmission() -> None:
    """stable() does not ask for the previous digest's hr when retransmission is off, though it
    is above the local hr, and still purges."""
    for interval, expected in ((1000, 1), (0, 0)):
        g = Group(3, xmit_interval=interval)
        g.send(A, 2)
        g.lose(to(C, src=A, seqno=2))
        g.flush()
        for _ in range(2):  # the second round sees the first round's hr (2) above C's (1)
            for member in (B, C, A):
                g.fire(member, nk.STABLE)
            g.flush()
        assert g.log[A, C] == [1, 2][: 1 + expected]
        assert g.window(A, A).low == 1  # C delivered only 1 when the rounds started


# ---------------------------------------------------------------------------------------------
# become_server_queue: the seed's example with its own numbers.
def _join_while_b_sends(g: Group) -> None:
    """{A, B}, B at 100. C joins: A suspends STABLE and answers with the digest (B at 100); A and
    B install {A, B, C}; B multicasts #101..#170, all reaching C before its JoinRsp; then C
    gets the JoinRsp and BECOME_SERVER replays its queue."""
    g.send(B, 100)
    g.flush()
    g.join(A, C, (A, B, C))
    rsp = g.take(to(C, nk.JoinRsp))
    assert isinstance(rsp.msg, nk.JoinRsp)
    assert rsp.msg.digest[B] == (100, 100) and rsp.msg.digest[C] == (0, 0)
    g.view(A, (A, B, C))
    g.view(B, (A, B, C))
    g.send(B, 70)
    for _ in range(70):
        g.deliver(to(C, nk.Data, src=B))
    g.flush()  # A and B get their copies
    g.receive(rsp)
    assert g.nodes[C].windows[B] == nk.new_window(100)
    g.fire(C, nk.BECOME_SERVER)


def test_jgrp2675_bounded_queue_without_retransmission_leaves_a_permanent_gap() -> None:
    """Variant ``bounded_queue_no_xmit`` (JGroups before the fix, queue dropping the newest):
    C queues #101..#150, drops #151..#170, delivers up to #150, and from then on holds every new
    message of B without delivering it: the window only grows."""
    g = Group(3, founders=(A, B), xmit_interval=0, variant=nk.Variant(bounded_queue_no_xmit=True))
    _join_while_b_sends(g)
    assert g.log[B, C] == list(range(101, 151))
    for more in range(1, 4):
        g.send(B, 10)
        g.settle(rounds=2)
        assert g.log[B, C] == list(range(101, 151))
        assert nk.held_undelivered(g.nodes[C], B) == 10 * more
    assert g.log[B, A] == list(range(1, 201))


def test_jgrp2675_queue_dropping_the_oldest_delivers_nothing_at_all() -> None:
    """The seed's correction (BoundedList evicts the oldest): C keeps #121..#170, so the gap is at
    #101, right above the digest: C delivers nothing of B. "Conceptually the same" (seed)."""
    variant = nk.Variant(bounded_queue_no_xmit=True, queue_drops_oldest=True)
    g = Group(3, founders=(A, B), xmit_interval=0, variant=variant)
    _join_while_b_sends(g)
    assert g.log[B, C] == []
    assert nk.held_undelivered(g.nodes[C], B) == 50
    g.send(B, 5)
    g.settle(rounds=2)
    assert g.log[B, C] == [] and nk.held_undelivered(g.nodes[C], B) == 55


def test_jgrp2675_fix_the_queue_is_unbounded_without_retransmission() -> None:
    """The fix (JGroups' choice): with xmit_interval <= 0 the queue is unbounded; C delivers
    #101..#170 and everything after."""
    g = Group(3, founders=(A, B), xmit_interval=0)
    assert nk.queue_bound(g.cfg) is None
    _join_while_b_sends(g)
    assert g.log[B, C] == list(range(101, 171))
    g.send(B, 5)
    g.flush()
    assert g.log[B, C] == list(range(101, 176))


def test_queue_bounds_as_jgroups_reads_them() -> None:
    """50 by default, <= 0 reads as 10; unbounded without retransmission unless the JGRP-2675
    variant keeps the bound."""
    assert nk.queue_bound(nk.Config(3)) == 50
    assert nk.queue_bound(nk.Config(3, become_server_queue_size=0)) == 10
    assert nk.queue_bound(nk.Config(3, become_server_queue_size=-5)) == 10
    assert nk.queue_bound(nk.Config(3, xmit_interval=0)) is None
    assert nk.queue_bound(nk.Config(3, xmit_interval=-1, variant=nk.Variant(bounded_queue_no_xmit=True))) == 50


def test_queue_drops_the_newest_when_full() -> None:
    """JGroups' queue (ArrayBlockingQueue.offer): a full queue refuses the new message."""
    g = Group(3, founders=(A, B), become_server_queue_size=2)
    g.view(A, (A, B, C))
    g.send(A, 3)
    g.deliver(to(C, src=A, seqno=1))
    g.deliver(to(C, src=A, seqno=2))
    assert typed(g.deliver(to(C, src=A, seqno=3))) == typed((nk.QueueDropped(A, nk.Data(3, 3)),))
    assert [m.seqno for _, m in g.nodes[C].queue if isinstance(m, nk.Data)] == [1, 2]


def test_with_retransmission_the_bounded_queue_gap_is_repaired() -> None:
    """Retransmission on (bounded queue, JGroups' default): the gap #151..#170 is requested once
    a later message shows it, on the second retransmit run (previous batch), and B's
    re-multicast fills it."""
    g = Group(3, founders=(A, B))
    assert nk.queue_bound(g.cfg) == 50
    _join_while_b_sends(g)
    assert g.log[B, C] == list(range(101, 151))
    g.send(B)
    g.flush()
    assert g.window(C, B).missing() == tuple(range(151, 171))
    g.fire(C, nk.XMIT)
    assert not g.in_flight(to(B, nk.XmitReq))
    effects = g.fire(C, nk.XMIT)
    assert typed(effects) == typed((Send(B, nk.XmitReq(B, tuple(range(151, 171)))),))
    g.flush()
    assert g.log[B, C] == list(range(101, 172))


def test_replayed_messages_at_or_below_the_digest_are_dropped() -> None:
    """A queued copy of a message the digest already covers is not delivered on replay."""
    g = Group(3, founders=(A, B), xmit_interval=0)
    g.send(B, 2)
    g.flush()
    g.join(A, C, (A, B, C))
    rsp = g.take(to(C, nk.JoinRsp))
    g.view(B, (A, B, C))
    g.send(B)
    g.apply(B, nk.on_receive(g.cfg, g.nodes[B], C, nk.XmitReq(B, (2,))))  # re-multicasts #2
    g.flush()
    assert [(src, m.seqno) for src, m in g.nodes[C].queue if isinstance(m, nk.Data)] == [(B, 3), (B, 2)]
    g.receive(rsp)
    g.fire(C, nk.BECOME_SERVER)
    assert g.log[B, C] == [3]


# ---------------------------------------------------------------------------------------------
# Nothing may drop a message below NAKACK2.
def test_drop_below_nakack2_without_retransmission_is_permanent() -> None:
    """Thread pool rejection: B's copy of A's #2 never reaches NAKACK2. Without retransmission
    B delivers #1 and then nothing of A, for ever."""
    g = Group(3, xmit_interval=0)
    g.send(A, 3)
    g.lose(to(B, src=A, seqno=2))
    g.send(A, 5)
    g.settle()
    assert g.log[A, B] == [1]
    assert g.log[A, C] == list(range(1, 9))


def test_drop_below_nakack2_with_retransmission_is_recovered() -> None:
    """The same drop with retransmission on: B asks on its second retransmit run and delivers all."""
    g = Group(3)
    g.send(A, 3)
    g.lose(to(B, src=A, seqno=2))
    g.flush()
    g.fire(B, nk.XMIT)
    assert typed(g.fire(B, nk.XMIT)) == typed((Send(A, nk.XmitReq(A, (2,))),))
    g.flush()
    assert g.log[A, B] == [1, 2, 3]


def test_last_message_dropped_is_recovered_only_with_retransmission() -> None:
    """LastMessageDroppedTest: A's last message to B is dropped below NAKACK2. With
    retransmission, A's HIGHEST_SEQNO (not on the run right after the send) makes B ask for it;
    without, B never gets it (the seed: that test cannot pass without retransmission)."""
    g = Group(3)
    g.send(A, 3)
    g.lose(to(B, src=A, seqno=3))
    g.flush()
    assert typed(g.fire(A, nk.XMIT)) == typed(())  # skipped: an application send came first
    assert typed(g.fire(A, nk.XMIT)) == typed(tuple(Send(m, nk.HighestSeqno(3)) for m in (B, C)))
    g.flush()
    assert g.log[A, B] == [1, 2, 3]

    off = Group(3, xmit_interval=0)
    off.send(A, 3)
    off.lose(to(B, src=A, seqno=3))
    off.settle()
    assert off.log[A, B] == [1, 2]
