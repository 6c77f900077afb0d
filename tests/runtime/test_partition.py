"""Partitions over loopback (issue 34, done-when 1): a partition and its heal with view changes
(UNICAST3: each side installs the view it sees, and the whole view again at the heal; NAKACK4:
each side's view, then a merge of every own window's digest and the whole view), a one-way
partition, and NAKACK4's senders blocked by a member cut off (no view change: its ACKs stop) and
released by the heal. Every message is delivered exactly once and in order per sender; the logs
validate. When to cut and heal is decided by counts of deliveries, never by the clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from runtime_helpers import assert_exactly_once_in_order, run, streams, validated

from impl.runtime import Faults
from impl.runtime.group import LocalGroup

MESSAGES = 1_500


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.005)


def _delivered(group: LocalGroup, member: int) -> int:
    return group.endpoints[member].stats.delivered


def test_a_partition_and_its_heal_with_view_changes(tmp_path: Path) -> None:
    async def script(group: LocalGroup) -> None:
        link, (a, b, c) = group.link, group.endpoints
        assert link is not None
        await _until(lambda: _delivered(group, 0) >= 300)
        link.partition([0, 1], [2])
        for endpoint, view in ((a, [0, 1]), (b, [0, 1]), (c, [2])):
            endpoint.install_view(view)
        mark = _delivered(group, 0)
        await _until(lambda: _delivered(group, 0) >= mark + 200)  # A and B go on with each other
        assert link.stats.blocked > 0
        link.heal()
        for endpoint in (a, b, c):
            endpoint.install_view([0, 1, 2])

    async def go() -> LocalGroup:
        async with LocalGroup("unicast3", 3, faults=Faults(loss=0.1), seed=11, log_dir=tmp_path) as group:
            assert_exactly_once_in_order(await streams(group, MESSAGES, script=script))
            return group

    group = run(go())
    assert group.link is not None and group.link.stats.blocked > 0
    outcome = validated(tmp_path)
    views = [line for p in sorted(tmp_path.glob("member-*.jsonl")) for line in p.read_text().splitlines()
             if '"ev":"view"' in line]
    assert len(views) == 6 and outcome.first is None


@pytest.mark.parametrize("protocol", ["unicast3", "nakack4"])
def test_a_one_way_partition_heals(protocol: str, tmp_path: Path) -> None:
    """C hears nothing from A for a while (A hears C): A's messages to C wait, and come."""
    async def script(group: LocalGroup) -> None:
        link = group.link
        assert link is not None
        await _until(lambda: _delivered(group, 2) >= 200)
        link.block(0, 2)
        mark = _delivered(group, 1)
        await _until(lambda: _delivered(group, 1) >= mark + 300)
        assert link.stats.blocked > 0
        link.unblock(0, 2)

    async def go() -> LocalGroup:
        async with LocalGroup(protocol, 3, faults=Faults(loss=0.05), seed=12, log_dir=tmp_path) as group:
            assert_exactly_once_in_order(await streams(group, MESSAGES, script=script))
            return group

    group = run(go())
    assert group.link is not None and group.link.stats.blocked > 0
    validated(tmp_path)


def test_a_member_cut_off_blocks_nakack4_senders_until_the_heal(tmp_path: Path) -> None:
    """Without a view change, the AckTable waits for the member cut off: every sender's window fills
    (capacity 256) and its next send waits in ``multicast``; the heal releases them all."""
    from impl.runtime import loopback_config

    async def script(group: LocalGroup) -> None:
        link = group.link
        assert link is not None
        await _until(lambda: _delivered(group, 0) >= 300)
        link.partition([0, 1], [2])
        await _until(lambda: all(e.engine.blocked_sends for e in group.endpoints[:2]))
        link.heal()

    async def go() -> LocalGroup:
        config = loopback_config("nakack4", capacity=256)
        async with LocalGroup("nakack4", 3, config=config, seed=13, log_dir=tmp_path) as group:
            assert_exactly_once_in_order(await streams(group, MESSAGES, script=script))
            return group

    group = run(go())
    assert group.link is not None and group.link.stats.blocked > 0
    assert all(e.engine.stats.sends_blocked > 0 for e in group.endpoints[:2])
    validated(tmp_path)


def test_nakack4_partition_and_merge_with_view_changes(tmp_path: Path) -> None:
    """{A, B} | {C} with views: each side delivers what it multicasts to its own view; at the heal
    the senders pause, every member merges the digest of every own window and installs the whole
    view (as the multicast world's MergeView), and the senders go on. Per sender, each member
    delivers exactly the messages sent while the two shared a view, each once, in order."""
    import struct

    from impl.runtime import loopback_config

    head = struct.Struct(">IQ")
    per_phase = 300
    sent: dict[int, list[list[int]]] = {m: [[], [], []] for m in range(3)}  # per sender, per phase: numbers
    got: dict[int, dict[int, list[int]]] = {m: {s: [] for s in range(3)} for m in range(3)}

    async def go() -> LocalGroup:
        async with LocalGroup("nakack4", 3, config=loopback_config("nakack4"), faults=Faults(loss=0.05), seed=21,
                              log_dir=tmp_path) as group:
            endpoints, link = group.endpoints, group.link
            assert link is not None
            together = [[{0, 1, 2}] * 3, [{0, 1}, {0, 1}, {2}], [{0, 1, 2}] * 3]

            async def send_phase(phase: int) -> None:
                async def one(member: int) -> None:
                    for _ in range(per_phase):
                        number = sum(map(len, sent[member]))
                        sent[member][phase].append(number)
                        await endpoints[member].multicast(head.pack(member, number))
                await asyncio.gather(*(one(m) for m in range(3)))

            def expected(member: int, sender: int, upto: int) -> list[int]:
                return [n for phase in range(upto + 1) if member in together[phase][sender]
                        for n in sent[sender][phase]]

            async def drain(upto: int) -> None:
                async def one(member: int) -> None:
                    while any(got[member][s] != expected(member, s, upto) for s in range(3)):
                        src, payload = await endpoints[member].receive()
                        sender, number = head.unpack(payload)
                        assert sender == src
                        got[member][src].append(number)
                        assert got[member][src] == expected(member, src, upto)[:len(got[member][src])], (member, src)
                await asyncio.gather(*(one(m) for m in range(3)))

            await send_phase(0)
            await drain(0)
            link.partition([0, 1], [2])
            for member, view in ((0, [0, 1]), (1, [0, 1]), (2, [2])):
                endpoints[member].install_view(view)
            await send_phase(1)
            await drain(1)
            link.heal()
            digest = [next(e for e in ep.digest() if e[0] == ep.me) for ep in endpoints]
            for endpoint in endpoints:
                endpoint.merge(digest, [0, 1, 2])
            await send_phase(2)
            await drain(2)
            return group

    run(go())  # (the views alone keep the sides apart: nothing crosses the cut link)
    for member in range(3):
        for sender in range(3):
            numbers = got[member][sender]
            assert numbers == sorted(set(numbers))  # once each, in order
    assert len(got[0][2]) == 2 * per_phase and len(got[2][0]) == 2 * per_phase  # not C's partition messages
    assert len(got[0][1]) == 3 * per_phase
    validated(tmp_path)
