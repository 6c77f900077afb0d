"""The UNICAST4 engine's OOB flag and batch input (spec/unicast4.py decision 10, spec/unicast4_batch.py
decision 11), on the virtual clock.

Invariants tested: an OOB message is delivered on receipt, ahead of a gap, exactly once, held as a
payload-free placeholder and counted once towards the ACK; every resend of it carries the flag and the
sender forgets it once purged; an OOB send blocks on a full window like any other and keeps its flag; a
batch's adds are not counted and leave the ACK pending, its in-order run counted; a bundle of OOB and
regular DATA is received as two batches, the OOB one first; only the highest conn_id's DATA of a batch
are kept; malformed datagrams and seqno 0 are counted without losing the rest; a non-bytes datagram or
a bad ``oob`` is refused in one line before anything changes; and an honest sender whose datagrams (single
or bundled) lose any one still gets everything delivered once, under the smallest byte limits.
"""

from __future__ import annotations

from typing import Any

import pytest

from impl.common import HELD_OVERHEAD, LocalProtocolError, payload_number, spec_payload
from impl.unicast4 import Config, SendStatus, Unicast4Engine
from impl.unicast4.codec import AckMsg, DataMsg, decode, encode


def engine(**fields: Any) -> Unicast4Engine[str]:
    return Unicast4Engine[str](Config(**fields), members=("A", "B"), now=0)


def delivered(e: Unicast4Engine[str]) -> list[int]:
    return [payload_number(p) for _, p in e.deliveries()]


def data(seqno: int, *, oob: bool = False, conn_id: int = 0) -> bytes:
    return encode(DataMsg(seqno, conn_id, seqno == 1, spec_payload(seqno), oob))


def acks(e: Unicast4Engine[str]) -> list[int]:
    return [m.seqno for _, d in e.datagrams_to_send() if isinstance(m := decode(d), AckMsg)]


def test_an_oob_message_ahead_of_a_gap_is_delivered_once_counted_once() -> None:
    b = engine(capacity=8, ack_threshold=2)
    b.received("A", data(1), now=1)
    assert delivered(b) == [1] and acks(b) == [1]  # 1 (add) + 1 (delivery): an ACK at once
    b.received("A", data(3, oob=True), now=1)
    assert delivered(b) == [3] and acks(b) == []  # counted 1: pending
    entry = b._m.recv["A"]
    assert entry.held_bytes == HELD_OVERHEAD and entry.window.get(3) == DataMsg(3, 0, False, b"", True)
    assert b.snapshot(now=1).recv[0][1].oob == (3,)
    b.received("A", data(2), now=1)  # add: 1 + 1 -> ACK(1); the drain counts #2 only: 1, pending
    assert delivered(b) == [2] and acks(b) == [1]
    assert entry.held_bytes == 0 and entry.acks_counted == 1 and entry.delivered == 3
    b.check_invariants()


def test_the_sender_flags_every_resend_blocks_oob_sends_and_forgets_on_purge() -> None:
    a = engine(capacity=1)
    assert a.send("B", spec_payload(1), now=1, oob=True) == (1, SendStatus.SENT)
    assert a.send("B", spec_payload(2), now=1, oob=True) == (2, SendStatus.BLOCKED)
    assert a.snapshot(now=1).send[0][1].oob == (1, 2)
    a.fire_timer(0, now=1)  # records the watermark
    a.fire_timer(0, now=1)  # resends the highest, #1, OOB
    sent = [decode(d) for _, d in a.datagrams_to_send()]
    assert [(m.seqno, m.oob) for m in sent if isinstance(m, DataMsg)] == [(1, True), (1, True)]
    a.received("B", encode(AckMsg(1, 0, 1)), now=1)  # purges #1: the blocked OOB send goes on
    sent = [decode(d) for _, d in a.datagrams_to_send()]
    assert [(m.seqno, m.oob) for m in sent if isinstance(m, DataMsg)] == [(2, True)]
    assert a.snapshot(now=1).send[0][1].oob == (2,)
    a.check_invariants()


def test_cached_oob_messages_are_delivered_in_the_order_they_arrived() -> None:
    """The message cache drains its OOB DATA in arrival order (spec ``cache_drain``), after the regular
    ones in seqno order; a second copy keeps the first one's place."""
    b = engine(capacity=8, ack_threshold=2)
    for seqno, oob in ((4, True), (3, False), (2, True), (4, True)):
        b.received("A", data(seqno, oob=oob), now=1)  # no window and not first: cached
    assert delivered(b) == []
    b.received("A", data(1), now=1)
    assert delivered(b) == [4, 2, 1, 3]


def test_a_bad_oob_argument_is_one_line_and_changes_nothing() -> None:
    a = engine()
    with pytest.raises(LocalProtocolError, match=r"^send: oob must be a bool, got int$"):
        a.send("B", b"x", now=1, oob=1)  # type: ignore[arg-type]
    assert a.snapshot(now=1).send == () and a.datagrams_to_send() == []


def test_a_batch_is_uncounted_on_add_and_leaves_its_ack_pending() -> None:
    b = engine(capacity=8, ack_threshold=3)
    b.received_batch("A", [data(1), data(2)], now=1)
    assert delivered(b) == [1, 2] and acks(b) == []  # the run counts 2 < 3
    b.received_batch("A", [data(3), data(4)], now=1)
    assert delivered(b) == [3, 4] and acks(b) == [4]  # 2 + 2 >= 3: at once
    b.handle_timer(now=b.get_timer())
    assert acks(b) == [4]  # a batch always leaves the ACK pending
    b.check_invariants()


def test_oob_and_regular_are_two_batches_the_oob_one_first() -> None:
    b = engine()
    b.received_batch("A", [data(1), data(3, oob=True), data(2), data(5, oob=True)], now=1)
    assert delivered(b) == [3, 5, 1, 2]  # the OOB batch (no window yet: cached, drained by #1), then the run
    b.check_invariants()


def test_a_batch_keeps_its_highest_conn_id_only() -> None:
    b = engine()
    b.received_batch("A", [data(1, conn_id=0), data(2, conn_id=0), data(1, conn_id=1)], now=1)
    assert delivered(b) == [1] and b.stats.batch_other_conn_id == 2
    assert b.snapshot(now=1).recv[0][1].conn_id == 1


def test_bad_datagrams_are_counted_and_the_rest_received() -> None:
    b = engine()
    b.received_batch("A", [b"\x00garbage", data(1), encode(DataMsg(0, 0, False, b"x")), data(2)], now=1)
    assert delivered(b) == [1, 2]
    assert b.stats.malformed == 1 and b.stats.bad_seqno == 1 and b.stats.datagrams_received == 4


def test_a_non_bytes_datagram_is_refused_before_anything_changes() -> None:
    b = engine()
    with pytest.raises(LocalProtocolError, match="received_batch: each datagram must be bytes, got str"):
        b.received_batch("A", [data(1), "nope"], now=1)  # type: ignore[list-item]
    assert delivered(b) == [] and b.stats.datagrams_received == 0 and b.snapshot(now=1).recv == ()


SMALL = {"max_window_bytes": 6 * (8 + HELD_OVERHEAD), "max_receive_bytes": 6 * (8 + HELD_OVERHEAD)}


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("lost", range(8))
def test_an_honest_sender_losing_any_one_datagram_gets_everything_once(lost: int, batched: bool) -> None:
    """Six messages, #2 and #4 OOB, through windows of capacity 4 (so #5 and #6 block until an ACK),
    under the smallest byte limits an honest six-message window needs; A's datagram number ``lost``
    gone; A's datagrams handed to B singly or as bundles of up to three, B's to A singly."""
    a, b = engine(capacity=4), engine(capacity=4, **SMALL)
    for n in range(1, 7):
        a.send("B", spec_payload(n), now=1, oob=n in (2, 4))
    got: list[int] = []
    count, now = 0, 1
    for _ in range(40):
        out = []
        for _peer, datagram in a.datagrams_to_send():
            count += 1
            if count - 1 != lost:
                out.append(datagram)
        if batched:
            for i in range(0, len(out), 3):
                b.received_batch("A", out[i:i + 3], now=now)
        else:
            for datagram in out:
                b.received("A", datagram, now=now)
        got += delivered(b)
        for _peer, datagram in b.datagrams_to_send():
            a.received("B", datagram, now=now)
        now += 500
        a.handle_timer(now=now)
        b.handle_timer(now=now)
    assert sorted(got) == [1, 2, 3, 4, 5, 6]
    assert [p for p in got if p not in (2, 4)] == [1, 3, 5, 6]
    assert a.blocked_sends() == []
    a.check_invariants()
    b.check_invariants()
