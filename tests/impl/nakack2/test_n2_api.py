"""The public API of ``Nakack2Engine``: three founders multicast and deliver without loss, in order,
everyone (the sender through its loopback copy) exactly once; ``snapshot()`` follows the spec's
``Node`` field for field; misuse raises ``LocalProtocolError`` in one line."""

from __future__ import annotations

import pytest
from n2_group import Group

from impl.nakack2 import Config, LocalProtocolError, Nakack2Engine, WindowView, spec_payload
from impl.nakack2.codec import McastMsg, decode


def test_three_members_deliver_everything_in_order() -> None:
    g = Group()
    g.mcast("A", 1, 2, 3)
    g.mcast("B", 10, 11)
    g.mcast("C", 20)
    for name in g.names:
        assert g.got(name, "A") == [1, 2, 3]
        assert g.got(name, "B") == [10, 11]
        assert g.got(name, "C") == [20]
    assert g["A"].stats.delivered == 6
    g.check()


def test_multicast_is_one_copy_per_member_own_included() -> None:
    engine = Nakack2Engine[str](Config(), me="A", members=("A", "B", "C"), now=0)
    assert engine.multicast(spec_payload(7), now=0) == 1
    out = engine.datagrams_to_send()
    assert [dst for dst, _ in out] == ["A", "B", "C"]
    assert all(decode(data) == McastMsg(1, spec_payload(7)) for _, data in out)
    assert engine.deliveries() == []  # the sender delivers its own message when the loopback copy comes back
    engine.received("A", out[0][1], now=0)
    assert engine.deliveries() == [("A", spec_payload(7))]


def test_snapshot_follows_the_spec_node() -> None:
    g = Group()
    g.drop = lambda src, dst, msg: dst == "C" and isinstance(msg, McastMsg) and msg.seqno == 2
    g.mcast("A", 1, 2, 3)
    a, c = g["A"].snapshot(), g["C"].snapshot()
    assert a.me == "A" and a.members == frozenset("ABC") and a.seqno == 3 and a.is_server
    own = dict(a.windows)["A"]
    assert own == WindowView(0, 3, tuple(spec_payload(i) for i in (1, 2, 3)), ())
    assert dict(c.windows)["A"] == WindowView(1, 1, (), ((3, spec_payload(3)),))
    assert dict(c.windows)["B"] == WindowView(0, 0, (), ())
    assert a.skip_next_resend and not c.skip_next_resend
    assert c.queue == () and c.xmit_last == () and c.stable_xmit == () and c.merged == ()
    assert g["C"].snapshot(now=5) == c  # now is accepted and ignored


def test_a_joiner_before_its_digest_cannot_multicast() -> None:
    joiner = Nakack2Engine[str](Config(), me="D", members=("A", "B"), now=0)
    assert joiner.multicast(b"x", now=0) is None
    assert joiner.stats.send_without_window == 1 and joiner.datagrams_to_send() == []
    view = joiner.snapshot()
    assert view.windows == () and not view.is_server and view.members == frozenset()


@pytest.mark.parametrize(("call", "message"), [
    (lambda e: e.multicast("text", now=0), "payload must be bytes"),
    (lambda e: e.received("B", b"x", now=-1), "time went backwards"),
    (lambda e: e.install_view(["A", 3], now=0), "one kind"),
    (lambda e: e.fire_timer("become_server", now=0), "not enabled"),
    (lambda e: e.fire_timer(9, now=0), "unknown timer kind"),
    (lambda e: e.received("B", "text", now=0), "data must be bytes"),
])
def test_misuse_is_a_local_protocol_error(call: object, message: str) -> None:
    engine = Nakack2Engine[str](Config(), me="A", members=("A", "B"), now=0)
    with pytest.raises(LocalProtocolError, match=message):
        call(engine)  # type: ignore[operator]


def test_addresses_must_be_encodable() -> None:
    with pytest.raises(LocalProtocolError, match="address"):
        Nakack2Engine[tuple[str, int]](Config(), me=("h", 1), members=(), now=0)
    with pytest.raises(LocalProtocolError, match="address"):
        Nakack2Engine[str](Config(), me="", members=(), now=0)


def test_int_addresses_as_the_harness_uses_them() -> None:
    engines = [Nakack2Engine[int](Config(), me=i, members=range(3), now=0) for i in range(3)]
    engines[2].multicast(spec_payload(1), now=0)
    for dst, data in engines[2].datagrams_to_send():
        engines[dst].received(2, data, now=0)
    assert [e.deliveries() for e in engines] == [[(2, spec_payload(1))]] * 3
