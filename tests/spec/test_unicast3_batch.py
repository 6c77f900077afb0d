"""UNICAST3's batch input (``spec/unicast3_batch.py``, decision 25: ``up(MessageBatch)``).

Invariants tested: a batch adds all its DATA of the entry's connection and delivers the in-order run
in order, as the same DATA received one by one would; one ACK decision per batch (at once, with the
highest delivered seqno, iff the batch holds at least ack_threshold DATA of the connection, pending
otherwise; the immediate ACK leaves a pending flag as it was); a first DATA anywhere in the batch
creates the entry, and the non-first DATA before it are added too; a non-first DATA is cached only
while the sender has no entry at all, one of another connection is dropped with one rate-limited
SEND_FIRST_SEQNO; the cache is drained into the window (other connections' DATA dropped); an OOB
batch delivers what the window took, at once and once; ``no_message_cache`` caches nothing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from spec import unicast3 as u3
from spec.unicast3 import Ack, Config, Data, Deliver, RecvEntry, Send, SendFirstSeqno, Variant, WindowCreated
from spec.unicast3_batch import on_batch

A, B = 0, 1
BOTH = frozenset({A, B})
CFG = Config(members=2)  # ack_threshold 100, JGroups' default
EAGER = Config(members=2, ack_threshold=2)


def receiver(window: RecvEntry | None = None, cache: frozenset[Data] = frozenset(), cfg: Config = CFG) -> u3.Node:
    node = replace(u3.initial_node(B, cfg, BOTH), recv=(window, None))
    for msg in sorted(cache):  # through msg_cache.add, so that OOB DATA get their arrival order
        node = u3.cache_add(node, A, msg)
    return node


def data(seqno: int, conn_id: int = 0, *, oob: bool = False) -> Data:
    return Data(seqno, conn_id, seqno == 1, seqno, oob)


def delivered(step: u3.Step) -> list[int]:
    return [e.payload for e in step.effects if isinstance(e, Deliver)]


def sent(step: u3.Step) -> list[object]:
    return [e.msg for e in step.effects if isinstance(e, Send)]


def test_a_batch_delivers_what_single_receptions_deliver() -> None:
    node = receiver(RecvEntry(0, u3.OPEN, 1, (), False))
    step = on_batch(CFG, node, A, (data(2), data(3), data(5)))
    one_by_one = node
    for m in (data(2), data(3), data(5)):
        one_by_one = u3.on_receive(CFG, one_by_one, A, m).node
    assert delivered(step) == [2, 3]
    assert step.node == one_by_one
    assert sent(step) == []  # 3 < ack_threshold: pending
    assert step.node.recv[A] == RecvEntry(0, u3.OPEN, 3, (None, data(5)), True)


@pytest.mark.parametrize("size, immediate", [(1, False), (2, True), (3, True)])
def test_one_ack_decision_per_batch(size: int, immediate: bool) -> None:
    node = receiver(RecvEntry(0, u3.CLOSING, 1, (), False), cfg=EAGER)
    step = on_batch(EAGER, node, A, tuple(data(s) for s in range(2, 2 + size)))
    entry = step.node.recv[A]
    assert entry is not None and entry.state == u3.OPEN and entry.delivered == 1 + size
    if immediate:
        assert sent(step) == [Ack(1 + size, 0, 1)] and not entry.ack_pending
    else:
        assert sent(step) == [] and entry.ack_pending


def test_duplicates_count_toward_the_threshold_and_a_pending_flag_stays() -> None:
    node = receiver(RecvEntry(0, u3.OPEN, 3, (), True), cfg=EAGER)
    step = on_batch(EAGER, node, A, (data(2), data(3)))
    assert sent(step) == [Ack(3, 0, 1)] and delivered(step) == []
    assert step.node.recv[A] == RecvEntry(0, u3.OPEN, 3, (), True)


def test_a_first_data_anywhere_creates_the_entry_and_the_ones_before_it_are_added() -> None:
    step = on_batch(EAGER, receiver(cfg=EAGER), A, (data(3), data(1), data(2)))
    assert step.effects[0] == WindowCreated(A, 0, 0)
    assert delivered(step) == [1, 2, 3]
    assert sent(step) == [Ack(3, 0, 1)]
    assert step.node.cache[A] == frozenset()


def test_no_entry_and_no_first_caches_all_and_asks_once() -> None:
    step = on_batch(CFG, receiver(), A, (data(2), data(3)))
    assert sent(step) == [SendFirstSeqno(1)]
    assert step.node.cache[A] == {data(2), data(3)} and step.node.recv[A] is None
    again = on_batch(CFG, step.node, A, (data(4), data(5)))
    assert sent(again) == []  # rate-limited (sync_min_interval)
    drained = u3.on_receive(CFG, again.node, A, data(1))
    assert delivered(drained) == [1, 2, 3, 4, 5]


def test_another_connection_is_dropped_not_cached_unlike_the_single_path() -> None:
    node = receiver(RecvEntry(0, u3.OPEN, 1, (), False))
    step = on_batch(CFG, node, A, (data(2, 7), data(3, 7)))
    assert sent(step) == [SendFirstSeqno(1)]
    assert step.node.cache[A] == frozenset() and step.node.recv[A] == node.recv[A]
    single = u3.on_receive(CFG, node, A, data(2, 7))
    assert single.node.cache[A] == {data(2, 7)}  # the single path caches it (decision 7)


def test_a_mixed_batch_keeps_the_entry_connection_and_asks_for_the_other() -> None:
    node = receiver(RecvEntry(0, u3.OPEN, 1, (), False))
    step = on_batch(CFG, node, A, (data(2), data(2, 7)))
    assert sent(step) == [SendFirstSeqno(1)] and delivered(step) == [2]


def test_the_cache_is_drained_into_the_window_other_connections_dropped() -> None:
    cache = frozenset({data(2), data(5, 9)})
    step = on_batch(CFG, receiver(cache=cache), A, (data(1), data(3)))
    assert delivered(step) == [1, 2, 3]
    assert step.node.cache[A] == frozenset()


def test_an_oob_batch_delivers_what_the_window_took_once() -> None:
    node = receiver(RecvEntry(0, u3.OPEN, 1, (), False), cfg=EAGER)
    step = on_batch(EAGER, node, A, (data(3, oob=True), data(4, oob=True)))
    assert delivered(step) == [3, 4] and sent(step) == [Ack(1, 0, 1)]
    again = on_batch(EAGER, step.node, A, (data(2, oob=True), data(3, oob=True)))
    assert delivered(again) == [2]  # #3 is held: not delivered again; the drain passes #3, #4 over
    entry = again.node.recv[A]
    assert entry is not None and entry.delivered == 4 and sent(again) == [Ack(4, 0, 2)]


def test_a_batch_of_two_modes_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        on_batch(CFG, receiver(), A, (data(1), data(2, oob=True)))


def test_without_the_message_cache_nothing_is_cached() -> None:
    cfg = Config(members=2, variant=Variant(no_message_cache=True))
    step = on_batch(cfg, receiver(cfg=cfg), A, (data(2), data(3)))
    assert step.node.cache[A] == frozenset() and sent(step) == [SendFirstSeqno(1)]


def test_an_empty_batch_changes_nothing() -> None:
    node = receiver()
    assert on_batch(CFG, node, A, ()) == u3.Step(node, ())
