"""UNICAST4's spec in lockstep with JGroups' UNICAST4 class (5.4.5, 5.4.12, master) on the lockstep
model's world: three members, capacity 2, DONT_BLOCK sends (blocking and resuming on harness
threads, ``SendGate``), losses, duplicates, receiver removals, idle closing and expiry, one-sided
views. A divergence must be explained (``message-cache-copies``) or the test fails; and the spec
with JGRP-2873's defect flag is not 5.4.12, nor is the fixed spec 5.4.5."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.explained import explain
from checks.jgroups.lockstep import random_walk
from models.modelfile import load

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast4-lockstep.toml")


@pytest.mark.parametrize("version", ["5.4.5", "5.4.12", "master"])
def test_spec_agrees_with_jgroups(version: str) -> None:
    result = walks(MODEL, harness_for(version), (0, 30), 120)
    assert result.unexplained == 0, result.divergences
    assert result.steps > 1_500 and sum(result.explained.values()) < 25  # the walks went somewhere


@pytest.mark.parametrize(("version", "flags"), [("5.4.12", ("drop_dont_block",)), ("5.4.5", ())])
def test_a_spec_that_is_not_the_release_diverges(version: str,
                                                 flags: tuple[str, ...]) -> None:
    """JGRP-2873 tells the releases apart: DONT_BLOCK sends on a full window block (5.4.12) or are
    dropped (5.4.5), and the spec as the other release diverges, unexplained."""
    harness = harness_for(version)
    found = []
    for seed in range(30):
        result = random_walk(MODEL, harness, seed, 150, flags=flags)
        if result.divergence is not None and explain(result.divergence, result.run) is None:
            found.append(result.divergence)
    assert found, f"no walk told the spec with {flags} from JGroups {version}"


def test_the_harness_keeps_a_blocked_send_until_its_step() -> None:
    """A send on a full window blocks on a thread of its own; the ACK that makes room does not let it
    go (the schedule does, with send#S); closing the connection fails it."""
    harness = harness_for("5.4.12")
    harness.command("reset", protocol="unicast4", members=2, views=[[0, 1], [0, 1]], props={"capacity": 1})
    first = harness.command("send", m=0, dst=1, payload="01")["packets"]
    assert [p["msg"]["seqno"] for p in first] == [1]
    blocked = harness.command("send", m=0, dst=1, payload="02", state=True)
    assert blocked["packets"] == [] and blocked["state"]["send"]["1"]["blocked"] == [[2, "02"]]
    ack = harness.command("deliver", id=first[0]["id"], m=1)["packets"]
    back = harness.command("deliver", id=next(p for p in ack if p["msg"]["seqno"] == 1)["id"], m=0, state=True)
    assert back["packets"] == [] and back["state"]["send"]["1"]["blocked"] == [[2, "02"]]
    went = harness.command("timer", m=0, kind="send#2", peer=1, state=True)
    assert [p["msg"]["seqno"] for p in went["packets"]] == [2] and went["state"]["send"]["1"]["blocked"] == []
    harness.command("send", m=0, dst=1, payload="03")
    harness.command("view", m=0, members=[0])
    closed = harness.command("timer", m=0, kind="close_blocked", peer=1, state=True)
    assert closed["state"]["send"] == {}
