"""UNICAST3's messages to self (spec decision 26, ``spec/unicast3_self.py``), handler by handler.

Invariants tested: a DATA from oneself delivers everything the send window for oneself holds, in
order, whichever loopback arrives first, and purges it; an OOB one is delivered at once and never
again; a later copy delivers nothing; nothing is acknowledged and no receive entry is made; without
a send entry for oneself the DATA is dropped; a CLOSING entry reopens; the entry's creation starts a
new incarnation; the 3.4.x variant ``self_as_peer`` takes the path of any peer (a receive entry, an
ACK).
"""

from __future__ import annotations

from dataclasses import replace

from spec import unicast3 as u3
from spec.effects import Deliver, Purged, Send, WindowCreated

CFG = u3.Config(members=2)


def sent(cfg: u3.Config, count: int, oob: frozenset[int] = frozenset()) -> tuple[u3.Node, list[u3.Data]]:
    node = u3.initial_node(0, cfg, frozenset({0, 1}))
    datas = []
    for n in range(1, count + 1):
        node, effects = u3.on_send(cfg, node, 0, n, oob=n in oob)
        datas += [e.msg for e in effects if isinstance(e, Send)]
    return node, datas


def delivered(effects: tuple[object, ...]) -> list[int]:
    return [e.payload for e in effects if isinstance(e, Deliver)]


def test_the_first_send_to_self_creates_the_delivery_window() -> None:
    node = u3.initial_node(0, CFG, frozenset({0, 1}))
    _, effects = u3.on_send(CFG, node, 0, 1)
    assert effects[0] == WindowCreated(0, 0, 0)
    _, effects = u3.on_send(CFG, node, 1, 1)  # to a peer: no window here
    assert not any(isinstance(e, WindowCreated) for e in effects)


def test_any_loopback_delivers_everything_sent_to_self_and_purges_it() -> None:
    node, datas = sent(CFG, 3)
    after, effects = u3.on_receive(CFG, node, 0, datas[2])  # the last one first
    assert delivered(effects) == [1, 2, 3]
    assert Purged(0, 0, 3) in effects
    assert not any(isinstance(e, Send) for e in effects)  # no ACK
    entry = after.send[0]
    assert entry is not None and (entry.acked, entry.unacked) == (3, ())
    assert after.recv == (None, None)
    again, effects = u3.on_receive(CFG, after, 0, datas[0])
    assert (again, effects) == (after, ())


def test_an_oob_message_to_self_is_delivered_at_once_and_once() -> None:
    node, datas = sent(CFG, 3, oob=frozenset({2}))
    after, effects = u3.on_receive(CFG, node, 0, datas[1])
    assert delivered(effects) == [2, 1, 3]
    node, datas = sent(CFG, 3, oob=frozenset({2}))
    after, effects = u3.on_receive(CFG, node, 0, datas[0])  # a regular one first: #2 in line
    assert delivered(effects) == [1, 2, 3]
    assert delivered(u3.on_receive(CFG, after, 0, datas[1]).effects) == []


def test_without_a_send_entry_for_self_the_data_is_dropped() -> None:
    node = u3.initial_node(0, CFG, frozenset({0, 1}))
    data = u3.Data(1, 0, True, 1)
    assert u3.on_receive(CFG, node, 0, data) == u3.Step(node, ())


def test_a_loopback_reopens_a_closing_entry() -> None:
    node, datas = sent(CFG, 1)
    entry = node.send[0]
    assert entry is not None
    closing = replace(node, send=u3.set_peer(node.send, 0, replace(entry, state=u3.CLOSING)))
    after, _ = u3.on_receive(CFG, closing, 0, datas[0])
    assert after.send[0] is not None and after.send[0].state == u3.OPEN


def test_the_lost_last_loopback_comes_back_by_the_highest_sent_resend() -> None:
    node, datas = sent(CFG, 2)
    node, _ = u3.on_timer(CFG, node, u3.Timer(u3.XMIT, -1))  # records the watermark
    node, effects = u3.on_timer(CFG, node, u3.Timer(u3.XMIT, -1))  # (HA, HS) unchanged: resend HS
    assert effects == (Send(0, datas[1]),)
    assert delivered(u3.on_receive(CFG, node, 0, datas[1]).effects) == [1, 2]


def test_the_3_4_variant_treats_itself_as_a_peer() -> None:
    cfg = u3.Config(members=2, variant=u3.Variant(self_as_peer=True))
    node, datas = sent(cfg, 2)
    after, effects = u3.on_receive(cfg, node, 0, datas[1])  # #2 first: a gap, nothing delivered
    assert delivered(effects) == [] and after.recv[0] is None  # not first: cached, SEND_FIRST_SEQNO
    after, effects = u3.on_receive(cfg, node, 0, datas[0])
    assert delivered(effects) == [1] and after.recv[0] is not None and after.recv[0].ack_pending
    entry = after.send[0]
    assert entry is not None and entry.acked == 0  # purged only by its own ACK
