"""The UNICAST3 engine's OOB flag (``spec/unicast3.py`` decision 12), on the virtual clock.

Invariants tested: an OOB message is delivered on receipt, ahead of a gap, exactly once, and
acknowledged; the receive window holds only a placeholder for it (no payload bytes against the
byte limits); every resend of it carries the flag; the sender forgets which seqnos were OOB once
they are purged; a cached OOB message is delivered by the drain before the message that drains the
cache; a bad ``oob`` argument is a one-line error that changes nothing; and an honest sender that
loses any one datagram of an OOB/plain mix still gets everything delivered once, under the byte
limits' smallest settings.
"""

from __future__ import annotations

import pytest

from impl.common import HELD_OVERHEAD
from impl.unicast3 import Config, LocalProtocolError, Unicast3Engine, payload_number, spec_payload
from impl.unicast3.codec import AckMsg, DataMsg, decode, encode


def engine() -> Unicast3Engine[str]:
    return Unicast3Engine[str](Config(), members=("A", "B"), now=0)


def delivered(e: Unicast3Engine[str]) -> list[int]:
    return [payload_number(p) for _, p in e.deliveries()]


def data(seqno: int, *, first: bool = False, oob: bool = False) -> bytes:
    return encode(DataMsg(seqno, 0, first, spec_payload(seqno), oob))


def test_an_oob_message_ahead_of_a_gap_is_delivered_once_and_held_as_a_placeholder() -> None:
    b = engine()
    b.received("A", data(1, first=True), now=1)
    assert delivered(b) == [1]
    b.received("A", data(3, oob=True), now=1)
    assert delivered(b) == [3]
    entry = b._m.recv["A"]
    assert entry.held_bytes == HELD_OVERHEAD  # the placeholder, no payload
    assert entry.window.get(3) == DataMsg(3, 0, False, b"", True)
    b.received("A", data(3, oob=True), now=1)  # a retransmission
    assert delivered(b) == []
    b.received("A", data(2), now=1)
    assert delivered(b) == [2]  # #3's placeholder is passed over
    assert entry.held_bytes == 0 and b.snapshot(now=1).recv[0][1].delivered == 3
    b.check_invariants()


def test_a_cached_oob_message_is_delivered_before_the_first() -> None:
    b = engine()
    b.received("A", data(2, oob=True), now=1)
    assert delivered(b) == []
    b.received("A", data(1, first=True), now=1)
    assert delivered(b) == [2, 1]


def test_the_sender_flags_every_resend_and_forgets_on_purge() -> None:
    a = engine()
    a.send("B", spec_payload(1), now=1, oob=True)
    a.send("B", spec_payload(2), now=1)
    sent = [decode(d) for _, d in a.datagrams_to_send()]
    assert [(m.seqno, m.oob) for m in sent if isinstance(m, DataMsg)] == [(1, True), (2, False)]
    assert a.snapshot(now=1).send[0][1].oob == (1,)
    a.fire_timer(0, now=1)  # records the watermark
    a.fire_timer(0, now=1)  # resends the highest: #2, not OOB
    a.received("B", encode(AckMsg(1, 0, 1)), now=1)
    assert a.snapshot(now=1).send[0][1].oob == ()
    a.datagrams_to_send()


def test_a_bad_oob_argument_is_one_line_and_changes_nothing() -> None:
    a = engine()
    with pytest.raises(LocalProtocolError, match=r"^send: oob must be a bool, got int$"):
        a.send("B", b"x", now=1, oob=1)  # type: ignore[arg-type]
    assert a.snapshot(now=1).send == () and a.datagrams_to_send() == []


@pytest.mark.parametrize("lost", range(12))
def test_any_one_lost_datagram_of_an_oob_mix_still_delivers_everything_once(lost: int) -> None:
    """Five messages, #2 and #4 OOB, each datagram in FIFO order, datagram number ``lost`` gone, with
    the smallest byte limits an honest five-message window needs; every message is delivered once."""
    config = Config(max_receive_bytes=5 * (8 + HELD_OVERHEAD), max_window_bytes=5 * (8 + HELD_OVERHEAD))
    a, b = (Unicast3Engine[str](config, members=("A", "B"), now=0) for _ in range(2))
    out: list[int] = []
    count, now = 0, 0
    for n in range(1, 6):
        a.send("B", spec_payload(n), now=now, oob=n in (2, 4))
    for _ in range(50):
        for src, engine_from, engine_to in (("A", a, b), ("B", b, a)):
            for _peer, datagram in engine_from.datagrams_to_send():
                count += 1
                if count - 1 != lost:
                    engine_to.received(src, datagram, now=now)
        out += delivered(b)
        now += config.xmit_interval
        a.handle_timer(now=now)
        b.handle_timer(now=now)
    assert sorted(out) == [1, 2, 3, 4, 5]
    assert [p for p in out if p not in (2, 4)] == [1, 3, 5]
    assert a.snapshot(now=now).send[0][1].acked == 5
