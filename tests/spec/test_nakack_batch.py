"""NAKACK2's and NAKACK4's batch inputs (``spec/nakack2_batch.py`` decision 16, ``spec/nakack4_batch.py``
decision 17: ``up(MessageBatch)``).

Invariants tested: a batch of MSGs (in any order) delivers what the same MSGs received one by one
deliver, in seqno order, and leaves the same window; a batch's HIGHEST_SEQNO is handled before its
MSGs (an XMIT_REQ for a MSG of the same batch); an XMIT_RSP is added as the MSG it carries; a
non-member's batch is dropped, the loopback batch delivers the own window, a joiner queues a batch
message by message; NAKACK4 makes one ACK decision per delivered batch (counter + batch size against
the threshold; one batch of three at threshold 2 acks at once and leaves nothing pending, where one
by one leaves one pending), takes the highest ACK of a batch once, strands a whole batch when the
deliverer throws; a message not the protocol's is refused.
"""

from __future__ import annotations

from itertools import permutations

import pytest

from spec import nakack2 as n2
from spec import nakack4 as n4
from spec.effects import Deliver, Send
from spec.nakack2_batch import on_batch as batch2
from spec.nakack2_state import Data, HighestSeqno, StableVote, XmitReq, XmitRsp
from spec.nakack4_batch import on_batch as batch4

A, B = 0, 1
BOTH = frozenset({A, B})


def delivered(step: object) -> list[int]:
    return [e.payload for e in step.effects if isinstance(e, Deliver)]  # type: ignore[attr-defined]


def singly(module: object, cfg: object, node: object, src: int, msgs: tuple[object, ...]) -> tuple[object, list[int]]:
    payloads: list[int] = []
    for m in msgs:
        step = module.on_receive(cfg, node, src, m)  # type: ignore[attr-defined]
        node = step.node
        payloads += delivered(step)
    return node, payloads


@pytest.mark.parametrize("order", list(permutations([1, 2, 3, 5])))
def test_nakack2_batch_delivers_as_one_by_one(order: tuple[int, ...]) -> None:
    cfg = n2.Config(members=2)
    node = n2.initial_node(B, cfg, BOTH)
    msgs = tuple(Data(s, s) for s in order)
    step = batch2(cfg, node, A, msgs)
    alone, payloads = singly(n2, cfg, node, A, msgs)
    assert delivered(step) == payloads == [1, 2, 3]
    assert step.node == alone
    window = step.node.windows[A]
    assert window is not None and window.missing() == (4,)


def test_nakack2_highest_seqno_first() -> None:
    cfg = n2.Config(members=2)
    node = n2.initial_node(B, cfg, BOTH)
    step = batch2(cfg, node, A, (Data(1, 1), HighestSeqno(1)))
    assert step.effects == (Send(A, XmitReq(A, (1,))), Deliver(A, 1))
    assert n2.on_receive(cfg, n2.on_receive(cfg, node, A, Data(1, 1)).node, A, HighestSeqno(1)).effects == ()


def test_nakack2_xmit_rsp_non_member_loopback_and_joiner() -> None:
    cfg = n2.Config(members=3, use_mcast_xmit=False)
    node = n2.initial_node(B, cfg, frozenset({A, B}))
    assert delivered(batch2(cfg, node, A, (XmitRsp(A, 2, 2), XmitRsp(A, 1, 1)))) == [1, 2]
    assert batch2(cfg, node, 2, (Data(1, 1), Data(2, 2))).node == node  # no window for member 2
    own = n2.on_send(cfg, n2.on_send(cfg, node, 1).node, 2).node
    assert delivered(batch2(cfg, own, B, (Data(2, 2), Data(1, 1)))) == [1, 2]
    joiner = n2.initial_node(2, cfg, frozenset({A, B}))
    queued = batch2(cfg, joiner, A, (Data(1, 1), HighestSeqno(1)))
    assert queued.node.queue == ((A, Data(1, 1)), (A, HighestSeqno(1))) and queued.effects == ()
    with pytest.raises(ValueError, match="NAKACK2 messages only"):
        batch2(cfg, node, A, (StableVote((0, 1), ()),))


def n4_receiver(threshold: int) -> tuple[n4.Config, n4.Node]:
    cfg = n4.Config(members=2, capacity=16, ack_threshold=threshold)
    return cfg, n4.initial_node(B, cfg, BOTH)


def test_nakack4_one_ack_decision_per_batch() -> None:
    cfg, node = n4_receiver(2)
    msgs = (Data(1, 1), Data(2, 2), Data(3, 3))
    step = batch4(cfg, node, A, msgs)
    assert step.effects == (Send(A, n4.Ack(3)), Deliver(A, 1), Deliver(A, 2), Deliver(A, 3))
    assert step.node.acks_counted[A] == 0 and not step.node.ack_pending[A]
    alone, payloads = singly(n4, cfg, node, A, msgs)
    assert payloads == [1, 2, 3] and alone.ack_pending[A] and alone.acks_counted[A] == 1  # type: ignore[attr-defined]
    cfg3, node3 = n4_receiver(3)
    pending = batch4(cfg3, node3, A, msgs[:2])
    assert not any(isinstance(e, Send) for e in pending.effects) and pending.node.ack_pending[A]


def test_nakack4_highest_ack_once_and_controls_first() -> None:
    cfg = n4.Config(members=2, capacity=16, ack_threshold=5, send_atomically=True)
    sender = n4.initial_node(A, cfg, BOTH)
    for p in (1, 2, 3):
        sender = n4.on_send(cfg, sender, p).node
    sender = n4.on_receive(cfg, sender, A, Data(3, 3)).node  # the own copies delivered: own ACK
    sender = n4.on_ack(cfg, sender, A, 3).node
    step = batch4(cfg, sender, B, (n4.Ack(1), n4.Ack(3), n4.Ack(2)))
    own = step.node.windows[A]
    assert step.node.ack_table[B] == 3 and own is not None and own.low == 3
    _, node = n4_receiver(5)
    step = batch4(cfg, node, A, (Data(1, 1), HighestSeqno(1)))
    assert step.effects[0] == Send(A, XmitReq(A, (1,))) and step.node.acks_counted[A] == 2


def test_nakack4_failing_deliverer_strands_the_batch() -> None:
    cfg = n4.Config(members=2, capacity=16, ack_threshold=5, deliver_exceptions=True)
    node = n4.initial_node(B, cfg, BOTH)
    armed = n4.on_timer(cfg, node, n4.Timer(n4.DELIVER_FAULT, A)).node
    step = batch4(cfg, armed, A, (Data(1, 1), Data(2, 2)))
    assert delivered(step) == [] and step.node.deliverer[A] == n4.STRANDED
    window = step.node.windows[A]
    assert window is not None and [m.seqno for m in window.buffered if m is not None] == [1, 2]
    assert delivered(batch4(cfg, step.node, A, (Data(2, 2),))) == [1, 2]  # a duplicate runs the removal
