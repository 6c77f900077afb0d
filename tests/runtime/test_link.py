"""The fault-injecting link (``impl/runtime/link.py``): seeded loss, duplication and reordering in
the proportions asked for, partitions both ways and one way, switched while running, strangers
dropped, and the one-line errors of bad settings. Counts decide; the bounds are wide (binomial
tails far beyond 6 sigma)."""

from __future__ import annotations

import asyncio
import socket

import pytest
from runtime_helpers import run

from impl.runtime import Delay, Faults, Link
from impl.runtime.group import loopback_socket

N = 4_000


async def _through(link_faults: Faults, *, seed: int = 1, script: str = "") -> tuple[Link, list[int]]:
    """Member 0 sends N numbered datagrams to member 1 through a link; what 1 received, in order."""
    a, b = loopback_socket(), loopback_socket()
    for s in (a, b):
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    link = Link({0: a.getsockname(), 1: b.getsockname()}, faults=link_faults, seed=seed)
    fronts = link.open()
    if script == "partition":
        link.partition([0], [1])
    if script == "one-way":
        link.block(1, 0)
    got: list[int] = []
    for k in range(N):
        a.sendto(k.to_bytes(4, "big"), fronts[1])
        if k % 100 == 99:
            await asyncio.sleep(0.002)
    quiet = 0
    while quiet < 30:  # until the link has held nothing back for a while (counted in reads)
        await asyncio.sleep(0.01)
        try:
            while True:
                data, addr = b.recvfrom(100)
                assert addr == fronts[0]  # it comes from A's front: B's directory names A there
                got.append(int.from_bytes(data, "big"))
                quiet = 0
        except BlockingIOError:
            quiet += 1
    if script == "one-way":  # nothing gets from 1 to 0
        b.sendto(b"back", fronts[0])
        while link.stats.blocked == 0:
            await asyncio.sleep(0.005)
    link.close()
    a.close()
    b.close()
    return link, got


def test_loss_duplication_and_reordering_in_proportion() -> None:
    link, got = run(_through(Faults(loss=0.2, duplicate=0.1, reorder=0.2, delay=Delay("uniform", 1, 20))))
    stats = link.stats
    assert stats.received == N
    assert 0.15 * N < stats.lost < 0.25 * N and 0.06 * N < stats.duplicated < 0.14 * N
    assert stats.delayed > 0.1 * N
    assert len(got) == stats.forwarded == N - stats.lost + stats.duplicated
    assert len(set(got)) == N - stats.lost  # every copy is one that was sent
    assert got != sorted(got)  # held-back copies were overtaken


def test_the_same_seed_makes_the_same_choices_for_the_same_arrivals() -> None:
    faults = Faults(loss=0.3, duplicate=0.1)
    first, second = run(_through(faults, seed=5)), run(_through(faults, seed=5))
    assert first[0].stats == second[0].stats and first[1] == second[1]


def test_partitions_drop_everything_across_and_one_way_only_one_way() -> None:
    link, got = run(_through(Faults(), script="partition"))
    assert got == [] and link.stats.blocked == N
    link, got = run(_through(Faults(), script="one-way"))
    assert got == list(range(N)) and link.stats.blocked == 1  # 0 -> 1 open; 1 -> 0 blocked


def test_strangers_are_dropped() -> None:
    async def go() -> int:
        a = loopback_socket()
        link = Link({0: a.getsockname(), 1: ("127.0.0.1", 9)})
        fronts = link.open()
        stranger = loopback_socket()
        for _ in range(50):
            stranger.sendto(b"x", fronts[1])
        while link.stats.unknown_source < 50:
            await asyncio.sleep(0.005)
        link.close()
        a.close()
        stranger.close()
        return link.stats.forwarded

    assert run(go()) == 0


@pytest.mark.parametrize(("make", "said"), [
    (lambda: Faults(loss=1.0), "loss: expected a probability in [0, 1)"),
    (lambda: Faults(duplicate=-0.1), "duplicate: expected a probability"),
    (lambda: Delay.parse("normal:3"), "delay: expected uniform:LOW-HIGH or exp:MEAN"),
    (lambda: Delay.parse("uniform:9-1"), "delay: expected 0 <= low <= high"),
])
def test_bad_settings_are_one_line_errors(make: object, said: str) -> None:
    with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        make()  # type: ignore[operator]
