"""NAKACK2 with STABLE on the 3.x releases, in lockstep with the spec as each release is (the
profiles of ``checks/jgroups/nakack2.py``): 3.6.20 (``stable_vote_to_self`` and JGRP-2573's
``stale_xmit_record_asks_all``) and 3.4.8 (``stable_vote_to_self`` alone), 3.4.8 on
``models/fuzz/nakack2-3.4-lockstep.toml``: the same world with ``resend_last_seqno = false``, since
3.4 has no LastSeqnoResender.

Invariants tested: the lockstep world agrees with both releases; STABILITY leaves 3.6.20's
coordinator when the round's last vote arrives (before 4.0 it is a timer task due in 1 ms, which
the harness runs at once) with a copy to itself (no DONT_LOOPBACK before 5.1.6); and each flag of
3.6.20's profile is needed: without it a known schedule diverges.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jgroups_harness import harness_for

from checks.jgroups.lockstep import random_walk
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models"
LOCKSTEP = load(MODELS / "fuzz" / "nakack2-lockstep.toml")
OLD_LOCKSTEP = load(MODELS / "fuzz" / "nakack2-3.4-lockstep.toml")  # resend_last_seqno = false
PROFILE_3_6 = ("bounded_queue_no_xmit", "queue_drops_oldest", "stable_vote_to_self", "stable_xmit_current_hr",
               "stale_xmit_record_asks_all")
SEEDS_3_4_8_STALE = (1120,)  # seqcheck conform nakack2-3.4-lockstep --jgroups 3.4.8 --seed 1000 --spec-flags ...


def _stable(answer: dict[str, Any]) -> list[tuple[int, int, str]]:
    return sorted((p["src"], p["dst"], p["msg"]["type"]) for p in answer["packets"]
                  if p["msg"]["type"] in ("STABLE_VOTE", "STABILITY"))


def test_3_6_20_agrees() -> None:
    harness = harness_for("3.6.20")
    steps = 0
    for seed in range(12):
        result = random_walk(LOCKSTEP, harness, seed, 120)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 1_000


def test_3_4_8_agrees() -> None:
    harness = harness_for("3.4.8")
    model = OLD_LOCKSTEP
    steps = 0
    for seed in range(12):
        result = random_walk(model, harness, seed, 120)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 1_000


@pytest.mark.long
def test_3_6_20_and_3_4_8_agree_on_longer_walks() -> None:
    for version, model in (("3.6.20", LOCKSTEP), ("3.4.8", OLD_LOCKSTEP)):
        harness = harness_for(version)
        for seed in range(100, 160):
            result = random_walk(model, harness, seed, 150)
            assert result.divergence is None, f"{version} seed {seed}: {result.divergence}"


@pytest.mark.parametrize("version", ["3.6.20", "3.4.8"])
def test_stability_leaves_when_the_last_vote_arrives_with_a_copy_to_the_coordinator(version: str) -> None:
    """STABLE.handleStableMessage of 3.x: the third vote completes the round, and
    startStabilityTask(digest, view_id, Util.random(0) = 1 ms) sends STABILITY from a timer task; the
    harness runs a one-shot task due within 1 ms at once (before, it never ran: no STABILITY at all).
    The multicast has no DONT_LOOPBACK (605ea5b3e, 5.1.6), so A gets a copy; a second round sends
    STABILITY again (the first task's future is done)."""
    h = harness_for(version)
    h.command("reset", protocol="nakack2", members=3, views=[[0, 1, 2]] * 3,
              props={"xmit_interval": 1, "resend_last_seqno": False})
    for _ in range(2):
        votes = [p for m in (0, 1, 2) for p in h.command("timer", m=m, kind="stable")["packets"]]
        assert sorted((p["src"], p["dst"]) for p in votes) == [(0, 0), (1, 0), (2, 0)]
        answers = [h.command("deliver", id=p["id"]) for p in votes]
        assert [_stable(a) for a in answers[:2]] == [[], []]
        assert _stable(answers[2]) == [(0, 0, "STABILITY"), (0, 1, "STABILITY"), (0, 2, "STABILITY")]
        own = next(p for p in answers[2]["packets"] if p["dst"] == 0)
        assert h.command("deliver", id=own["id"])["packets"] == []  # its own copy: ignored
        for p in answers[2]["packets"]:
            if p["dst"] != 0:
                h.command("deliver", id=p["id"])


def test_5_4_12_sends_no_copy_to_the_coordinator() -> None:
    """The same round on 5.4.12: the coordinator merges its own vote and STABILITY is DONT_LOOPBACK."""
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack2", members=3, views=[[0, 1, 2]] * 3, props={"xmit_interval": 1})
    assert h.command("timer", m=0, kind="stable")["packets"] == []
    votes = [p for m in (1, 2) for p in h.command("timer", m=m, kind="stable")["packets"]]
    answers = [h.command("deliver", id=p["id"]) for p in votes]
    assert _stable(answers[-1]) == [(0, 1, "STABILITY"), (0, 2, "STABILITY")]


def test_3_6_20_needs_jgrp2573() -> None:
    """Seed 1012 (``seqcheck conform ... --seed 1000``): B's retransmit task finds its record for A (1)
    below its hd for A (2) and asks for the new gap #3 one run early: 3.6's bitset SeqnoList clears
    nothing below its offset (JGRP-2573, as in UNICAST3). Without the flag the spec diverges there."""
    harness = harness_for("3.6.20")
    without = tuple(f for f in PROFILE_3_6 if f != "stale_xmit_record_asks_all")
    found = random_walk(LOCKSTEP, harness, 1012, 150, flags=without).divergence
    assert found is not None and "packets of B differ" in str(found) and "XmitReq(sender=0, seqnos=(3,))" in str(found)
    assert random_walk(LOCKSTEP, harness, 1012, 150).divergence is None


def test_3_4_8_has_no_jgrp2573() -> None:
    """The flag is 3.6's regression: 3.4.8's SeqnoList (a list) filters by the record, and the spec with
    the flag is told from it on a schedule where a record falls below hd."""
    harness = harness_for("3.4.8")
    model = OLD_LOCKSTEP
    with_flag = ("bounded_queue_no_xmit", "queue_drops_oldest", "stable_vote_to_self", "stable_xmit_current_hr",
                 "stale_xmit_record_asks_all")
    found = [random_walk(model, harness, seed, 150, flags=with_flag).divergence for seed in SEEDS_3_4_8_STALE]
    assert all(found), f"the spec with JGRP-2573 agreed with 3.4.8 on a seed of {SEEDS_3_4_8_STALE}"
    for seed in SEEDS_3_4_8_STALE:
        assert random_walk(model, harness, seed, 150).divergence is None

