"""NAKACK4's spec in lockstep with JGroups' NAKACK4 (ReliableMulticast over FixedBuffer) on the
lockstep models' world: three founders and a joiner, capacity 2 (senders block), losses, duplicates,
drops below the protocol, a join while traffic flows, a leave; the faults model adds JGRP-3034's
exception in the deliverer. Each release runs as the spec with its profile's flags."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.explained import explain
from checks.jgroups.lockstep import random_walk
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models" / "fuzz"
LOCKSTEP = load(MODELS / "nakack4-lockstep.toml")
FAULTS = load(MODELS / "nakack4-lockstep-faults.toml")
OOB = load(MODELS / "nakack4-lockstep-oob.toml")


@pytest.mark.long
@pytest.mark.parametrize("version", ["5.4.12", "master", "5.4.5"])
def test_spec_agrees_with_jgroups(version: str) -> None:
    harness = harness_for(version)
    steps = 0
    for seed in range(30):
        result = random_walk(LOCKSTEP, harness, seed, 120)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000  # the walks went somewhere


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_deliver_faults_agree_or_are_explained(version: str) -> None:
    """With JGRP-3034's exception injected: 5.4.12 is the spec with deliverer_stuck, master the fixed
    spec; a divergence is only the explained one (5.4.12 before JGRP-2906: a receiving thread blocked
    beyond the window)."""
    harness = harness_for(version)
    for seed in range(30):
        result = random_walk(FAULTS, harness, seed, 120)
        if result.divergence is not None:
            found = explain(result.divergence, result.run)
            assert found is not None and found.name == "jgrp2906-receive-add-blocks", \
                f"seed {seed}: {result.divergence}"


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_oob_world_agrees_or_is_explained(version: str) -> None:
    """Spec decision 18: OOB delivered on receipt and counted towards the ACK then (the ACK carrying
    the hd from before the removal), DUMMY_OOB_MSG as the placeholder, the flag on retransmissions;
    5.4.12's only divergence is the explained JGRP-2906 one."""
    harness = harness_for(version)
    for seed in range(12):
        result = random_walk(OOB, harness, seed, 120)
        if result.divergence is not None:
            found = explain(result.divergence, result.run)
            assert found is not None and found.name == "jgrp2906-receive-add-blocks", \
                f"seed {seed}: {result.divergence}"


@pytest.mark.parametrize("flag", ["highest_seqno_no_ack", "ack_from_non_members", "seed_edge", "lock_after_seqno",
                                  "view_change_no_purge"])
def test_a_spec_that_is_not_the_release_diverges(flag: str) -> None:
    """The comparison can fail: the spec with a defect 5.4.12 does not have is told from 5.4.12."""
    harness = harness_for("5.4.12")
    found = [random_walk(LOCKSTEP, harness, seed, 150, flags=("deliverer_stuck", flag)).divergence
             for seed in range(60)]
    assert any(found), f"no walk told the spec with {flag} from JGroups 5.4.12"


def test_master_is_not_5_4_12_under_faults() -> None:
    """JGRP-3034: the spec as 5.4.12 (deliverer_stuck) is told from master once a batch fails."""
    harness = harness_for("master")
    found = [random_walk(FAULTS, harness, seed, 120, flags=("deliverer_stuck",)).divergence for seed in range(30)]
    assert any(found)
