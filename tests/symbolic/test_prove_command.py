"""``seqcheck prove``: the table of obligations, the verdict, the exit codes, the trace it writes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import z3

from checks import cli, cpu_limit
from checks.symbolic import budget, command


@pytest.mark.long
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


@pytest.mark.long
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


def test_every_line_and_the_verdict_give_cpu_seconds_beside_wall(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: wall time alone misleads on a shared machine. z3 runs in this process, single-threaded:
    its CPU seconds are positive and not above the wall seconds (a little slack for the two clocks)."""
    assert cli.main(["prove", "counters", "--json", "--trace-dir", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    verdict = rows.pop()
    assert all(0 <= row["cpu_seconds"] <= row["seconds"] + 0.01 for row in rows), rows
    assert sum(row["cpu_seconds"] for row in rows) > 0
    assert 0 < verdict["cpu_seconds"] <= verdict["seconds"] + 0.1, verdict
    assert cli.main(["prove", "counters", "--trace-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    pattern = re.compile(r" +\d+\.\d\d s \(CPU +\d+\.\d\d s\)")
    assert all(pattern.search(line) for line in lines[:-1]), lines
    assert re.search(r", \d+\.\d s \(CPU \d+\.\d s\): as expected$", lines[-1]), lines[-1]


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


# ---------------------------------------------------------------- work budgets, not wall time (issue 28, item 3)
SYMBOLIC = Path(command.__file__).parent


def test_no_query_has_a_wall_clock_timeout() -> None:
    """Every z3 query of seqcheck prove goes through budget.check (z3's rlimit); none sets a timeout."""
    for path in sorted(SYMBOLIC.rglob("*.py")):
        text = path.read_text()
        assert '"timeout"' not in text and "timeout_ms" not in text, path
        if path.name != "budget.py":
            assert ".check()" not in text, f"{path}: a z3 query outside budget.check"


def test_a_spent_budget_is_unknown_with_its_own_exit_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A budget too small for the lemmas: each is undecided (unknown), the verdict says so and the
    exit status is 3, never 1 (nothing was disproved)."""
    monkeypatch.setattr(budget, "budget", lambda key: 1)
    assert cli.main(["prove", "counters", "--trace-dir", str(tmp_path)]) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[8].startswith("8 lines, 0 not as expected, 8 unknown,") and lines[8].endswith(": unknown")
    assert all(" unknown " in line for line in lines[:8])
    assert lines[9].startswith("  unknown (z3's work budget spent, nothing disproved): timestamps: ")
    assert cli.main(["prove", "counters", "--json", "--trace-dir", str(tmp_path)]) == 3
    verdict = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert verdict["verdict"] == "unknown" and len(verdict["unknown"]) == 8 and verdict["unexpected"] == []


def test_a_spent_cti_budget_is_unknown_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.symbolic import cti
    from checks.symbolic.unicast3.invariants import STRENGTHENINGS, TARGETS
    from spec.unicast3 import Variant

    monkeypatch.setattr(budget, "budget", lambda key: 1)
    result, detail, found = cti.validated_cti(TARGETS + STRENGTHENINGS, Variant(no_timestamps=True),
                                              *command.EXPECTED_1873, world=None)
    assert (result, found) == ("unknown", None) and "work budget ran out for all 4 seeds" in detail


def test_the_work_of_every_query_is_the_same_in_two_processes(tmp_path: Path) -> None:
    """z3's count of its own work, query by query, is the same in two runs of the same command (one
    of them beside two busy loops): the budgets, and so the verdicts, cannot depend on the load."""
    counts, outputs = [], []
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for run in range(2):
            if run == 1:
                for loop in busy:
                    loop.kill()
                    loop.wait()
            target = tmp_path / f"used{run}.json"
            done = cpu_limit.run([sys.executable, "-m", "checks.cli", "prove", "counters", "--json",
                                  "--trace-dir", str(tmp_path)], capture_output=True, text=True, cpu_seconds=120,
                                 env={**os.environ, budget.CALIBRATE_ENV: str(target)})
            assert done.returncode == 0, done.stderr
            counts.append(json.loads(target.read_text()))
            outputs.append([(row["name"], row["result"]) for row in map(json.loads, done.stdout.splitlines()[:-1])])
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    assert counts[0] == counts[1] and len(counts[0]) == 8
    assert outputs[0] == outputs[1]


@pytest.mark.long
def test_prove_all_is_as_expected_and_every_query_is_calibrated(tmp_path: Path) -> None:
    """seqcheck prove all, in a process of its own: as expected, and budgets.json knows every query it
    asks (a model changed since shows up as a query at the DEFAULT budget: recalibrate with
    SEQCHECK_PROVE_CALIBRATE=FILE seqcheck prove all). The table was once stale (none of prove
    unicast3's 725 queries in it), unnoticed, while this test checked only its size."""
    used = tmp_path / "used.json"
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "prove", "all", "--json", "--trace-dir", str(tmp_path)],
                         capture_output=True, text=True, cpu_seconds=900,
                         env={**os.environ, budget.CALIBRATE_ENV: str(used)})
    assert done.returncode == 0, done.stderr[-2_000:]
    assert json.loads(done.stdout.splitlines()[-1])["verdict"] == "as expected"
    table, asked = json.loads(budget.TABLE.read_text()), json.loads(used.read_text())
    missing = sorted(set(asked) - set(table))
    assert len(asked) > 1_500 and not missing, f"{len(missing)} of {len(asked)} queries not calibrated"
    assert min(asked.values()) > 0 and min(table.values()) > 0  # a use of 0: the count read from another context
    assert max(table.values()) * budget.FACTOR <= budget.DEFAULT


def test_a_query_reads_the_same_alone_or_after_others() -> None:
    """A query's digest (its budget's key) does not depend on which queries were built before it:
    ``only`` one obligation gives the digest it has in the whole run."""
    from checks.symbolic.obligations import obligations
    from checks.symbolic.unicast3.invariants import STRENGTHENINGS, TARGETS
    from spec.unicast3 import Variant

    keys: list[str] = []

    def record(solver: Any, rlimit: int | None = None) -> Any:
        keys.append(budget._key(solver))
        return z3.unsat  # the digest is all this test needs: no solving

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(budget, "check", record)
        whole = [r.name for r in obligations(TARGETS + STRENGTHENINGS, Variant())]
        in_run = dict(zip(whole, keys))
        for name in ("view_b / first_data_above_acked", "deliver_data / window_within_sent", "init / window_order"):
            keys.clear()
            action, invariant = name.split(" / ")
            def only(a: str, i: str, want: tuple[str, str] = (action, invariant)) -> bool:
                return (a, i) == want

            list(obligations(TARGETS + STRENGTHENINGS, Variant(), only=only))
            assert keys == [in_run[name]], name
