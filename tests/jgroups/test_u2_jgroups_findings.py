"""What JGroups' UNICAST2 does wrong, each as a standalone harness schedule (no spec involved): the
release with the defect shows it, the release without does not. The lockstep runs each release as
the spec with that release's flags (``checks/jgroups/unicast2.py``); these are the defects behind
those flags or behind the state mapping.

- JGRP-2573 (3.6.0 to 5.1.x): a retransmit run asks for a gap it has never seen before, while the
  message is still on its way (the previous-batch rule of JGRP-1539 fails once the record of the
  last run is below the window's hd). The spec's flag ``stale_xmit_record_asks_all``.
- JGRP-1872 (before 3.4.6): a stale STABLE (a lower hd than one already applied) lowers the send
  table's low and hd below messages already purged. In 3.2.5 nothing reads low but the messages
  above it, which are gone, so only the state shows it (the binding reads HA as the highest seqno
  purged); from 3.2.6 the first-message resend reads low+1 and stops while low is lowered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from jgroups_harness import harness_for

from checks.jgroups.harness import Harness
from impl.common import spec_payload

PROPS = {"max_stable_msgs": 5, "conn_expiry_timeout": 0}


def start(harness: Harness) -> Callable[..., dict[str, Any]]:
    harness.command("reset", protocol="unicast2", members=2, views=[[0, 1], [0, 1]], props=PROPS)
    return harness.command


def sends(command: Callable[..., dict[str, Any]], count: int) -> list[int]:
    """``count`` application messages from member 0 to 1: the ids of their DATA packets."""
    return [command("send", m=0, dst=1, payload=spec_payload(n).hex())["packets"][0]["id"] for n in range(1, count + 1)]


def xmit_reqs(answer: dict[str, Any]) -> list[list[int]]:
    return [p["msg"]["seqnos"] for p in answer["packets"] if p["msg"]["type"] == "XMIT_REQ"]


@pytest.mark.parametrize(("version", "premature"), [("3.6.20", True), ("3.4.8", False)])
def test_jgrp2573_a_gap_above_a_stale_record_is_asked_for_at_once(version: str, premature: bool) -> None:
    command = start(harness_for(version))
    data = sends(command, 5)
    for packet in (data[0], data[2]):
        command("deliver", id=packet)
    assert xmit_reqs(command("timer", m=1, kind="xmit")) == []  # gap #2 seen: recorded, not asked for
    command("deliver", id=data[1])  # #2 arrives on its own: hd 3, the record (2) now below it
    got = command("deliver", id=data[4], m=1, state=True)  # gap #4, #4 still on its way
    assert got["state"]["recv"]["0"]["delivered"] == 3 and got["state"]["xmit_last"] == {"0": 2}
    run = command("timer", m=1, kind="xmit", state=True)
    assert xmit_reqs(run) == ([[4]] if premature else [])
    assert run["state"]["xmit_last"] == {"0": 4}
    assert xmit_reqs(command("timer", m=1, kind="xmit")) == [[4]]  # the next run asks on both releases


@pytest.mark.parametrize(("version", "lowered"), [("3.2.5", True), ("3.4.8", False)])
def test_jgrp1872_a_stale_stable_lowers_low(version: str, lowered: bool) -> None:
    command = start(harness_for(version))
    data = sends(command, 3)
    stables = []
    for packet in data[:2]:
        command("deliver", id=packet)
        stables += [p["id"] for p in command("timer", m=1, kind="stable")["packets"]]
    assert len(stables) == 2  # STABLE(1, 1), then STABLE(2, 2)
    assert command("deliver", id=stables[1], m=0, state=True)["state"]["send"]["1"]["low"] == 2
    entry = command("deliver", id=stables[0], m=0, state=True)["state"]["send"]["1"]
    if lowered:  # low and hd back at 1, slot #2 empty: #2 stays purged
        assert (entry["low"], entry["hd"], entry["stored"]) == (1, 1, [None, spec_payload(3).hex()])
    else:
        assert (entry["low"], entry["hd"], entry["stored"]) == (2, 2, [spec_payload(3).hex()])
