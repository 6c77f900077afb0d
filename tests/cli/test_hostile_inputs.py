"""Careless and hostile input to the command line (issue 18, item 9, in part): each is one line on
stderr and exit code 2 (or, for a reader that went away, a quiet exit), never a traceback or a hang,
and an output folder is checked before any search runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR, main

MODEL = MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"


def one_line_error(capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> None:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("seqcheck: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err


PYTHON_WORDS = ("recursion", "sys.set_int_max_str_digits", "unicode string", "nested too deeply", "Exceeds the limit")
NESTED = "expected arrays and tables nested at most 64 deep"
DIGITS = "expected an integer of at most 4,300 digits, got 5,000"


def in_our_words(capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> None:
    """One line naming the file and the field, in the project's words (issue 28, item 7)."""
    err = capsys.readouterr().err
    assert not any(words in err for words in PYTHON_WORDS), err
    one_line_error_text(err, code, *needles)


def one_line_error_text(err: str, code: int, *needles: str) -> None:
    assert code == 2, err
    assert err.startswith("seqcheck: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("deep.toml", "a = " + "[" * 1000 + "]" * 1000, f"deep.toml: line 1 (key a): {NESTED}"),
    ("deeper.toml", "x = 1\n[t]\nb = [1, {c = " + "[" * 5000 + "]" * 5000 + "}]", f"line 3 (key b): {NESTED}"),
    ("nested.toml", "[t]\nb = " + "[" * 70 + "]" * 70, f"nested.toml: t.b[0][0][...]: {NESTED}"),
    ("huge-int.toml", "a = " + "9" * 5000, f"huge-int.toml: line 1 (key a): {DIGITS}"),
    ("huge-int2.toml", "[s]\n# 1111\nq = 'x'\nn = [1, " + "9" * 5000 + "]", f"line 4 (key n): {DIGITS}"),
    ("big.toml", "# " + "x" * (1 << 20), "larger than"),
])
def test_a_hostile_model_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                          text: str, needle: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    in_our_words(capsys, main(["check", "--no-progress", str(path)]), str(path), needle)


def test_a_fifo_named_like_a_model_is_refused_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "x.toml")  # reading it would wait for a writer forever
    one_line_error(capsys, main(["check", "--no-progress", str(tmp_path)]), "not a regular file")


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("deep.json", "[" * 100_000 + "]" * 100_000, f"deep.json: [0][0][...]: {NESTED}"),
    ("deep-step.json", '{"steps": [{"action": {}}, {"action": {"peer": ' + "[" * 5000 + "]" * 5000 + "}}]}",
     f"steps[1].action.peer[0][0][...]: {NESTED}"),
    ("nested.json", '{"steps": [{"action": {"peer": ' + "[" * 70 + "]" * 70 + "}}]}",
     f"nested.json: steps[0].action.peer[0][0][...]: {NESTED}"),
    ("huge-int.json", '{"format": ' + "9" * 5000 + "}", f"huge-int.json: format: {DIGITS}"),
    ("huge-int2.json", '{"s": "9999", "steps": [{"action": {"n": [1, ' + "9" * 5000 + "]}}]}",
     f"steps[0].action.n[1]: {DIGITS}"),
])
@pytest.mark.parametrize("command", ["show", "replay"])
def test_a_hostile_trace_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                          text: str, needle: str, command: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    in_our_words(capsys, main([command, str(path)]), str(path), needle)


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
    listing = cpu_limit.run([sys.executable, "-m", "checks.cli", "list"], stdout=write_end, stderr=subprocess.PIPE,
                            text=True, cpu_seconds=60)
    os.close(write_end)
    assert listing.returncode == 141
    assert "Traceback" not in listing.stderr and "BrokenPipeError" not in listing.stderr, listing.stderr
