"""Careless and hostile input to the command line (issue 18, item 9, in part): each is one line on
stderr and exit code 2 (or, for a reader that went away, a quiet exit), never a traceback or a hang,
and an output folder is checked before any search runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main

MODEL = MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"


def one_line_error(capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> None:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("seqcheck: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("deep.toml", "a = " + "[" * 1000 + "]" * 1000, "nested too deeply"),
    ("huge-int.toml", "a = " + "9" * 5000, "4300 digits"),
    ("big.toml", "# " + "x" * (1 << 20), "larger than"),
])
def test_a_hostile_model_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                          text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    one_line_error(capsys, main(["check", "--no-progress", str(path)]), str(path), needle)


def test_a_fifo_named_like_a_model_is_refused_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "x.toml")  # reading it would wait for a writer forever
    one_line_error(capsys, main(["check", "--no-progress", str(tmp_path)]), "not a regular file")


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("deep.json", "[" * 100_000 + "]" * 100_000, "not a JSON trace file"),
    ("huge-int.json", '{"format": ' + "9" * 5000 + "}", "4300 digits"),
])
def test_a_hostile_trace_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                          text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    one_line_error(capsys, main(["show", str(path)]), str(path), needle)


def test_an_unwritable_trace_folder_is_refused_before_the_search(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(capsys, main(["check", "--no-progress", "--trace-dir", str(blocker / "traces"), str(MODEL)]),
                   "--trace-dir: cannot write in")
    assert capsys.readouterr().out == ""  # no table: nothing was searched


def test_emit_test_into_a_folder_or_nowhere_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    trace = tmp_path / "unicast3" / "jgrp1548-no-hs-resend.json"
    capsys.readouterr()
    one_line_error(capsys, main(["replay", str(trace), "--emit-test", str(tmp_path)]), "is a folder")
    blocker = tmp_path / "file"
    blocker.write_text("")
    one_line_error(capsys, main(["replay", str(trace), "--emit-test", str(blocker / "test_x.py")]),
                   "--emit-test: cannot write in")


def test_bench_with_a_missing_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_line_error(capsys, main(["bench", "--model", str(tmp_path / "none.toml")]), "no such model file")


def test_fuzz_seed_beyond_64_bits_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", str(MODEL), "--seed", str(2**63), "--runs", "1", "--out", str(tmp_path / "out")])
    one_line_error(capsys, code, "--seed")


def test_a_closed_pipe_ends_quietly() -> None:
    """Like `seqcheck list | head -1`, made deterministic: the reader has gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    listing = subprocess.run([sys.executable, "-m", "checks.cli", "list"], stdout=write_end, stderr=subprocess.PIPE,
                             text=True, timeout=60)
    os.close(write_end)
    assert listing.returncode == 141
    assert "Traceback" not in listing.stderr and "BrokenPipeError" not in listing.stderr, listing.stderr
