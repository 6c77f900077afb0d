"""JGroups' own multicast unit tests, run on seqcheck's NAKACK2 and NAKACK4 engines (issue 30, item 4).

As ``test_jgroups_unicast_tests.py``: each test is one JGroups test method
(``tests/junit-functional/org/jgroups/protocols/NAKACK*_Test.java``, master of 2026-08) with its
sizes, settings and data provider; JGroups' inserted protocols are filters of ``jgroups_net.Net``,
its waits are the same bounds in virtual milliseconds. docs/jgroups.md ("JGroups' unit tests") lists
the JGroups tests that cannot be expressed on the engines and why.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from jgroups_net import DROP, PASS, group, is_data, payload

from impl.nakack2 import codec as n2_codec
from impl.nakack2 import tasks as n2_tasks
from impl.nakack2.config import Variant as N2Variant
from impl.nakack4 import codec as n4_codec
from impl.nakack4 import tasks as n4_tasks
from impl.nakack4.config import Variant as N4Variant

BOTH = ["nakack2", "nakack4"]


# --- NAKACK_RetransmitTest ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH)
def test_retransmit_test_large_retransmission(protocol: str) -> None:
    """testLargeRetransmission (JGRP-1868): A, B, C; A's retransmission stopped and every other
    multicast A sends discarded above its transport (the loopback copy too), 50,000 of them; then
    the discarding ends and retransmission starts (xmit_interval 500, max_xmit_req_size 5000,
    bundles of at most 10,000 bytes; NAKACK4 with capacity 50,000): within 20 s all three members
    deliver 1-50,000 in order."""
    fields: dict[str, Any] = {"xmit_interval": 500, "max_xmit_req_size": 5_000}
    if protocol == "nakack4":
        fields["capacity"] = 50_000
    net = group(protocol, **fields)
    discard = [False]
    seqnos: set[int] = set()
    dropped: set[int] = set()

    def every_other_multicast(src: str, dst: str, msg: Any) -> str:
        if src == "A" and is_data(msg):
            if msg.seqno not in seqnos:  # one decision per multicast, for all its copies
                seqnos.add(msg.seqno)
                discard[0] = not discard[0]
                if discard[0]:
                    dropped.add(msg.seqno)
            return DROP if msg.seqno in dropped else PASS
        return PASS
    net.filters.append(every_other_multicast)
    total = 50_000
    for n in range(1, total + 1):  # no timer runs while sending: retransmission is off
        net.mcast("A", n)
    net.filters.remove(every_other_multicast)
    assert len(dropped) == total // 2
    done = net.wait_until(lambda: all(len(net.got(m, "A")) >= total for m in "ABC"), limit=20_000)
    for member in "ABC":
        assert net.got(member, "A") == list(range(1, total + 1)), member
    assert done is not None
    assert net.largest <= 10_000, f"a datagram of {net.largest} bytes (bundles are 10,000 at most)"


# --- NAKACK_RetransmissionTest ----------------------------------------------------------------------------


def _retransmission_test(protocol: str, **fields: Any) -> list[tuple[str, tuple[int, ...]]]:
    """testRetransmission (JGRP-1539): a NAKACK of member A in view [A, B] (use_mcast_xmit false)
    receives B's messages with gaps, and the retransmit task is triggered by hand. Returns what each
    step saw: the deliveries after an injection, the XMIT_REQ seqnos after a trigger."""
    config_fields: dict[str, Any] = {"use_mcast_xmit": False, **fields}
    net = group(protocol, ("A", "B"), **config_fields)
    engine = net.engines["A"]
    del net.engines["B"]  # B is only a source of injected messages
    encode = n2_codec.encode_mcast if protocol == "nakack2" else n4_codec.encode_mcast
    xmit = n2_tasks.XMIT if protocol == "nakack2" else n4_tasks.XMIT
    requests: list[int] = []

    def catch(src: str, dst: str, msg: Any) -> str:
        if isinstance(msg, n2_codec.NakXmitReqMsg):
            requests.extend(msg.request.seqnos)
        return DROP

    net.filters.append(catch)
    steps: list[tuple[str, tuple[int, ...]]] = []

    def inject(*seqnos: int) -> None:
        for s in seqnos:
            engine.received("B", encode(s, payload(s)), now=net.now)
        net.transfer()
        steps.append(("delivered", tuple(net.delivered.pop(("A", "B"), []))))

    def trigger() -> None:
        engine.fire_timer(xmit, now=net.now)
        net.transfer()
        steps.append(("xmit_req", tuple(requests)))
        requests.clear()

    inject(1, 2, 3, 4, 6, 8, 14, 15, 16, 17, 19)
    trigger()
    inject(7, 9, 13, 18, 23, 24, 26, 27, 28, 29, 31)
    trigger()
    trigger()
    inject(5, 10, 11, 12)
    trigger()
    inject(20, 21, 22, 25, 30)
    trigger()
    return steps


JGROUPS_1539 = [
    ("delivered", (1, 2, 3, 4)),  # only 1-4: a gap at 5
    ("xmit_req", ()),  # the first run asks for nothing: the gaps are new
    ("delivered", ()),
    ("xmit_req", (5, 10, 11, 12)),  # what was missing at both runs
    ("xmit_req", (5, 10, 11, 12, 20, 21, 22, 25, 30)),
    ("delivered", tuple(range(5, 20))),
    ("xmit_req", (20, 21, 22, 25, 30)),
    ("delivered", tuple(range(20, 32))),
    ("xmit_req", ()),
]


@pytest.mark.parametrize("protocol", BOTH)
def test_retransmission_test_asks_only_for_gaps_seen_twice(protocol: str) -> None:
    """testRetransmission: the XMIT_REQs of every triggered run, exactly as JGroups' test asserts."""
    assert _retransmission_test(protocol) == JGROUPS_1539


def test_retransmission_test_fails_before_jgrp_1539() -> None:
    """Under the variant that is JGRP-1539 (every run asks for every gap), the first run already asks."""
    steps = _retransmission_test("nakack2", variant=N2Variant(xmit_all_gaps=True))
    assert steps[1] == ("xmit_req", (5, 7, 9, 10, 11, 12, 13, 18))
    assert steps != JGROUPS_1539


# --- NAKACK_Delivery_Test ------------------------------------------------------------------------------


DELIVERY_SEED = 1000  # the order the test's thread pool happens to run its senders in (printed on failure)


def _delivery_test(protocol: str, **fields: Any) -> tuple[list[int], set[int], list[int]]:
    """testSendingOfRandomMessages: A's NAKACK in view [A, B] receives B's messages 1-50 several times
    over (random runs of seqnos that overlap: duplicates), each copy flagged OOB by a coin toss,
    handed up by a pool of threads in whatever order they run. The engines take one input at a time,
    so the threads are a seeded random order of whole inputs. Returns (every delivery, the seqnos
    whose first copy, the one the window takes, was regular, the seqnos injected)."""
    rng = random.Random(DELIVERY_SEED)
    total = 50
    seqnos = [s for lo, hi in ((1, total), (1, total), (15, total // 2), (2, total), (5, total - 10))
              for s in rng.sample(range(lo, hi + 1), hi - lo + 1)]
    rng.shuffle(seqnos)
    net = group(protocol, ("A", "B"), **fields)
    engine = net.engines["A"]
    del net.engines["B"]  # B is only a source of injected messages
    encode = n2_codec.encode_mcast if protocol == "nakack2" else n4_codec.encode_mcast
    first: dict[int, bool] = {}
    for s in seqnos:
        oob = rng.random() < 0.5
        first.setdefault(s, oob)
        engine.received("B", encode(s, payload(s), n2_codec.DEFAULT_LIMITS, oob), now=net.now)
    net.transfer()
    return net.got("A", "B"), {s for s, oob in first.items() if not oob}, seqnos


@pytest.mark.parametrize("protocol", BOTH)
def test_delivery_test_every_message_once_regular_ones_in_order(protocol: str) -> None:
    """Every one of the 50 delivered exactly once, duplicates and OOB copies notwithstanding (NAKACK2
    spec decision 17, NAKACK4's 18: the placeholder; the add refuses a second copy whatever its flag); a message the
    window took as a regular one comes after every smaller seqno, and some OOB one overtook."""
    delivered, regular, seqnos = _delivery_test(protocol)
    assert len(seqnos) > 150 and sorted(delivered) == list(range(1, 51)), f"seed {DELIVERY_SEED}"
    position = {s: i for i, s in enumerate(delivered)}
    assert all(position[s] < position[t] for t in regular for s in range(1, t)), f"seed {DELIVERY_SEED}"
    assert delivered != sorted(delivered) and 0 < len(regular) < 50


def test_delivery_test_fails_with_the_oob_placeholder_redelivered() -> None:
    """Under the defect oob_redelivers (JGRP-379's double delivery: the removal delivers an OOB message
    again) the test's count is wrong."""
    delivered, _, _ = _delivery_test("nakack2", variant=N2Variant(oob_redelivers=True))
    assert len(delivered) > 50 and set(delivered) == set(range(1, 51))


# --- NAKACK4_Test ---------------------------------------------------------------------------------------


def _sender_blocked(variant: N4Variant) -> tuple[int, int]:
    """testSenderBlocked (JGRP-2904): A-D (ack_threshold 1, capacity 512) each multicast 1-1000; B, C
    and D close (A's view is [A]); then B's spurious ACK for 1005 reaches A, and A multicasts
    capacity + 100 more. Returns (what A delivered of the last batch within 5 s, how many it sent)."""
    names = ("A", "B", "C", "D")
    net = group("nakack4", names, ack_threshold=1, capacity=512, variant=variant)
    for name in names:
        for n in range(1, 1001):
            net.engines[name].multicast(payload(n), now=net.now)
        net.transfer()
    everyone = net.wait_until(lambda: all(len(net.got(m, s)) == 1000 for m in names for s in names), limit=60_000)
    assert everyone is not None
    for name in names[1:]:
        del net.engines[name]
    net.engines["A"].install_view(["A"], now=net.now)
    net.transfer()
    net.engines["A"].received("B", n4_codec.encode(n4_codec.AckMsg(1005)), now=net.now)
    net.transfer()
    net.delivered.clear()
    count = 512 + 100
    for n in range(1, count + 1):
        net.mcast("A", n)
    net.wait_until(lambda: len(net.got("A", "A")) == count, limit=5_000)
    return len(net.got("A", "A")), count


def test_nakack4_test_sender_blocked() -> None:
    delivered, sent = _sender_blocked(N4Variant())
    assert delivered == sent


def test_nakack4_test_sender_blocked_before_jgrp_2904() -> None:
    """Before JGRP-2904 the non-member's ACK re-creates its AckTable entry at 1005 and A blocks for
    good once its window passes 1005 + capacity: the test's wait runs out."""
    delivered, sent = _sender_blocked(N4Variant(ack_from_non_members=True))
    assert delivered < sent
