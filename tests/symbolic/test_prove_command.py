"""``seqcheck prove``: the table of obligations, the verdict, the exit codes, the trace it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checks import cli
from checks.symbolic import command


def test_unicast3_as_expected_with_a_trace_that_show_draws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(command, "CROSSCHECKED", ())  # tests/symbolic/test_unicast3_crosscheck.py runs them
    assert cli.main(["prove", "--protocol", "unicast3", "--json", "--trace-dir", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    verdict = rows.pop()
    assert verdict["verdict"] == "as expected" and verdict["unexpected"] == []
    results = {row["name"]: row["result"] for row in rows}
    assert results["unicast3[JGRP-1873]: deliver_sfs / live_ack_below_first"] == "counterexample"
    assert sum(r == "proved" for r in results.values()) > 600
    trace = tmp_path / "prove" / "unicast3-jgrp1873-no-timestamps.json"
    assert cli.main(["show", str(trace)]) == 0
    drawing = capsys.readouterr().out
    assert "violates safety property no_spurious_purge" in drawing and "SEND_FIRST_SEQNO" in drawing


def test_an_obligation_not_as_expected_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Expecting the JGRP-1873 counterexample somewhere else: the real one is then unexpected."""
    monkeypatch.setattr(command, "EXPECTED_1873", ("deliver_ack", "purge_covered"))
    monkeypatch.setattr(command, "CROSSCHECKED", ())
    monkeypatch.setattr(command, "_jgrp1873", lambda trace_dir: iter(()))  # the CTI: tested above
    assert cli.main(["prove", "--protocol", "unicast3", "--trace-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "NOT as expected" in out and "unexpected: unicast3[JGRP-1873]: deliver_sfs / live_ack_below_first" in out


def test_counters_print_one_line_per_lemma_and_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prove", "counters", "--trace-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 9 and lines[-1].endswith("as expected") and "0 not as expected" in lines[-1]
    assert sum("counterexample" in line for line in lines[:-1]) == 2


@pytest.mark.slow
def test_prove_all_is_as_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prove", "--json", "--trace-dir", str(tmp_path)]) == 0
    verdict = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert verdict["verdict"] == "as expected"  # its time is measured (README), not asserted


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["prove", "--protocol", "nakack9"]) == 2
    expected = ("seqcheck: --protocol: expected one of unicast3, table, counters, unicast2, nakack4, nakack2, all, "
                "infer, got 'nakack9'\n")
    assert capsys.readouterr().err == expected
    assert cli.main(["prove", "table", "--protocol", "counters"]) == 2
    assert capsys.readouterr().err == "seqcheck: what to prove: 'table' and --protocol 'counters' disagree; give one\n"
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["prove", "--protocol", "table", "--trace-dir", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("seqcheck: --trace-dir: cannot write in")
