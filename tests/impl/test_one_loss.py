"""Every limit against hostile input keeps an honest peer live (issue 28, item 1), both unicast
engines: with the limit at its tightest sensible setting, a scenario that reaches it is run once per
datagram it sends with exactly that datagram lost, and every run delivers everything, in order, once.

Each case names the counter of the limit and the sweep asserts the limit was reached at least once
(``Case.counter``); where one loss cannot reach a limit the case says why and only liveness is
asserted. NAKACK4's byte bound has its sweep in ``tests/impl/nakack4/test_n4_held_bytes.py``.

The sweeps are exhaustive over the datagrams of each scenario (see ``one_loss.sweep``); virtual time
only, work bounded by counts.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any

import pytest
from one_loss import Case, Net, Step, run, sweep

from impl import unicast2 as u2
from impl import unicast3 as u3
from impl.common import HELD_OVERHEAD, SendWindowFull, payload_number, spec_payload

ENGINES: dict[str, tuple[Any, Any]] = {
    "unicast2": (u2.Config, u2.Unicast2Engine),
    "unicast3": (u3.Config, u3.Unicast3Engine),
}
DEADLINE = 600_000  # ms of virtual time after the last step


def payload(n: int, size: int = 8) -> bytes:
    return spec_payload(n) if size == 8 else n.to_bytes(8, "big") + bytes(size - 8)


def engines(protocol: str, names: tuple[str, ...] = ("A", "B"), **fields: Any) -> Callable[[], dict[str, Any]]:
    config_class, engine_class = ENGINES[protocol]
    config = config_class(**fields)
    return lambda: {n: engine_class(config, members=names, now=0) for n in names}


def sends(src: str, dst: str, numbers: range, size: int = 8) -> Step:
    """The application sends ``numbers`` in order, waiting (timers run, 100 ms at a time) while the
    engine's send window is full."""
    def step(net: Net) -> None:
        for n in numbers:
            for _ in range(100_000):
                try:
                    net.engines[src].send(dst, payload(n, size), now=net.now)
                    break
                except SendWindowFull:
                    net.transfer()
                    net.run_until(net.now + 100)
            else:
                raise AssertionError("the send window never made room")
    return step


def wait(ms: int) -> Step:
    return lambda net: net.run_until(net.now + ms)


def remove(receiver: str, sender: str) -> Step:
    return lambda net: net.engines[receiver].remove_receive_connection(sender)


def expect(pairs: dict[tuple[str, str], range], size: int = 8) -> dict[tuple[str, str], list[bytes]]:
    return {pair: [payload(n, size) for n in numbers] for pair, numbers in pairs.items()}


def resync_steps(size: int = 8) -> list[Step]:
    """A sends 1..10, all delivered and acknowledged; B removes its window for A; A sends a burst
    11..15, which B can only take after a SEND_FIRST_SEQNO."""
    return [sends("A", "B", range(1, 11), size), wait(61_000), remove("B", "A"), sends("A", "B", range(11, 16), size)]


SIZE = 20_000  # bytes of a payload where bytes matter (three fit the smallest resend answer)
HELD = 3 * (SIZE + HELD_OVERHEAD)


def cases(protocol: str) -> dict[str, Case]:
    u2only = protocol == "unicast2"
    all15 = expect({("B", "A"): range(1, 16)})
    return {
        # The rate limit itself, at its default. UNICAST2: the deferred request is sent by the
        # retransmit task once the interval allows; UNICAST3: the sender's highest-message resend
        # asks again.
        "sync_min_interval": Case(engines(protocol), resync_steps(), all15, DEADLINE, "syncs_rate_limited"),
        # Resends per request: UNICAST2's answers to SEND_FIRST_SEQNO and STABLE are ranges.
        # UNICAST3 answers one seqno per SEND_FIRST_SEQNO and a single loss makes one-seqno
        # XMIT_REQs, so it cannot be reached there.
        "max_xmit_served": Case(engines(protocol, max_xmit_served=1), resync_steps(), all15, DEADLINE,
                                "xmit_seqnos_ignored" if u2only else None),
        # The amplification bound at its tightest: every answer at most one maximal datagram's worth
        # (three messages of 20 kB), all answers at most that per interval. As above, UNICAST3's
        # answers to one loss are one message.
        "resend_factor": Case(engines(protocol, resend_factor=1, max_resend_bytes=65_507), resync_steps(SIZE),
                              expect({("B", "A"): range(1, 16)}, SIZE), DEADLINE,
                              "resends_throttled" if u2only else None),
        # Bytes held above a gap: three messages per window and in all.
        "max_window_bytes": Case(engines(protocol, max_window_bytes=HELD, max_receive_bytes=HELD),
                                 [sends("A", "B", range(1, 21), SIZE)], expect({("B", "A"): range(1, 21)}, SIZE),
                                 DEADLINE, "held_bytes_full"),
        # The span a window accepts, as small as the sender's window (an honest sender never has
        # more than max_send_window unacknowledged, so a receiver that accepts that span loses nothing).
        "max_receive_span": Case(engines(protocol, max_receive_span=4, max_send_window=4),
                                 [sends("A", "B", range(1, 21))], expect({("B", "A"): range(1, 21)}),
                                 DEADLINE, None),
        # A full table of one entry: C's first DATA evicts A's entry (no progress for 5 s), A's
        # later DATA evicts C's. An evicted window's sender resynchronises, and what the window
        # delivered is not delivered again even if the sender never heard of the eviction.
        "receive_evict_idle": Case(
            engines(protocol, ("A", "B", "C"), max_receive_entries=1, receive_evict_idle=5_000),
            [sends("A", "B", range(1, 6)), wait(10_000), sends("C", "B", range(1, 6)), wait(10_000),
             sends("A", "B", range(6, 11))],
            expect({("B", "A"): range(1, 11), ("B", "C"): range(1, 6)}), DEADLINE, "receive_evicted"),
        # The gap scan of a retransmit run, at its smallest (one max_xmit_req_size), over two windows.
        "max_xmit_scan": Case(
            engines(protocol, ("A", "B", "C"), max_xmit_scan=4, max_xmit_req_size=4),
            [sends("A", "B", range(1, 11)), sends("C", "B", range(1, 11))],
            expect({("B", "A"): range(1, 11), ("B", "C"): range(1, 11)}), DEADLINE, None),
    }


CASES = [(protocol, name) for protocol in ENGINES for name in cases(protocol)]


@pytest.mark.parametrize(("protocol", "name"), CASES, ids=[f"{p}-{n}" for p, n in CASES])
def test_an_honest_peer_losing_any_one_datagram_gets_everything(protocol: str, name: str) -> None:
    case = cases(protocol)[name]
    outcome = sweep(case)
    assert outcome.failures == [], "\n".join(outcome.failures[:5])
    assert outcome.datagrams > 0
    if case.counter is not None:
        assert outcome.bites > 0, f"the sweep never reached the limit ({case.counter} stayed 0)"


def test_the_issue_reproduction_unicast2_resyncs_after_a_lost_answer() -> None:
    """Issue 28 item 1, as filed: at the default Config, B removes its window for A, A sends a
    burst; the answer to B's one SEND_FIRST_SEQNO (A's lowest unacked, marked first) is lost; the
    rest of the burst is rate limited. The request is remembered and sent again once the interval
    allows: everything arrives within sync_min_interval + xmit_interval."""
    case = Case(engines("unicast2"), resync_steps(), expect({("B", "A"): range(1, 16)}), 0, None)
    net = Net(case.make())
    for step in case.steps[:3]:
        step(net)
        net.transfer()
    net.lose = net.crossed + 6  # A's burst 11..15, B's request, then A's answer: DATA 11 marked first
    case.steps[3](net)
    net.transfer()
    assert [u2.codec.decode(data) for _, _, data in net.dropped] == [u2.codec.DataMsg(11, 0, True, payload(11))]
    assert net.got("B", "A")[10:] == []
    cfg = u2.Config()
    start = net.now
    net.run_until(start + cfg.sync_min_interval + cfg.xmit_interval)
    assert net.got("B", "A") == case.expected[("B", "A")]
    assert net.engines["B"].stats.syncs_rate_limited >= 1 and net.engines["B"].stats.syncs_resent == 1


def test_unicast2_resync_retries_are_bounded() -> None:
    """A non-first DATA nobody answers (a spoofed peer, or one with nothing unacknowledged) makes B
    ask 1 + sync_retries times, one per sync_min_interval, then never again without a new DATA."""
    b = u2.Unicast2Engine(u2.Config(), members=["B", "X"], now=0)
    b.received("X", u2.codec.encode(u2.codec.DataMsg(7, 0, False, b"x")), now=0)
    asked = []
    for now in range(0, 600_000, 1_000):
        b.handle_timer(now=now) if now >= b.get_timer() else None
        asked += [u2.codec.decode(d) for _, d in b.datagrams_to_send()]
    requests = [m for m in asked if isinstance(m, u2.codec.SendFirstSeqnoMsg)]
    assert [m.seqno for m in requests] == [7] * (1 + u2.Config().sync_retries)
    assert b.stats.syncs_resent == u2.Config().sync_retries
    b.check_invariants()


def test_unicast2_without_the_rate_limit_is_unicast2_as_shipped() -> None:
    """sync_min_interval = 0 (the spec, the lockstep harness): one request per DATA, none repeated
    (so one lost answer to the last DATA stalls the sender until it sends again: UNICAST2's own)."""
    case = Case(engines("unicast2", sync_min_interval=0), resync_steps(), {}, DEADLINE, None)
    net, _ = run(case, None)
    b = net.engines["B"]
    assert b.stats.syncs_rate_limited == b.stats.syncs_resent == 0 and b._m.sync_wanted == {}


class LossyNet(Net):
    """A ``Net`` that loses each datagram between engines with probability ``p`` while ``lossy``,
    but never the same datagram (the same bytes) twice: every message may lose one copy, as in
    the exhaustive sweeps, at random places and many times in a run. (A message lost twice in a
    row after a receiver removal stalls UNICAST2 as shipped too: B has no window to ask with, and
    A never resends on its own; that is UNICAST2's, not a limit's.)"""

    def __init__(self, engines: dict[str, Any], rng: random.Random, p: float) -> None:
        super().__init__(engines)
        self.rng, self.p, self.lossy = rng, p, True
        self.lost: set[bytes] = set()

    def transfer(self) -> None:
        for _ in range(10_000):
            moved = False
            for src, engine in self.engines.items():
                for dst, data in engine.datagrams_to_send():
                    moved = True
                    if dst != src and self.lossy and self.rng.random() < self.p and data not in self.lost:
                        self.lost.add(data)
                        continue
                    self.engines[dst].received(src, data, now=self.now)
            for name, engine in self.engines.items():
                for src, got in engine.deliveries():
                    self.delivered.setdefault((name, src), []).append(got)
            if not moved:
                return
        raise AssertionError("too many rounds")


def lossy_sweep(protocol: str, seed: int, **fields: Any) -> set[bytes]:
    """The issue's sweep: two members at the default Config; for 120 s A sends bursts to B while B
    removes its window for A now and then (UNICAST3: A also closes its connection now and then),
    5% of datagrams lost; then 600 s without loss. What A sent that B never delivered."""
    rng = random.Random(f"one-loss sweep {seed}")
    net = LossyNet(engines(protocol, **fields)(), rng, 0.05)
    sent, n = [], 0
    for _ in range(60):
        net.run_until(net.now + rng.randrange(500, 3_500))
        roll = rng.random()
        if roll < 0.15:
            net.engines["B"].remove_receive_connection("A")
        elif roll < 0.2 and protocol == "unicast3":
            net.engines["A"].close_connection("B", now=net.now)
        for _ in range(rng.randrange(1, 5)):
            n += 1
            with contextlib.suppress(SendWindowFull):
                net.engines["A"].send("B", payload(n), now=net.now)
                sent.append(payload(n))
        net.transfer()
    net.lossy = False
    net.run_until(net.now + DEADLINE)
    return set(sent) - set(net.got("B", "A"))


@pytest.mark.parametrize("protocol", ENGINES)
def test_lossy_sweeps_with_removals_never_stall(protocol: str) -> None:
    """Issue 28, item 1: in 100 seeded lossy runs with receiver removals (and, UNICAST3, closes),
    every message A sent is delivered at B once the loss stops (at least once: a removal lets
    UNICAST2 deliver again what the removed window had, as the hook does in JGroups). Before the
    fix, UNICAST2 at the defaults stalled in 4 of these 100 runs (seeds 24, 45, 47, 86), and in
    none with sync_min_interval 0."""
    stalled = {seed: sorted(payload_number(p) for p in missing)
               for seed in range(100) if (missing := lossy_sweep(protocol, seed))}
    assert stalled == {}
