"""UNICAST3's messages to self against JGroups (spec decision 26): 5.4.12 and master take the path of
``handleDataReceivedFromSelf`` (the send window for oneself delivers; nothing is acknowledged), 3.4.8
its own (a receive entry for oneself, ACKs), which its release profile names (``self_as_peer``, with
``oob_keeps_message``: its OOB slots hold the message itself).

Invariants tested: through the harness a loopback delivers everything sent to self before it, in
order, with no ACK and no receive entry; the spec in lockstep with each release on the self lockstep
model's walks meets no divergence; the spec with the other release's path is told apart; the 3.4.8
profile also agrees on the OOB lockstep model (which it did not before ``oob_keeps_message``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.conform import walks
from checks.jgroups.lockstep import random_walk
from checks.jgroups.unicast3 import node
from impl.common import spec_payload
from models.modelfile import load

FUZZ = Path(__file__).resolve().parents[2] / "models" / "fuzz"
SELF = load(FUZZ / "unicast3-lockstep-self.toml")


def _hex(n: int) -> str:
    return spec_payload(n).hex()


def test_a_loopback_delivers_everything_sent_before_it_unacknowledged() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    packets = [h.command("send", m=0, dst=0, payload=_hex(n))["packets"][0] for n in (1, 2, 3)]
    got = h.command("deliver", id=packets[2]["id"], m=0, state=True)
    assert got["delivered"] == [{"m": 0, "src": 0, "payload": _hex(n)} for n in (1, 2, 3)]
    assert got["packets"] == []  # no ACK
    member = node(got["state"], 0, 2)
    assert member.recv[0] is None and member.send[0] is not None and member.send[0].acked == 3


@pytest.mark.parametrize(("version", "model"), [
    ("5.4.12", "unicast3-lockstep-self.toml"), ("master", "unicast3-lockstep-self.toml"),
    ("3.4.8", "unicast3-lockstep-self.toml"), ("3.4.8", "unicast3-lockstep-oob.toml")])
def test_spec_agrees_with_jgroups_on_self_walks(version: str, model: str) -> None:
    result = walks(load(FUZZ / model), harness_for(version), (0, 30), 120)
    assert result.unexplained == 0 and not result.explained, result.divergences
    assert result.steps > 2_000


@pytest.mark.parametrize(("version", "flags"), [("5.4.12", ("self_as_peer",)), ("3.4.8", ())])
def test_the_other_path_diverges(version: str, flags: tuple[str, ...]) -> None:
    """5.4.12 against the 3.4.x path, and 3.4.8 against the spec as shipped (no profile flags)."""
    harness = harness_for(version)
    found = [random_walk(SELF, harness, seed, 120, flags=flags).divergence for seed in range(10)]
    assert any(d is not None for d in found)
