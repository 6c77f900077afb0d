"""JGroups findings of the UNICAST3 lockstep, each as a standalone harness schedule that shows it on
the release that has it and not on the others. JGRP-2573 (SeqnoList.removeHigherThan ignoring a bound
below its offset, 3.6.0 to 5.1.x) is also the spec flag ``stale_xmit_record_asks_all`` of 3.6's
profile (``checks/jgroups/unicast3.py``)."""

from __future__ import annotations

import pytest
from jgroups_harness import harness_for

from checks.jgroups.harness import Harness


def _payload(n: int) -> str:
    return f"{n:016x}"


def early_xmit_req(h: Harness) -> list[dict[str, object]]:
    """B's record of the previous run is 2 (gap at 2 seen once), the gap closes, a new gap opens at 4
    above the record: the next run must only record 4 (JGRP-1539's previous batch), not ask for it."""
    h.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    ids = [h.command("send", m=0, dst=1, payload=_payload(n))["packets"][0]["id"] for n in range(1, 6)]
    for n in (1, 3):
        h.command("deliver", id=ids[n - 1])
    assert [p["msg"]["type"] for p in h.command("timer", m=1, kind="xmit")["packets"]] == ["ACK"]  # records 2
    assert h.command("state", m=1)["state"]["xmit_last"] == {"0": 2}
    h.command("deliver", id=ids[1])  # the gap at 2 closes: 1..3 delivered
    h.command("deliver", id=ids[4])  # 5 arrives: a gap at 4, above the record 2
    return [p["msg"] for p in h.command("timer", m=1, kind="xmit")["packets"] if p["msg"]["type"] == "XMIT_REQ"]


@pytest.mark.parametrize("version, asked", [("3.4.8", []), ("3.6.20", [{"type": "XMIT_REQ", "seqnos": [4]}]),
                                            ("5.4.12", [])])
def test_jgrp2573_early_xmit_req(version: str, asked: list[object]) -> None:
    assert early_xmit_req(harness_for(version)) == asked
