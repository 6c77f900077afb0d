"""UNICAST3's spec in lockstep with JGroups' UNICAST3 class, on the lockstep model's world (three
members, losses, duplicates, receiver removals, idle closing and expiry, asymmetric views)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.lockstep import random_walk
from models.modelfile import load

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast3-lockstep.toml")


@pytest.mark.parametrize("version", ["3.4.8", "3.6.20"])
def test_spec_agrees_with_jgroups(version: str) -> None:
    harness = harness_for(version)
    steps = 0
    for seed in range(40):
        result = random_walk(MODEL, harness, seed, 120)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000  # the walks went somewhere


@pytest.mark.parametrize("flag", ["no_hs_resend", "ack_only_new", "no_sync_rate_limit"])
def test_a_spec_that_is_not_the_release_diverges(flag: str) -> None:
    """The comparison can fail: the spec with a historical defect brought back is not 3.6.20."""
    harness = harness_for("3.6.20")
    found = [random_walk(MODEL, harness, seed, 150, flags=(flag,)).divergence for seed in range(40)]
    assert any(found), f"no walk told the spec with {flag} from JGroups 3.6.20"
