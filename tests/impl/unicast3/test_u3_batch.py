"""The UNICAST3 engine's batch input (``received_batch``; spec decision 25), on the virtual clock.

Invariants tested: a batch is delivered in order and acknowledged at once iff it holds ack_threshold DATA
of the entry's connection (else by the retransmit task); a bundle of OOB and regular DATA is received as
two batches, the OOB one first; a control message in a bundle is handled as a single one; malformed
datagrams and seqno 0 are counted and dropped without losing the rest of the batch; a non-bytes datagram
is refused in one line before anything changes; ack_threshold below 2 is refused; and an honest sender
whose bundles lose any one datagram still gets everything delivered once.
"""

from __future__ import annotations

from typing import Any

import pytest

from impl.common import HELD_OVERHEAD
from impl.unicast3 import Config, LocalProtocolError, Unicast3Engine, payload_number, spec_payload
from impl.unicast3.codec import AckMsg, DataMsg, decode, encode


def engine(**fields: Any) -> Unicast3Engine[str]:
    return Unicast3Engine[str](Config(**fields), members=("A", "B"), now=0)


def delivered(e: Unicast3Engine[str]) -> list[int]:
    return [payload_number(p) for _, p in e.deliveries()]


def data(seqno: int, *, oob: bool = False, conn_id: int = 0) -> bytes:
    return encode(DataMsg(seqno, conn_id, seqno == 1, spec_payload(seqno), oob))


def acks(e: Unicast3Engine[str]) -> list[int]:
    return [m.seqno for _, d in e.datagrams_to_send() if isinstance(m := decode(d), AckMsg)]


@pytest.mark.parametrize("threshold, immediate", [(2, [3]), (4, [])])
def test_one_ack_decision_per_batch(threshold: int, immediate: list[int]) -> None:
    b = engine(ack_threshold=threshold)
    b.received_batch("A", [data(1), data(2), data(3)], now=1)
    assert delivered(b) == [1, 2, 3]
    assert acks(b) == immediate
    b.handle_timer(now=b.get_timer())
    assert acks(b) == ([] if immediate else [3])  # pending only when not acknowledged at once
    b.check_invariants()


def test_a_cached_data_added_with_the_batch_leaves_its_ack_pending() -> None:
    """#3 comes before the first DATA in the batch, so it is cached and added by addQueuedMessages
    (ACK pending); the batch's immediate ACK leaves that flag as it was: a second ACK on the next run."""
    b = engine(ack_threshold=2)
    b.received_batch("A", [data(3), data(1), data(2)], now=1)
    assert delivered(b) == [1, 2, 3] and acks(b) == [3]
    b.handle_timer(now=b.get_timer())
    assert acks(b) == [3]


def test_oob_and_regular_are_two_batches_the_oob_one_first() -> None:
    b = engine()
    b.received_batch("A", [data(1), data(3, oob=True), data(2), data(5, oob=True)], now=1)
    assert delivered(b) == [3, 5, 1, 2]  # OOB batch (delivered on receipt), then the regular run
    b.check_invariants()


def test_bad_datagrams_are_counted_and_the_rest_received() -> None:
    b = engine()
    b.received_batch("A", [b"\x00garbage", data(1), encode(DataMsg(0, 0, False, b"x")), data(2)], now=1)
    assert delivered(b) == [1, 2]
    assert b.stats.malformed == 1 and b.stats.bad_seqno == 1 and b.stats.datagrams_received == 4


def test_a_control_message_in_a_bundle_is_handled_alone() -> None:
    a, b = engine(), engine()
    for n in (1, 2):
        a.send("B", spec_payload(n), now=1)
    sent = [d for _, d in a.datagrams_to_send()]
    b.received_batch("A", sent, now=1)
    b.handle_timer(now=b.get_timer())
    ack = [d for _, d in b.datagrams_to_send()]
    a.received_batch("B", ack, now=2)
    assert a.snapshot(now=2).send[0][1].unacked == ()


def test_a_non_bytes_datagram_is_refused_before_anything_changes() -> None:
    b = engine()
    with pytest.raises(LocalProtocolError, match="received_batch: each datagram must be bytes, got str"):
        b.received_batch("A", [data(1), "nope"], now=1)  # type: ignore[list-item]
    assert delivered(b) == [] and b.stats.datagrams_received == 0 and b.snapshot(now=1).recv == ()


def test_ack_threshold_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="ack_threshold"):
        Config(ack_threshold=1)


@pytest.mark.parametrize("lost", range(6))
def test_an_honest_sender_losing_any_one_datagram_of_its_bundles_gets_everything(lost: int) -> None:
    """Bundles of three under the smallest byte limits an honest six-message window needs; one
    datagram of the six lost."""
    small = {"max_window_bytes": 6 * (8 + HELD_OVERHEAD), "max_receive_bytes": 6 * (8 + HELD_OVERHEAD)}
    a, b = engine(), engine(**small)
    for n in range(1, 7):
        a.send("B", spec_payload(n), now=1, oob=n == 4)
    sent = [d for _, d in a.datagrams_to_send()]
    del sent[lost]
    b.received_batch("A", sent[:3], now=1)
    b.received_batch("A", sent[3:], now=1)
    got = delivered(b)
    for now in range(2, 40):
        for src, dst, e in (("A", "B", a), ("B", "A", b)):
            t = e.get_timer()
            e.handle_timer(now=max(t, now * 1000))
            out = [d for peer, d in e.datagrams_to_send() if peer == dst]
            (b if dst == "B" else a).received_batch(src, out, now=max(t, now * 1000))
        got += delivered(b)
    assert sorted(got) == [1, 2, 3, 4, 5, 6]
    b.check_invariants()
