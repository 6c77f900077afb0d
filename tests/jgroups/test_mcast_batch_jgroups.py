"""NAKACK2's and NAKACK4's batch input against JGroups (``up(MessageBatch)``; spec decisions 16 and 17),
5.4.12 and master.

Invariants tested: through the harness, packets handed up as one MessageBatch: NAKACK4 takes a batch of
ACKs as its highest, and acknowledges a delivered batch of ack_threshold MSGs at once with the highest
delivered seqno and nothing pending, but not one below it; the spec in lockstep with JGroups on the batch
lockstep models' walks meets no unexplained divergence; a spec that counts a batch's MSGs one by one
towards the ACK is told apart.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.nakack4 import node as node4
from impl.common import spec_payload
from models.modelfile import load

FUZZ = Path(__file__).resolve().parents[2] / "models" / "fuzz"


def _mcast(h: object, m: int, n: int) -> list[dict[str, object]]:
    return h.command("send", m=m, dst=-1, payload=spec_payload(n).hex())["packets"]  # type: ignore[attr-defined]


def _to(packets: list[dict[str, object]], dst: int) -> dict[str, object]:
    return next(p for p in packets if p["dst"] == dst)


def test_nakack4_a_batch_of_acks_counts_its_highest() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack4", members=2, views=[[0, 1], [0, 1]],
              props={"capacity": 16, "ack_threshold": 1, "send_atomically": True})
    copies = [_to(_mcast(h, 0, n), 1) for n in (1, 2)]
    acks = [p for c in copies for p in h.command("deliver", id=c["id"], m=1)["packets"] if p["msg"]["type"] == "ACK"]
    assert [a["msg"]["seqno"] for a in acks] == [1, 2]
    got = h.command("batch", ids=[a["id"] for a in reversed(acks)], m=0, state=True)
    assert node4(got["state"], 0, 2).ack_table[1] == 2


@pytest.mark.parametrize("threshold, immediate", [(2, True), (3, False)])
def test_nakack4_one_ack_decision_per_delivered_batch(threshold: int, immediate: bool) -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack4", members=2, views=[[0, 1], [0, 1]],
              props={"capacity": 16, "ack_threshold": threshold, "send_atomically": True})
    copies = [_to(_mcast(h, 0, n), 1) for n in (1, 2)]
    got = h.command("batch", ids=[p["id"] for p in copies], m=1, state=True)
    assert [d["payload"] for d in got["delivered"]] == [spec_payload(n).hex() for n in (1, 2)]
    acks = [p["msg"] for p in got["packets"] if p["msg"]["type"] == "ACK"]
    assert acks == ([{"type": "ACK", "seqno": 2}] if immediate else [])
    assert node4(got["state"], 1, 2).ack_pending[0] is not immediate


@pytest.mark.parametrize("version", ["5.4.12", "master"])
@pytest.mark.parametrize("stem", ["nakack2-lockstep-batch", "nakack4-lockstep-batch"])
def test_spec_agrees_with_jgroups_on_batch_walks(stem: str, version: str) -> None:
    result = walks(load(FUZZ / f"{stem}.toml"), harness_for(version), (0, 20), 120)
    assert result.unexplained == 0, result.divergences
    assert result.steps > 1_000 and set(result.explained) <= {"jgrp2906-receive-add-blocks"}


def test_a_spec_counting_per_message_is_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    from spec import nakack4 as n4
    from spec import nakack4_batch

    def per_message(cfg: n4.Config, node: n4.Node, src: int, msgs: tuple[n4.Msg, ...]) -> n4.Step:
        effects: list[object] = []
        for m in msgs:
            step = n4.on_receive(cfg, node, src, m)
            node, effects = step.node, effects + list(step.effects)
        return n4.Step(node, tuple(effects))  # type: ignore[arg-type]

    monkeypatch.setattr(nakack4_batch, "on_batch", per_message)
    result = walks(load(FUZZ / "nakack4-lockstep-batch.toml"), harness_for("5.4.12"), (0, 40), 120)
    assert result.unexplained > 0
