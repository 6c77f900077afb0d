"""UNICAST2 stories in ``seqcheck show`` (models/chart.py): the issue's test of readability.

Seed scenario #6 (models/unicast2/scenario-6-conn-id-first-only.toml): the reader must be able to
point at the delayed first message of the reopened connection and at the purged #2. The chart marks a
late arrival with the step it was sent at and the packets that overtook it, says what each step did
(``»`` lines: deliveries, windows opened, purges), and ends with what is gone for good. The JGRP-1873
and JGRP-1874 charts name the request, its answer and the stale STABLE.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR, main
from models.modelfile import load

U2 = MODELS_DIR / "unicast2"
TITLE = re.compile(r"^ *(\d+)  (\S.*)$")


def flat(text: str) -> str:
    """``text`` without lane glyphs and line breaks: notes wrapped over several rows read as one."""
    return " ".join(text.replace("│", " ").split())


def shown(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[int, tuple[str, str]]:
    """``seqcheck show`` of the model's counterexample: step -> (title, its block); 0 -> the footer."""
    outcome = check_model(load(path), trace_dir=tmp_path)
    assert outcome.matches and outcome.trace_path is not None, outcome.mismatch_reason
    capsys.readouterr()
    assert main(["show", str(outcome.trace_path)]) == 0
    blocks: dict[int, tuple[str, list[str]]] = {}
    current: list[str] = []
    for line in capsys.readouterr().out.splitlines():
        match = TITLE.match(line)
        if match:
            current = []
            blocks[int(match.group(1))] = (match.group(2), current)
        else:
            current.append(line)
    last = max(blocks)
    body = blocks[last][1]
    rule = max(i for i, line in enumerate(body) if line and set(line) == {"─"})
    blocks[last] = (blocks[last][0], body[:rule])
    blocks[0] = ("footer", body[rule + 1:])
    return {n: (title, flat("\n".join(lines))) for n, (title, lines) in blocks.items()}


def test_scenario_6_delayed_first_message_and_purged_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = shown(U2 / "scenario-6-conn-id-first-only.toml", tmp_path, capsys)
    last = max(n for n in steps if n)
    reopen = next(n for n, (title, _) in steps.items() if title == "A installs view [A]")
    # the reopened connection's first message: sent after the view change, arrives late
    first_sent = next(n for n, (title, block) in steps.items() if n > reopen and "first, payload=2) to B" in block)
    arrival = next(n for n, (title, _) in steps.items()
                   if title.startswith("B receives DATA(seqno=1, conn_id=1, first"))
    assert first_sent < arrival < last
    late = re.search(rf"\(sent at step {first_sent}\), overtaken by (m\d+)", steps[arrival][1])
    assert late, steps[arrival][1]
    # the packet that overtook it is the new #2 without a conn_id, taken into the old window
    overtaker = next(n for n, (title, _) in steps.items() if title.startswith("B receives DATA(seqno=2, conn_id=none"))
    assert overtaker < arrival and late.group(1) in steps[overtaker][1]
    assert "» delivers payload 3 from A" in steps[overtaker][1]
    assert "» opens a receive window for A (conn_id=1), next expected #1" in steps[arrival][1]
    # the purge of #2 and what it leaves
    assert steps[last][0].startswith("A receives STABLE(hd=2, hr=2, conn_id=none)")
    assert "» purges #1..#2 from its send window to B (conn_id=1)" in steps[last][1]
    footer = steps[0][1]
    assert "gone for good: #2 from A to B" in footer
    assert "violated: no_spurious_purge" in footer


def test_jgrp1873_chart_names_the_request_the_answer_and_the_stale_stable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = shown(U2 / "jgrp1873-delayed-stable.toml", tmp_path, capsys)
    text = " ".join(block for _, block in steps.values())
    assert "» no receive window for A on this connection: asks A for its first seqno" in text
    assert "» answers the SEND_FIRST_SEQNO by resending 3 messages" in text
    assert "» removes its receive window for A" in text
    last = max(n for n in steps if n)
    assert re.search(r"STABLE\(hd=2, hr=2, conn_id=0\) \(sent at step \d+\), overtaken by", steps[last][1])


def test_the_witness_of_scenario_5_spells_out_the_resync(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(U2 / "scenario-5-receiver-closes.toml")]) == 0
    out = flat(capsys.readouterr().out)
    assert "witness: the scenario's 9 steps" in out
    assert "» answers the SEND_FIRST_SEQNO by resending 1 message" in out
    assert "» opens a receive window for A (conn_id=0), next expected #2" in out
    assert "» ignores it" not in out


def test_a_packet_that_changes_nothing_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A duplicate of a delivered, non-first DATA: the receiver neither stores nor answers it."""
    steps = ["A: application sends to B", "A: application sends to B",
             "B receives DATA(seqno=1, conn_id=0, first, payload=1) from A",
             "B receives a duplicate of DATA(seqno=2, conn_id=0, payload=2) from A",
             "B receives DATA(seqno=2, conn_id=0, payload=2) from A"]
    path = tmp_path / "duplicate.toml"
    path.write_text('protocol = "unicast2"\nmembers = ["A", "B"]\n[sends]\n"A->B" = 2\n[faults]\nduplicate = 1\n'
                    '[check]\nexpect = "pass"\nwitness = [' + ", ".join(f'"{step}"' for step in steps) + "]\n")
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    last = out.split("   5  B receives DATA(seqno=2")[1]
    assert "» ignores it: nothing changes" in last
    assert out.count("» ignores it") == 1
