"""UNICAST2's spec in lockstep with JGroups' UNICAST2 class on three releases, each with the flags of its
release profile (``checks/jgroups/unicast2.py``), on the lockstep model's world (three members,
losses, duplicates, receiver removals, reaping, asymmetric views, max_stable_msgs = 2); and the
comparison failing where the spec is given flags that are not the release's."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.locate import JGroupsUnavailable, Release
from checks.jgroups.lockstep import Divergence, JGroupsLockstep, random_walk
from checks.jgroups.unicast2 import BINDING
from models.modelfile import load

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast2-lockstep.toml")
PROFILES = {"3.2.5": ("no_first_ack", "xmit_all_gaps"), "3.4.8": (), "3.6.20": ("stale_xmit_record_asks_all",)}


@pytest.mark.parametrize("version", sorted(PROFILES))
def test_spec_agrees_with_jgroups(version: str) -> None:
    harness = harness_for(version)
    assert BINDING.flags_for(harness.release) == PROFILES[version]
    steps = 0
    for seed in range(40):
        result = random_walk(MODEL, harness, seed, 120)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 3_000  # the walks went somewhere


@pytest.mark.parametrize(("version", "flags"), [
    ("3.6.20", ("stale_xmit_record_asks_all", "no_first_ack")),  # 3.6.20 ACKs a first DATA
    ("3.6.20", ("stale_xmit_record_asks_all", "xmit_all_gaps")),  # ... and keeps a previous-batch record
    ("3.6.20", ("stale_xmit_record_asks_all", "fix_resend_highest")),  # never shipped in UNICAST2
    ("3.6.20", ("stale_xmit_record_asks_all", "fix_sync_lowest_only")),
    ("3.4.8", ("no_first_ack",)),
    ("3.2.5", ("xmit_all_gaps",)),  # 3.2.5 does not ACK a first DATA
    ("3.2.5", ("no_first_ack",)),  # ... and asks for every gap on every run
])
def test_a_spec_that_is_not_the_release_diverges(version: str,
                                                  flags: tuple[str, ...]) -> None:
    """The comparison can fail: the spec with one flag more or one less than the release's profile."""
    harness = harness_for(version)
    found = [random_walk(MODEL, harness, seed, 150, flags=flags).divergence for seed in range(40)]
    assert any(found), f"no walk told the spec with {flags} from JGroups {version}"


def take(run: JGroupsLockstep, *texts: str) -> Divergence | None:
    """Take, in order, the enabled actions whose text starts with each of ``texts``; the first
    divergence, if any."""
    for text in texts:
        matching = [(a, after) for a, after in run.enabled() if run.world.format_action(a).startswith(text)]
        assert matching, f"no enabled action {text!r}: {[run.world.format_action(a) for a, _ in run.enabled()]}"
        divergence = run.step(*matching[0])
        if divergence is not None:
            return divergence
    return None


# A gap at #2 is seen by one retransmit run and filled; then a gap at #4 appears above the window's
# hd (3), which the record (2) is now below: the next run must not ask for #4 yet (JGRP-1539), but
# 3.6's SeqnoList clears nothing below its offset (hd+1) and it does (JGRP-2573).
STALE_RECORD = (
    *["A: application sends to B"] * 5,
    "B receives DATA(seqno=1,", "B receives DATA(seqno=3,", "B: retransmit task runs",
    "B receives DATA(seqno=2,", "B receives DATA(seqno=5,", "B: retransmit task runs",
)


@pytest.mark.parametrize(("version", "flags", "diverges"), [
    ("3.6.20", ("stale_xmit_record_asks_all",), False),
    ("3.6.20", (), True),
    ("3.4.8", (), False),
    ("3.4.8", ("stale_xmit_record_asks_all",), True),
])
def test_stale_record_flag_is_what_tells_3_6_from_3_4(version: str,
                                                      flags: tuple[str, ...], diverges: bool) -> None:
    """JGRP-2573 in lockstep: the one schedule where the flag matters, on the release with the defect
    and on the one before the bitset SeqnoList (3.6.0) brought it."""
    run = JGroupsLockstep(MODEL, harness_for(version), flags=flags)
    divergence = take(run, *STALE_RECORD)
    if diverges:
        assert divergence is not None and divergence.kind == "packets" and divergence.step == len(STALE_RECORD)
        assert "XmitReq(seqnos=(4,))" in (divergence.jgroups if version == "3.6.20" else divergence.spec)
    else:
        assert divergence is None and run.check_all() is None


def test_profiles_cover_only_the_releases_read() -> None:
    """A profile claims the spec *is* a release: only ranges whose UNICAST2, Table and SeqnoList
    sources are those of a release the lockstep runs on have one; the others are one clear line."""
    def flags(version: str) -> tuple[str, ...]:
        return BINDING.flags_for(Release(f"{version}.Final", Path(f"jgroups-{version}.Final.jar")))
    assert flags("3.2.0") == flags("3.2.5") == PROFILES["3.2.5"]
    assert flags("3.4.6") == PROFILES["3.4.8"]
    assert flags("3.6.15") == PROFILES["3.6.20"]
    for unread in ("3.1.0", "3.2.6", "3.3.0", "3.4.5", "3.5.0", "3.6.14", "5.4.12"):
        with pytest.raises(JGroupsUnavailable, match=rf"--jgroups {unread}\.Final: unicast2 is not in that "
                                                     r"release, or no release profile says"):
            flags(unread)
