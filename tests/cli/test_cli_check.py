"""``seqcheck check`` and ``seqcheck list`` (checks/cli.py) on small shipped models.

Exit codes (cli.py docstring): 0 every verdict matches its expectation, 1 some does not, 2 a usage
error reported as one line. The shipped models used here are the fast ones (a few hundred states
each); every run passes ``--trace-dir`` under ``tmp_path`` (or runs in ``tmp_path``), so nothing is
written into the repository.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR, main
from checks.explore.trace import Trace
from models.properties import property_docs, property_names
from models.world_factory import world_adapters

U3 = MODELS_DIR / "unicast3"
PASSING = U3 / "jgrp1578-fixed.toml"
VIOLATING = {
    U3 / "jgrp1578-ack-only-new.toml": "violation:eventually_acked",  # liveness
    U3 / "jgrp1874-no-sync-rate-limit.toml": "violation:sync_rate_limited",  # safety
}
SMALL = [PASSING, *VIOLATING]
JSON_KEYS = {"model", "expected", "verdict", "matches", "states", "depth", "trace_length"}


def seqcheck(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``seqcheck ARGS`` in a real process (exit code and both streams as a shell sees them)."""
    return cpu_limit.run([sys.executable, "-m", "checks.cli", *args], capture_output=True, text=True,
                         cwd=cwd, cpu_seconds=120)


def rows(out: str) -> dict[str, str]:
    """Table rows by their model column (the first word)."""
    return {line.split()[0]: line for line in out.splitlines() if line.endswith("ok") or "MISMATCH" in line}


def copy_with_expect(source: Path, target: Path, expect: str) -> Path:
    text = source.read_text()
    new, count = re.subn(r'(?m)^expect = ".*"$', f'expect = "{expect}"', text)
    assert count == 1
    target.write_text(new)
    return target


# ---------------------------------------------------------------- the table


@pytest.fixture(scope="module")
def table_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    traces = tmp_path_factory.mktemp("table") / "traces"
    return seqcheck("check", "--no-progress", "--trace-dir", str(traces), *map(str, SMALL)), traces


def test_small_shipped_models_check_ok(table_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, _ = table_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["model", "expected", "verdict", "states", "depth", "cut", "trace", "seconds", "cpu"]
    found = rows(done.stdout)
    assert len(found) == len(SMALL)
    for path in SMALL:
        row = found[f"models/unicast3/{path.name}"]
        expect = VIOLATING.get(path, "pass")
        assert row.split()[1:3] == [expect, expect]
        assert row.endswith("  ok")
    assert f"{len(SMALL)} models, {len(SMALL)} as expected, 0 not;" in done.stdout


def test_table_names_where_counterexamples_went(table_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, traces = table_run
    assert f"Counterexamples written to {traces}/" in done.stdout
    assert sorted(p.relative_to(traces) for p in traces.rglob("*.json")) == \
        sorted(Path("unicast3", f"{p.stem}.json") for p in VIOLATING)
    found = rows(done.stdout)
    for path in VIOLATING:
        trace = Trace.load(traces / "unicast3" / f"{path.stem}.json")
        assert found[f"models/unicast3/{path.name}"].split()[6] == str(len(trace.actions))
    assert found[f"models/unicast3/{PASSING.name}"].split()[6] == "-"


# ---------------------------------------------------------------- --json


def test_json_gives_one_object_per_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "traces"
    assert main(["check", "--no-progress", "--json", "--trace-dir", str(traces), *map(str, SMALL)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    objects = [json.loads(line) for line in out.splitlines()]
    assert len(objects) == len(SMALL)
    for path, report in zip(SMALL, objects):
        assert set(report) >= JSON_KEYS, JSON_KEYS - set(report)
        expect = VIOLATING.get(path, "pass")
        assert report["model"] == str(path)
        assert (report["expected"], report["verdict"], report["matches"]) == (expect, expect, True)
        assert isinstance(report["states"], int) and report["states"] > 0
        assert isinstance(report["depth"], int) and report["depth"] > 0
        if path in VIOLATING:
            assert report["trace"] == str(traces / "unicast3" / f"{path.stem}.json")
            assert report["trace_length"] == len(Trace.load(report["trace"]).actions) > 0
        else:
            assert report["trace_length"] is None
            assert report["trace"] is None


def test_json_reports_a_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flipped = copy_with_expect(PASSING, tmp_path / "flipped.toml", "violation:eventually_acked")
    assert main(["check", "--no-progress", "--json", "--trace-dir", str(tmp_path / "t"), str(flipped)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["expected"], report["verdict"], report["matches"]) == ("violation:eventually_acked", "pass", False)


# ---------------------------------------------------------------- traces and wrong expectations


def test_violation_writes_its_trace_into_trace_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = U3 / "jgrp1874-no-sync-rate-limit.toml"
    traces = tmp_path / "deep" / "er"  # created on demand
    assert main(["check", "--no-progress", "--trace-dir", str(traces), str(model)]) == 0
    written = traces / "unicast3" / f"{model.stem}.json"  # mirrors the model's folder under models/
    assert list(traces.rglob("*.json")) == [written]
    trace = Trace.load(written)
    assert (Path(trace.model).resolve(), trace.prop, trace.kind) == (model.resolve(), "sync_rate_limited", "always")
    assert f"seqcheck show {written}" in capsys.readouterr().out


def test_pass_writes_no_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(PASSING)]) == 0
    assert not (tmp_path / "traces").exists()
    assert "Counterexamples" not in capsys.readouterr().out


def test_default_trace_dir_is_traces_in_the_working_directory(tmp_path: Path) -> None:
    model = U3 / "jgrp1578-ack-only-new.toml"
    done = seqcheck("check", "--no-progress", str(model), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "traces").rglob("*.json")) == [tmp_path / "traces" / "unicast3" / f"{model.stem}.json"]


@pytest.mark.parametrize(("source", "wrong"), [
    (U3 / "jgrp1578-ack-only-new.toml", "pass"),
    (U3 / "jgrp1874-no-sync-rate-limit.toml", "violation:no_duplicate"),
    (PASSING, "violation:eventually_delivered"),
], ids=["violation-expected-pass", "other-violation", "pass-expected-violation"])
def test_wrong_expectation_exits_1_with_a_mismatch_row(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       source: Path, wrong: str) -> None:
    copy = copy_with_expect(source, tmp_path / source.name, wrong)
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(copy)]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    verdict = VIOLATING.get(source, "pass")
    (row,) = [line for line in out.splitlines() if line.startswith(str(copy))]
    assert row.endswith(f"MISMATCH: expected {wrong}, got {verdict}")
    assert "1 model, 0 as expected, 1 not" in out


def test_one_mismatch_among_matches_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(PASSING, folder / "a.toml")
    copy_with_expect(PASSING, folder / "b.toml", "violation:eventually_acked")
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(folder)]) == 1
    out = capsys.readouterr().out
    found = [line for line in out.splitlines() if line.startswith(str(folder))]
    assert [line.split()[0] for line in found] == [str(folder / "a.toml"), str(folder / "b.toml")]  # sorted
    assert found[0].endswith("  ok") and "MISMATCH" in found[1]
    assert "2 models, 1 as expected, 1 not" in out


# ---------------------------------------------------------------- list


def test_list_names_every_variant_and_property(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    words = set(out.split())
    for protocol, adapter in world_adapters().items():
        assert f"protocol {protocol}" in out
        for name in property_names(adapter):
            assert name in words, name
        for name, doc in property_docs(adapter).items():
            assert re.search(rf"(?m)^\s+{re.escape(name)}\s+{re.escape(doc)}$", out), name
        for field in dataclasses.fields(adapter.spec.Variant):
            assert field.name in words, field.name
        for jira, flag in adapter.variant_aliases.items():
            assert re.search(rf"(?m)^\s+{flag}\s+{jira}$", out), jira


# ---------------------------------------------------------------- usage errors: exit 2


@pytest.mark.parametrize("args", [
    ["frobnicate"],
    [],
    ["check", "--frob"],
    ["check", "--no-progress", "--trace-dir"],
    ["show"],
    ["list", "extra"],
    ["bench", "--repeat", "x"],
], ids=["unknown-subcommand", "no-subcommand", "unknown-option", "option-without-value", "show-without-trace",
        "list-with-argument", "bench-repeat-not-a-number"])
def test_argparse_usage_errors_exit_2(args: list[str]) -> None:
    done = seqcheck(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert re.match(r"seqcheck( \w+)?: error: ", done.stderr.splitlines()[-1]), done.stderr


def test_bench_repeat_below_1_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--repeat", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "seqcheck: --repeat: expected a whole number >= 1, got 0\n"


def test_missing_model_path_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.toml"
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(PASSING), str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"seqcheck: {missing}: no such model file or folder\n"


def test_folder_without_models_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("no models here\n")
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "t"), str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"seqcheck: {tmp_path}: no model files (*.toml) there\n"


def test_usage_error_in_a_real_process(tmp_path: Path) -> None:
    done = seqcheck("check", "--no-progress", "--trace-dir", str(tmp_path), str(tmp_path / "nope.toml"))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"seqcheck: {tmp_path / 'nope.toml'}: no such model file or folder\n"
