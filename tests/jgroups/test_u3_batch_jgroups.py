"""UNICAST3's batch input against JGroups' UNICAST3 (``up(MessageBatch)``; spec decision 25), 5.4.12 and
3.6.20 (the same batch path without the message cache).

Invariants tested: through the harness, packets handed up as one MessageBatch are added in one go and
acknowledged at once when the batch holds ack_threshold DATA (the ACK carries the highest delivered seqno
and leaves the pending flag as it was), pending otherwise; a batch without a window and without the first
DATA caches its DATA and asks once for the first seqno (5.4.12); the spec in lockstep with JGroups on the
batch lockstep model's walks meets no divergence but the explained ones; a spec that acknowledges every
batch at once is told apart; a batch command naming packets of two channels is refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.harness import HarnessError
from checks.jgroups.unicast3 import node
from impl.common import spec_payload
from models.modelfile import load
from spec import unicast3 as u3

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast3-lockstep-batch.toml")


def _hex(n: int) -> str:
    return spec_payload(n).hex()


def _sent(h: object, count: int) -> list[dict[str, object]]:
    return [h.command("send", m=0, dst=1, payload=_hex(n))["packets"][0] for n in range(1, count + 1)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("threshold, immediate", [(2, True), (3, False)])
def test_one_ack_decision_per_batch(threshold: int, immediate: bool) -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]], props={"ack_threshold": threshold})
    packets = _sent(h, 2)
    got = h.command("batch", ids=[p["id"] for p in packets], m=1, state=True)
    assert got["delivered"] == [{"m": 1, "src": 0, "payload": _hex(n)} for n in (1, 2)]
    acks = [p["msg"] for p in got["packets"] if p["msg"]["type"] == "ACK"]
    assert acks == ([{"type": "ACK", "seqno": 2, "conn_id": 0, "ts": 1}] if immediate else [])
    assert node(got["state"], 1, 2).recv[0] == u3.RecvEntry(0, u3.OPEN, 2, (), not immediate)


def test_a_batch_without_a_window_is_cached_and_asks_once() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    packets = _sent(h, 3)
    got = h.command("batch", ids=[p["id"] for p in packets[1:]], m=1, state=True)
    assert [p["msg"]["type"] for p in got["packets"]] == ["SEND_FIRST_SEQNO"] and got["delivered"] == []
    assert len(node(got["state"], 1, 2).cache[0]) == 2
    got = h.command("deliver", id=packets[0]["id"], m=1)
    assert [d["payload"] for d in got["delivered"]] == [_hex(n) for n in (1, 2, 3)]


def test_packets_of_two_channels_are_refused() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=3, views=[[0, 1, 2]] * 3)
    one = h.command("send", m=0, dst=1, payload=_hex(1))["packets"][0]
    other = h.command("send", m=2, dst=1, payload=_hex(1))["packets"][0]
    with pytest.raises(HarnessError, match=r"batch: packet \d+ is of another channel"):
        h.command("batch", ids=[one["id"], other["id"]], m=1)
    assert h.command("hello")["jgroups"]


@pytest.mark.parametrize("version", ["5.4.12", "3.6.20"])
def test_spec_agrees_with_jgroups_on_batch_walks(version: str) -> None:
    result = walks(MODEL, harness_for(version), (0, 30), 120)
    assert result.unexplained == 0, result.divergences
    assert result.steps > 2_000 and set(result.explained) <= {"oob-cache-order"}
