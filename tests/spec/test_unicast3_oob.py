"""UNICAST3's OOB flag (``spec/unicast3.py`` decision 12) and the channel that judges it
(``spec/reliable_fifo.py`` rule 4).

Invariants tested: an OOB DATA is delivered when the window takes it, whether or not its seqno is
next, and never again (the drain passes its placeholder over; variant ``oob_redelivers`` does
not); it is acknowledged like any other; the sender remembers which unacked seqnos are OOB until
they are purged, and every resend (XMIT_REQ, highest-sent resend, SEND_FIRST_SEQNO answer) carries
the flag; a cached OOB DATA is delivered by the drain of the cache, added before the message that
drains it, as ``addQueuedMessages`` then ``addMessage`` do. The channel exempts OOB payloads from
in-order delivery and nothing else, and without OOB sends it is the FIFO channel bit for bit.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from spec import reliable_fifo as fifo
from spec import unicast3 as u3
from spec.reliable_fifo import DUPLICATE, OUT_OF_ORDER, Channel
from spec.unicast3 import Ack, Config, Data, Deliver, RecvEntry, Send, Timer, Variant, XmitReq

A, B = 0, 1
BOTH = frozenset({A, B})
CFG = Config(members=2)


def receiver(window: RecvEntry | None = None, cache: frozenset[Data] = frozenset(), cfg: Config = CFG) -> u3.Node:
    node = replace(u3.initial_node(B, cfg, BOTH), recv=(window, None))
    for msg in sorted(cache):  # through msg_cache.add, so that OOB DATA get their arrival order
        node = u3.cache_add(node, A, msg)
    return node


def delivered(step: u3.Step) -> list[int]:
    return [e.payload for e in step.effects if isinstance(e, Deliver)]


def oob(seqno: int, *, first: bool = False) -> Data:
    return Data(seqno, 0, first, seqno, True)


def plain(seqno: int, *, first: bool = False) -> Data:
    return Data(seqno, 0, first, seqno)


# ---------------------------------------------------------------- the sender


def test_an_oob_send_is_flagged_and_remembered_until_purged() -> None:
    node = u3.initial_node(A, CFG, BOTH)
    node = u3.on_send(CFG, node, B, 1).node
    step = u3.on_send(CFG, node, B, 2, oob=True)
    assert step.effects == (Send(B, Data(2, 0, False, 2, True)),)
    entry = step.node.send[B]
    assert entry is not None and entry.oob == {2}
    after = u3.on_receive(CFG, step.node, B, Ack(1, 0, 1)).node.send[B]
    assert after is not None and after.oob == {2}
    after = u3.on_receive(CFG, step.node, B, Ack(2, 0, 2)).node.send[B]
    assert after is not None and after.oob == frozenset()


def test_every_resend_carries_the_flag() -> None:
    node = u3.initial_node(A, CFG, BOTH)
    node = u3.on_send(CFG, node, B, 1, oob=True).node
    node = u3.on_send(CFG, node, B, 2).node
    node = u3.on_send(CFG, node, B, 3, oob=True).node
    xmit = u3.on_receive(CFG, node, B, XmitReq((1, 2, 3))).effects
    assert xmit == tuple(Send(B, d) for d in (oob(1, first=True), plain(2), oob(3)))
    first = u3.on_receive(CFG, node, B, u3.SendFirstSeqno(1)).effects
    assert first == (Send(B, oob(1, first=True)),)
    node = u3.on_timer(CFG, node, Timer(u3.XMIT, -1)).node  # records the watermark
    resent = u3.on_timer(CFG, node, Timer(u3.XMIT, -1)).effects
    assert resent == (Send(B, oob(3)),)


# ---------------------------------------------------------------- the receiver


def test_an_oob_message_ahead_of_a_gap_is_delivered_at_once_and_not_again() -> None:
    window = RecvEntry(0, u3.OPEN, 1, (), False)
    step = u3.on_receive(CFG, receiver(window), A, oob(3))
    assert delivered(step) == [3]
    entry = step.node.recv[A]
    assert entry is not None and entry.buffered == (None, Data(3, 0, False, 0, True)) and entry.ack_pending
    assert delivered(u3.on_receive(CFG, step.node, A, oob(3))) == []  # a retransmission: held already
    step = u3.on_receive(CFG, step.node, A, plain(2))
    assert delivered(step) == [2]  # the drain passes #3's placeholder over
    assert step.node.recv[A] == RecvEntry(0, u3.OPEN, 3, (), True)


def test_an_oob_message_next_in_line_is_delivered_once() -> None:
    step = u3.on_receive(CFG, receiver(), A, oob(1, first=True))
    assert delivered(step) == [1]
    assert step.node.recv[A] == RecvEntry(0, u3.OPEN, 1, (), True)


def test_a_cached_oob_message_is_delivered_by_the_drain_before_the_first() -> None:
    step = u3.on_receive(CFG, receiver(), A, oob(2))
    assert delivered(step) == [] and step.node.cache[A] == {oob(2)}
    step = u3.on_receive(CFG, step.node, A, plain(1, first=True))
    assert delivered(step) == [2, 1]  # addQueuedMessages delivers #2, then one drain delivers #1


def test_cached_oob_messages_are_delivered_in_the_order_they_arrived() -> None:
    """msg_cache is a queue: its drain adds the OOB DATA in arrival order, each delivered when added
    (decision 7, ``Node.cache_order``); a second copy keeps the first one's place."""
    node = receiver()
    for msg in (oob(3), plain(2), oob(2 + 2), oob(3)):
        node = u3.on_receive(CFG, node, A, msg).node
    assert node.cache_order == ((oob(3), oob(4)), ())
    step = u3.on_receive(CFG, node, A, plain(1, first=True))
    assert delivered(step) == [3, 4, 1, 2]
    assert step.node.cache == (frozenset(), frozenset()) and step.node.cache_order == ()


def test_the_drain_runs_once_after_every_add() -> None:
    """JGroups adds the queue and the message, then drains: an OOB message among the adds is
    delivered before anything the drain delivers, even a cached message below it."""
    window = RecvEntry(0, u3.OPEN, 1, (), False)
    cache = frozenset({plain(2), oob(4)})
    step = u3.on_receive(CFG, receiver(window, cache), A, plain(3))
    assert delivered(step) == [4, 2, 3]


def test_oob_redelivers_delivers_the_placeholder_again() -> None:
    cfg = Config(members=2, variant=Variant(oob_redelivers=True))
    window = RecvEntry(0, u3.OPEN, 1, (), False)
    step = u3.on_receive(cfg, receiver(window, cfg=cfg), A, oob(3))
    step = u3.on_receive(cfg, step.node, A, plain(2))
    assert delivered(step) == [2, 3]


def test_without_oob_the_receive_rule_is_unchanged() -> None:
    """A DATA without the flag is delivered only in order (the common helper still serves UNICAST2)."""
    window = RecvEntry(0, u3.OPEN, 1, (), False)
    step = u3.on_receive(CFG, receiver(window), A, plain(3))
    assert delivered(step) == []
    assert delivered(u3.on_receive(CFG, step.node, A, plain(2))) == [2, 3]


# ---------------------------------------------------------------- the channel (rule 4)


def channel_of(sends: int, oob_sends: set[int]) -> Channel:
    channel = Channel()
    for n in range(1, sends + 1):
        channel = fifo.send(channel, n in oob_sends)
    return channel


def run(channel: Channel, payloads: list[int]) -> Channel:
    for payload in payloads:
        channel = fifo.deliver(channel, payload)
    return channel


def test_an_oob_payload_may_overtake_and_the_run_passes_over_it() -> None:
    channel = run(channel_of(3, {2}), [2, 1, 3])
    assert channel.violations == 0 and channel.all_delivered()
    assert (channel.run_first, channel.run_last, channel.early) == (1, 3, 0)


def test_a_plain_payload_may_not_overtake() -> None:
    assert run(channel_of(3, {2}), [1, 3]).violations == OUT_OF_ORDER  # #2 neither delivered nor OOB-delivered
    assert run(channel_of(3, {2}), [3, 1]).violations == OUT_OF_ORDER
    assert run(channel_of(3, {3}), [2, 1]).violations == OUT_OF_ORDER


def test_no_payload_twice_oob_or_not() -> None:
    assert run(channel_of(3, {2}), [2, 2]).violations == DUPLICATE
    assert run(channel_of(3, {2}), [2, 1, 2]).violations == DUPLICATE
    assert run(channel_of(3, {1}), [1, 2, 1]).violations == DUPLICATE


def test_a_new_incarnation_forgets_the_oob_deliveries_ahead() -> None:
    channel = fifo.new_incarnation(run(channel_of(3, {3}), [3]))
    assert channel.early == 0 and run(channel, [3]).violations == 0


def test_without_oob_sends_rule_4_is_the_fifo_rule() -> None:
    """The OOB rule (``_deliver_oob``) on a channel without OOB sends judges every delivery
    sequence of up to four payloads (0 and 4 never sent) exactly as the FIFO rule ``deliver`` takes."""
    for length in range(5):
        for payloads in itertools.product(range(0, 5), repeat=length):
            fifo_rule = general = channel_of(3, set())
            for payload in payloads:
                fifo_rule, general = fifo.deliver(fifo_rule, payload), fifo._deliver_oob(general, payload)
                assert fifo_rule == general, payloads
