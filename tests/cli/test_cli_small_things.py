"""A new user's small stumbles (issue 33, item 5): ``--version``; "1 model"; ``show --html`` and
``--itf`` print the paths written, not the chart; ``list`` and ``show`` wrapped to a terminal's
width (whole lines in a pipe); the fuzz weights line names only the kinds the model's world has; a
model outside the checkout gives trace and report names without its absolute path."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import checks.terminal as terminal
from checks.cli import MODELS_DIR, main
from checks.fuzz.run import Weights
from models import registry

VIOLATING = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"  # 858 states, an 11-step trace
WITNESS = MODELS_DIR / "unicast2" / "scenario-6-lost-first-message.toml"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"seqcheck 0.1.0 (Python {sys.version.split()[0]})\n"


def checked_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(VIOLATING)]) == 0
    assert "1 model, 1 as expected, 0 not;" in capsys.readouterr().out
    return tmp_path / "traces" / "unicast3" / "jgrp1873-no-timestamps.json"


def test_show_html_and_itf_print_the_paths_written_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = checked_trace(tmp_path, capsys)
    page, itf = tmp_path / "page.html", tmp_path / "trace.itf.json"
    assert main(["show", str(trace), "--html", str(page), "--itf", str(itf)]) == 0
    out = capsys.readouterr().out
    assert out == (f"viewer written to {page} (open it in a browser; it needs no network)\n"
                   f"ITF trace written to {itf}\n")
    assert page.read_text().startswith("<!DOCTYPE html>") and json.loads(itf.read_text())["states"]
    assert main(["show", str(trace)]) == 0  # without them, the chart
    chart = capsys.readouterr().out
    assert chart.startswith("models/unicast3/jgrp1873-no-timestamps.toml: JGRP-1873")  # not an absolute path
    assert "violated: no_spurious_purge" in chart


def test_show_a_witness_as_itf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    itf = tmp_path / "witness.itf.json"
    assert main(["show", str(WITNESS), "--itf", str(itf)]) == 0
    assert capsys.readouterr().out == f"ITF trace written to {itf}\n"
    assert len(json.loads(itf.read_text())["states"]) > 1


def test_an_unwritable_html_folder_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = checked_trace(tmp_path, capsys)
    blocker = tmp_path / "file"
    blocker.write_text("")
    itf = tmp_path / "trace.itf.json"
    assert main(["show", str(trace), "--itf", str(itf), "--html", str(blocker / "page.html")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("seqcheck: --html: cannot write in ")
    assert captured.err.count("\n") == 1 and not itf.exists()


def test_list_is_wrapped_on_a_terminal_and_whole_in_a_pipe(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["list"]) == 0
    whole = capsys.readouterr().out
    assert max(map(len, whole.splitlines())) > 200  # in a pipe: one line per property, for grep
    monkeypatch.setattr(terminal, "terminal_width", lambda stream: 79)
    assert main(["list"]) == 0
    wrapped = capsys.readouterr().out
    assert max(map(len, wrapped.splitlines())) <= 79
    assert " ".join(wrapped.split()) == " ".join(whole.split())  # the same words
    for factory in registry.factories():
        for name in factory.property_docs():
            assert f"\n    {name} " in wrapped


def test_fit_keeps_short_lines_and_hangs_long_ones() -> None:
    assert terminal.fit("  short", 40) == "  short" and terminal.fit("x " * 50, None) == "x " * 50
    lines = terminal.fit("    name   " + "word " * 30, 40, indent=11).splitlines()
    assert all(len(line) <= 40 for line in lines) and all(line.startswith(" " * 11) for line in lines[1:])


def test_show_is_wrapped_on_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    trace = checked_trace(tmp_path, capsys)
    monkeypatch.setattr(terminal, "terminal_width", lambda stream: 100)
    assert main(["show", str(trace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines[0]) <= 100 and lines[1].startswith("  ")  # the description, wrapped
    assert all(len(line) <= 100 for line in lines)


def test_fuzz_weights_name_only_the_worlds_kinds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = MODELS_DIR / "fuzz" / "nakack4-lockstep.toml"
    assert main(["fuzz", str(model), "--runs", "3", "--steps", "30", "--master", "none", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("schedule  ")]
    assert "weights send=4,deliver=10,duplicate=0.5,loss=1,xmit=3,reap=0.3,view=0.2;" in line
    assert "sync=" not in line and "remove=" not in line
    assert Weights().text() == "send=4,deliver=10,duplicate=0.5,loss=1,xmit=3,sync=1,reap=0.3,view=0.2,remove=0.2"


def test_a_model_outside_the_checkout_gets_short_trace_and_report_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(VIOLATING, folder / "ack.toml")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # neither the checkout nor the working directory holds the model
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), "--report",
                 str(tmp_path / "report"), str(folder / "ack.toml")]) == 0
    capsys.readouterr()
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "traces").rglob("*.json")) == \
        [Path("traces/mine/ack.json")]
    pages = [p.name for p in (tmp_path / "report" / "traces").iterdir()]
    assert pages == ["mine_ack.toml.html"]
    index = (tmp_path / "report" / "index.html").read_text()
    assert str(tmp_path) not in index and "1 model, 1 as expected, 0 not;" in index and "CPU seconds" in index
