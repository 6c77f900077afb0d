"""UNICAST4's messages to self and DONT_LOOPBACK to self against JGroups (spec/unicast4.py decisions 12
and 13; UNICAST3's decision 27), 5.4.12 and master; and the finding of decision 13 reproduced.

Invariants tested: through the harness, a loopback delivers the send window for oneself, releases a
thread blocked on it, and at ack_threshold sends an ACK to oneself before the batch, which received
changes nothing but the entry's timestamp; a DONT_LOOPBACK message to oneself is stored, never sent and
never delivered; the spec in lockstep with each release on the self lockstep model's walks meets no
divergence but the explained ones; a spec with the dont_loopback_delivered defect is told apart; and on
UNICAST4 (5.4.12, master) and UNICAST3 (3.6.20, 5.4.12, master) a lost loopback followed by a
DONT_LOOPBACK message to oneself is never recovered by the retransmit task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jgroups_harness import harness_for

from checks.jgroups import unicast3 as jg3
from checks.jgroups.conform import walks
from checks.jgroups.harness import Harness
from checks.jgroups.lockstep import random_walk
from checks.jgroups.unicast4 import node
from impl.common import spec_payload
from models.modelfile import load
from spec import unicast4 as u4

FUZZ = Path(__file__).resolve().parents[2] / "models" / "fuzz"
SELF = load(FUZZ / "unicast4-lockstep-self.toml")


def _hex(n: int) -> str:
    return spec_payload(n).hex()


def _reset(h: Harness, protocol: str = "unicast4", **props: object) -> None:
    h.command("reset", protocol=protocol, members=2, views=[[0, 1], [0, 1]], props=props)


def _send(h: Harness, n: int, **flags: bool) -> dict[str, Any]:
    return h.command("send", m=0, dst=0, payload=_hex(n), state=True, **flags)


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_a_loopback_releases_a_blocked_sender_and_acks_itself_at_the_threshold(version: str) -> None:
    h = harness_for(version)
    _reset(h, capacity=2, ack_threshold=2, dont_block=False)
    first = _send(h, 1)["packets"][0]
    _send(h, 2)
    blocked = _send(h, 3)
    entry = node(blocked["state"], 0, 2).send[0]
    assert entry is not None and entry.blocked == ((3, 3),) and blocked["packets"] == []
    got = h.command("deliver", id=first["id"], m=0, state=True)
    assert got["delivered"] == [{"m": 0, "src": 0, "payload": _hex(n)} for n in (1, 2)]
    ack = got["packets"][0]
    assert (ack["src"], ack["dst"], jg3.message(ack["msg"])) == (0, 0, jg3.message(
        {"type": "ACK", "seqno": 2, "conn_id": 0, "ts": 1}))
    member = node(got["state"], 0, 2)
    sender = member.send[0]
    assert member.recv[0] is None and sender is not None and (sender.acked, sender.acks_counted) == (2, 0)
    after = h.command("deliver", id=ack["id"], m=0, state=True)
    assert after["packets"] == [] and after["delivered"] == []
    sender = node(after["state"], 0, 2).send[0]
    assert sender is not None and (sender.last_ts, sender.acked) == (1, 2)
    woken = h.command("timer", m=0, kind="send#3", peer=0, state=True)
    assert [p["dst"] for p in woken["packets"]] == [0]


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_a_dont_loopback_message_to_self_is_stored_never_sent_never_delivered(version: str) -> None:
    h = harness_for(version)
    _reset(h, capacity=8, dont_block=False)
    first = _send(h, 1)["packets"][0]
    held = _send(h, 2, dont_loopback=True)
    assert held["packets"] == []
    entry = node(held["state"], 0, 2).send[0]
    assert entry is not None and entry.unacked == (1, 2) and entry.dont_loopback == frozenset({2})
    got = h.command("deliver", id=first["id"], m=0, state=True)
    assert got["delivered"] == [{"m": 0, "src": 0, "payload": _hex(1)}]
    entry = node(got["state"], 0, 2).send[0]
    assert entry is not None and (entry.acked, entry.unacked) == (2, ())
    alone = _send(h, 3, dont_loopback=True)  # right above what was delivered: removed at once
    entry = node(alone["state"], 0, 2).send[0]
    assert alone["packets"] == [] and entry is not None and (entry.acked, entry.unacked) == (3, ())


@pytest.mark.parametrize(("version", "protocol"), [
    ("5.4.12", "unicast4"), ("master", "unicast4"), ("3.6.20", "unicast3"), ("5.4.12", "unicast3"),
    ("master", "unicast3")])
def test_finding_a_lost_loopback_before_a_dont_loopback_message_is_never_recovered(version: str,
                                                                                   protocol: str) -> None:
    """models/unicast4/dont-loopback-lost-loopback.toml (and UNICAST3's) on JGroups: #1's loopback lost,
    #2 DONT_LOOPBACK; the retransmit task's highest-sent resend sends #2, which the transport drops."""
    h = harness_for(version)
    props: dict[str, object] = {"capacity": 8, "dont_block": False} if protocol == "unicast4" else {}
    _reset(h, protocol, **props)
    lost = _send(h, 1)["packets"][0]
    h.command("drop", ids=[lost["id"]])
    assert _send(h, 2, dont_loopback=True)["packets"] == []
    for _ in range(4):
        run = h.command("timer", m=0, kind="xmit", peer=-1, state=True)
        assert run["packets"] == [] and run["delivered"] == []
    state = run["state"]["send"]["0"]
    assert state["acked"] == 0 and len(state["unacked"]) == 2  # #1 stored, never delivered
    recovered = _send(h, 3)["packets"][0]  # the next message to oneself that is looped back
    got = h.command("deliver", id=recovered["id"], m=0)
    assert [d["payload"] for d in got["delivered"]] == [_hex(1), _hex(3)]


@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_spec_agrees_with_jgroups_on_self_walks(version: str) -> None:
    result = walks(SELF, harness_for(version), (0, 30), 120)
    assert result.unexplained == 0, result.divergences
    assert set(result.explained) <= {"message-cache-copies"}
    assert result.steps > 2_000


def test_the_dont_loopback_defect_diverges() -> None:
    harness = harness_for("5.4.12")
    found = [random_walk(SELF, harness, seed, 120, flags=("dont_loopback_delivered",)).divergence
             for seed in range(20)]
    assert any(d is not None for d in found)


_ = u4  # the spec's types, read through checks.jgroups.unicast4.node
