"""spec/unicast4.py handler by handler: what UNICAST4 does that UNICAST3 does not.

Invariants tested: a send beyond capacity blocks with its seqno taken and its SEND timer is enabled
only once an ACK makes room; a forced purge clamps to the highest sent; a CLOSING entry keeps its
blocked threads and its CLOSE fails them (Discarded with the stored messages); conn_ids compare as
numbers and wrap after 32767; a DATA counts once when added and once when delivered; and the
timers of an entry with a blocked thread are the blocked kinds.
"""

from __future__ import annotations

from spec import unicast4 as u4
from spec.effects import Deliver, Discarded, Send, SyncRequested

TWO = frozenset({0, 1})


def node(cfg: u4.Config, me: int = 0) -> u4.Node:
    return u4.initial_node(me, cfg, TWO)


def test_a_full_window_blocks_the_thread_with_its_seqno() -> None:
    cfg = u4.Config(2, capacity=1)
    n, effects = u4.on_send(cfg, node(cfg), 1, 1)
    assert effects == (Send(1, u4.Data(1, 0, True, 1)),)
    n, effects = u4.on_send(cfg, n, 1, 2)
    entry = n.send[1]
    assert effects == () and entry is not None and entry.blocked == ((2, 2),) and entry.seqno == 2
    assert u4.Timer(u4.SEND, 1, 2) not in u4.enabled_timers(cfg, n)
    assert u4.Timer(u4.IDLE_BLOCKED, 1) in u4.enabled_timers(cfg, n)
    n, effects = u4.on_receive(cfg, n, 1, u4.Ack(1, 0, 1))
    assert u4.Timer(u4.SEND, 1, 2) in u4.enabled_timers(cfg, n)
    n, effects = u4.on_timer(cfg, n, u4.Timer(u4.SEND, 1, 2))
    assert effects == (Send(1, u4.Data(2, 0, False, 2)),) and n.send[1] is not None and n.send[1].blocked == ()


def test_an_ack_purges_with_force_clamped_to_the_highest_sent() -> None:
    cfg = u4.Config(2, capacity=4)
    n = node(cfg)
    for p in (1, 2):
        n, _ = u4.on_send(cfg, n, 1, p)
    n, _ = u4.on_receive(cfg, n, 1, u4.Ack(9, 0, 1))
    entry = n.send[1]
    assert entry is not None and entry.acked == 2 and entry.unacked == ()
    n2, effects = u4.on_receive(cfg, n, 1, u4.Ack(2, 0, 1))  # not newer: ignored
    assert n2 == n and effects == ()


def test_closing_keeps_blocked_threads_and_the_close_fails_them() -> None:
    cfg = u4.Config(2, capacity=1)
    n = node(cfg)
    n, _ = u4.on_send(cfg, n, 1, 1)
    n, _ = u4.on_send(cfg, n, 1, 2)
    n, _ = u4.on_view(cfg, n, frozenset({0}))
    entry = n.send[1]
    assert entry is not None and entry.state == u4.CLOSING and entry.blocked == ((2, 2),)
    assert u4.Timer(u4.CLOSE_BLOCKED, 1) in u4.enabled_timers(cfg, n)
    n, effects = u4.on_timer(cfg, n, u4.Timer(u4.CLOSE_BLOCKED, 1))
    assert n.send[1] is None and effects == (Discarded(1, (1, 2), True),)  # no CLOSE: B left the view


def test_zero_timeouts_leave_no_timer_to_release_a_blocked_thread() -> None:
    cfg = u4.Config(2, capacity=1, variant=u4.Variant(zero_conn_timeouts=True))
    n = node(cfg)
    n, _ = u4.on_send(cfg, n, 1, 1)
    n, _ = u4.on_send(cfg, n, 1, 2)
    assert u4.enabled_timers(cfg, n) == (u4.Timer(u4.XMIT, -1),)


def test_conn_ids_compare_as_numbers_and_wrap() -> None:
    cfg = u4.Config(2, first_conn_id=u4.SHORT_MAX)
    a = node(cfg)
    a, _ = u4.on_send(cfg, a, 1, 1)
    assert a.send[1] is not None and a.send[1].conn_id == u4.SHORT_MAX and a.next_conn_id == 0
    b = node(u4.Config(2), me=1)
    b, _ = u4.on_receive(cfg, b, 0, u4.Data(1, u4.SHORT_MAX, True, 1))
    cached, effects = u4.on_receive(cfg, b, 0, u4.Data(1, 0, True, 2))  # lower: cached, nothing asked
    assert effects == () and cached.recv == b.recv and cached.cache[0] == frozenset({u4.Data(1, 0, True, 2)})
    drained, _ = u4.on_receive(cfg, cached, 0, u4.Data(2, u4.SHORT_MAX, False, 2))  # the drain drops it
    assert drained.cache[0] == frozenset() and drained.recv[0] is not None and drained.recv[0].delivered == 2
    old = u4.Config(2, first_conn_id=u4.SHORT_MAX, variant=u4.Variant(any_conn_id=True))
    replaced, _ = u4.on_receive(old, b, 0, u4.Data(1, 0, True, 2))  # UNICAST3's rule: replaced
    assert replaced.recv[0] is not None and replaced.recv[0].conn_id == 0


def test_the_cache_holds_a_data_without_entry_until_the_first_arrives() -> None:
    cfg = u4.Config(2, capacity=4)
    b = node(cfg, me=1)
    b, effects = u4.on_receive(cfg, b, 0, u4.Data(2, 0, False, 2))  # before #1: SEND_FIRST_SEQNO, cached
    assert effects == (Send(0, u4.SendFirstSeqno(1)), SyncRequested(0))
    assert b.cache[0] == frozenset({u4.Data(2, 0, False, 2)}) and b.recv[0] is None
    b, effects = u4.on_receive(cfg, b, 0, u4.Data(1, 0, True, 1))  # drains: #2 added first, then #1
    assert [e for e in effects if isinstance(e, Deliver)] == [Deliver(0, 1), Deliver(0, 2)]
    assert b.cache[0] == frozenset() and b.recv[0] is not None and b.recv[0].delivered == 2


def test_a_data_counts_on_add_and_on_delivery() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=3)
    b = node(cfg, me=1)
    b, effects = u4.on_receive(cfg, b, 0, u4.Data(1, 0, True, 1))
    assert effects[-1] == Deliver(0, 1) and b.recv[0] is not None and b.recv[0].acks_counted == 2
    b, effects = u4.on_receive(cfg, b, 0, u4.Data(2, 0, False, 2))
    assert effects == (Send(0, u4.Ack(1, 0, 1)), Deliver(0, 2))  # the ACK on add: hd before #2
    b, effects = u4.on_receive(cfg, b, 0, u4.Data(11, 0, False, 11))  # beyond capacity: dropped, counted
    assert effects == () and b.recv[0] is not None and b.recv[0].buffered == () and b.recv[0].acks_counted == 2


def test_dont_block_drops_only_under_jgrp2873() -> None:
    cfg = u4.Config(2, capacity=1, dont_block=True, variant=u4.Variant(drop_dont_block=True))
    n = node(cfg)
    n, _ = u4.on_send(cfg, n, 1, 1)
    n, effects = u4.on_send(cfg, n, 1, 2)
    assert effects == (u4.SendDropped(1, 2, 2),) and n.send[1] is not None and n.send[1].seqno == 2
    assert u4.seqno_discipline(n)
