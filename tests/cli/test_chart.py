"""``seqcheck show TRACE``: the message-sequence chart (models/chart.py, checks/explore/render.py).

The JGRP-1873 counterexample (models/unicast3/jgrp1873-no-timestamps.toml) is the story the chart must
tell: B acks #2 and the ACK is delayed while B drops its window for A; A's resend makes B resync and
open a new window at #1; then the stale ACK(2) arrives and A purges #2, which B's new window has not
delivered. The tests pin the lines that carry that story (lanes, the late ACK with "(sent at step N)",
the purge, the end state), not the whole layout, and check that rendering is deterministic.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.check import check_model
from checks.cli import MODELS_DIR, main
from checks.explore.trace import Trace, validate
from models.chart import chart
from models.modelfile import load

U3 = MODELS_DIR / "unicast3"
JGRP1873 = U3 / "jgrp1873-no-timestamps.toml"
SMALL_VIOLATIONS = [U3 / "jgrp1548-no-hs-resend.toml", U3 / "jgrp1578-ack-only-new.toml",
                    U3 / "jgrp1874-no-sync-rate-limit.toml", U3 / "residual-stale-packets.toml", JGRP1873]
TITLE = re.compile(r"^ *(\d+)  (\S.*)$")  # a step's number in the gutter, then its action


@dataclass
class Chart:
    text: str
    trace: Trace
    trace_path: Path

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def header(self) -> str:
        """The line that names the lanes: the one above the first rule."""
        rule = next(i for i, line in enumerate(self.lines) if line and set(line) == {"─"})
        return self.lines[rule - 1]

    def steps(self) -> dict[int, tuple[str, list[str]]]:
        """Step number -> (title, the lines under it up to the next step or the closing rule)."""
        blocks: dict[int, tuple[str, list[str]]] = {}
        current: list[str] | None = None
        for line in self.lines:
            match = TITLE.match(line)
            if match:
                current = []
                blocks[int(match.group(1))] = (match.group(2), current)
            elif line and set(line) == {"─"}:
                current = None
            elif current is not None:
                current.append(line)
        return blocks

    def footer(self) -> list[str]:
        rules = [i for i, line in enumerate(self.lines) if line and set(line) == {"─"}]
        return self.lines[rules[-1] + 1:]


def show(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    folder = tmp_path_factory.mktemp("chart-traces")
    written = {}
    for model_path in SMALL_VIOLATIONS:
        outcome = check_model(load(model_path), trace_dir=folder)
        assert outcome.matches and outcome.trace_path is not None, outcome.mismatch_reason
        written[model_path] = outcome.trace_path
    return written


@pytest.fixture
def jgrp1873(traces: dict[Path, Path], capsys: pytest.CaptureFixture[str]) -> Chart:
    path = traces[JGRP1873]
    return Chart(show(capsys, path), Trace.load(path), path)


# ---------------------------------------------------------------- the JGRP-1873 story


def test_intro_names_the_model_and_the_violation(jgrp1873: Chart) -> None:
    lines = jgrp1873.lines
    assert lines[0].startswith(f"{JGRP1873.relative_to(MODELS_DIR.parent)}: JGRP-1873: without timestamps on ACK and "
                               "SEND_FIRST_SEQNO")  # repository-relative, never absolute
    assert lines[1] == (f"violates safety property no_spurious_purge after {len(jgrp1873.trace.actions)} steps "
                        "(a shortest counterexample)")


def test_members_are_the_lanes(jgrp1873: Chart) -> None:
    header = jgrp1873.header()
    assert header.split() == ["A", "B"]
    columns = [header.index("A"), header.index("B")]
    assert columns[0] < columns[1]
    lane_rows = [line for line in jgrp1873.lines if line.count("│") == 2]
    assert lane_rows, "no row shows both lanes"
    for row in lane_rows:
        assert [i for i, c in enumerate(row) if c == "│"] == columns, row


def test_one_block_per_step_titled_by_its_action(jgrp1873: Chart) -> None:
    steps = jgrp1873.steps()
    assert sorted(steps) == list(range(1, len(jgrp1873.trace.actions) + 1))
    assert [title for title, _ in steps.values()] == list(jgrp1873.trace.summary)


def test_every_late_packet_names_the_step_that_sent_it(jgrp1873: Chart) -> None:
    steps = jgrp1873.steps()
    arrivals = 0
    for number, (_, block) in steps.items():
        for line in block:
            for name, sent in re.findall(r"(m\d+) .*\(sent at step (\d+)\)", line):
                arrivals += 1
                assert int(sent) < number
                assert any(f"-> {name} " in row for row in steps[int(sent)][1]), \
                    f"step {number}: {name} is said to be sent at step {sent}, which does not send it"
    assert arrivals >= 5


def test_the_stale_ack_arrives_late_and_a_purges(jgrp1873: Chart) -> None:
    steps = jgrp1873.steps()
    last = len(jgrp1873.trace.actions)
    title, block = steps[last]
    assert title.startswith("A receives ACK(seqno=2")
    text = "\n".join(block)
    found = re.search(r"(m\d+) ACK\(seqno=2[^)]*\) \(sent at step (\d+)\)", text)
    assert found, text
    name, sent = found.group(1), int(found.group(2))
    assert sent < last - 1, "the ACK is not late: nothing happened between its sending and its arrival"
    assert any("◀" in line for line in block), "the ACK does not arrive in A's lane from B's"
    # it was flushed when B dropped its window for A
    sent_title, sent_block = steps[sent]
    assert "B removes its receive window for A" in sent_title
    assert any(f"-> {name} ACK(seqno=2" in line and line.rstrip().endswith("to A") for line in sent_block)
    # the purge
    assert "· send[B].acked: 0 -> 2" in text
    assert "· send[B].unacked: #1, #2 -> none" in text


def test_b_opens_a_new_window_between_the_reset_and_the_purge(jgrp1873: Chart) -> None:
    steps = jgrp1873.steps()
    last = len(jgrp1873.trace.actions)
    reset = next(n for n, (title, _) in steps.items() if "removes its receive window" in title)
    assert any("· recv[A]: conn_id 0, state OPEN" in line for line in steps[reset][1])
    reopened = [n for n, (_, block) in steps.items() if any("· recv[A]: none -> conn_id" in line for line in block)]
    assert reopened[0] < reset < reopened[-1] < last, reopened
    assert any("SEND_FIRST_SEQNO" in title for n, (title, _) in steps.items() if reset < n < reopened[-1])


def test_end_state_shows_purged_2_undelivered_by_the_new_window(jgrp1873: Chart) -> None:
    footer = jgrp1873.footer()
    end_a = [line for line in footer if line.startswith("end state of A: ")]
    end_b = [line for line in footer if line.startswith("end state of B: ")]
    assert len(end_a) == 1 and len(end_b) == 1, footer
    assert "send to B:" in end_a[0] and "acked (purged) up to #2" in end_a[0]
    assert "receive from A:" in end_b[0] and "delivered up to #1" in end_b[0]
    gone = [line for line in footer if line.startswith("gone for good: ")]
    assert len(gone) == 1 and gone[0].startswith("gone for good: #2 from A to B"), footer
    assert footer[-1].startswith("violated: no_spurious_purge — P6")


# ---------------------------------------------------------------- determinism


def test_chart_is_deterministic(traces: dict[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    path = traces[JGRP1873]
    first, second = show(capsys, path), show(capsys, path)
    assert first == second
    model = load(JGRP1873)
    replayed = validate(model.world, Trace.load(path))
    rendered = chart(model.world, replayed)
    assert rendered == chart(model.world, replayed)
    fresh = load(JGRP1873).world  # new interning tables: states are only meaningful in their own world
    assert rendered == chart(fresh, validate(fresh, Trace.load(path)))
    assert rendered in first  # show adds the intro before and the violated line after


def test_chart_of_a_fresh_run_is_the_same(traces: dict[Path, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    again = check_model(load(JGRP1873), trace_dir=tmp_path)
    assert again.trace_path is not None
    assert show(capsys, again.trace_path) == show(capsys, traces[JGRP1873])


def test_chart_does_not_depend_on_hash_seed(traces: dict[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    here = show(capsys, traces[JGRP1873])
    for seed in ("0", "12345"):
        done = cpu_limit.run([sys.executable, "-m", "checks.cli", "show", str(traces[JGRP1873])],
                             capture_output=True, text=True, cpu_seconds=60, env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        assert done.stdout == here


# ---------------------------------------------------------------- every small counterexample renders


@pytest.mark.parametrize("model_path", SMALL_VIOLATIONS, ids=[p.stem for p in SMALL_VIOLATIONS])
def test_show_renders_every_small_counterexample(traces: dict[Path, Path], capsys: pytest.CaptureFixture[str],
                                                 model_path: Path) -> None:
    trace = Trace.load(traces[model_path])
    shown = Chart(show(capsys, traces[model_path]), trace, traces[model_path])
    kind = {"always": "safety property", "liveness": "liveness property"}[trace.kind]
    assert shown.lines[1] == (f"violates {kind} {trace.prop} after {len(trace.actions)} steps "
                              "(a shortest counterexample)")
    assert shown.header().split() == ["A", "B"]
    assert [title for title, _ in shown.steps().values()] == list(trace.summary)
    footer = shown.footer()
    assert any(line.startswith("end state of A: ") for line in footer)
    assert any(line.startswith("end state of B: ") for line in footer)
    assert any(line.startswith(f"violated: {trace.prop}") for line in footer)
    if trace.kind == "liveness":
        assert footer[-1] == ("from this state no continuation without further faults reaches what "
                              f"{trace.prop} asks for")
    assert all(len(line) == len(line.rstrip()) for line in shown.lines)
