"""conn_ids across their wrap from 32767 to 0, on the receive path of both engines (issue 19, item 2).

The spec's conn_ids only grow and the models never get near 32767, so nothing else reaches the
wrap. Invariants tested, for UNICAST3 and UNICAST2: a receiver holding a window of conn_id 32767
takes a first DATA of conn_id 0 as a new connection (a new window, its message delivered once);
after it, a DATA of the old conn_id 32767 is not delivered into the new window, and UNICAST3's
CLOSE of 32767 leaves the window of 0 alone while a CLOSE of 0 removes it; a sender whose conn_id
wrapped to 0 ignores an ACK (UNICAST3) or a STABLE (UNICAST2) of the old conn_id 32767 and acts on
one of 0. (The counter's own wrap is tested in ``tests/impl/unicast3/test_u3_entries.py`` and
``tests/impl/unicast2/test_u2_scenarios.py``.)
"""

from __future__ import annotations

from impl.common import spec_payload
from impl.unicast2 import Config as U2Config
from impl.unicast2 import Unicast2Engine
from impl.unicast2 import codec as u2codec
from impl.unicast3 import Config as U3Config
from impl.unicast3 import Unicast3Engine
from impl.unicast3 import codec as u3codec
from spec import unicast2 as u2spec
from spec import unicast3 as u3spec

LAST, FIRST = 2**15 - 1, 0  # the last conn_id before the wrap and the first after it


def _payloads(deliveries: list[tuple[str, bytes]]) -> list[bytes]:
    return [payload for _, payload in deliveries]


def test_unicast3_receiver_takes_conn_id_0_after_32767_as_a_new_connection() -> None:
    b: Unicast3Engine[str] = Unicast3Engine(U3Config(), members=["A", "B"], now=0)
    data = u3codec.DataMsg
    b.received("A", u3codec.encode(data(1, LAST, True, spec_payload(1))), now=0)
    b.received("A", u3codec.encode(data(2, LAST, False, spec_payload(2))), now=0)
    b.received("A", u3codec.encode(data(1, FIRST, True, spec_payload(3))), now=0)  # A reopened: wrapped
    assert _payloads(b.deliveries()) == [spec_payload(n) for n in (1, 2, 3)]
    (recv,) = b.snapshot(now=0).recv
    assert recv[1].conn_id == FIRST and recv[1].delivered == 1
    b.received("A", u3codec.encode(data(3, LAST, False, spec_payload(4))), now=0)  # stale: the old connection
    b.received("A", u3codec.encode(u3codec.CloseMsg(LAST)), now=0)  # stale CLOSE: not this window's
    assert b.deliveries() == [] and dict(b.snapshot(now=0).recv)["A"].conn_id == FIRST
    b.fire_timer(u3spec.XMIT, now=0)
    acks = [m for _, d in b.datagrams_to_send() if isinstance(m := u3codec.decode(d), u3codec.AckMsg)]
    assert [(m.seqno, m.conn_id) for m in acks] == [(1, FIRST)]  # the new connection, by its conn_id
    b.received("A", u3codec.encode(u3codec.CloseMsg(FIRST)), now=0)
    assert b.snapshot(now=0).recv == ()


def test_unicast3_sender_past_the_wrap_ignores_an_ack_of_32767() -> None:
    a: Unicast3Engine[str] = Unicast3Engine(U3Config(), members=["A", "B"], now=0)
    for _ in range(LAST + 1):  # conn_ids 0 .. 32767, each connection closed and removed
        a.send("B", spec_payload(1), now=0)
        a.fire_timer(u3spec.IDLE_SEND, "B", now=0)
        a.fire_timer(u3spec.CLOSE_SEND, "B", now=0)
    a.send("B", spec_payload(1), now=0)
    a.send("B", spec_payload(2), now=0)
    assert dict(a.snapshot(now=0).send)["B"].conn_id == FIRST
    a.received("B", u3codec.encode(u3codec.AckMsg(2, LAST, 1)), now=0)  # of the connection before the wrap
    assert dict(a.snapshot(now=0).send)["B"].acked == 0
    a.received("B", u3codec.encode(u3codec.AckMsg(2, FIRST, 2)), now=0)
    assert dict(a.snapshot(now=0).send)["B"].acked == 2


def test_unicast2_receiver_takes_conn_id_0_after_32767_as_a_new_connection() -> None:
    b = Unicast2Engine[str](U2Config(), members=["A", "B"], now=0)
    data = u2codec.DataMsg
    b.received("A", u2codec.encode(data(1, LAST, True, spec_payload(1))), now=0)
    b.received("A", u2codec.encode(data(2, LAST, False, spec_payload(2))), now=0)
    b.received("A", u2codec.encode(data(1, FIRST, True, spec_payload(3))), now=0)
    assert _payloads(b.deliveries()) == [spec_payload(n) for n in (1, 2, 3)]
    assert dict(b.snapshot().recv)["A"].conn_id == FIRST
    b.received("A", u2codec.encode(data(2, LAST, False, spec_payload(4))), now=0)  # stale: the old connection
    assert b.deliveries() == [] and dict(b.snapshot().recv)["A"].delivered == 1
    acks = [u2codec.decode(d) for _, d in b.datagrams_to_send()]
    assert u2codec.AckMsg(1, FIRST) in acks and u2codec.AckMsg(1, LAST) in acks  # each first, by its own conn_id


def test_unicast2_sender_past_the_wrap_ignores_a_stable_of_32767() -> None:
    a = Unicast2Engine[str](U2Config(), members=["A", "B"], now=0)
    for _ in range(LAST + 1):
        a.send("B", b"x", now=0)
        a.fire_timer(u2spec.IDLE_SEND, "B", now=0)
    a.send("B", spec_payload(1), now=0)
    a.send("B", spec_payload(2), now=0)
    assert dict(a.snapshot().send)["B"].conn_id == FIRST
    a.datagrams_to_send()
    a.received("B", u2codec.encode(u2codec.StableMsg(2, 2, LAST, 0)), now=0)
    assert dict(a.snapshot().send)["B"].acked == 0 and a.datagrams_to_send() == []
    a.received("B", u2codec.encode(u2codec.StableMsg(2, 2, FIRST, 0)), now=0)
    assert dict(a.snapshot().send)["B"].acked == 2
