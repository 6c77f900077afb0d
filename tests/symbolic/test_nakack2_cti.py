"""Traces ``seqcheck prove`` writes say how they were found (the trace file's ``origin``), and
``seqcheck show`` prints that instead of "a shortest counterexample"."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from checks import cli
from checks.explore.trace import Trace, TraceError
from checks.symbolic.nakack4 import proofs as n4_proofs


def test_a_reached_cti_s_trace_says_how_it_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = n4_proofs._reach(tmp_path, "jgrp2904", "deliver_ack", "ack_table_members")
    assert row[1] == "reachable"
    capsys.readouterr()
    trace = tmp_path / "prove" / "nakack4-jgrp2904-deliver_ack-ack_table_members.json"
    assert json.loads(trace.read_text())["origin"].startswith("seqcheck prove: step 4 is the first")
    assert cli.main(["show", str(trace)]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "seqcheck prove: step 4 is the first counterexample-to-induction of deliver_ack / ack_table_members" \
        in header
    assert "a shortest counterexample" not in header


def test_origin_round_trips_and_is_left_out_when_empty(tmp_path: Path) -> None:
    trace = Trace("m.toml", "0" * 64, "p", "always", ({"action": "X"},), None, ("x",))
    assert "origin" not in trace.to_json()
    found = replace(trace, origin="found some way")
    loaded = Trace.load(found.save(tmp_path / "t.json"))
    assert loaded.origin == "found some way" and loaded == trace  # origin, like the summary, is for people
    raw = found.to_json() | {"origin": 3}
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(TraceError, match="malformed field origin: expected a string, got 3"):
        Trace.load(tmp_path / "bad.json")
