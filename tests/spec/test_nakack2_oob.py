"""OOB multicasts in spec/nakack2.py (decision 17): the receiver's placeholder and the delivery on
add, the sender's loopback (OOB_DELIVERED read as "at or below the own hd"), retransmissions carrying
the flag, the digest passing placeholders, the become_server_queue, OOB with DONT_LOOPBACK, and the
defect variant ``oob_redelivers``.
"""

from __future__ import annotations

from test_nakack2_group import typed

from spec import nakack2 as nk
from spec.effects import Deliver, Send

A, B = 0, 1
VIEW = frozenset({A, B})


def nodes(**settings: object) -> tuple[nk.Config, nk.Node, nk.Node]:
    cfg = nk.Config(2, **settings)  # type: ignore[arg-type]
    return cfg, nk.initial_node(A, cfg, VIEW), nk.initial_node(B, cfg, VIEW)


def test_an_oob_message_is_delivered_when_added_and_its_placeholder_passed_over() -> None:
    cfg, _, b = nodes()
    step = nk.on_receive(cfg, b, A, nk.Data(2, 2, True))
    assert typed(step.effects) == typed((Deliver(A, 2),))
    window = step.node.windows[A]
    assert window == nk.Window(0, 0, (), (None, nk.Data(2, 0, True)))  # DUMMY_OOB_MSG: no payload
    assert window is not None and window.missing() == (1,) and nk.digest_of(step.node)[A] == (0, 2)
    again = nk.on_receive(cfg, step.node, A, nk.Data(2, 2, True))
    assert again.effects == () and again.node == step.node  # the add refuses it: not delivered twice
    step = nk.on_receive(cfg, step.node, A, nk.Data(1, 1))
    assert typed(step.effects) == typed((Deliver(A, 1),))  # the removal passes the placeholder
    assert step.node.windows[A] == nk.Window(2, 2, (), ())
    assert nk.on_receive(cfg, step.node, A, nk.Data(2, 2, True)).effects == ()  # below hd


def test_an_oob_message_next_in_line_is_delivered_once_then_the_rest() -> None:
    cfg, _, b = nodes()
    b = nk.on_receive(cfg, b, A, nk.Data(2, 2)).node
    step = nk.on_receive(cfg, b, A, nk.Data(1, 1, True))
    assert typed(step.effects) == typed((Deliver(A, 1), Deliver(A, 2)))


def test_the_sender_stores_the_flag_and_every_copy_and_retransmission_carries_it() -> None:
    cfg, a, _ = nodes()
    step = nk.on_send(cfg, a, 1, oob=True)
    assert typed(step.effects) == typed((Send(A, nk.Data(1, 1, True)), Send(B, nk.Data(1, 1, True))))
    a = step.node
    own = a.windows[A]
    assert own is not None and own.buffered == (nk.Data(1, 1, True),)
    mcast = nk.on_receive(cfg, a, B, nk.XmitReq(A, (1,)))
    assert typed(mcast.effects) == typed((Send(A, nk.Data(1, 1, True)), Send(B, nk.Data(1, 1, True))))
    cfg = nk.Config(2, use_mcast_xmit=False)
    rsp = nk.on_receive(cfg, a, B, nk.XmitReq(A, (1,)))
    assert typed(rsp.effects) == typed((Send(B, nk.XmitRsp(A, 1, 1, True)),))
    _, _, b = nodes(use_mcast_xmit=False)
    b = nk.on_receive(cfg, b, A, nk.Data(2, 2)).node
    got = nk.on_receive(cfg, b, A, nk.XmitRsp(A, 1, 1, True))  # handleXmitRsp -> handleMessage, OOB again
    assert typed(got.effects) == typed((Deliver(A, 1), Deliver(A, 2)))


def test_the_own_oob_loopback_coming_back_first_is_delivered_first_and_once() -> None:
    cfg, a, _ = nodes()
    a = nk.on_send(cfg, a, 1).node
    a = nk.on_send(cfg, a, 2, oob=True).node
    step = nk.on_receive(cfg, a, A, nk.Data(2, 2, True))
    assert typed(step.effects) == typed((Deliver(A, 2), Deliver(A, 1)))  # OOB first, the removal skips it
    assert nk.on_receive(cfg, step.node, A, nk.Data(1, 1)).effects == ()
    assert nk.on_receive(cfg, step.node, A, nk.Data(2, 2, True)).effects == ()  # OOB_DELIVERED: at or below hd


def test_the_own_oob_message_delivered_by_an_earlier_removal_is_not_delivered_by_its_loopback() -> None:
    cfg, a, _ = nodes()
    a = nk.on_send(cfg, a, 1).node
    a = nk.on_send(cfg, a, 2, oob=True).node
    step = nk.on_receive(cfg, a, A, nk.Data(1, 1))
    assert typed(step.effects) == typed((Deliver(A, 1), Deliver(A, 2)))  # the filter sets OOB_DELIVERED
    assert nk.on_receive(cfg, step.node, A, nk.Data(2, 2, True)).effects == ()


def test_oob_and_dont_loopback_is_never_delivered_at_its_sender() -> None:
    cfg, a, b = nodes()
    a = nk.on_send(cfg, a, 1, oob=True).node
    step = nk.on_send(cfg, a, 2, dont_loopback=True, oob=True)
    assert typed(step.effects) == typed((Send(B, nk.Data(2, 2, True)),))
    back = nk.on_receive(cfg, step.node, A, nk.Data(1, 1, True))
    assert typed(back.effects) == typed((Deliver(A, 1),))
    own = back.node.windows[A]
    assert own is not None and own.delivered == 2
    assert typed(nk.on_receive(cfg, b, A, nk.Data(2, 2, True)).effects) == typed((Deliver(A, 2),))


def test_a_queued_oob_message_is_delivered_when_the_queue_is_replayed() -> None:
    cfg = nk.Config(2)
    joiner = nk.initial_node(B, cfg, frozenset())
    joiner = nk.on_receive(cfg, joiner, A, nk.Data(2, 2, True)).node
    assert len(joiner.queue) == 1
    joiner = nk.on_receive(cfg, joiner, A, nk.JoinRsp((A, B), ((0, 0), (0, 0)))).node
    step = nk.on_timer(cfg, joiner, nk.Timer(nk.BECOME_SERVER))
    assert typed(step.effects) == typed((Deliver(A, 2),))


def test_the_defect_variant_delivers_the_oob_message_again_at_receivers_and_at_its_sender() -> None:
    cfg, a, b = nodes(variant=nk.Variant(oob_redelivers=True))
    b = nk.on_receive(cfg, b, A, nk.Data(2, 2, True)).node
    assert typed(nk.on_receive(cfg, b, A, nk.Data(1, 1)).effects) == typed(
        (Deliver(A, 1), Deliver(A, 2)))
    a = nk.on_send(cfg, a, 1, oob=True).node
    assert typed(nk.on_receive(cfg, a, A, nk.Data(1, 1, True)).effects) == typed(
        (Deliver(A, 1), Deliver(A, 1)))
