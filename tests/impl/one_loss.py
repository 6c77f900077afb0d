"""Test helper: does an honest peer that loses any one datagram still get everything? (issue 28, item 1)

A limit against hostile input must never cost liveness. ``sweep`` runs a scenario (a few sends, a
receiver removal, ...) among engines of any of the four protocols joined by an in-memory network on
a virtual clock, once without loss to count its datagrams, then once per datagram with exactly that
one lost, and checks every run delivers everything, in order, once, within a virtual deadline. Work
is bounded by counts (rounds, timer runs, datagrams), never by wall time.

Loss is of datagrams between two engines; a member's loopback copy of its own multicast is never
lost (JGroups loops it back in the process).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Step = Callable[["Net"], None]
MAX_ROUNDS = 10_000  # transfer rounds per input: a livelocked protocol fails instead of hanging
MAX_TIMER_RUNS = 200_000  # timer runs per run_until


def until_quiet(engines: dict[str, Any], route: Callable[[str, str, bytes], None], collect: Callable[[], None],
                rounds: int = MAX_ROUNDS) -> None:
    """Hand every datagram the engines want to send to ``route``, then ``collect`` their outputs,
    until a round moves nothing (``rounds`` at most: a livelocked protocol fails, not hangs)."""
    for _ in range(rounds):
        moved = False
        for src, engine in engines.items():
            for dst, data in engine.datagrams_to_send():
                moved = True
                route(src, dst, data)
        collect()
        if not moved:
            return
    raise AssertionError("too many rounds: the engines never went quiet")


@dataclass
class Net:
    """Engines by name, a virtual clock, and one datagram (by its index among the datagrams that
    cross the network, loopbacks not counted) that is lost."""

    engines: dict[str, Any]
    lose: int | None = None
    now: int = 0
    crossed: int = 0  # datagrams that crossed (or would have crossed) the network so far
    delivered: dict[tuple[str, str], list[bytes]] = field(default_factory=dict)  # (dst, src) -> payloads
    dropped: list[tuple[str, str, bytes]] = field(default_factory=list)

    def transfer(self) -> None:
        """Move datagrams until no engine has anything to send."""
        until_quiet(self.engines, self._route, self._collect)

    def _route(self, src: str, dst: str, data: bytes) -> None:
        if dst != src:
            index, self.crossed = self.crossed, self.crossed + 1
            if index == self.lose:
                self.dropped.append((src, dst, data))
                return
        self.engines[dst].received(src, data, now=self.now)

    def _collect(self) -> None:
        for name, engine in self.engines.items():
            for src, payload in engine.deliveries():
                self.delivered.setdefault((name, src), []).append(payload)

    def run_until(self, t: int) -> None:
        """Advance the clock to ``t``, running every timer that falls due on the way."""
        for _ in range(MAX_TIMER_RUNS):
            due = min(e.get_timer() for e in self.engines.values())
            if due > t:
                break
            self.now = max(self.now, due)
            for engine in self.engines.values():
                if engine.get_timer() <= self.now:
                    engine.handle_timer(now=self.now)
            self.transfer()
        else:
            raise AssertionError("too many timer runs")
        self.now = t

    def got(self, dst: str, src: str) -> list[bytes]:
        return self.delivered.get((dst, src), [])


@dataclass
class Case:
    """A scenario: ``make`` builds the engines, ``steps`` drive them (each step then transfers),
    ``expected`` is what each (receiver, sender) pair must deliver, in order, once, by ``deadline``
    (virtual ms after the last step). ``counter``: a stats field of some engine that the sweep must
    see bite at least once (the limit under test is reached), or None where one loss cannot reach
    it (the case's docstring says why)."""

    make: Callable[[], dict[str, Any]]
    steps: list[Step]
    expected: dict[tuple[str, str], list[bytes]]
    deadline: int
    counter: str | None


@dataclass
class Outcome:
    datagrams: int  # datagrams of the lossless run (each was lost in one run)
    bites: int  # how often ``counter`` was counted over all runs
    failures: list[str]


def run(case: Case, lose: int | None) -> tuple[Net, int]:
    net = Net(case.make(), lose=lose)
    for step in case.steps:
        step(net)
        net.transfer()
    net.run_until(net.now + case.deadline)
    bites = 0 if case.counter is None else sum(getattr(e.stats, case.counter) for e in net.engines.values())
    return net, bites


def sweep(case: Case, *, limit: int | None = None) -> Outcome:
    """The lossless run, then one run per datagram it sent (the first ``limit`` of them if given:
    a bounded sweep) with that one lost."""
    net, bites = run(case, None)
    failures = [f"lossless: {_wrong(net, case)}"] if _wrong(net, case) else []
    total = net.crossed if limit is None else min(net.crossed, limit)
    for index in range(total):
        lossy, count = run(case, index)
        bites += count
        wrong = _wrong(lossy, case)
        if wrong:
            src, dst, data = lossy.dropped[0] if lossy.dropped else ("?", "?", b"")
            failures.append(f"datagram {index} ({src}->{dst}, {data[:12].hex()}) lost: {wrong}")
    return Outcome(net.crossed, bites, failures)


def _wrong(net: Net, case: Case) -> str:
    for pair, want in case.expected.items():
        got = net.got(*pair)
        if got != want:
            return f"{pair[0]} delivered from {pair[1]} {len(got)} of {len(want)} ({_short(got)})"
    return ""


def _short(payloads: list[bytes]) -> str:
    shown = [p[-2:].hex() for p in payloads[:12]]
    return " ".join(shown) + (" ..." if len(payloads) > 12 else "")
