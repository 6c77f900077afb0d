"""The retransmit task's work per run is bounded (issue 18, item 5), both engines: with many
receive windows each holding a gap, one run scans at most ``max_xmit_scan`` seqnos (round robin
over the windows), and every gap is still asked for within a bounded number of runs."""

from __future__ import annotations

import math
from typing import Any

import pytest

from impl import unicast2 as u2
from impl import unicast3 as u3
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec
from impl.window import Table

PROTOCOLS: dict[str, tuple[Any, Any, Any]] = {
    "unicast3": (u3.Config, u3.Unicast3Engine, u3_codec),
    "unicast2": (u2.Config, u2.Unicast2Engine, u2_codec),
}
SENDERS = [f"S{i:02}" for i in range(12)]
SPAN = 40  # each window: 1 delivered, 2 missing, 3 .. SPAN + 1 held


def engine_with_gaps(protocol: str, scan: int) -> tuple[Any, Any]:
    config, engine_class, codec = PROTOCOLS[protocol]
    cfg = config(max_xmit_req_size=SPAN, max_xmit_scan=scan, xmit_interval=1_000)
    b = engine_class(cfg, members=["B", *SENDERS], now=0)
    for sender in SENDERS:
        b.received(sender, codec.encode(codec.DataMsg(1, 0, True, b"1")), now=0)
        for seqno in range(3, SPAN + 2):
            b.received(sender, codec.encode(codec.DataMsg(seqno, 0, False, b"x")), now=0)
    b.datagrams_to_send()
    return b, codec


def scanned_per_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Seqnos scanned by ``Table.missing`` in each call (its bound ``max_scan``, the range it covers)."""
    calls: list[int] = []
    real = Table.missing

    def counting(self: Table[Any], max_scan: int = 0) -> list[int]:
        calls.append(min(max_scan, max(self.hr - self.hd - 1, 0)))
        return real(self, max_scan)

    monkeypatch.setattr(Table, "missing", counting)
    return calls


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_run_scans_at_most_its_budget_and_every_gap_is_asked_for(protocol: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    budget = 3 * SPAN  # three windows a run
    b, codec = engine_with_gaps(protocol, budget)
    calls = scanned_per_run(monkeypatch)
    asked: dict[str, int] = {}
    runs_for_all = 2 * math.ceil(len(SENDERS) / 3)  # previous-batch: a gap is asked for on its 2nd look
    for run in range(1, runs_for_all + 1):
        calls.clear()
        b.handle_timer(now=1_000 * run)
        assert 0 < sum(calls) <= budget
        for dst, datagram in b.datagrams_to_send():
            msg = codec.decode(datagram)
            if isinstance(msg, codec.XmitReqMsg):
                assert tuple(msg.seqnos) == (2,)
                asked.setdefault(dst, run)
    assert sorted(asked) == SENDERS
    assert b.stats.xmit_scans_deferred == runs_for_all


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_within_the_budget_every_window_is_scanned_every_run(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    b, codec = engine_with_gaps(protocol, len(SENDERS) * SPAN)
    calls = scanned_per_run(monkeypatch)
    for run in (1, 2):
        calls.clear()
        b.handle_timer(now=1_000 * run)
        assert len(calls) == len(SENDERS)
    requests = [dst for dst, d in b.datagrams_to_send() if isinstance(codec.decode(d), codec.XmitReqMsg)]
    assert requests == SENDERS  # in peer order, as the spec asks
    assert b.stats.xmit_scans_deferred == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_budget_is_at_least_one_request(protocol: str) -> None:
    with pytest.raises(ValueError, match=r"^Config\.max_xmit_scan: expected >= max_xmit_req_size"):
        PROTOCOLS[protocol][0](max_xmit_req_size=100, max_xmit_scan=99)
