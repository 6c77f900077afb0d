"""STABLE's round and purge (spec/nakack2_stable.py), JGRP-2678's previous against current
digest, and the join as NAKACK2 sees it (digest, become_server_queue, STABLE suspended).
Fixed-windows section 4 and digest 1.4 (c), (c2) are the reference.
"""

from __future__ import annotations

from dataclasses import replace

from test_nakack2_group import Group, Packet, to, typed

from spec import nakack2 as nk
from spec.effects import Send, WindowCreated

A, B, C = 0, 1, 2
ALL = (A, B, C)


def _votes(g: Group, *voters: int) -> None:
    """``voters`` run their gossip task and their votes reach the coordinator (A)."""
    for member in voters:
        g.fire(member, nk.STABLE)
        if member != A:
            g.deliver(to(A, nk.StableVote, src=member))


# ---------------------------------------------------------------------------------------------
# The round.
def test_the_coordinator_multicasts_stability_once_every_member_voted() -> None:
    """Votes are merged min hd, max hr per sender; once all voted, a new round starts, STABILITY
    goes to the other members, and the coordinator purges at once."""
    g = Group(3)
    g.send(B, 3)
    g.send(A)
    g.deliver(to(B, src=B, seqno=3))  # B delivered its own 1..3
    g.deliver(to(A, src=B, seqno=1))  # A: hd 1, hr 1
    g.deliver(to(C, src=B, seqno=2))  # C: hd 0, hr 2
    g.deliver(to(A, src=A))
    g.deliver(to(B, src=A))
    g.deliver(to(C, src=A))
    _votes(g, A, B)
    assert not g.in_flight(lambda p: isinstance(p.msg, nk.Stability))
    assert g.nodes[A].votes == {A, B}
    g.fire(C, nk.STABLE)
    merged = ((1, 1), (0, 3), (0, 0))
    assert typed(g.deliver(to(A, nk.StableVote))) == typed(
        (Send(B, nk.Stability(ALL, merged)), Send(C, nk.Stability(ALL, merged)), nk.StablePurged(A, 1)))
    assert g.nodes[A].votes == frozenset() and g.nodes[A].merged == (None, None, None)
    assert typed(g.receive(Packet(A, A, nk.Stability(ALL, merged)))) == typed(())  # its own copy


def test_duplicate_and_foreign_votes_are_ignored() -> None:
    """A second vote of one member in a round, a vote for another view and a vote reaching a
    member that does not coordinate are not counted."""
    g = Group(3)
    _votes(g, B)
    before = g.nodes[A]
    assert typed(g.receive(Packet(B, A, nk.StableVote(ALL, ((5, 5), None, None))))) == typed(())
    assert g.nodes[A] == before
    g.receive(Packet(C, A, nk.StableVote((A, C), ((0, 0), None, (0, 0)))))
    assert g.nodes[A].votes == {B}
    g.receive(Packet(C, B, nk.StableVote(ALL, ((0, 0), (0, 0), (0, 0)))))
    assert g.nodes[B].votes == frozenset()


def test_purge_goes_to_the_stable_hd_but_never_past_the_local_hd() -> None:
    """Non-forced purge: a sender whose loopback copy has not come back yet has delivered
    nothing of its own, so nothing is purged even when the others delivered everything."""
    g = Group(3)
    g.send(C, 2)
    for member in (A, B):
        g.deliver(to(member, seqno=1))
        g.deliver(to(member, seqno=2))
    stability = nk.Stability(ALL, ((0, 0), (0, 0), (2, 2)))
    assert typed(g.receive(Packet(A, C, stability))) == typed(())
    g.deliver(to(C, src=C, seqno=1))
    assert typed(g.receive(Packet(A, C, stability))) == typed((nk.StablePurged(C, 2),))
    assert g.nodes[C].windows[C] == nk.Window(2, 2, (), ())


def test_a_silent_member_stalls_purging_for_everyone() -> None:
    g = Group(3)
    g.send(A, 2)
    g.flush()
    _votes(g, A, B)
    g.settle(rounds=0)
    assert g.window(A, A).low == 0
    _votes(g, C)
    g.flush()
    assert g.window(A, A).low == 2


def test_no_vote_without_an_entry_for_every_member_of_the_view() -> None:
    """STABLE sends no gossip while its digest does not cover the view ("could not find
    matching digest"), nor while the member's STABLE is suspended."""
    g = Group(3)
    node = g.nodes[B]
    assert nk.stable_task(g.cfg, node).effects
    assert nk.stable_task(g.cfg, nk.with_window(node, C, None)).effects == ()
    assert nk.stable_task(g.cfg, replace(node, stable_suspended=True)).effects == ()


def test_a_suspended_member_ignores_stability() -> None:
    """STABLE.handleStabilityMessage: nothing is purged while suspended."""
    g = Group(3)
    g.send(B)
    g.flush()
    stability = nk.Stability(ALL, ((0, 0), (1, 1), (0, 0)))
    suspended = replace(g.nodes[B], stable_suspended=True)
    assert nk.on_receive(g.cfg, suspended, A, stability) == nk.Step(suspended, ())
    assert typed(nk.on_receive(g.cfg, g.nodes[B], A, stability).effects) == typed((nk.StablePurged(B, 1),))


def test_stability_for_another_view_is_ignored() -> None:
    g = Group(3)
    g.send(B)
    g.flush()
    assert typed(g.receive(Packet(A, B, nk.Stability((A, B), ((0, 0), (1, 1), None))))) == typed(())
    assert g.window(B, B).low == 0
    assert typed(g.receive(Packet(A, B, nk.Stability(ALL, ((0, 0), (1, 1), (0, 0)))))) == typed(
        (nk.StablePurged(B, 1),))


# ---------------------------------------------------------------------------------------------
# JGRP-2678: the STABLE-triggered retransmission.
def _round_with_c_missing_the_last(variant: nk.Variant) -> tuple[Group, tuple[object, ...]]:
    """A sends #1, #2; C has #1, its #2 is still in flight. A round: the digest's hr for A is 2."""
    g = Group(3, variant=variant)
    g.send(A, 2)
    for member in (A, B):
        g.deliver(to(member, seqno=2))
        g.deliver(to(member, seqno=1))
    g.deliver(to(C, seqno=1))
    _votes(g, A, B, C)
    g.deliver(to(B, nk.Stability))
    return g, g.deliver(to(C, nk.Stability))


def test_jgrp2678_the_first_round_only_remembers_the_digests_hr() -> None:
    """Fixed: C's hr (1) is below the digest's (2), but #2 may still be in flight: C only records
    2; the *next* round asks for it if C's hr is still below."""
    g, effects = _round_with_c_missing_the_last(nk.Variant())
    assert typed(effects) == typed(())
    assert g.nodes[C].stable_xmit == (2, 0, 0)
    _votes(g, A, B, C)
    g.deliver(to(B, nk.Stability))
    assert typed(g.deliver(to(C, nk.Stability))) == typed((Send(A, nk.XmitReq(A, (2,))),))


def test_jgrp2678_a_message_that_arrived_between_rounds_is_not_asked_for() -> None:
    g, _ = _round_with_c_missing_the_last(nk.Variant())
    g.deliver(to(C, nk.Data))
    _votes(g, A, B, C)
    g.flush()
    assert not g.in_flight(lambda p: isinstance(p.msg, nk.XmitReq))
    assert g.log[A, C] == [1, 2]


def test_jgrp2678_variant_asks_for_the_current_digests_hr_at_once() -> None:
    """Before JGRP-2678: C asks for #2 in the first round, though #2 is still in flight."""
    g, effects = _round_with_c_missing_the_last(nk.Variant(stable_xmit_current_hr=True))
    assert typed(effects) == typed((Send(A, nk.XmitReq(A, (2,))),))
    assert g.in_flight(to(C, nk.Data, seqno=2))


# ---------------------------------------------------------------------------------------------
# The join.
def test_the_coordinator_suspends_stable_while_a_member_joins() -> None:
    """on_join: JoinRsp with the view and the digest (the joiner at (0, 0)); votes are ignored
    until the coordinator installs the new view, which starts a new round."""
    g = Group(3, founders=(A, B))
    g.send(B, 2)
    g.flush()
    effects = g.join(A, C, ALL)
    assert typed(effects) == typed((Send(C, nk.JoinRsp(ALL, ((0, 0), (2, 2), (0, 0)))),))
    assert g.nodes[A].stable_suspended
    _votes(g, A, B)
    assert g.nodes[A].votes == frozenset() and not g.in_flight(to(A, nk.Stability))
    g.view(A, ALL)
    assert not g.nodes[A].stable_suspended


def test_a_joiner_queues_nakack2_messages_until_become_server() -> None:
    """Every NAKACK2 message type waits in the queue; STABLE's do not. The JoinRsp creates the
    windows at the digest's hd (SET_DIGEST), installs the view, and BECOME_SERVER replays."""
    g = Group(3, founders=(A, B))
    g.send(B, 2)
    g.flush()
    g.join(A, C, ALL)
    rsp = g.take(to(C, nk.JoinRsp))
    g.view(B, ALL)
    g.send(B, 2)
    g.lose(to(C, src=B, seqno=4))
    g.flush()  # C queues #3; A and B deliver
    queued: list[nk.Msg] = [nk.Data(3, 3), nk.XmitReq(C, (1,)), nk.XmitRsp(B, 4, 4), nk.HighestSeqno(4)]
    for msg in queued[1:]:
        assert typed(g.receive(Packet(B, C, msg))) == typed(())
    assert typed(g.receive(Packet(A, C, nk.Stability(ALL, ((0, 0), (0, 0), (0, 0)))))) == typed(())
    assert g.nodes[C].queue == tuple((B, m) for m in queued) and not g.nodes[C].is_server
    assert nk.enabled_timers(g.cfg, g.nodes[C]) == (nk.Timer(nk.XMIT),)
    effects = g.receive(rsp)
    assert typed(effects) == typed((WindowCreated(A, 0, 0), WindowCreated(B, 0, 2), WindowCreated(C, 0, 0)))
    assert g.nodes[C].is_server and nk.Timer(nk.BECOME_SERVER) in nk.enabled_timers(g.cfg, g.nodes[C])
    g.fire(C, nk.BECOME_SERVER)
    assert g.log[B, C] == [3, 4] and g.nodes[C].queue == ()
    assert nk.Timer(nk.BECOME_SERVER) not in nk.enabled_timers(g.cfg, g.nodes[C])
    joined = g.nodes[C]
    assert typed(g.receive(rsp)) == typed(()) and g.nodes[C] == joined  # a late JoinRsp changes nothing


def test_a_joiners_vote_names_the_digest_so_nothing_it_needs_is_purged() -> None:
    """After the join, the joiner's vote carries the digest's hd: the round's min hd stays at or
    below what the joiner still needs from B (P6, checked on every step by the group)."""
    g = Group(3, founders=(A, B))
    g.send(B, 2)
    g.flush()
    g.join(A, C, ALL)
    rsp = g.take(to(C, nk.JoinRsp))
    g.view(A, ALL)
    g.view(B, ALL)
    g.send(B, 2)
    g.lose(to(C, src=B, seqno=3))
    g.flush()
    g.receive(rsp)
    g.fire(C, nk.BECOME_SERVER)
    for member in ALL:
        g.fire(member, nk.STABLE)
    g.flush()
    assert g.window(B, B).low == 2
    g.settle()
    assert g.log[B, C] == [3, 4] and g.window(B, B).low == 4
