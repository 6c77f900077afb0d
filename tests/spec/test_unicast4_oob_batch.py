"""spec/unicast4.py decision 10 (OOB) and spec/unicast4_batch.py decision 11 (batches), handler by handler.

Invariants tested: an OOB DATA is delivered when its add takes it, before the add's ACK, counted once
(its placeholder is passed over and not counted by the drain; a run of placeholders is no batch);
every copy of an OOB message (XMIT_REQ answer, HS resend, SEND_FIRST_SEQNO answer, a blocked thread's
send) keeps the flag; a batch's adds are uncounted and leave the ACK pending, its OOB DATA go up as one
counted batch before the drain, only the highest conn_id's DATA are kept, and a batch whose lowest DATA
is not first and finds no window is cached whole; under ``oob_redelivers`` the drain delivers again.
"""

from __future__ import annotations

from spec import unicast4 as u4
from spec.effects import Deliver, Send, SyncRequested, WindowCreated
from spec.unicast4_batch import on_batch

TWO = frozenset({0, 1})
A, B = 0, 1


def node(cfg: u4.Config, me: int = B) -> u4.Node:
    return u4.initial_node(me, cfg, TWO)


def data(seqno: int, oob: bool = False, conn_id: int = 0) -> u4.Data:
    return u4.Data(seqno, conn_id, seqno == 1, seqno, oob)


def test_an_oob_data_is_delivered_on_add_before_its_ack_and_counted_once() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    n = u4.on_receive(cfg, node(cfg), A, data(1)).node  # counts 1 (add) + 1 (delivery): ACK, counter 0
    n, effects = u4.on_receive(cfg, n, A, data(3, oob=True))
    assert effects == (Deliver(A, 3),)  # counted 1 on add, pending; not in order: no batch
    entry = n.recv[A]
    assert entry is not None and entry.buffered == (None, u4.Data(3, 0, False, 0, True)) and entry.acks_counted == 1
    n, effects = u4.on_receive(cfg, n, A, data(2))
    # add: 1 + 1 = 2 -> ACK(hd=1) now; the drain moves hd over #2 and #3's placeholder and counts #2 only
    assert effects == (Send(A, u4.Ack(1, 0, 2)), Deliver(A, 2))
    entry = n.recv[A]
    assert entry is not None and entry.delivered == 3 and entry.buffered == () and entry.acks_counted == 1


def test_a_run_of_placeholders_only_is_no_batch() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    n, effects = u4.on_receive(cfg, node(cfg), A, u4.Data(1, 0, True, 1, True))
    # delivered on add, counted 1 (pending); the drain passes the placeholder: nothing counted, no ACK
    assert effects == (WindowCreated(A, 0, 0), Deliver(A, 1))
    entry = n.recv[A]
    assert entry is not None and entry.delivered == 1 and entry.acks_counted == 1 and entry.ack_pending
    again = u4.on_receive(cfg, n, A, u4.Data(1, 0, True, 1, True))  # a duplicate: refused, counted, ACK now
    assert again.effects == (Send(A, u4.Ack(1, 0, 1)),)


def test_every_copy_of_an_oob_message_keeps_the_flag() -> None:
    cfg = u4.Config(2, capacity=1)
    n = u4.initial_node(A, cfg, TWO)
    n, effects = u4.on_send(cfg, n, B, 1, oob=True)
    assert effects == (Send(B, u4.Data(1, 0, True, 1, True)),)
    n, effects = u4.on_send(cfg, n, B, 2, oob=True)  # blocks: the flag goes with the thread
    entry = n.send[B]
    assert effects == () and entry is not None and entry.oob == frozenset({1, 2})
    assert u4.on_receive(cfg, n, B, u4.XmitReq((1,))).effects == (Send(B, u4.Data(1, 0, True, 1, True)),)
    assert u4.on_receive(cfg, n, B, u4.SendFirstSeqno(1)).effects == (Send(B, u4.Data(1, 0, True, 1, True)),)
    n = u4.on_timer(cfg, n, u4.Timer(u4.XMIT, -1)).node  # records the watermark; the next run resends HS
    assert u4.on_timer(cfg, n, u4.Timer(u4.XMIT, -1)).effects == (Send(B, u4.Data(1, 0, True, 1, True)),)
    n = u4.on_receive(cfg, n, B, u4.Ack(1, 0, 1)).node
    entry = n.send[B]
    assert entry is not None and entry.oob == frozenset({2})
    n, effects = u4.on_timer(cfg, n, u4.Timer(u4.SEND, B, 2))
    assert effects == (Send(B, u4.Data(2, 0, False, 2, True)),)


def test_a_batch_is_uncounted_on_add_and_leaves_the_ack_pending() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=3)
    n, effects = on_batch(cfg, node(cfg), A, (data(1), data(2)))
    # no count on add; the run of 2 counts 2 < 3: pending, no ACK
    assert effects == (WindowCreated(A, 0, 0), Deliver(A, 1), Deliver(A, 2))
    entry = n.recv[A]
    assert entry is not None and entry.acks_counted == 2 and entry.ack_pending and entry.delivered == 2
    n, effects = on_batch(cfg, n, A, (data(3), data(4)))  # 2 + 2 >= 3: ACK(new hd) before the batch
    assert effects == (Send(A, u4.Ack(4, 0, 1)), Deliver(A, 3), Deliver(A, 4))


def test_an_oob_batch_goes_up_counted_before_the_drain() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    n = u4.on_receive(cfg, node(cfg), A, data(1)).node  # ACK at once (1 + 1): counter 0
    n, effects = on_batch(cfg, n, A, (data(3, True), data(4, True)))
    assert effects == (Send(A, u4.Ack(1, 0, 2)), Deliver(A, 3), Deliver(A, 4))  # hd before the drain
    entry = n.recv[A]
    assert entry is not None and entry.ack_pending and entry.acks_counted == 0
    n, effects = u4.on_receive(cfg, n, A, data(2))  # add counts 1; the drain counts #2 only: 2 -> ACK(4)
    assert effects == (Send(A, u4.Ack(4, 0, 3)), Deliver(A, 2))


def test_a_batch_keeps_the_highest_conn_id_and_decides_by_its_lowest_seqno() -> None:
    cfg = u4.Config(2, capacity=8)
    n, effects = on_batch(cfg, node(cfg), A, (u4.Data(2, 0, False, 2), u4.Data(1, 1, True, 7)))
    assert effects == (WindowCreated(A, 1, 0), Deliver(A, 7))  # conn_id 0's DATA dropped, no SEND_FIRST_SEQNO
    assert n.cache[A] == frozenset()
    # the lowest DATA is not first: no window, the whole batch cached after one SEND_FIRST_SEQNO
    m, effects = on_batch(cfg, node(cfg), A, (u4.Data(2, 0, False, 2), u4.Data(3, 0, True, 3)))
    assert effects == (Send(A, u4.SendFirstSeqno(1)), SyncRequested(A))
    assert m.recv[A] is None and m.cache[A] == frozenset({u4.Data(2, 0, False, 2), u4.Data(3, 0, True, 3)})


def test_a_batch_drains_the_cache_first_each_add_counted() -> None:
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    n = u4.on_receive(cfg, node(cfg), A, data(2, oob=True)).node  # no window: cached
    assert n.cache[A] == frozenset({data(2, oob=True)})  # after a SEND_FIRST_SEQNO (timestamp 1)
    n, effects = on_batch(cfg, n, A, (data(1), data(3)))
    # #2 added from the cache (delivered, counts 1); the batch adds #1, #3 uncounted; the run #1..#3
    # delivers #1 and #3 and counts 2: 1 + 2 -> ACK(3)
    assert effects == (WindowCreated(A, 0, 0), Deliver(A, 2), Send(A, u4.Ack(3, 0, 2)), Deliver(A, 1), Deliver(A, 3))
    assert n.cache[A] == frozenset()


def test_under_oob_redelivers_the_drain_delivers_again() -> None:
    cfg = u4.Config(2, capacity=8, variant=u4.Variant(oob_redelivers=True))
    n = u4.on_receive(cfg, node(cfg), A, data(1)).node
    n, effects = u4.on_receive(cfg, n, A, data(2, oob=True))
    assert [e for e in effects if isinstance(e, Deliver)] == [Deliver(A, 2), Deliver(A, 2)]


def test_cached_oob_messages_are_delivered_in_the_order_they_arrived() -> None:
    """msg_cache is a queue: its drain adds the OOB DATA in arrival order, each delivered when added
    (decision 8, ``Node.cache_order``, as UNICAST3's); a second copy keeps the first one's place; the
    regular ones are added in seqno order, which changes no ACK (every add counts 1)."""
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    n = node(cfg)
    for msg in (data(4, oob=True), data(3), data(2, oob=True), data(4, oob=True)):
        n = u4.on_receive(cfg, n, A, msg).node
    assert n.cache_order == ((data(4, oob=True), data(2, oob=True)), ())
    step = u4.on_receive(cfg, n, A, data(1))
    delivered = [e.payload for e in step.effects if isinstance(e, Deliver)]
    assert delivered == [4, 2, 1, 3]
    assert step.node.cache == (frozenset(), frozenset()) and step.node.cache_order == ()


def test_a_batch_that_finds_no_window_is_cached_in_its_order() -> None:
    """up(MessageBatch) with no usable entry: ``msg_cache.add`` for each DATA of the list in the
    batch's order (not the lowest seqno first), so its OOB DATA drain in that order."""
    cfg = u4.Config(2, capacity=8, ack_threshold=2)
    step = on_batch(cfg, node(cfg), A, (data(3, oob=True), data(2, oob=True)))
    assert step.node.cache_order == ((data(3, oob=True), data(2, oob=True)), ())
    step = u4.on_receive(cfg, step.node, A, data(1))
    assert [e.payload for e in step.effects if isinstance(e, Deliver)] == [3, 2, 1]
