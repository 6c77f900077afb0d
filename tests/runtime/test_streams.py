"""Streams over loopback through the fault-injecting link (issue 34, done-when 1 and 2): every
message delivered exactly once and in order per sender, three members, 20% loss plus duplication
and reordering; the event logs of the run validate against the spec step by step. The default
suite runs 700 messages per member of every protocol; the slow tests run 100,000 messages (in
all) for UNICAST3 and NAKACK4."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_helpers import assert_exactly_once_in_order, run, streams, validated

from impl.runtime import Delay, Faults
from impl.runtime.group import LocalGroup

LOSSY = Faults(loss=0.2, duplicate=0.05, reorder=0.1, delay=Delay("uniform", 1, 10))


async def _lossy_run(protocol: str, messages: int, seed: int, log_dir: Path | None) -> LocalGroup:
    async with LocalGroup(protocol, 3, faults=LOSSY, seed=seed, log_dir=log_dir, log_decoded=False) as group:
        assert_exactly_once_in_order(await streams(group, messages))
        link = group.link
        assert link is not None
    # the faults happened: about a fifth lost, some duplicated, some held back
    assert link.stats.lost > 0.15 * link.stats.received and link.stats.duplicated > 0 and link.stats.delayed > 0
    return group


@pytest.mark.parametrize("protocol", ["unicast3", "nakack4", "unicast2", "nakack2"])
def test_three_members_through_20_percent_loss_duplication_and_reordering(protocol: str, tmp_path: Path) -> None:
    group = run(_lossy_run(protocol, 700, 34, tmp_path))
    assert sum(e.stats.sent for e in group.endpoints) == 2_100
    outcome = validated(tmp_path)
    assert outcome.protocol == protocol and sum(r.steps for r in outcome.logs) > 2_100


def test_two_members_without_faults(tmp_path: Path) -> None:
    async def go() -> LocalGroup:
        async with LocalGroup("unicast3", 2, log_dir=tmp_path) as group:
            assert_exactly_once_in_order(await streams(group, 2_000))
            return group
    group = run(go())
    assert all(e.stats.send_errors == 0 and e.stats.unknown_source == 0 for e in group.endpoints)
    assert group.link is not None and group.link.stats.lost == 0
    validated(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["unicast3", "nakack4"])
def test_100000_messages_through_20_percent_loss_exactly_once_in_order(protocol: str, tmp_path: Path) -> None:
    """100,002 messages in all (33,334 from each of three members); the logs of the run validate."""
    group = run(_lossy_run(protocol, 33_334, 100, tmp_path))
    assert sum(e.stats.sent for e in group.endpoints) >= 100_000
    delivered = sum(e.stats.delivered for e in group.endpoints)
    assert delivered == (3 * 100_002 if protocol == "nakack4" else 100_002)
    outcome = validated(tmp_path)
    assert sum(r.delivered for r in outcome.logs) == delivered
