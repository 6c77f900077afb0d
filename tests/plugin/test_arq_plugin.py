"""The example plug-in docs/examples/arq_plugin, installed as a user installs it (``pip install``, from
a copy, into a folder of its own on ``PYTHONPATH``: nothing of the test's environment changes) and run
by the ``seqcheck`` command in fresh processes: its entry point is discovered, ``list`` names it, and
``check`` gives the same verdicts, state and transition counts, levels and trace lengths in one process
and with ``--workers 2`` (whose workers start on the window-4 model: a level of more than 8,192 states)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks import cpu_limit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "arq_plugin"
MODELS = [EXAMPLE / "model-files" / name for name in ("arq-window-4.toml", "arq-modulus-window.toml")]
SAME = ("protocol", "expected", "verdict", "matches", "states", "transitions", "depth", "cut", "complete", "levels",
        "unreduced_states", "trace_length", "stopped_by", "max_states")


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Python finds the installed plug-in (pip builds in the source folder, so
    from a copy)."""
    base = tmp_path_factory.mktemp("arq")
    source, site = base / "source", base / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("model-files", "build", "*.egg-info"))
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(site), str(source)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout + pip.stderr  # setuptools >= 70.1 (the test extra) builds offline
    assert (site / "seqcheck_arq" / "arq.py").is_file()
    return {**os.environ, "PYTHONPATH": str(site)}


def seqcheck(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cpu_limit.run([sys.executable, "-m", "checks.cli", *args], capture_output=True, text=True, env=env,
                         cwd=cwd, cpu_seconds=120)


def test_the_plugin_is_listed(plugin_env: dict[str, str], tmp_path: Path) -> None:
    listed = seqcheck(plugin_env, tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    assert "protocol arq" in listed.stdout and "in_order_exactly_once" in listed.stdout


def test_one_process_and_two_workers_agree(plugin_env: dict[str, str], tmp_path: Path) -> None:
    rows = {}
    for workers in ("1", "2"):
        run = seqcheck(plugin_env, tmp_path, "check", "--json", "--no-progress", "--workers", workers,
                       "--trace-dir", str(tmp_path / f"traces-{workers}"), *map(str, MODELS))
        assert run.returncode == 0, run.stdout + run.stderr
        rows[workers] = [json.loads(line) for line in run.stdout.splitlines()]
    one, two = rows["1"], rows["2"]
    assert [(r["verdict"], r["matches"], r["states"]) for r in one] == [
        ("pass", True, 86_934), ("violation:in_order_exactly_once", True, 88)]
    assert [{k: r[k] for k in SAME} for r in two] == [{k: r[k] for k in SAME} for r in one]
    assert [r["worker_processes"] for r in one] == [0, 0]
    assert [r["worker_processes"] for r in two] == [2, 0]  # the violation is found before a level is large
    assert one[0]["extra"]["modulus"] == two[0]["extra"]["modulus"] == 8
    assert set(one[0]["extra"]) == {"data_channel_contents", "ack_channel_contents", "modulus"}
    shown = seqcheck(plugin_env, tmp_path, "show", two[1]["trace"])
    assert shown.returncode == 0, shown.stderr
    assert "violates safety property in_order_exactly_once after 8 steps" in shown.stdout
    assert "S times out, resends DATA 0, 1" in shown.stdout


def test_the_race_with_spin(plugin_env: dict[str, str], tmp_path: Path) -> None:
    """``bench --race-spin`` on the window-4 model: Spin's verifier of the Promela twin
    (seqcheck_arq/arq.pml) stores as many states as seqcheck finds, and reaches them by one
    transition more (its initial state); both report CPU seconds and peak memory."""
    if shutil.which("spin") is None or shutil.which("cc") is None:
        reason = "spin or cc is not on the PATH (Debian's packages spin, gcc)"
        if os.environ.get("SEQCHECK_REQUIRE_SPIN") == "1":  # .ci/run: never skipped
            pytest.fail(f"SEQCHECK_REQUIRE_SPIN=1 but {reason}")
        pytest.skip(reason)
    run = seqcheck(plugin_env, tmp_path, "bench", "--race-spin", "--model", str(MODELS[0]))
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["same_counts"] is True
    assert (report["states"], report["transitions"], report["spin_transitions"]) == (86_934, 541_995, 541_996)
    assert report["spin"]["options"] == "-m100000 -w18"
    for side in ("spin", "seqcheck"):
        assert report[side]["cpu_s"] > 0 and report[side]["peak_rss_mb"] > 1
    assert report["cpu_ratio"] == round(report["seqcheck"]["cpu_s"] / report["spin"]["cpu_s"], 3)
