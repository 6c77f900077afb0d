"""``seqcheck demo`` (members in processes of their own, through the link) and ``seqcheck bench
--net``: verdicts and report shapes (CPU seconds beside wall seconds among them), never timings. The
demo's partition switches at a time, so only the verdict is asserted of a run with one (not whether
the cut met traffic)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from checks.cli import main


@pytest.mark.parametrize("protocol", ["unicast3", "nakack4"])
def test_the_demo_delivers_every_message_once_in_order_and_its_logs_validate(
        protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "logs"
    assert main(["demo", protocol, "--members", "3", "--messages", "400", "--loss", "0.1", "--duplicate", "0.05",
                 "--reorder", "0.1", "--delay", "exp:2", "--seed", "4", "--log-dir", str(logs), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] and not result["timed_out"] and result["seed"] == 4
    per_sender = 400 if protocol == "unicast3" else 3 * 400
    assert [m["delivered"] for m in result["per_member"]] == [per_sender] * 3
    assert result["link"]["lost"] > 0
    # CPU beside wall (issue 33): each member's process, and this one's (the link); children: no upper bound
    assert all(m["cpu_seconds"] > 0 for m in result["per_member"]) and result["link_cpu_seconds"] > 0
    assert result["members_cpu_seconds"] == pytest.approx(sum(m["cpu_seconds"] for m in result["per_member"]),
                                                          abs=0.01)
    assert result["cpu_seconds"] == pytest.approx(result["members_cpu_seconds"] + result["link_cpu_seconds"], abs=0.01)
    assert main(["validate", *map(str, sorted(logs.glob("member-*.jsonl")))]) == 0
    assert "valid: every one of" in capsys.readouterr().out


def test_the_demo_with_a_partition_and_a_one_way_cut(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "unicast3", "--members", "3", "--messages", "1500", "--partition", "A,B|C@0.2+0.3",
                 "--one-way", "A>B@0.6+0.2", "--seed", "9"]) == 0
    out = capsys.readouterr()
    assert "verdict: every message delivered exactly once, in order per sender" in out.out
    assert re.search(r"\n\d+\.\d s \(CPU \d+\.\d s: members \d+\.\d, link \d+\.\d\), [\d,]+ deliveries/s", out.out)
    assert "partition A,B|C" in out.err and "healed" in out.err
    assert re.search(r"\d+\.\ds \(CPU \d+\.\d s\) partition A,B\|C", out.err), out.err  # CPU beside wall


@pytest.mark.parametrize(("args", "said"), [
    (["unicast9"], "protocol: expected one of"),
    (["unicast3", "--members", "1"], "--members: expected 2 to 26"),
    (["unicast3", "--loss", "1.5"], "loss: expected a probability"),
    (["unicast3", "--delay", "gauss:3"], "delay: expected uniform"),
    (["unicast3", "--partition", "A,B@1+1"], "expected at least two groups"),
    (["unicast3", "--partition", "A|Q@1+1"], "member 'Q': expected A..C"),
])
def test_demo_usage_errors_are_one_line(args: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err


def test_bench_net_reports_rates_latencies_and_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--net", "--messages", "3000"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bench"] == "net" and report["messages"] == 3000
    for phase in ("raw", "engine", "engine_loss_5"):
        row = report[phase]
        assert row["messages_per_s"] > 0 and row["cpu_seconds_sender"] > 0 and row["cpu_seconds_receiver"] > 0
        assert 0 < row["p50_ms"] <= row["p99_ms"]
    assert report["engine"]["delivered"] == report["engine_loss_5"]["delivered"] == 3000  # every message, in order
    assert report["engine"]["out_of_order"] == report["engine_loss_5"]["out_of_order"] == 0
    assert report["engine_loss_5"]["retransmitted"] > 0
    assert report["engine_vs_raw"] > 0
