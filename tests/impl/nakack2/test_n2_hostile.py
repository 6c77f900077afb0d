"""Hostile input: garbage, non-members, absurd seqnos, digests far ahead, floods. The engine never
raises, never loses or duplicates a delivery, counts what it drops, and answers a datagram with at
most a bounded multiple of its size."""

from __future__ import annotations

import random

import pytest
from n2_group import Group

from impl.nakack2 import Config, Nakack2Engine, SendWindowFull, spec_payload
from impl.nakack2.codec import (
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    StabilityMsg,
    StableMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    encode,
)
from impl.wire import MAX_SEQNO

ABC = ("A", "B", "C")
EVIL = spec_payload(10**9)  # a payload no honest member sends


def test_garbage_is_counted_and_changes_nothing() -> None:
    g = Group()
    g.mcast("A", 1)
    before = g["B"].snapshot()
    rng = random.Random(7)
    for _ in range(500):
        g["B"].received("A", bytes(rng.randrange(256) for _ in range(rng.randrange(40))), now=0)
    assert g["B"].stats.malformed >= 490  # a few random strings happen to be valid HIGHEST_SEQNOs etc.
    g.collect()
    assert g.got("B") == [1]
    g["B"].check_invariants()
    assert g["B"].snapshot().windows == before.windows


def test_messages_from_a_non_member_are_dropped() -> None:
    g = Group()
    g.mcast("A", 1)
    b = g["B"]
    before = b.snapshot()
    for msg in (McastMsg(1, b"x"), HighestSeqnoMsg(9), StableMsg(ABC, (("A", 1, 1),)),
                StabilityMsg(ABC, (("A", 1, 1),)), XmitRspMsg("X", 1, b"x")):
        b.received("X", encode(msg), now=0)
    assert b.snapshot() == before and b.datagrams_to_send() == [] and b.deliveries() == []
    assert b.stats.data_without_window == 2 and b.stats.stability_ignored == 1


def test_an_absurd_seqno_is_dropped_before_it_allocates() -> None:
    g = Group()
    g["B"].received("A", encode(McastMsg(MAX_SEQNO, b"x")), now=0)
    assert g["B"].stats.beyond_window == 1
    g.mcast("A", 1, 2)
    assert g.got("B") == [1, 2]
    g.check()


def test_a_forged_stability_far_ahead_from_a_non_coordinator_purges_nothing() -> None:
    g = Group(hold=lambda src, dst, msg: dst == "C" and isinstance(msg, McastMsg) and msg.seqno == 2)
    g.mcast("A", 1, 2)
    g["A"].received("B", encode(StabilityMsg(ABC, (("A", MAX_SEQNO, MAX_SEQNO),))), now=0)
    assert g["A"].stats.stability_ignored == 1 and dict(g["A"].snapshot().windows)["A"].low == 0
    g.release()
    assert g.got("C") == [1, 2]


def test_a_stability_far_ahead_from_the_coordinator_is_clamped_to_what_was_delivered() -> None:
    g = Group(hold=lambda src, dst, msg: dst == "B" and isinstance(msg, McastMsg) and msg.seqno == 2)
    g.mcast("C", 1, 2)  # C's loopback delivered both; B misses 2
    g["C"].received("A", encode(StabilityMsg(ABC, (("C", MAX_SEQNO, MAX_SEQNO),))), now=0)
    own = dict(g["C"].snapshot().windows)["C"]
    assert own.low == 2  # clamped to C's own hd: C trusts its coordinator (as JGroups)
    g["B"].received("A", encode(StabilityMsg(ABC, (("C", MAX_SEQNO, MAX_SEQNO),))), now=0)
    assert dict(g["B"].snapshot().windows)["C"].delivered == 1  # a receive window purges nothing
    g.check()


def test_a_join_digest_far_ahead_does_not_crash_the_joiner() -> None:
    joiner = Nakack2Engine[str](Config(), me="C", members=("A", "B"), now=0)
    joiner.received("A", encode(JoinRspMsg(ABC, (("A", MAX_SEQNO - 1, MAX_SEQNO), ("C", 7, 9)))), now=0)
    joiner.become_server(now=0)
    joiner.received("A", encode(McastMsg(MAX_SEQNO, b"last")), now=0)
    assert joiner.deliveries() == [("A", b"last")]
    assert joiner.multicast(b"mine", now=0) == 1  # its own window follows its counter, not the digest
    joiner.check_invariants()


def test_a_join_rsp_naming_other_kinds_of_address_is_dropped() -> None:
    joiner = Nakack2Engine[str](Config(), me="C", members=("A", "B"), now=0)
    joiner.received("A", encode(JoinRspMsg((1, 2), ((1, 0, 0),))), now=0)
    assert joiner.stats.join_rsp_ignored == 1 and joiner.snapshot().windows == ()


def test_an_xmit_rsp_in_another_senders_name_is_dropped() -> None:
    g = Group(hold=lambda src, dst, msg: dst == "C" and isinstance(msg, McastMsg) and msg.seqno == 2)
    g.mcast("A", 1, 2, 3)
    g["C"].received("B", encode(XmitRspMsg("A", 2, b"forged")), now=0)
    assert g["C"].stats.xmit_rsp_foreign == 1
    g.release()
    assert g.got("C") == [1, 2, 3] and (("A", b"forged") not in g["C"].deliveries())


def flood_group(config: Config) -> Group:
    g = Group(config=config)
    for _ in range(2000):
        g["A"].multicast(bytes(1000), now=0)
    for e in g.engines.values():
        e.datagrams_to_send()
    return g


def test_one_xmit_req_is_answered_with_a_bounded_multiple_of_its_size() -> None:
    g = flood_group(Config())
    request = encode(NakXmitReqMsg("A", XmitReqMsg(tuple(range(1, 2001)))))
    g["A"].received("B", request, now=0)
    sent = sum(len(d) for _, d in g["A"].datagrams_to_send())
    assert 0 < sent <= max(64 * len(request), 65_507)
    assert g["A"].stats.resends_throttled > 0


@pytest.mark.parametrize("xmit_interval", [1000, 0])
def test_a_flood_of_xmit_reqs_is_bounded_per_interval(xmit_interval: int) -> None:
    """Also without retransmission, where the period of max_resend_bytes is 1000 ms."""
    g = flood_group(Config(xmit_interval=xmit_interval))
    sent = 0
    for i in range(200):
        request = encode(NakXmitReqMsg("A", XmitReqMsg(tuple(range(1 + i * 10, 11 + i * 10)))))
        for src in ("B", "X", "Y"):  # a member and two non-members (which share one budget)
            g["A"].received(src, request, now=0)
        sent += sum(len(d) for _, d in g["A"].datagrams_to_send())
    assert sent <= 2 * Config().max_resend_bytes


def test_a_request_for_another_senders_messages_is_not_remulticast() -> None:
    g = Group(hold=lambda src, dst, msg: dst == "C" and isinstance(msg, McastMsg))
    g.mcast("A", 1)
    g["B"].received("C", encode(NakXmitReqMsg("A", XmitReqMsg((1,)))), now=0)
    assert g["B"].datagrams_to_send() == [] and g["B"].stats.xmit_req_foreign == 1


def test_highest_seqno_far_ahead_costs_one_request_per_datagram() -> None:
    g = Group()
    for i in range(100):
        g["C"].received("B", encode(HighestSeqnoMsg(MAX_SEQNO - i)), now=0)
    out = g["C"].datagrams_to_send()
    assert len(out) == 100 and all(dst == "B" for dst, _ in out)


def random_hostile_message(rng: random.Random) -> WireMsg:
    seqno = rng.choice([0, 1, 2, 3, 5, 50, MAX_SEQNO, rng.randrange(1, 10)])
    sender = rng.choice(ABC + ("X",))
    view = rng.choice([ABC, ("A", "B"), ("X",)])
    digest = tuple((p, seqno // 2, seqno) for p in sorted(rng.sample(ABC, rng.randrange(4))))
    choices: list[WireMsg] = [
        McastMsg(seqno, EVIL), NakXmitReqMsg(sender, XmitReqMsg((max(seqno, 1),))),
        XmitRspMsg(sender, seqno, EVIL), HighestSeqnoMsg(seqno), StableMsg(view, digest),
        StabilityMsg(view, digest), JoinRspMsg(view, digest),
    ]
    return rng.choice(choices)


def test_a_non_member_injecting_anything_never_costs_a_delivery() -> None:
    """Seeded: members multicast with 10% loss while X sends random valid and mutated datagrams to
    everyone; afterwards every member delivered every multicast exactly once, in order."""
    for seed in range(5):
        rng = random.Random(seed)

        def lossy(src: str, dst: str, msg: WireMsg, loss: random.Random = rng) -> bool:
            return src != "X" and loss.random() < 0.1

        g = Group(drop=lossy)
        sent: dict[str, list[int]] = {n: [] for n in ABC}
        n = 0
        for _ in range(300):
            g.now += 100
            if rng.random() < 0.3:
                src = rng.choice(ABC)
                n += 1
                sent[src].append(n)
                g.mcast(src, n, transfer=False)
            raw = bytearray(encode(random_hostile_message(rng)))
            if rng.random() < 0.3:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            g[rng.choice(ABC)].received("X", bytes(raw), now=g.now)
            for e in g.engines.values():
                e.handle_timer(now=g.now)
            g.transfer()
        g.drop = None
        g.run_until(g.now + 100_000)
        for dst in ABC:
            for src in ABC:
                assert g.got(dst, src) == sent[src], (seed, dst, src)
        g.check()


def test_a_member_that_never_votes_stalls_purging_and_the_sender_gets_back_pressure() -> None:
    g = Group(config=Config(max_send_window=1000, max_send_bytes=400),
              drop=lambda src, dst, msg: src == "C" and isinstance(msg, StableMsg))
    for i in range(1, 41):
        g.mcast("A", i)
        g.run_until(g.now + 1000)
    g.run_until(100_000)
    assert dict(g["A"].snapshot().windows)["A"].low == 0  # C never voted: no round completed
    with pytest.raises(SendWindowFull, match=r"40 own messages \(320 bytes\)"):
        g["A"].multicast(bytes(81), now=g.now)
    assert g["A"].stats.send_window_full == 1 and g["A"].datagrams_to_send() == []
    g.drop = None
    g.run_until(g.now + 20_000)
    # the round completes with A's and B's votes of the first round (20,000 ms: hd 20), then the
    # next one purges everything
    assert dict(g["A"].snapshot().windows)["A"].low == 20
    g.run_until(g.now + 20_000)
    assert dict(g["A"].snapshot().windows)["A"].low == 40
    g.check()


def test_votes_naming_non_members_are_not_merged() -> None:
    g = Group()
    g["A"].received("B", encode(StableMsg(ABC, tuple((f"Z{i:03}", 0, 1) for i in range(100)))), now=0)
    assert g["A"].snapshot().votes == frozenset({"B"}) and g["A"].snapshot().merged == ()


def test_members_sending_anything_never_break_an_engine() -> None:
    """Seeded: random valid, mutated and truncated datagrams from members and non-members, mixed
    with honest multicasts, views and timers: no exception, every invariant after every step, and
    no engine sends more than a bounded multiple of what it received."""
    for seed in range(4):
        rng = random.Random(100 + seed)
        g = Group(config=Config(become_server_queue_size=3), names=("A", "B", "C", "D"), founders=ABC)
        for step in range(400):
            g.now += rng.choice([0, 10, 500])
            target = g[rng.choice(("A", "B", "C", "D"))]
            raw = bytearray(encode(random_hostile_message(rng)))
            if rng.random() < 0.3:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            if rng.random() < 0.1:
                del raw[rng.randrange(len(raw)):]
            before = target.stats.datagrams_sent
            target.received(rng.choice(ABC + ("D", "X")), bytes(raw), now=g.now)
            assert target.stats.datagrams_sent - before <= 4 + 2 * len(target.members)
            if step % 7 == 0:
                g.mcast(rng.choice(ABC), step, transfer=False)
            if step == 200:
                g["A"].answer_join("D", ("A", "B", "C", "D"), now=g.now)
            for e in g.engines.values():
                e.handle_timer(now=g.now)
            g.transfer()
            g.check()
