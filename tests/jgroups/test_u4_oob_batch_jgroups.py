"""UNICAST4's OOB flag and batch input against JGroups' UNICAST4 (ReliableUnicast; spec/unicast4.py
decision 10, spec/unicast4_batch.py decision 11), 5.4.12 and master.

Invariants tested: through the harness, an OOB DATA ahead of a gap is delivered on receipt and its
slot reads as the spec's placeholder, counted once (ack_threshold 2: no ACK on its add); a batch's adds
are not counted (no ACK for a batch of two with ack_threshold 3; the ACK pending) while an OOB batch is
counted when delivered; a blocked OOB send keeps its flag (the send entry lists its seqno); the spec in
lockstep with JGroups on the OOB and batch lockstep models' walks meets no divergence but the explained
ones; a spec with the oob_redelivers defect is told apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.harness import Harness
from checks.jgroups.unicast4 import node
from impl.common import spec_payload
from models.modelfile import load
from spec import unicast4 as u4

FUZZ = Path(__file__).resolve().parents[2] / "models" / "fuzz"
OOB, BATCH = load(FUZZ / "unicast4-lockstep-oob.toml"), load(FUZZ / "unicast4-lockstep-batch.toml")


def _hex(n: int) -> str:
    return spec_payload(n).hex()


def _reset(h: Harness, **props: object) -> None:
    h.command("reset", protocol="unicast4", members=2, views=[[0, 1], [0, 1]], props=props)


def _send(h: Harness, n: int, oob: bool = False) -> dict[str, Any]:
    return h.command("send", m=0, dst=1, payload=_hex(n), oob=oob, state=True)


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_an_oob_data_is_delivered_on_receipt_held_as_a_placeholder_and_counted_once(version: str) -> None:
    h = harness_for(version)
    _reset(h, capacity=8, ack_threshold=2, dont_block=False)
    first, _, third = (_send(h, n, oob=n == 3)["packets"][0] for n in (1, 2, 3))
    assert third["msg"]["oob"] is True
    h.command("deliver", id=first["id"], m=1)
    got = h.command("deliver", id=third["id"], m=1, state=True)
    assert got["delivered"] == [{"m": 1, "src": 0, "payload": _hex(3)}] and got["packets"] == []
    entry = node(got["state"], 1, 2).recv[0]
    assert entry is not None and entry.buffered == (None, u4.Data(3, 0, False, 0, True)) and entry.acks_counted == 1


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_batch_adds_are_uncounted_and_an_oob_batch_is_counted(version: str) -> None:
    h = harness_for(version)
    _reset(h, capacity=8, ack_threshold=3, dont_block=False)
    regular = [_send(h, n)["packets"][0] for n in (1, 2)]
    got = h.command("batch", ids=[p["id"] for p in regular], m=1, state=True)
    assert [d["payload"] for d in got["delivered"]] == [_hex(1), _hex(2)] and got["packets"] == []
    assert node(got["state"], 1, 2).recv[0] == u4.RecvEntry(0, u4.OPEN, 2, (), True, 2)
    oob = [_send(h, n, oob=True)["packets"][0] for n in (3, 4)]
    got = h.command("batch", ids=[p["id"] for p in oob], m=1, state=True)
    # the OOB batch counts 2 (2 + 2 >= 3): ACK(hd=2) before it goes up; the drain passes the placeholders
    assert [p["msg"]["type"] for p in got["packets"]] == ["ACK"] and got["packets"][0]["msg"]["seqno"] == 2
    assert node(got["state"], 1, 2).recv[0] == u4.RecvEntry(0, u4.OPEN, 4, (), True, 0)


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_a_blocked_oob_send_keeps_its_flag(version: str) -> None:
    h = harness_for(version)
    _reset(h, capacity=1, dont_block=False)
    _send(h, 1, oob=True)
    got = _send(h, 2, oob=True)
    entry = node(got["state"], 0, 2).send[1]
    assert entry is not None and entry.blocked == ((2, 2),) and entry.oob == frozenset({1, 2})


@pytest.mark.parametrize("version", ["5.4.12", "master"])
@pytest.mark.parametrize("which", ["oob", "batch"])
def test_spec_agrees_with_jgroups_on_walks(version: str, which: str) -> None:
    result = walks(OOB if which == "oob" else BATCH, harness_for(version), (0, 30), 120)
    assert result.unexplained == 0, result.divergences
    assert result.steps > 1_500 and set(result.explained) <= {"message-cache-copies"}


def test_the_oob_redelivers_defect_is_told_apart() -> None:
    result = walks(OOB, harness_for("5.4.12"), (0, 10), 120, flags=("oob_redelivers",))
    assert result.unexplained >= 5
