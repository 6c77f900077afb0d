"""UNICAST3's message cache (JGRP-2327, ``spec/unicast3.py`` decision 7): what is cached, what a drain
adds and drops, what leaves the cache alone, and why a set per sender is JGroups' queue.

The last claim is checked against a direct transcription of the Java code (``jgroups_drain``): the
queue of ``MessageCache`` (any order, duplicates kept) drained by ``addQueuedMessages`` and
``addMessage`` into a ``Table`` (``_add`` refuses a seqno at most hd or already held), then one
``removeAndDeliver``. For every queue of up to four DATA drawn from a small pool (with repeats, in
every order) and every window the drain may meet, the spec's step gives the same window, deliveries
and ACK flag.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from spec import unicast3 as u3
from spec.unicast3 import CLOSE_RECV, CLOSING, IDLE_RECV, OPEN, Close, Config, Data, Deliver, RecvEntry, Timer, Variant

A, B = 0, 1
BOTH = frozenset({A, B})
CFG = Config(members=2)


def dat(seqno: int, conn: int = 0, *, first: bool = False) -> Data:
    return Data(seqno, conn, first, 10 * conn + seqno)


def node_b(cache: frozenset[Data] = frozenset(), recv: RecvEntry | None = None, cfg: Config = CFG) -> u3.Node:
    node = u3.initial_node(B, cfg, BOTH)
    return replace(node, recv=(recv, None), cache=(cache, frozenset()))


def test_a_non_first_data_without_a_window_is_cached_and_asks_once() -> None:
    node = node_b()
    step = u3.on_receive(CFG, node, A, dat(2))
    assert step.node.cache[A] == {dat(2)} and step.node.recv[A] is None
    assert [type(e).__name__ for e in step.effects] == ["Send", "SyncRequested"]
    step = u3.on_receive(CFG, step.node, A, dat(3))  # rate limited: cached, no second request
    assert step.effects == () and step.node.cache[A] == {dat(2), dat(3)}
    step = u3.on_receive(CFG, step.node, A, dat(3))  # a duplicate changes nothing
    assert step.effects == () and step.node.cache[A] == {dat(2), dat(3)}


def test_a_data_of_another_connection_is_cached_and_the_window_left_alone() -> None:
    window = RecvEntry(0, CLOSING, 2, (), False)
    step = u3.on_receive(CFG, node_b(recv=window), A, dat(2, conn=1))
    assert step.node.recv[A] == window and step.node.cache[A] == {dat(2, conn=1)}


def test_no_message_cache_drops_it() -> None:
    cfg = Config(members=2, variant=Variant(no_message_cache=True))
    step = u3.on_receive(cfg, node_b(cfg=cfg), A, dat(2))
    assert step.node.cache[A] == frozenset()
    assert [type(e).__name__ for e in step.effects] == ["Send", "SyncRequested"]


def test_a_drain_adds_the_window_connection_and_drops_the_others() -> None:
    cached = frozenset({dat(2, conn=1), dat(3, conn=1), dat(2, conn=0), dat(5, conn=1)})
    step = u3.on_receive(CFG, node_b(cached), A, dat(1, conn=1, first=True))
    assert step.effects == (u3.WindowCreated(A, 1, 0), Deliver(A, 11), Deliver(A, 12), Deliver(A, 13))
    assert step.node.recv[A] == RecvEntry(1, OPEN, 3, (None, dat(5, conn=1)), True)
    assert step.node.cache[A] == frozenset()


def test_any_data_with_a_window_drains_even_a_duplicate() -> None:
    window = RecvEntry(0, CLOSING, 3, (), False)  # the cached #5 came while the window was elsewhere
    step = u3.on_receive(CFG, node_b(frozenset({dat(5)}), window), A, dat(2))
    assert step.effects == ()
    assert step.node.recv[A] == RecvEntry(0, OPEN, 3, (None, dat(5)), True)
    assert step.node.cache[A] == frozenset()


def test_a_drain_does_not_touch_another_sender_cache() -> None:
    cfg = Config(members=3)
    node = u3.initial_node(B, cfg, frozenset({0, 1, 2}))
    node = replace(node, cache=(frozenset({dat(2)}), frozenset(), frozenset({dat(4)})))
    step = u3.on_receive(cfg, node, 2, dat(1, first=True))
    assert step.node.cache == (frozenset({dat(2)}), frozenset(), frozenset())


@pytest.mark.parametrize("stimulus", ["view-without", "view-with", "close", "remove", "idle", "expiry"])
def test_only_start_and_stop_clear_the_cache(stimulus: str) -> None:
    """Views, CLOSE, the removal hook and the expiry timers leave ``msg_cache`` alone."""
    cfg = Config(members=2, conn_expiry=True)
    cached = frozenset({dat(4)})
    node = node_b(cached, RecvEntry(0, OPEN, 1, (), True), cfg)
    if stimulus == "view-without":
        node = u3.on_view(cfg, node, frozenset({B})).node
    elif stimulus == "view-with":
        node = u3.on_view(cfg, u3.on_view(cfg, node, frozenset({B})).node, BOTH).node
    elif stimulus == "close":
        node = u3.on_receive(cfg, node, A, Close(0)).node
        assert node.recv[A] is None
    elif stimulus == "remove":
        node = u3.on_remove_receiver(cfg, node, A).node
    elif stimulus == "idle":
        node = u3.on_timer(cfg, node, Timer(IDLE_RECV, A)).node
    else:
        node = u3.on_timer(cfg, u3.on_view(cfg, node, frozenset({B})).node, Timer(CLOSE_RECV, A)).node
        assert node.recv[A] is None
    assert node.cache[A] == cached


# ---------------------------------------------------------------------------------------------
# The set is JGroups' queue.
def jgroups_drain(window: RecvEntry | None, queue: list[Data], msg: Data
                  ) -> tuple[tuple[int, tuple[Data | None, ...]], list[int], bool] | None:
    """handleDataReceived for a DATA ``msg`` that finds a usable entry (``window``, or None for a
    first DATA that creates one), with ``queue`` in ``msg_cache[sender]``: addQueuedMessages, then
    addMessage, then removeAndDeliver, on a Table (``_add``: seqno - hd <= 0 refused, first add wins).
    Returns ((hd, slots), payloads delivered, ack pending) or None if ``msg`` finds no entry."""
    if window is None or window.conn_id != msg.conn_id:
        if not msg.first:
            return None
        window = RecvEntry(msg.conn_id, OPEN, msg.seqno - 1, (), False)
    hd, slots = window.delivered, dict(enumerate(window.buffered, window.delivered + 1))
    for added in [m for m in queue if m.conn_id == window.conn_id] + [msg]:
        if added.seqno - hd > 0 and slots.get(added.seqno) is None:
            slots[added.seqno] = added
    delivered = []
    while (next_one := slots.pop(hd + 1, None)) is not None:
        delivered.append(next_one.payload)
        hd += 1
    top = max((s for s, m in slots.items() if m is not None), default=hd)
    return (hd, tuple(slots.get(s) for s in range(hd + 1, top + 1))), delivered, True


POOL = (dat(2), dat(3), dat(4), dat(2, conn=1), dat(3, conn=1))
WINDOWS = (None, RecvEntry(0, OPEN, 1, (), False), RecvEntry(0, CLOSING, 2, (None, dat(4)), False),
           RecvEntry(1, OPEN, 2, (), True))
MESSAGES = (dat(1, first=True), dat(3, first=True), dat(1, conn=1, first=True), dat(3), dat(4), dat(2, conn=1))


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_a_drain_of_any_queue_is_the_drain_of_its_set(size: int) -> None:
    """Every queue of ``size`` DATA from ``POOL`` (repeats allowed, every order), every window and
    every DATA arriving: the spec with the queue's set does what JGroups does with the queue."""
    checked = 0
    for queue in itertools.product(POOL, repeat=size):
        for window in WINDOWS:
            for msg in MESSAGES:
                expected = jgroups_drain(window, list(queue), msg)
                if expected is None:
                    continue
                step = u3.on_receive(CFG, node_b(frozenset(queue), window), A, msg)
                entry = step.node.recv[A]
                assert entry is not None and step.node.cache[A] == frozenset()
                got = (entry.delivered, entry.buffered), [e.payload for e in step.effects if isinstance(e, Deliver)]
                assert got + (entry.ack_pending,) == expected, (queue, window, msg)
                checked += 1
    assert checked > 10 * len(POOL) ** size
