"""UNICAST4's messages to self and DONT_LOOPBACK to self (spec decisions 12 and 13,
``spec/unicast4_self.py``), handler by handler; and UNICAST3's DONT_LOOPBACK to self (decision 27).

Invariants tested: a DATA from oneself delivers the run the send window for oneself holds up to its
first empty slot, in order, an OOB one at once and never again, and removes it (low := hd), which lets
a thread blocked on that window go on; nothing is added to a receive entry; the delivered batch counts
towards an ACK to oneself on the send entry, sent at ack_threshold before the batch goes up, and that
ACK, received, purges nothing and only takes its timestamp; a DONT_LOOPBACK message to oneself is
stored and never sent, never delivered, removed at once right above what was delivered, else passed
over by the next loopback's drain, and never resent by the HS resend; an OOB message delivered early
above a gap is passed over later (OOB_DELIVERED); UNICAST3 does the same with its own window.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from spec import unicast3 as u3
from spec import unicast4 as u4
from spec.effects import Deliver, Purged, Send, WindowCreated


def delivered(effects: tuple[object, ...]) -> list[int]:
    return [e.payload for e in effects if isinstance(e, Deliver)]


def sends(effects: tuple[object, ...]) -> list[Any]:
    return [e.msg for e in effects if isinstance(e, Send)]


def self_sends(cfg: u4.Config, count: int, *, oob: frozenset[int] = frozenset(),
               dont_loopback: frozenset[int] = frozenset()) -> tuple[u4.Node, dict[int, u4.Data]]:
    node = u4.initial_node(0, cfg, frozenset({0, 1}))
    datas = {}
    for n in range(1, count + 1):
        node, effects = u4.on_send(cfg, node, 0, n, oob=n in oob, dont_loopback=n in dont_loopback)
        datas.update({m.seqno: m for m in sends(effects) if isinstance(m, u4.Data)})
    return node, datas


def test_the_first_send_to_self_creates_the_delivery_window() -> None:
    cfg = u4.Config(members=2)
    node = u4.initial_node(0, cfg, frozenset({0, 1}))
    _, effects = u4.on_send(cfg, node, 0, 1)
    assert effects[0] == WindowCreated(0, 0, 0)
    _, effects = u4.on_send(cfg, node, 1, 1)
    assert not any(isinstance(e, WindowCreated) for e in effects)


def test_any_loopback_delivers_the_run_and_removes_it_without_a_receive_entry() -> None:
    cfg = u4.Config(members=2)
    node, datas = self_sends(cfg, 3)
    after, effects = u4.on_receive(cfg, node, 0, datas[3])
    assert delivered(effects) == [1, 2, 3] and Purged(0, 0, 3) in effects
    assert sends(effects) == []  # 3 is below the threshold (capacity / 4 = 512)
    entry = after.send[0]
    assert entry is not None and (entry.acked, entry.unacked, entry.acks_counted) == (3, (), 3)
    assert after.recv == (None, None)
    assert u4.on_receive(cfg, after, 0, datas[1]).effects == ()


def test_an_oob_message_to_self_is_delivered_at_once_and_once() -> None:
    cfg = u4.Config(members=2)
    node, datas = self_sends(cfg, 3, oob=frozenset({2}))
    after, effects = u4.on_receive(cfg, node, 0, datas[2])
    assert delivered(effects) == [2, 1, 3]
    entry = after.send[0]
    assert entry is not None and entry.acks_counted == 2  # the early one is deliverMessage's: uncounted


def test_the_loopback_releases_a_thread_blocked_on_the_window_to_self() -> None:
    cfg = u4.Config(members=2, capacity=1)
    node, datas = self_sends(cfg, 2)
    entry = node.send[0]
    assert entry is not None and entry.blocked == ((2, 2),)
    assert u4.Timer(u4.SEND, 0, 2) not in u4.enabled_timers(cfg, node)
    after, effects = u4.on_receive(cfg, node, 0, datas[1])
    assert delivered(effects) == [1]
    assert u4.Timer(u4.SEND, 0, 2) in u4.enabled_timers(cfg, after)
    _, effects = u4.on_timer(cfg, after, u4.Timer(u4.SEND, 0, 2))
    assert sends(effects) == [u4.Data(2, 0, False, 2)]


def test_the_ack_to_self_at_the_threshold_goes_before_the_batch_and_purges_nothing() -> None:
    cfg = u4.Config(members=2, ack_threshold=2)
    node, datas = self_sends(cfg, 3)
    after, effects = u4.on_receive(cfg, node, 0, datas[1])
    assert delivered(effects) == [1, 2, 3]
    ack = u4.Ack(3, 0, 1)
    assert effects.index(Send(0, ack)) < effects.index(Deliver(0, 1))
    entry = after.send[0]
    assert entry is not None and entry.acks_counted == 0 and after.timestamper == 1
    acked, effects = u4.on_receive(cfg, after, 0, ack)
    assert effects == ()
    got = acked.send[0]
    assert got is not None and got.last_ts == 1 and got.acked == 3
    assert replace(after, send=acked.send) == acked  # the timestamp is all it changed


def test_below_the_threshold_the_count_grows_and_nothing_is_sent() -> None:
    cfg = u4.Config(members=2, ack_threshold=3)
    node, datas = self_sends(cfg, 2)
    after, effects = u4.on_receive(cfg, node, 0, datas[2])
    entry = after.send[0]
    assert entry is not None and entry.acks_counted == 2 and sends(effects) == []
    after, _ = u4.on_send(cfg, after, 0, 3)
    after, effects = u4.on_receive(cfg, after, 0, u4.Data(3, 0, False, 3))
    assert sends(effects) == [u4.Ack(3, 0, 1)]


def test_a_dont_loopback_message_right_above_the_delivered_ones_is_removed_at_once() -> None:
    cfg = u4.Config(members=2)
    node, datas = self_sends(cfg, 1, dont_loopback=frozenset({1}))
    assert datas == {}  # never sent
    entry = node.send[0]
    assert entry is not None and (entry.acked, entry.unacked, entry.seqno) == (1, (), 1)


def test_a_dont_loopback_message_above_a_pending_loopback_is_passed_over_by_its_drain() -> None:
    cfg = u4.Config(members=2)
    node, datas = self_sends(cfg, 3, dont_loopback=frozenset({2}))
    assert sorted(datas) == [1, 3]
    entry = node.send[0]
    assert entry is not None and entry.dont_loopback == frozenset({2}) and len(entry.unacked) == 3
    after, effects = u4.on_receive(cfg, node, 0, datas[3])
    assert delivered(effects) == [1, 3]
    entry = after.send[0]
    assert entry is not None and (entry.acked, entry.dont_loopback, entry.acks_counted) == (3, frozenset(), 2)


def test_the_hs_resend_never_sends_a_dont_loopback_message() -> None:
    """The finding of decision 13: #1's loopback lost, #2 (DONT_LOOPBACK) highest: nothing is resent."""
    cfg = u4.Config(members=2)
    node, _ = self_sends(cfg, 2, dont_loopback=frozenset({2}))
    for _ in range(3):
        node, effects = u4.on_timer(cfg, node, u4.Timer(u4.XMIT, -1))
        assert sends(effects) == []
    regular, _ = self_sends(cfg, 2)
    regular, _ = u4.on_timer(cfg, regular, u4.Timer(u4.XMIT, -1))
    _, effects = u4.on_timer(cfg, regular, u4.Timer(u4.XMIT, -1))
    assert sends(effects) == [u4.Data(2, 0, False, 2)]


def test_a_blocked_dont_loopback_send_keeps_its_flag_and_its_add_frees_room() -> None:
    cfg = u4.Config(members=2, capacity=1)
    node, datas = self_sends(cfg, 3, dont_loopback=frozenset({2}))
    entry = node.send[0]
    assert entry is not None and entry.blocked == ((2, 2), (3, 3)) and entry.dont_loopback == frozenset({2})
    node, _ = u4.on_receive(cfg, node, 0, datas[1])
    node, effects = u4.on_timer(cfg, node, u4.Timer(u4.SEND, 0, 2))
    assert sends(effects) == [] and Purged(0, 0, 2) in effects  # stored right above #1: removed at once
    assert u4.Timer(u4.SEND, 0, 3) in u4.enabled_timers(cfg, node)


def test_an_oob_message_delivered_above_a_gap_is_passed_over_later() -> None:
    """Blocked threads may wake out of order (decision 2): #4 stored, #3 still held; #4's OOB loopback
    delivers it (OOB_DELIVERED) and the drain stops at the gap; #3's add and loopback deliver #3 only."""
    cfg = u4.Config(members=2, capacity=2)
    node, datas = self_sends(cfg, 4, oob=frozenset({4}))
    node, _ = u4.on_receive(cfg, node, 0, datas[2])
    node, effects = u4.on_timer(cfg, node, u4.Timer(u4.SEND, 0, 4))
    node, effects = u4.on_receive(cfg, node, 0, sends(effects)[0])
    assert delivered(effects) == [4]
    entry = node.send[0]
    assert entry is not None and entry.oob_delivered == frozenset({4}) and entry.acked == 2
    node, effects = u4.on_timer(cfg, node, u4.Timer(u4.SEND, 0, 3))
    node, effects = u4.on_receive(cfg, node, 0, sends(effects)[0])
    assert delivered(effects) == [3]
    entry = node.send[0]
    assert entry is not None and (entry.acked, entry.oob_delivered, entry.oob) == (4, frozenset(), frozenset())


def test_the_variant_delivers_a_dont_loopback_message_to_self() -> None:
    cfg = u4.Config(members=2, variant=u4.Variant(dont_loopback_delivered=True))
    node, datas = self_sends(cfg, 2, dont_loopback=frozenset({2}))
    _, effects = u4.on_receive(cfg, node, 0, datas[1])
    assert delivered(effects) == [1, 2]


def test_dont_loopback_to_another_member_changes_nothing() -> None:
    cfg = u4.Config(members=2)
    node = u4.initial_node(0, cfg, frozenset({0, 1}))
    assert u4.on_send(cfg, node, 1, 1, dont_loopback=True) == u4.on_send(cfg, node, 1, 1)


def test_unicast3_dont_loopback_to_self() -> None:
    cfg = u3.Config(members=2)
    node = u3.initial_node(0, cfg, frozenset({0, 1}))
    node, effects = u3.on_send(cfg, node, 0, 1, dont_loopback=True)
    entry = node.send[0]
    assert sends(effects) == [] and entry is not None and (entry.acked, entry.unacked) == (1, ())
    node, effects = u3.on_send(cfg, node, 0, 2)
    first = sends(effects)[0]
    node, effects = u3.on_send(cfg, node, 0, 3, dont_loopback=True)
    assert sends(effects) == []
    for _ in range(2):
        node, effects = u3.on_timer(cfg, node, u3.Timer(u3.XMIT, -1))
        assert sends(effects) == []  # the HS resend would send #3: never looped back
    node, effects = u3.on_receive(cfg, node, 0, first)
    assert delivered(effects) == [2]
    entry = node.send[0]
    assert entry is not None and (entry.acked, entry.unacked, entry.dont_loopback) == (3, (), frozenset())
