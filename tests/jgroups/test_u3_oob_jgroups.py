"""UNICAST3's OOB flag against JGroups' UNICAST3 (5.4.12, and 3.6.20, which has the same OOB rule).

Invariants tested: through the harness, a message sent with ``oob`` carries Message.Flag.OOB, is
delivered by JGroups on receipt ahead of a gap, and its window slot reads as the placeholder the spec
holds; the spec in lockstep with JGroups on the OOB lockstep model's walks meets no divergence but
the explained ``oob-cache-order``; the spec with the defect ``oob_redelivers`` is told apart; and a
protocol whose harness model has no OOB sends (UNICAST2's) refuses the flag in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.harness import HarnessError
from checks.jgroups.lockstep import random_walk
from checks.jgroups.unicast3 import node
from impl.common import spec_payload
from models.modelfile import load
from spec import unicast3 as u3

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast3-lockstep-oob.toml")


def _hex(n: int) -> str:
    return spec_payload(n).hex()


def test_an_oob_message_is_delivered_on_receipt_and_held_as_a_placeholder() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    ids = [h.command("send", m=0, dst=1, payload=_hex(n), oob=n == 3)["packets"][0] for n in (1, 2, 3)]
    assert [p["msg"]["oob"] for p in ids] == [False, False, True]
    h.command("deliver", id=ids[0]["id"], m=1)
    got = h.command("deliver", id=ids[2]["id"], m=1, state=True)
    assert got["delivered"] == [{"m": 1, "src": 0, "payload": _hex(3)}]  # ahead of #2
    window = node(got["state"], 1, 2).recv[0]
    assert window == u3.RecvEntry(0, u3.OPEN, 1, (None, u3.Data(3, 0, False, 0, True)), True)
    sender = node(h.command("state", m=0)["state"], 0, 2).send[1]
    assert sender is not None and sender.oob == {3}
    got = h.command("deliver", id=ids[1]["id"], m=1, state=True)
    assert got["delivered"] == [{"m": 1, "src": 0, "payload": _hex(2)}]  # the placeholder passed over
    assert node(got["state"], 1, 2).recv[0] == u3.RecvEntry(0, u3.OPEN, 3, (), True)


@pytest.mark.parametrize("version", ["5.4.12", "3.6.20"])
def test_spec_agrees_with_jgroups_on_oob_walks(version: str) -> None:
    result = walks(MODEL, harness_for(version), (0, 30), 120)
    assert result.unexplained == 0, result.divergences
    assert result.steps > 2_000 and set(result.explained) <= {"oob-cache-order"}


def test_a_spec_that_redelivers_oob_messages_diverges() -> None:
    harness = harness_for("5.4.12")
    found = [random_walk(MODEL, harness, seed, 120, flags=("oob_redelivers",)).divergence for seed in range(10)]
    assert any(d is not None and d.kind == "deliveries" for d in found)


def test_a_model_without_oob_sends_refuses_the_flag() -> None:
    h = harness_for("3.6.20")  # UNICAST2 is in 3.x only; its harness model has no OOB sends
    h.command("reset", protocol="unicast2", members=2, views=[[0, 1], [0, 1]])
    with pytest.raises(HarnessError, match="send: oob is not supported by this protocol's harness model"):
        h.command("send", m=0, dst=1, payload=_hex(1), oob=True)
    assert h.command("hello")["jgroups"]
