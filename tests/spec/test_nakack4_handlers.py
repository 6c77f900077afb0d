"""The handlers of spec/nakack4.py one by one (sending threads and blocking, receiving, the ack
counter, HIGHEST_SEQNO, the AckTable and its purge, views, the join, the become_server_queue,
DISCONNECT), then each state property on a hand-built state that breaks it. The reference is
jgroups-fixed-windows.md section 2."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from spec import nakack4 as nk
from spec.effects import Deliver, Send, WindowCreated, WindowRemoved

A, B, C = 0, 1, 2
ALL = frozenset({A, B, C})


def typed(value: object) -> Any:
    """``value`` with every NamedTuple inside tagged by its class name (equal tuples of different
    message types must not compare equal)."""
    if isinstance(value, (tuple, list)):
        items = tuple(typed(item) for item in value)
        return (type(value).__name__, *items) if hasattr(value, "_fields") else items
    return value


def cfg(n: int = 3, **settings: Any) -> nk.Config:
    variant = settings.pop("variant", nk.Variant())
    return nk.Config(n, variant=variant, **settings)


def win(node: nk.Node, sender: int) -> nk.Window:
    """``node``'s window for ``sender`` (which must exist)."""
    window = node.windows[sender]
    assert window is not None
    return window


def founder(config: nk.Config, me: int = A, members: frozenset[int] = ALL) -> nk.Node:
    return nk.initial_node(me, config, members)


def holds_everything(config: nk.Config, node: nk.Node) -> None:
    for prop in (nk.window_order, nk.slots_hold_their_seqnos, nk.seqno_discipline, nk.ack_table_members,
                 nk.ack_min_is_min):
        assert prop(node), prop.__name__
    assert nk.window_within_capacity(config, node) and nk.queue_within_bound(config, node)
    assert nk.blocks_only_when_full(config, node)


def sends(step: nk.Step) -> list[Send]:
    return [e for e in step.effects if isinstance(e, Send)]


# ---------------------------------------------------------------------------------------------
# Sending threads and blocking.
def test_an_atomic_send_adds_and_multicasts_at_once_to_the_view_loopback_included() -> None:
    config = cfg(capacity=2, send_atomically=True)
    step = nk.on_send(config, founder(config), 1)
    assert typed(step.effects) == typed(tuple(Send(m, nk.Data(1, 1)) for m in (A, B, C)))
    assert step.node.windows[A] == nk.Window(0, 0, (), (nk.Data(1, 1),)) and step.node.skip_next_resend
    holds_everything(config, step.node)


def test_a_full_window_blocks_the_thread_with_its_seqno_until_the_acks_purge() -> None:
    config = cfg(2, capacity=1, send_atomically=True)
    node = nk.on_send(config, founder(config, members=frozenset({A, B})), 1).node
    blocked = nk.on_send(config, node, 2)
    node = blocked.node
    assert blocked.effects == () and node.sending == ((2, 2),) and node.seqno == 2
    assert nk.Timer(nk.SEND, 2) not in nk.enabled_timers(config, node)
    assert not nk.can_send(config, node)  # its one application thread is inside send
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node  # loopback: delivers and acks itself
    node = nk.on_ack(config, node, A, 1).node
    assert win(node, A).low == 0  # B has not acknowledged: the minimum is still 0
    purged = nk.on_ack(config, node, B, 1)
    assert typed(purged.effects) == typed((nk.AckPurged(1),)) and win(purged.node, A).low == 1
    assert nk.Timer(nk.SEND, 2) in nk.enabled_timers(config, purged.node)
    resumed = nk.on_timer(config, purged.node, nk.Timer(nk.SEND, 2))
    assert typed(sends(resumed)) == typed([Send(A, nk.Data(2, 2)), Send(B, nk.Data(2, 2))])
    assert resumed.node.sending == ()
    holds_everything(config, resumed.node)


def test_without_atomic_sends_two_threads_send_out_of_seqno_order() -> None:
    config = cfg(capacity=4, sender_threads=2)
    node = nk.on_send(config, founder(config), 1).node
    node = nk.on_send(config, node, 2).node
    assert node.sending == ((1, 1), (2, 2)) and not nk.can_send(config, node)
    node = nk.on_timer(config, node, nk.Timer(nk.SEND, 2)).node
    assert win(node, A).missing() == (1,)  # the own window has a gap: thread #1 is not done
    holds_everything(config, node)
    first = nk.on_timer(config, node, nk.Timer(nk.XMIT))  # sees the gap
    second = nk.on_timer(config, first.node, nk.Timer(nk.XMIT))  # asks for it, of itself
    assert typed(nk.Send(A, nk.XmitReq(A, (1,)))) in typed(second.effects)
    assert nk.on_receive(config, second.node, A, nk.XmitReq(A, (1,))).effects == ()  # not found


def test_lock_after_seqno_makes_send_atomically_two_steps_as_before_the_fix() -> None:
    fixed = cfg(capacity=4, send_atomically=True)
    broken = cfg(capacity=4, send_atomically=True, variant=nk.Variant(lock_after_seqno=True))
    assert fixed.atomic and not broken.atomic
    assert nk.on_send(broken, founder(broken), 1).node.sending == ((1, 1),)


def test_disconnect_fails_every_waiting_thread_and_spends_its_seqno() -> None:
    config = cfg(2, capacity=1, send_atomically=True, sender_threads=2)
    node = nk.on_send(config, founder(config, members=frozenset({A, B})), 1).node
    node = nk.on_send(config, node, 2).node
    step = nk.on_disconnect(config, node)
    assert typed(step.effects) == typed((nk.SendDropped(2, 2), WindowRemoved(B)))
    assert step.node.seqno == 0 and step.node.windows == (None, None) and not nk.can_send(config, step.node)
    assert nk.on_send(config, step.node, 3).effects == ()  # no own window: dropped


# ---------------------------------------------------------------------------------------------
# Receiving and the ack counter.
def test_a_receiver_drops_beyond_capacity_and_rejects_duplicates() -> None:
    config = cfg(capacity=2, ack_threshold=10)
    node = founder(config, B)
    assert nk.on_receive(config, node, A, nk.Data(3, 3)).node == node  # 3 - 0 > 2: dropped
    node = nk.on_receive(config, node, A, nk.Data(2, 2)).node
    again = nk.on_receive(config, node, A, nk.Data(2, 2))
    assert again.node == node and again.effects == ()
    step = nk.on_receive(config, node, A, nk.Data(1, 1))
    assert typed(step.effects) == typed((Deliver(A, 1), Deliver(A, 2)))
    assert step.node.windows[A] == nk.Window(2, 2, (), ())


def test_the_ack_counter_acks_at_the_threshold_and_otherwise_sets_the_pending_flag() -> None:
    config = cfg(capacity=16, ack_threshold=3)
    node = founder(config, B)
    step = nk.on_receive(config, node, A, nk.Data(1, 1))
    assert not sends(step) and step.node.ack_pending[A] and step.node.acks_counted[A] == 1
    step = nk.on_receive(config, step.node, A, nk.Data(2, 2))
    step = nk.on_receive(config, step.node, A, nk.Data(3, 3))  # 3 >= threshold: ACK now, counter reset
    assert typed(sends(step)) == typed([Send(A, nk.Ack(3))]) and step.node.acks_counted[A] == 0
    flushed = nk.on_timer(config, step.node, nk.Timer(nk.XMIT))  # the flag set earlier is flushed
    assert typed(Send(A, nk.Ack(3))) in typed(flushed.effects) and not any(flushed.node.ack_pending)


def test_the_default_threshold_is_a_quarter_of_the_capacity() -> None:
    assert cfg(capacity=16384).threshold == 4096 and cfg(capacity=3).threshold == 0
    assert cfg(capacity=16, ack_threshold=5).threshold == 5


def test_highest_seqno_asks_when_behind_and_counts_towards_the_ack() -> None:
    config = cfg(capacity=16, ack_threshold=4)
    step = nk.on_receive(config, founder(config, B), A, nk.HighestSeqno(2))
    assert typed(sends(step)) == typed([Send(A, nk.XmitReq(A, (2,)))])
    assert step.node.ack_pending[A] and step.node.acks_counted[A] == 1


def test_with_threshold_zero_highest_seqno_never_yields_an_ack() -> None:
    """JGroups ignores needToSendAck's answer in handleHighestSeqno: with a threshold of 0 the
    answer is always "send now", so neither an ACK nor the pending flag follows."""
    config = cfg(capacity=1)
    node = nk.on_receive(config, founder(config, B), A, nk.Data(1, 1)).node
    step = nk.on_receive(config, node, A, nk.HighestSeqno(1))
    assert not sends(step) and not step.node.ack_pending[A]
    assert not any(isinstance(e.msg, nk.Ack) for e in sends(nk.on_timer(config, step.node, nk.Timer(nk.XMIT))))


# ---------------------------------------------------------------------------------------------
# The AckTable and the purge.
def test_the_purge_goes_to_the_minimum_but_never_past_the_own_hd() -> None:
    config = cfg(2, capacity=4, send_atomically=True)
    node = founder(config, members=frozenset({A, B}))
    for payload in (1, 2):
        node = nk.on_send(config, node, payload).node
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node  # the own hd is 2 now
    node = replace(node, windows=(replace(win(node, A), delivered=1, kept=win(node, A).kept[:1],
                                          buffered=(nk.Data(2, 2),)), node.windows[B]))
    node = nk.on_ack(config, node, A, 2).node
    step = nk.on_ack(config, node, B, 2)
    assert step.node.ack_min == 2 and win(step.node, A).low == 1  # clamped to hd = 1


def test_an_ack_from_a_non_member_is_ignored_unless_jgrp_2904() -> None:
    config = cfg(capacity=4)
    node = nk.on_view(config, founder(config), frozenset({A, B})).node
    assert node.ack_table == (0, 0, nk.NO_ENTRY)
    assert nk.on_ack(config, node, C, 1).node == node
    broken = cfg(capacity=4, variant=nk.Variant(ack_from_non_members=True))
    recreated = nk.on_ack(broken, node, C, 1).node
    assert recreated.ack_table[C] == 1 and not nk.ack_table_members(recreated)


def test_a_view_without_the_slow_member_purges_and_releases_the_blocked_thread() -> None:
    config = cfg(2, capacity=1, send_atomically=True)
    node = nk.on_send(config, founder(config, members=frozenset({A, B})), 1).node
    node = nk.on_send(config, node, 2).node
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node
    node = nk.on_ack(config, node, A, 1).node  # B never acknowledges
    assert nk.enabled_timers(config, node) == (nk.Timer(nk.XMIT),)
    step = nk.on_view(config, node, frozenset({A}))
    assert typed(step.effects) == typed((WindowRemoved(B), nk.AckPurged(1)))
    assert step.node.ack_table == (1, nk.NO_ENTRY) and nk.Timer(nk.SEND, 2) in nk.enabled_timers(config, step.node)


def test_a_joiner_enters_the_table_at_zero_and_low_never_moves_back() -> None:
    config = cfg(capacity=4, send_atomically=True)
    node = founder(config, members=frozenset({A, B}))
    node = nk.on_send(config, node, 1).node
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node
    node = nk.on_ack(config, nk.on_ack(config, node, A, 1).node, B, 1).node
    assert win(node, A).low == 1
    joined = nk.on_join(config, node, C, ALL)
    assert typed(joined.effects) == typed((Send(C, nk.JoinRsp((A, B, C), ((1, 1), (0, 0), (0, 0)))),))
    step = nk.on_view(config, node, ALL)
    assert typed(step.effects) == typed((WindowCreated(C, 0, 0),))
    assert step.node.ack_min == 0 and win(step.node, A).low == 1
    holds_everything(config, step.node)


def test_the_joiner_queues_until_become_server_and_the_ring_refuses_the_newest() -> None:
    config = cfg(capacity=4, become_server_queue_size=1)
    joiner = founder(config, C, members=frozenset({A, B}))
    assert not joiner.is_server and nk.enabled_timers(config, joiner) == ()
    joiner = nk.on_receive(config, joiner, A, nk.Data(1, 1)).node
    full = nk.on_receive(config, joiner, A, nk.Data(2, 2))
    assert typed(full.effects) == typed((nk.QueueDropped(A, nk.Data(2, 2)),)) and len(full.node.queue) == 1
    node = nk.on_receive(config, full.node, A, nk.JoinRsp((A, B, C), ((0, 0), (0, 0), (0, 0)))).node
    assert node.become_server_pending and node.ack_table == (0, 0, 0)
    served = nk.on_timer(config, node, nk.Timer(nk.BECOME_SERVER))
    assert Deliver(A, 1) in served.effects and win(served.node, A).missing() == ()
    assert win(served.node, A).delivered == 1  # #2 was refused: a gap retransmission must fill


# ---------------------------------------------------------------------------------------------
# LastSeqnoResender.
def test_highest_seqno_goes_to_the_whole_view_while_anything_is_unacked_and_no_send_since() -> None:
    config = cfg(capacity=4, send_atomically=True)
    node = nk.on_send(config, founder(config), 1).node
    skipped = nk.on_timer(config, node, nk.Timer(nk.XMIT))
    assert not any(isinstance(s.msg, nk.HighestSeqno) for s in sends(skipped))  # a send since the last run
    announced = nk.on_timer(config, skipped.node, nk.Timer(nk.XMIT))
    assert typed(sends(announced)) == typed([Send(m, nk.HighestSeqno(1)) for m in (A, B, C)])
    again = nk.on_timer(config, announced.node, nk.Timer(nk.XMIT))
    assert typed(sends(again)) == typed(sends(announced))  # no cap: every run


def test_nothing_is_announced_once_everything_is_acknowledged() -> None:
    config = cfg(2, capacity=4, send_atomically=True)
    node = nk.on_send(config, founder(config, members=frozenset({A, B})), 1).node
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node
    node = nk.on_ack(config, nk.on_ack(config, node, A, 1).node, B, 1).node
    node = nk.on_timer(config, node, nk.Timer(nk.XMIT)).node
    assert not [s for s in sends(nk.on_timer(config, node, nk.Timer(nk.XMIT))) if isinstance(s.msg, nk.HighestSeqno)]


# ---------------------------------------------------------------------------------------------
# Each state property fails on a state that breaks it.
def built(config: nk.Config, **fields: Any) -> nk.Node:
    return replace(founder(config, members=frozenset({A, B})), **fields)


def with_config(prop: Any, config: nk.Config) -> Any:
    return lambda node: prop(config, node)


def broken_states() -> dict[str, tuple[Any, nk.Node]]:
    """Per node property: the property (of the node, or of config and node) and a state breaking it."""
    config, edge = cfg(2, capacity=2), cfg(2, capacity=2, variant=nk.Variant(seed_edge=True))
    d1, d2, d3 = nk.Data(1, 1), nk.Data(2, 2), nk.Data(3, 3)
    own = nk.Window(0, 0, (), (d1, d2))
    return {
        "window_order": (nk.window_order, built(config, seqno=2, windows=(own, nk.Window(0, 0, (), (d1,))))),
        "slots_hold_their_seqnos": (nk.slots_hold_their_seqnos,
                                    built(config, seqno=2, windows=(nk.Window(0, 0, (), (d2, d2)), None))),
        "seqno_discipline": (nk.seqno_discipline,
                             built(config, seqno=2, windows=(own, nk.new_window(0)), sending=((2, 2),))),
        "ack_table_members": (nk.ack_table_members,
                              built(config, members=frozenset({A}), windows=(nk.new_window(0), None))),
        "ack_min_is_min": (nk.ack_min_is_min, built(config, ack_table=(2, 1), ack_min=2)),
        "window_within_capacity": (with_config(nk.window_within_capacity, config), built(
            config, seqno=3, windows=(nk.Window(0, 0, (), (d1, d2, d3)), nk.new_window(0)))),
        "blocks_only_when_full": (with_config(nk.blocks_only_when_full, edge), built(
            edge, seqno=2, windows=(nk.Window(0, 0, (), (d1,)), nk.new_window(0)), sending=((2, 2),))),
    }


@pytest.mark.parametrize("name", list(broken_states()))
def test_each_node_property_fails_on_a_state_that_breaks_it(name: str) -> None:
    prop, state = broken_states()[name]
    assert not prop(state)
    holds_everything(cfg(2), founder(cfg(2), members=frozenset({A, B})))


def test_the_pair_properties_fail_when_the_sender_runs_ahead_of_a_receiver() -> None:
    config = cfg(2, capacity=2)
    sender = built(config, seqno=1, windows=(nk.Window(1, 1, (nk.Data(1, 1),)[:0], ()), nk.new_window(0)),
                   ack_table=(1, 1), ack_min=1)
    receiver = founder(config, B, frozenset({A, B}))  # its window for A delivered nothing
    assert not nk.purge_covered(sender, receiver) and not nk.acks_truthful(sender, receiver)
    caught_up = nk.with_window(receiver, A, nk.Window(1, 1, (), ()))
    assert nk.purge_covered(sender, caught_up) and nk.acks_truthful(sender, caught_up)


# ---------------------------------------------------------------------------------------------
# The historical variants, at the handler.
def test_before_jgrp_2874_highest_seqno_neither_counts_nor_loops_back() -> None:
    config = cfg(capacity=16, ack_threshold=4, variant=nk.Variant(highest_seqno_no_ack=True))
    step = nk.on_receive(config, founder(config, B), A, nk.HighestSeqno(0))
    assert step.node.acks_counted[A] == 0 and not step.node.ack_pending[A]
    node = nk.on_send(replace(config, send_atomically=True), founder(config), 1).node
    node = nk.on_timer(config, nk.on_timer(config, node, nk.Timer(nk.XMIT)).node, nk.Timer(nk.XMIT)).node
    announced = sends(nk.on_timer(config, node, nk.Timer(nk.XMIT)))
    assert typed(announced) == typed([Send(m, nk.HighestSeqno(1)) for m in (B, C)])  # not to A itself


def test_before_jgrp_2853_a_view_change_does_not_purge() -> None:
    config = cfg(2, capacity=1, send_atomically=True, variant=nk.Variant(view_change_no_purge=True))
    node = nk.on_send(config, founder(config, members=frozenset({A, B})), 1).node
    node = nk.on_receive(config, node, A, nk.Data(1, 1)).node
    node = nk.on_ack(config, node, A, 1).node
    step = nk.on_view(config, node, frozenset({A}))
    assert typed(step.effects) == typed((WindowRemoved(B),))
    assert step.node.ack_min == 1 and win(step.node, A).low == 0  # the minimum rose, nothing purged


def test_dont_block_sends_block_as_shipped_and_are_dropped_before_jgrp_2873() -> None:
    fixed = cfg(2, capacity=1, send_atomically=True, dont_block=True)
    node = nk.on_send(fixed, founder(fixed, members=frozenset({A, B})), 1).node
    assert nk.on_send(fixed, node, 2).node.sending == ((2, 2),)
    broken = replace(fixed, variant=nk.Variant(drop_dont_block=True))
    dropped = nk.on_send(broken, node, 2)
    assert typed(dropped.effects) == typed((nk.SendDropped(2, 2),)) and dropped.node.seqno == 2
    assert not nk.seqno_discipline(dropped.node)  # #2 is neither stored nor held: I2 broken


def test_a_dont_loopback_send_skips_the_own_copy_and_self_acks_unless_jgrp_2829() -> None:
    fixed = cfg(2, capacity=1, send_atomically=True, dont_loopback=True)
    step = nk.on_send(fixed, founder(fixed, members=frozenset({A, B})), 1)
    assert typed(sends(step)) == typed([Send(B, nk.Data(1, 1))])  # no copy to A itself
    own = step.node.windows[A]
    assert own is not None and (own.low, own.delivered, own.high) == (0, 1, 1)  # hd walked, nothing delivered
    assert step.node.ack_table == (1, 0)  # threshold 0: handled at once
    holds_everything(fixed, step.node)
    broken = replace(fixed, variant=nk.Variant(no_dont_loopback_self_ack=True))
    assert nk.on_send(broken, founder(broken, members=frozenset({A, B})), 1).node.ack_table == (0, 0)
    pending = replace(fixed, ack_threshold=2)
    later = nk.on_send(pending, founder(pending, members=frozenset({A, B})), 1).node
    assert later.ack_table == (0, 0) and later.ack_pending[A]  # the retransmit task will ACK(1) to A
    flushed = nk.on_timer(pending, later, nk.Timer(nk.XMIT))
    assert typed(Send(A, nk.Ack(1))) in typed(flushed.effects)


def test_the_join_purge_race_leaves_the_joiner_a_gap_nobody_can_fill() -> None:
    """models/nakack4/join-purge-race.toml carried on by hand: B purges #1 on A's and its own ACKs
    before it installs C's view, so C's window for B, created at the digest's 0, waits for #1 for
    ever: B's #2 arrives, C asks for #1, B finds nothing, and C delivers nothing of B's."""
    config = cfg(capacity=4, send_atomically=True)
    founders = frozenset({A, B})
    a, b, c = founder(config, A, founders), founder(config, B, founders), founder(config, C, founders)
    b = nk.on_send(config, b, 1).node  # #1 to A and B (B's view has no C)
    joined = nk.on_join(config, a, C, ALL)  # the digest: B's messages delivered to #0
    a = nk.on_view(config, joined.node, ALL).node
    rsp = sends(joined)[0].msg
    c = nk.on_receive(config, c, A, rsp).node
    c = nk.on_timer(config, c, nk.Timer(nk.BECOME_SERVER)).node
    b = nk.on_receive(config, b, B, nk.Data(1, 1)).node  # loopback: B delivers and acks itself
    b = nk.on_ack(config, b, B, 1).node
    a = nk.on_receive(config, a, B, nk.Data(1, 1)).node  # A delivers and acks
    b = nk.on_ack(config, b, A, 1).node
    assert win(b, B).low == 1  # #1 is gone
    b = nk.on_view(config, b, ALL).node
    assert not nk.purge_covered(b, c)
    step = nk.on_send(config, b, 2)
    c = nk.on_receive(config, c, B, nk.Data(2, 2)).node
    for _ in range(2):
        run = nk.on_timer(config, c, nk.Timer(nk.XMIT))
        c = run.node
    assert typed(Send(B, nk.XmitReq(B, (1,)))) in typed(run.effects)
    assert nk.on_receive(config, step.node, C, nk.XmitReq(B, (1,))).effects == ()  # not found
    assert win(c, B).delivered == 0 and win(c, B).missing() == (1,)


def test_an_exception_in_the_deliverer_strands_a_message_until_the_next_one_or_for_good() -> None:
    """JGRP-3034: the fix resets the deliverer, and the next message from the sender delivers what
    the failed batch held; before the fix nothing of that sender is ever delivered again."""
    fixed = cfg(2, capacity=4, deliver_exceptions=True)
    b = founder(fixed, B, frozenset({A, B}))
    assert nk.Timer(nk.DELIVER_FAULT, A) in nk.enabled_timers(fixed, b)
    armed = nk.on_timer(fixed, b, nk.Timer(nk.DELIVER_FAULT, A)).node
    failed = nk.on_receive(fixed, armed, A, nk.Data(1, 1))
    assert failed.effects == () and failed.node.deliverer[A] == nk.STRANDED and win(failed.node, A).delivered == 0
    assert nk.window_order(failed.node) and nk.deliverer_released(failed.node)
    assert nk.on_receive(fixed, failed.node, A, nk.HighestSeqno(1)).effects == ()  # nothing asks again
    later = nk.on_receive(fixed, failed.node, A, nk.Data(2, 2))
    assert typed([e for e in later.effects if isinstance(e, Deliver)]) == typed([Deliver(A, 1), Deliver(A, 2)])
    assert later.node.deliverer[A] == nk.READY
    broken = replace(fixed, variant=nk.Variant(deliverer_stuck=True))
    stuck = nk.on_receive(broken, armed, A, nk.Data(1, 1)).node
    assert stuck.deliverer[A] == nk.STUCK and not nk.deliverer_released(stuck)
    after = nk.on_receive(broken, stuck, A, nk.Data(2, 2))
    assert after.effects == () and win(after.node, A).delivered == 0 and win(after.node, A).high == 2
    assert nk.Timer(nk.DELIVER_FAULT, A) not in nk.enabled_timers(broken, after.node)


def test_the_complete_fix_delivers_a_stranded_message_on_the_next_highest_seqno() -> None:
    """fix_deliver_stranded (not in JGroups): the HIGHEST_SEQNO the sender repeats while its last
    message is unacked runs removeAndDeliver on the stranded window; without it, nothing does."""
    complete = cfg(2, capacity=4, deliver_exceptions=True, variant=nk.Variant(fix_deliver_stranded=True))
    b = founder(complete, B, frozenset({A, B}))
    armed = nk.on_timer(complete, b, nk.Timer(nk.DELIVER_FAULT, A)).node
    failed = nk.on_receive(complete, armed, A, nk.Data(1, 1)).node
    assert failed.deliverer[A] == nk.STRANDED and win(failed, A).delivered == 0
    step = nk.on_receive(complete, failed, A, nk.HighestSeqno(1))
    assert typed([e for e in step.effects if isinstance(e, Deliver)]) == typed([Deliver(A, 1)])
    assert step.node.deliverer[A] == nk.READY and win(step.node, A).delivered == 1 and nk.window_order(step.node)
    again = nk.on_receive(complete, step.node, A, nk.HighestSeqno(1))
    assert not [e for e in again.effects if isinstance(e, Deliver)]  # delivered once


def test_a_merge_digest_replaces_only_windows_behind_it_and_never_the_own() -> None:
    config = cfg(capacity=4)
    node = nk.on_receive(config, founder(config, B), A, nk.Data(1, 1)).node  # B's window for A at hd 1
    node = nk.on_receive(config, node, C, nk.Data(1, 1)).node  # and for C at hd 1
    step = nk.on_merge_digest(config, node, ((0, 0), (5, 5), (3, 3)))
    assert typed(step.effects) == typed((WindowRemoved(C), WindowCreated(C, 0, 3)))
    assert win(step.node, A).delivered == 1 and win(step.node, B).delivered == 0  # ahead: kept; own: kept
    assert win(step.node, C) == nk.new_window(3) and step.node.acks_counted[C] == 0
