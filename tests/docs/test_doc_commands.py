"""Every ``seqcheck`` command in a fenced shell block of README.md and docs/*.md runs, with the exit
status its page documents (``# exit N`` after the command; 0 when it says nothing).

The commands run in process (``checks.cli.main``), in page order (README.md first, so a trace one page
writes is there for the next page's ``show``), in a temporary directory that holds the files the pages
ask the reader to write (a fenced block after ``<!-- file: NAME -->``) and links to the checkout's
``models/`` and ``docs/``: every trace and output they write goes there, and nothing is read from the checkout's
``./traces`` or fuzz folders. Blocks after ``<!-- slow -->`` (the main job, fuzzing thousands of runs,
mutation, JGroups) run only under ``-m slow``, one test per block; the default run costs about 6 s of
CPU. The example plug-in of docs/architecture.md is known as ``pip install`` makes it known (its
factory registered for the test: tests/plugin installs it with pip and finds its entry point)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from doc_links import ROOT, Command, blocks, doc_pages

from checks.cli import main
from checks.jgroups.locate import JGroupsUnavailable, release
from models import registry


def every_block() -> tuple[list[Command], list[tuple[str, str]]]:
    commands, files = [], []
    for page in doc_pages():
        found, wanted = blocks(page)
        commands += found
        files += [(f.name, f.text) for f in wanted]
    return commands, files


COMMANDS, FILES = every_block()


def run(command: Command) -> int:
    try:
        return main(list(command.argv))
    except SystemExit as done:  # --help
        return done.code if isinstance(done.code, int) else 2


def run_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            selected: list[Command]) -> None:
    (tmp_path / "models").symlink_to(ROOT / "models", target_is_directory=True)
    (tmp_path / "docs").symlink_to(ROOT / "docs", target_is_directory=True)
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "examples" / "arq_plugin"))
    monkeypatch.setitem(registry.PROTOCOLS.loaded, "arq", importlib.import_module("seqcheck_arq").FACTORY)
    names = [name for name, _ in FILES]
    assert len(names) == len(set(names)), f"two pages write a file of one name: {names}"
    for name, text in FILES:
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    failures = []
    for command in selected:
        status = run(command)
        out = capsys.readouterr()
        if status != command.exit:
            tail = "\n".join((out.err or out.out).strip().splitlines()[-3:])
            failures.append(f"{command.page}:{command.line}: seqcheck {' '.join(command.argv)}: exit {status}, "
                            f"the page says {command.exit}\n{tail}")
    assert failures == [], "\n".join(failures)


def test_the_pages_show_commands_to_run() -> None:
    """The extraction finds the README's worked example and the tutorial (a test that ran nothing
    would pass)."""
    cheap = [" ".join(c.argv) for c in COMMANDS if not c.slow]
    assert "check models/unicast3/jgrp1873-no-timestamps.toml" in cheap
    assert "show traces/unicast3/jgrp1873-no-timestamps.json" in cheap
    assert "replay traces/unicast3/jgrp1873-no-timestamps.json" in cheap
    assert "show traces/docs/examples/arq_plugin/model-files/arq-modulus-window.json" in cheap  # the plug-in
    assert sum(c.page == "docs/tutorial.md" for c in COMMANDS) >= 7
    assert {c.exit for c in COMMANDS} == {0, 1}
    assert {"first.toml", "three.toml"} <= {name for name, _ in FILES}


def test_the_cheap_commands_exit_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    run_all(tmp_path, monkeypatch, capsys, [c for c in COMMANDS if not c.slow])


SLOW_BLOCKS = sorted({c.block for c in COMMANDS if c.slow})


@pytest.mark.slow
@pytest.mark.parametrize("block", SLOW_BLOCKS)
def test_a_slow_block_exits_as_documented(block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """One ``<!-- slow -->`` block, after the cheap commands (whose traces it may read)."""
    selected = [c for c in COMMANDS if c.block == block]
    for command in selected:
        if "--jgroups" in command.argv:
            try:
                release(command.argv[command.argv.index("--jgroups") + 1])
            except JGroupsUnavailable as error:
                reason = f"{command.page}:{command.line}: {error}"
                if os.environ.get("SEQCHECK_REQUIRE_JGROUPS") == "1":  # as tests/jgroups: CI never skips
                    pytest.fail(f"SEQCHECK_REQUIRE_JGROUPS=1 but {reason}")
                pytest.skip(reason)
    run_all(tmp_path, monkeypatch, capsys, [c for c in COMMANDS if not c.slow] + selected)
