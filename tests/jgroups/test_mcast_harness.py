"""The harness's multicast side: a multicast is one packet per destination copy (the sender's own
included unless DONT_LOOPBACK), GMS's join is a JoinRsp packet with the join digest, NAKACK4's blocked
senders are threads the schedule lets go, and what the harness cannot do is refused in one line."""

from __future__ import annotations

from typing import Any

import pytest
from jgroups_harness import harness_for

from checks.jgroups.harness import HarnessError


def _payload(n: int) -> str:
    return f"{n:016x}"


def _msgs(answer: dict[str, Any]) -> list[tuple[int, int, str]]:
    return sorted((p["src"], p["dst"], p["msg"]["type"]) for p in answer["packets"])


def test_a_multicast_is_one_packet_per_member_of_the_view() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack2", members=3, views=[[0, 1, 2]] * 3, props={"xmit_interval": 1})
    sent = h.command("send", m=0, dst=-1, payload=_payload(1))
    assert _msgs(sent) == [(0, 0, "MSG"), (0, 1, "MSG"), (0, 2, "MSG")]
    own = next(p["id"] for p in sent["packets"] if p["dst"] == 0)
    assert h.command("deliver", id=own)["delivered"] == [{"m": 0, "src": 0, "payload": _payload(1)}]
    # the first retransmit run after a send skips LastSeqnoResender; NAKACK2's HIGHEST_SEQNO is
    # DONT_LOOPBACK: no copy to the sender itself
    assert _msgs(h.command("timer", m=0, kind="xmit")) == []
    assert _msgs(h.command("timer", m=0, kind="xmit")) == [(0, 1, "HIGHEST_SEQNO"), (0, 2, "HIGHEST_SEQNO")]


def test_a_join_sends_the_join_digest() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack4", members=3, views=[[0, 1], [0, 1], [0, 1]],
              props={"capacity": 4, "send_atomically": True})
    sent = h.command("send", m=0, dst=-1, payload=_payload(1))  # the loopback copy stays in flight
    rsp = h.command("join", m=0, joiner=2, members=[0, 1, 2], state=True)
    assert [p["msg"] for p in rsp["packets"]] == [{"type": "JOIN_RSP", "view": [0, 1, 2], "n": 3, "digest": {
        "0": [0, 1], "1": [0, 0], "2": [0, 0]}}]
    assert rsp["state"]["members"] == [0, 1, 2] and rsp["state"]["ack_table"] == {"0": 0, "1": 0, "2": 0}
    joined = h.command("deliver", id=rsp["packets"][0]["id"], m=2, state=True)["state"]
    assert joined["become_server_pending"] and joined["windows"]["0"]["hd"] == 0
    h.command("timer", m=2, kind="become_server")
    assert _msgs(sent) == [(0, 0, "MSG"), (0, 1, "MSG")]  # A's #1 went to its view then, A and B


def test_a_blocked_sender_is_a_thread_the_schedule_lets_go() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="nakack4", members=2, views=[[0, 1], [0, 1]],
              props={"capacity": 1, "send_atomically": True})
    first = h.command("send", m=0, dst=-1, payload=_payload(1))
    blocked = h.command("send", m=0, dst=-1, payload=_payload(2), state=True)
    assert blocked["packets"] == [] and blocked["state"]["sending"] == [[2, _payload(2), False]]  # not OOB
    with pytest.raises(HarnessError, match="already has an application thread"):
        h.command("send", m=0, dst=-1, payload=_payload(3))
    assert h.command("timer", m=0, kind="send", peer=2)["packets"] == []  # no room yet: it stays blocked
    for p in first["packets"]:  # both copies delivered, both ACKs delivered: the window purges
        for ack in h.command("deliver", id=p["id"])["packets"]:
            h.command("deliver", id=ack["id"])
    released = h.command("timer", m=0, kind="send", peer=2, state=True)
    assert _msgs(released) == [(0, 0, "MSG"), (0, 1, "MSG")] and released["state"]["sending"] == []
    with pytest.raises(HarnessError, match="no application thread of member 0 holds #7"):
        h.command("timer", m=0, kind="send", peer=7)


def test_refusals_are_one_line() -> None:
    h = harness_for("5.4.12")
    with pytest.raises(HarnessError, match="xmit_interval has to be > 0"):
        h.command("reset", protocol="nakack2", members=2, views=[[0, 1]] * 2, props={"xmit_interval": 0})
    with pytest.raises(HarnessError, match="has no property capacity"):
        h.command("reset", protocol="nakack2", members=2, views=[[0, 1]] * 2, props={"capacity": 4})
    h.command("reset", protocol="nakack4", members=2, views=[[0, 1]] * 2)
    with pytest.raises(HarnessError, match="no receiver-removal hook"):
        h.command("remove", m=0, peer=1)
    with pytest.raises(HarnessError, match="the view must hold the coordinator and the joiner"):
        h.command("join", m=0, joiner=1, members=[0])
    old = harness_for("3.2.5")
    old.command("reset", protocol="nakack2", members=2, views=[[0, 1]] * 2, props={"xmit_interval": 1})
    with pytest.raises(HarnessError, match="STABLE multicasts its gossip"):
        old.command("timer", m=0, kind="stable")


def test_two_application_threads_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """conform names what the harness cannot run in one line (exit 2), before any schedule."""
    from pathlib import Path

    from checks.cli import main

    harness_for("5.4.12")
    model = Path(__file__).resolve().parents[2] / "models" / "nakack4" / "send-atomically-blocked-overtaken.toml"
    assert main(["conform", str(model), "--jgroups", "5.4.12", "--runs", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "sender_threads = 2" in err and "SendAtomicallyOvertaken.java" in err
