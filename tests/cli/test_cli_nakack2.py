"""The command line on NAKACK2 models (models/nakack2/): they check, draw, fuzz, replay on the engine (in
lockstep and as a script of group events) and emit a regression test (``McastScript``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main

MODEL = MODELS_DIR / "nakack2" / "below-drop-no-xmit.toml"


def test_a_nakack2_trace_checks_and_draws_as_a_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "nakack2" / "below-drop-no-xmit.json")]) == 0
    drawing = capsys.readouterr().out
    assert "A: application multicasts" in drawing and "(dropped below NAKACK2)" in drawing
    assert "end state of B: window for A: purged to #0, delivered to #0, received to #0" in drawing  # a chart
    assert "violated: eventually_delivered" in drawing


def test_fuzz_runs_a_nakack2_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(MODEL), "--runs", "100", "--master", "none", "--out", str(tmp_path / "out"),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "outcome   as expected (violation:eventually_delivered)" in out
    assert "faults met in protocol phases (member state just before the fault" in out


def test_a_nakack2_trace_replays_on_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    capsys.readouterr()
    trace = tmp_path / "nakack2" / "below-drop-no-xmit.json"
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "lockstep: the engine took all 2 steps exactly as the spec" in out
    assert main(["replay", str(trace), "--emit-test", str(tmp_path / "t.py")]) == 0
    emitted = (tmp_path / "t.py").read_text()
    assert "from checks.conform.mcast_script import McastScript" in emitted and "net.multicast('A')" in emitted


def test_a_script_flags_one_multicast_dont_loopback() -> None:
    """``McastScript.multicast(src, dont_loopback=True)`` (the call replay emits for a send the
    model's [dont_loopback] table flags): A delivers #1, never #2; B both; and a script that
    delivers A's own #2 anyway (its flag dropped) is judged a no_self_delivery violation."""
    from checks.conform.mcast_script import McastScript
    from impl.common import spec_payload

    net = McastScript(["A", "B"])
    net.multicast("A")
    net.multicast("A", dont_loopback=True)
    for seqno in (1, 2):
        net.deliver("A", "B", "MSG", seqno=seqno)
    net.deliver("A", "A", "MSG", seqno=1)
    assert net.skipped == [] and net.delivered == {("A", "B"): {1, 2}, ("A", "A"): {1}}
    assert net.holds("no_self_delivery") and net.holds("in_order")
    net.settle()
    assert net.holds("eventually_delivered")
    net.flagged.add(("A", 1))  # as if #1 had been flagged: its delivery at A above is then judged
    net._deliveries("A", [("A", spec_payload(1))])
    assert not net.holds("no_self_delivery")


def test_a_script_flags_one_multicast_oob() -> None:
    """``McastScript.multicast(src, oob=True)`` (the call replay emits for a send the model's [oob]
    table flags): B delivers the OOB #2 on receipt, before #1, which in_order allows; the same order
    of plain multicasts is judged an in_order violation."""
    from checks.conform.mcast_script import McastScript
    from impl.common import spec_payload

    net = McastScript(["A", "B"])
    net.multicast("A")
    net.multicast("A", oob=True)
    net.deliver("A", "B", "MSG", seqno=2)
    assert net.delivered == {("A", "B"): {2}}
    net.deliver("A", "B", "MSG", seqno=1)
    assert net.skipped == [] and net.delivered[("A", "B")] == {1, 2}
    assert net.holds("no_duplicate") and net.holds("in_order")
    plain = McastScript(["A", "B"])
    plain.multicast("A")
    plain.multicast("A")
    plain._deliveries("B", [("A", spec_payload(2)), ("A", spec_payload(1))])
    assert not plain.holds("in_order")
