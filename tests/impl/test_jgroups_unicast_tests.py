"""JGroups' own unicast unit tests, run on seqcheck's UNICAST3 and UNICAST4 engines (issue 30, item 4).

Each test is one JGroups test method (``tests/junit-functional/org/jgroups/protocols/UNICAST_*.java``
in JGroups' repository, master of 2026-08), with its sizes, its settings (``xmit_interval`` 500 ms,
``max_xmit_req_size`` 5000, ...) and its data provider (UNICAST3 and UNICAST4 where JGroups runs
both). JGroups' inserted protocols become filters of ``jgroups_net.Net`` and its wall-clock waits
become the same bounds in virtual milliseconds, so "delivered within 5 s" is a property of the
protocol here, not of the machine. Where a JGroups test cannot be expressed on the engines, the
table in docs/jgroups.md ("JGroups' unit tests") says why; those are not silently skipped here.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import pytest
from jgroups_net import DROP, PASS, Net, discard_payload, drop_next, is_ack, is_data, payload, reverse, unicast

from impl.unicast3 import codec as u3_codec
from impl.unicast3.config import Variant
from impl.unicast4 import codec as u4_codec
from spec.unicast3 import OPEN

BOTH = ["unicast3", "unicast4"]
XMIT = 500  # the xmit_interval JGroups' tests set


def unacked(net: Net, member: str) -> int:
    """JGroups' getNumUnackedMessages: messages in ``member``'s send windows not yet acknowledged."""
    view = net.engines[member].snapshot(now=net.now)
    return sum(len(entry.unacked) for _, entry in view.send)


# --- UNICAST_OOB_Test ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_oob_test_regular_messages(protocol: str) -> None:
    """testRegularMessages: A sends 1-5 to B; DISCARD_PAYLOAD drops message 3 twice; B gets 1-5 in
    order within 3 s (JGroups waits 3000 ms)."""
    net = unicast(protocol, xmit_interval=XMIT)
    net.filters.append(discard_payload("A", 3, times=2))
    for n in range(1, 6):
        net.send("A", "B", n)
    assert net.wait_until(lambda: len(net.got("B", "A")) >= 5, limit=3_000) is not None
    assert net.got("B", "A") == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("protocol", BOTH)
def test_oob_test_out_of_band_messages(protocol: str) -> None:
    """testOutOfBandMessages: message 4 is OOB, so B delivers it before 3, which waits for its second
    retransmission; all five once."""
    net = unicast(protocol, xmit_interval=XMIT)
    net.filters.append(discard_payload("A", 3, times=2))
    for n in range(1, 6):
        net.send("A", "B", n, oob=n == 4)
    assert net.wait_until(lambda: len(net.got("B", "A")) >= 5, limit=3_000) is not None
    got = net.got("B", "A")
    assert sorted(got) == [1, 2, 3, 4, 5]
    assert got.index(4) < got.index(3)


@pytest.mark.parametrize("oob", [False, True])
@pytest.mark.parametrize("protocol", BOTH)
def test_oob_test_second_message_received_first(protocol: str, oob: bool) -> None:
    """testSecondMessageReceivedFirst{Regular,OOB} (JGRP-2327): connections removed on both sides, B
    sends 1-5 to A, and REVERSE below A's unicast protocol passes the five up as 5, 4, 3, 2, 1. A must
    deliver all five (in order unless OOB) within 10 x xmit_interval: the first four arrive before the
    first message, so they are cached, not dropped and retransmitted."""
    net = unicast(protocol, xmit_interval=XMIT)  # fresh engines: no connections, as after the removal
    hold, all_held = reverse("B", "A", 5)
    net.filters.append(hold)
    start = net.now
    flags = {"oob": True} if oob else {}
    for n in range(1, 6):
        net.send("B", "A", n, **flags)
    assert all_held()
    net.filters.remove(hold)
    net.release(reverse=True)
    took = net.wait_until(lambda: len(net.got("A", "B")) >= 5, limit=10 * XMIT)
    got = net.got("A", "B")
    assert (sorted(got) if oob else got) == [1, 2, 3, 4, 5]
    assert net.now - start < 10 * XMIT
    assert took == 0, "with the message cache no retransmission is needed"


@pytest.mark.parametrize("oob", [False, True])
@pytest.mark.parametrize("protocol", BOTH)
def test_oob_test_second_message_received_first_batched(protocol: str, oob: bool) -> None:
    """testSecondMessageReceivedFirst{Regular,OOB}Batched: as above, but MAKE_BATCH below A's unicast
    protocol passes the five reversed messages up as one batch (5, 4, 3, 2, 1; ``received_batch``).
    UNICAST3 (spec decision 25) caches 5-2 (A has no receive entry), creates the entry from 1 and drains
    the cache into it; UNICAST4 (spec/unicast4_batch.py decision 11) decides the connection by the
    batch's lowest seqno, 1, first, and adds all five. Either delivers all five (in order unless OOB)
    with no retransmission, and leaves the batch's ACK to the retransmit task: five is below UNICAST3's
    ack_threshold (100) and UNICAST4's (512, capacity / 4), whose batch adds are not counted."""
    net = unicast(protocol, xmit_interval=XMIT)
    hold, all_held = reverse("B", "A", 5)
    net.filters.append(hold)
    start = net.now
    for n in range(1, 6):
        net.send("B", "A", n, oob=oob)
    assert all_held()
    net.filters.remove(hold)
    net.release_batch(reverse=True)
    assert unacked(net, "B") == 5  # no ACK yet: one batch, below ack_threshold
    took = net.wait_until(lambda: len(net.got("A", "B")) >= 5, limit=10 * XMIT)
    got = net.got("A", "B")
    assert (sorted(got) if oob else got) == [1, 2, 3, 4, 5]
    assert net.now - start < 10 * XMIT
    assert took == 0, "with the message cache no retransmission is needed"
    assert net.wait_until(lambda: unacked(net, "B") == 0, limit=2 * XMIT) is not None


@pytest.mark.parametrize("protocol", BOTH)
def test_a_batch_of_ack_threshold_messages_is_acknowledged_at_once(protocol: str) -> None:
    """The same batch with ack_threshold 5 (JGroups' property): the batch's ACK goes at once (UNICAST4:
    its in-order run of five counts five when delivered)."""
    net = unicast(protocol, xmit_interval=XMIT, ack_threshold=5)
    hold, all_held = reverse("B", "A", 5)
    net.filters.append(hold)
    for n in range(1, 6):
        net.send("B", "A", n)
    assert all_held()
    net.filters.remove(hold)
    net.release_batch(reverse=True)
    assert net.got("A", "B") == [1, 2, 3, 4, 5] and unacked(net, "B") == 0


# --- UNICAST_DropFirstAndLastTest --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_drop_first_and_last_last_message_dropped(protocol: str) -> None:
    """testLastMessageDropped (JGRP-1548): A sends 1-5 to B and the fifth DATA is dropped; B gets it
    by the sender's resend of its highest seqno (not by the stable task) within 10 s."""
    net = unicast(protocol, xmit_interval=XMIT)
    for n in range(1, 5):
        net.send("A", "B", n)
    net.filters.append(drop_next("A", 1, is_data))
    net.send("A", "B", 5)
    took = net.wait_until(lambda: len(net.got("B", "A")) == 5, limit=10_000)
    assert took is not None and took <= 3 * XMIT, took  # three runs of the retransmit task at most
    assert net.got("B", "A") == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("protocol", BOTH)
def test_drop_first_and_last_first_message_dropped(protocol: str) -> None:
    """testFirstMessageDropped (JGRP-1563): no connections, A's first DATA to B is dropped; B gets
    message 1 (JGroups allows 500 s; the resend of the highest seqno brings it within an interval)."""
    net = unicast(protocol, xmit_interval=XMIT)
    net.filters.append(drop_next("A", 1))
    net.send("A", "B", 1)
    took = net.wait_until(lambda: net.got("B", "A") == [1], limit=500_000)
    assert took is not None and took <= 3 * XMIT, took  # three runs of the retransmit task at most


# --- UNICAST_DroppedAckTest ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_dropped_ack_not_endless_xmits(protocol: str) -> None:
    """testNotEndlessXmits (JGRP-1578): A's DISCARD drops the next 5 unicasts it sends (its ACKs);
    B sends 1-5 to A; within 10 s B has nothing unacknowledged, and then the pair goes quiet (no
    endless retransmission)."""
    net = unicast(protocol, xmit_interval=XMIT)
    net.filters.append(drop_next("A", 5))
    for n in range(1, 6):
        net.send("B", "A", n)
    assert net.wait_until(lambda: unacked(net, "B") == 0, limit=10_000) is not None
    assert net.got("A", "B") == [1, 2, 3, 4, 5]
    net.sleep(XMIT)  # a resend due at the very time the ACK arrived still goes (and is acknowledged)
    data: list[int] = []

    def count_data(src: str, dst: str, msg: object) -> str:
        if is_data(msg):
            data.append(net.now)
        return PASS
    net.filters.append(count_data)
    net.sleep(60_000)  # UNICAST4 closes the idle connection in this time: a CLOSE, not a retransmission
    assert data == [], f"DATA retransmitted at {data} after everything was acknowledged"


# --- UNICAST_RetransmitTest ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_retransmit_test_large_retransmission(protocol: str) -> None:
    """testLargeRetransmission (JGRP-1868): retransmission stopped, A sends 50,000 messages to B with
    every other one discarded, then retransmission starts (max_xmit_req_size 5000, bundles of at most
    10,000 bytes): B gets all 50,000 in order within 15 s. (UNICAST4's window of 2,048 blocks the
    sends beyond it; the engine holds them, as a blocked JGroups sender thread would, and they go
    out as ACKs make room.)"""
    net = unicast(protocol, xmit_interval=XMIT, max_xmit_req_size=5_000)
    flip = [False]

    def every_other(src: str, dst: str, msg: object) -> str:
        if src == "A" and is_data(msg):
            flip[0] = not flip[0]
            return DROP if flip[0] else PASS
        return PASS
    net.filters.append(every_other)
    total = 50_000
    for n in range(1, total + 1):  # no timer runs while sending: retransmission is off
        net.send("A", "B", n)
    net.filters.remove(every_other)
    assert net.wait_until(lambda: len(net.got("B", "A")) >= total, limit=15_000) is not None
    assert net.got("B", "A") == list(range(1, total + 1))
    assert net.largest <= 10_000, f"a datagram of {net.largest} bytes (bundles are 10,000 at most)"


# --- UNICAST_MessagesToSelfTest -------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
@pytest.mark.parametrize("discard", [False, True])
def test_messages_to_self_reception_of_all_messages(protocol: str, discard: bool) -> None:
    """testReceptionOfAllMessages[WithDISCARD]: A sends 10,000 messages of 1,000 bytes to itself
    (through its own send and receive windows; the transport loops them back), with DISCARD losing
    each datagram with probability 0.1 in the second test; all 10,000 arrive in order within 20 s."""
    net = unicast(protocol, members=("A",), xmit_interval=XMIT)
    if discard:
        rng = random.Random(30_4)  # the seed of this test; DISCARD's down rate 0.1
        net.filters.append(lambda s, d, m: DROP if rng.random() < 0.1 else PASS)
    total = 10_000
    for n in range(1, total + 1):
        net.send("A", "A", n, size=1_000)
    assert net.wait_until(lambda: len(net.got("A", "A")) >= total, limit=20_000) is not None
    assert net.got("A", "A") == list(range(1, total + 1))


# --- UNICAST_ConnectionTests ----------------------------------------------------------------------------


def send_and_check(net: Net, src: str, dst: str, count: int, *, oob: bool = False) -> None:
    """sendAndCheck: ``count`` messages, all arrive within 10 s (JGroups resets the receiver first)."""
    net.delivered.pop((dst, src), None)
    for n in range(1, count + 1):
        net.send(src, dst, n, **({"oob": True} if oob else {}))
    assert net.wait_until(lambda: len(net.got(dst, src)) == count, limit=10_000) is not None, net.got(dst, src)
    assert sorted(net.got(dst, src)) == list(range(1, count + 1))


def to_each_other(net: Net, count: int) -> None:
    """sendToEachOtherAndCheck."""
    for pair in (("A", "B"), ("B", "A")):
        net.delivered.pop(pair, None)
    for n in range(1, count + 1):
        net.send("A", "B", n)
        net.send("B", "A", n)
    assert net.wait_until(lambda: len(net.got("A", "B")) == len(net.got("B", "A")) == count, limit=5_000) is not None


@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_regular_message_reception(protocol: str) -> None:
    net = unicast(protocol)
    send_and_check(net, "A", "B", 100)
    send_and_check(net, "B", "A", 50)


@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_both_channels_closing(protocol: str) -> None:
    net = unicast(protocol)
    to_each_other(net, 10)
    net.engines["A"].close_connection("B", now=net.now)
    net.engines["B"].close_connection("A", now=net.now)
    to_each_other(net, 10)


@pytest.mark.parametrize("protocol", BOTH)
@pytest.mark.parametrize("closer", ["A", "B"])
def test_connection_tests_one_side_closing_unilaterally(protocol: str, closer: str) -> None:
    """testAClosingUnilaterally / testBClosingUnilaterally: one side closes, then A sends to B."""
    net = unicast(protocol)
    to_each_other(net, 10)
    net.engines[closer].close_connection("B" if closer == "A" else "A", now=net.now)
    send_and_check(net, "A", "B", 10)


@pytest.mark.parametrize("oob", [False, True])
@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_b_removing_unilaterally(protocol: str, oob: bool) -> None:
    """testBRemovingUnilaterally[OOB]: B removes its receive connection for A; A's next messages
    (OOB in the second test) resynchronise through SEND_FIRST_SEQNO and all ten arrive."""
    net = unicast(protocol)
    send_and_check(net, "A", "B", 10)
    net.engines["B"].remove_receive_connection("A")
    net.transfer()
    send_and_check(net, "A", "B", 10, oob=oob)


@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_a_closing_unilaterally_but_losing_first_message(protocol: str) -> None:
    net = unicast(protocol)
    send_and_check(net, "A", "B", 10)
    net.engines["A"].close_connection("B", now=net.now)
    net.filters.append(drop_next("A", 1))
    send_and_check(net, "A", "B", 10)


@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_multiple_concurrent_resets(protocol: str) -> None:
    """testMultipleConcurrentResets (JGRP-1347): after A closes its connection, B receives ten DATA
    messages all claiming seqno 1, conn_id 2, first, with payloads 1-10: exactly one is delivered.
    (JGroups passes them up from ten threads at once; the engine takes inputs one at a time, so this
    is the serialisation of that race that every interleaving reduces to.)"""
    net = unicast(protocol)
    send_and_check(net, "A", "B", 1)
    net.engines["A"].close_connection("B", now=net.now)
    net.delivered.clear()
    encode = u3_codec.encode_data if protocol == "unicast3" else u4_codec.encode_data
    for n in range(1, 11):
        net.engines["B"].received("A", encode(1, 2, True, payload(n)), now=net.now)
    net.transfer()
    assert len(net.got("B", "A")) == 1, net.got("B", "A")


def _has_send_connection(net: Net, peer: str) -> bool:
    """JGroups' hasSendConnectionTo: an OPEN send entry."""
    entry = dict(net.engines["A"].snapshot(now=net.now).send).get(peer)
    return entry is not None and entry.state == OPEN


def _closed(net: Net) -> bool:
    return not _has_send_connection(net, "Fake")


@pytest.mark.parametrize("protocol", BOTH)
def test_connection_tests_message_to_non_existing_member(protocol: str) -> None:
    """testMessageToNonExistingMember (max_retransmit_time 5 s): a send to an address that is not a
    member opens a connection that the AgeOutCache closes at its first retransmit run after 5 s, so
    it is gone within the test's 10 s. With the AgeOutCache off (the engines' default, for the
    lockstep) it is still open then (only idle expiry would close it, at conn_expiry_timeout)."""
    for age_out in (5_000, 0):
        net = unicast(protocol, max_retransmit_time=age_out)
        net.send("A", "Fake", 1)
        assert _has_send_connection(net, "Fake")
        gone = net.wait_until(functools.partial(_closed, net), limit=10_000)
        if age_out:
            assert gone is not None and gone <= age_out + XMIT, gone
        else:
            assert gone is None or gone > age_out + XMIT, gone


# --- UNICAST_Test -----------------------------------------------------------------------------------------


def drop_ack_499(net: Net) -> list[bool]:
    """DropUnicastAck(499) below B's unicast protocol: B's ACK for 499 is sent as an ACK for 498, and
    from then on everything B receives is dropped. ``[discarding, installed]``: set ``installed`` to
    False to remove the protocol."""
    discarding = [False, True]

    def rewrite(src: str, dst: str, msg: object) -> str:
        if discarding[1] and discarding[0] and dst == "B":
            return DROP
        return PASS
    engine = net.engines["B"]
    original = engine.datagrams_to_send

    def to_send() -> list[tuple[str, bytes]]:
        out = []
        for dst, data in original():
            msg = net.decode(data)
            if discarding[1] and is_ack(msg) and msg.seqno == 499:
                discarding[0] = True
                msg = type(msg)(498, msg.conn_id, msg.timestamp)
                data = (u3_codec if net.decode is u3_codec.decode else u4_codec).encode(msg)
            out.append((dst, data))
        return out
    engine.datagrams_to_send = to_send
    net.filters.append(rewrite)
    return discarding


@pytest.mark.parametrize("protocol", BOTH)
@pytest.mark.parametrize(("close_timeout", "deliveries"), [(60_000, 499), (1_000, 500)])
def test_unicast_test_duplicate_message_delivery(protocol: str, close_timeout: int, deliveries: int) -> None:
    """testDuplicateMessageDelivery: A sends 1-499 to B; B's ACK for 499 is rewritten to 498 and then B
    hears nothing; B closes its receive connection for A (conn_close_timeout ``close_timeout``). With
    JGroups' 60 s the entry is still CLOSING when the drop ends and A's resend of 499 is recognised:
    499 deliveries. With 1 s (JGroups' comment: "change to a low value (e.g. 1000) to make this test
    fail") B has removed the entry, asks for the first seqno, and delivers 499 a second time: the
    duplicate the test documents, reproduced here as the expected outcome of that setting.
    (closeReceiveConnection is B's view without A: B has no send entry for A, so only the receive
    entry changes, as with JGroups' method.)"""
    net = unicast(protocol, xmit_interval=XMIT, conn_close_timeout=close_timeout)
    discarding = drop_ack_499(net)
    for n in range(1, 500):
        net.send("A", "B", n)
    net.wait_until(lambda: discarding[0], limit=500)
    assert len(net.got("B", "A")) == 499
    net.engines["B"].install_view(["B"], now=net.now)  # B excludes A (A keeps B)
    net.wait_until(lambda: not net.engines["B"].snapshot(now=net.now).recv, limit=5_000)
    discarding[1] = False  # the protocol is removed
    net.wait_until(lambda: len(net.got("B", "A")) >= 500, limit=2_000)
    assert len(net.got("B", "A")) == deliveries


# --- The same tests fail on the releases with the bugs they were written for -------------------------


def _last_message_dropped(net: Net) -> bool:
    for n in range(1, 5):
        net.send("A", "B", n)
    net.filters.append(drop_next("A", 1, is_data))
    net.send("A", "B", 5)
    return net.wait_until(lambda: len(net.got("B", "A")) == 5, limit=10_000) is not None


def _not_endless_xmits(net: Net) -> bool:
    net.filters.append(drop_next("A", 5))
    for n in range(1, 6):
        net.send("B", "A", n)
    return net.wait_until(lambda: unacked(net, "B") == 0, limit=10_000) is not None


def _second_message_first_without_retransmission(net: Net) -> bool:
    hold, _ = reverse("B", "A", 5)
    net.filters.append(hold)
    for n in range(1, 6):
        net.send("B", "A", n)
    net.filters.remove(hold)
    net.release(reverse=True)
    return net.wait_until(lambda: len(net.got("A", "B")) >= 5, limit=10 * XMIT) == 0


@pytest.mark.parametrize(("test", "bug"), [
    (_last_message_dropped, "no_hs_resend"),  # JGRP-1548 (3.2.x)
    (_not_endless_xmits, "ack_only_new"),  # JGRP-1578 (3.2.x)
    (_second_message_first_without_retransmission, "no_message_cache"),  # JGRP-2327 (3.x to 5.1)
])
def test_the_jgroups_tests_catch_the_bugs_they_were_written_for(test: Callable[[Net], bool], bug: str) -> None:
    """Each test above passes on UNICAST3 as released today and fails under the variant that is the
    bug it was written for (so these tests can fail, and fail for the JGroups reason)."""
    assert test(unicast("unicast3", xmit_interval=XMIT))
    assert not test(unicast("unicast3", xmit_interval=XMIT, variant=Variant(**{bug: True})))
