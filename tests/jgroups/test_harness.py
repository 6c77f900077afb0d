"""The harness itself: it finds releases, compiles against each, speaks its command protocol, and
refuses what it cannot do in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.harness import HarnessError
from checks.jgroups.locate import JGroupsUnavailable, release, releases

RELEASES = ["3.2.5", "3.4.8", "3.6.20", "5.2.12", "5.4.5", "5.4.12", "master"]


@pytest.mark.parametrize("version", RELEASES)
def test_every_release_compiles_and_answers(version: str) -> None:
    harness = harness_for(version)
    assert harness.version.startswith(release(version).version.split("-")[0])
    expected = {"3.2.5": ["unicast2"], "3.4.8": ["unicast3", "unicast2"], "3.6.20": ["unicast3", "unicast2"]}
    assert set(harness.protocols) >= set(expected.get(version, ["unicast3"]))


def test_unicast3_send_and_deliver() -> None:
    """Two members: a DATA goes out marked first, is delivered once, and the retransmit task ACKs it."""
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    sent = h.command("send", m=0, dst=1, payload="0000000000000001")["packets"]
    assert [p["msg"] for p in sent] == [{"type": "DATA", "seqno": 1, "conn_id": 0, "first": True,
                                         "payload": "0000000000000001", "oob": False}]
    got = h.command("deliver", id=sent[0]["id"], m=1, state=True)
    assert got["delivered"] == [{"m": 1, "src": 0, "payload": "0000000000000001"}]
    assert got["state"]["recv"]["0"]["delivered"] == 1 and got["state"]["recv"]["0"]["ack_pending"] is True
    acks = h.command("timer", m=1, kind="xmit")["packets"]
    assert [p["msg"] for p in acks] == [{"type": "ACK", "seqno": 1, "conn_id": 0, "ts": 1}]


def test_refusals_are_one_line() -> None:
    h = harness_for("5.4.12")
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    with pytest.raises(HarnessError, match="no packet 99 in flight"):
        h.command("deliver", id=99)
    with pytest.raises(HarnessError, match="unicast2: not in this JGroups release"):
        h.command("reset", protocol="unicast2", members=2, views=[[0, 1], [0, 1]])
    with pytest.raises(HarnessError, match="expected an integer"):
        h.command("send", m="A", dst=1, payload="00")
    assert h.command("hello")["jgroups"]  # still answering


def test_unknown_release_names_what_there_is() -> None:
    if not releases():
        pytest.skip("no JGroups jars here")
    with pytest.raises(JGroupsUnavailable, match=r"--jgroups 9\.9\.9: no such release in .*5\.4\.12\.Final"):
        release("9.9.9")


def test_missing_folder_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEQCHECK_JGROUPS", str(tmp_path / "nowhere"))
    with pytest.raises(JGroupsUnavailable, match=r"no JGroups jars found.*SEQCHECK_JGROUPS=") as found:
        release("5.4.12")
    assert "\n" not in str(found.value)
