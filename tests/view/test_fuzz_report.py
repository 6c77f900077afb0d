"""``seqcheck fuzz --report DIR``: the coverage curve, the fault x phase heat map and the failures' viewer pages.

Invariants tested: the curve's arithmetic equals a brute-force count of the distinct states the first
``n`` runs visited, at every checkpoint (Hypothesis); on a real in-process job, the page's curve ends
at the job's exact distinct-state count, every heat-map cell shows the summed ``phase_hits`` of the
result rows, and every failure links to a viewer page of its shrunk trace that exists; a model named
with markup stays text; ``--report`` naming a file is a one-line usage error (exit 2).
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks.cli import MODELS_DIR, main
from checks.fuzz.coverage import CELLS, FAULTS
from checks.fuzz.curve import curve_from_first_runs, first_runs, points_for
from checks.fuzz.inprocess import rows

FAILING = MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"


@given(st.lists(st.lists(st.integers(-5, 40), max_size=8), min_size=1, max_size=90))
def test_curve_counts_the_states_of_the_first_runs(visits: list[list[int]]) -> None:
    runs = len(visits)
    fps = np.array([fp for run in visits for fp in run], dtype=np.int64)
    idx = np.array([i for i, run in enumerate(visits) for _ in run], dtype=np.int64)
    distinct, first = first_runs(fps, idx)
    assert sorted(distinct.tolist()) == sorted(set(fps.tolist()))
    curve = curve_from_first_runs(first, runs)
    assert len(curve) == points_for(runs) and curve[-1][0] == runs
    for after, states in curve:
        assert states == len({fp for run in visits[:after] for fp in run})


def _fuzz(tmp_path: Path, model: Path, report: Path) -> int:
    return main(["fuzz", str(model), "--runs", "60", "--steps", "60", "--master", "none", "--shrink", "1",
                 "--out", str(tmp_path / "out"), "--report", str(report), "--no-progress"])


def test_report_of_a_failing_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report"
    assert _fuzz(tmp_path, FAILING, report) == 0
    out = capsys.readouterr().out
    assert f"report    {report / 'index.html'}" in out
    page = (report / "index.html").read_text()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    cpu = f"CPU {summary['cpu_seconds']:,.1f} s in the runs"  # CPU beside wall, in the report and the page
    assert summary["cpu_seconds"] > 0 and cpu in out and cpu in page
    curve = summary["coverage_curve"]
    assert curve[-1] == [60, summary["distinct_states_approx"]] and summary["distinct_states_exact"]
    assert [s for _, s in curve] == sorted(s for _, s in curve)
    points = re.search(r'<polyline class="curve" points="([^"]+)"', page)
    assert points is not None and len(points.group(1).split()) == len(curve) + 1
    hits = [sum(col) for col in zip(*(row["phase_hits"] for row in rows(tmp_path / "out" / "runs")))]
    cells = re.findall(r'data-phase="([^"]+)" data-fault="([^"]+)" data-count="(\d+)"', page)
    assert len(cells) == len(CELLS) + len(FAULTS)
    shown = {(html.unescape(p), f): int(n) for p, f, n in cells}
    for i, cell in enumerate(CELLS):
        assert shown[cell] == hits[i]
    links = re.findall(r'<a href="(traces/[^"]+\.html)">viewer</a>', page)
    assert len(links) == len(summary["traces"]) >= 2  # one per failing verdict (--shrink 1)
    for link in links:
        viewer = (report / link).read_text()
        assert 'id="trace-data"' in viewer and "jgrp1548-no-hs-resend" in viewer
    for trace in summary["traces"]:
        assert html.escape(f"seqcheck replay {trace['path']}") in page


def test_a_model_named_with_markup_stays_text(tmp_path: Path) -> None:
    hostile = tmp_path / "<img src=x onerror=alert(1)>.toml"
    shutil.copy(FAILING, hostile)
    assert _fuzz(tmp_path, hostile, tmp_path / "report") == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page


def test_report_naming_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "taken"
    afile.write_text("")
    assert _fuzz(tmp_path, FAILING, afile) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"seqcheck: --report: {afile} exists and is not a folder"]
