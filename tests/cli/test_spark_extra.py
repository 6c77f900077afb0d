"""Spark is an extra (``checks/extras.py``): ``pip install -e .`` does not pull pyspark, the test
extra does, and every command that would start Spark without it says in one line which extra to
install (exit 2), while what runs without Spark (``--master none``, ``fuzz --master auto``) still runs.
The commands here are run with pyspark made unimportable (``sys.modules["pyspark"] = None``)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main
from checks.extras import has_spark
from checks.fuzz.inprocess import IN_PROCESS_STEPS, chosen_master

ROOT = MODELS_DIR.parent
FUZZ_MODEL = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
SMALL = MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml"


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in sys.modules if n == "pyspark" or n.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark now raises ImportError
    assert not has_spark()


def one_line_naming_the_extra(err: str) -> str:
    line = err.strip()
    assert "\n" not in line, line
    assert "pip install 'seqcheck[spark]'" in line and "needs Spark, which is not installed" in line
    return line


def test_the_project_installs_without_spark_and_tests_with_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("pyspark") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("pyspark") for d in extras["spark"])
    assert "seqcheck[spark]" in extras["test"]


def test_ci_installs_as_the_readme_says() -> None:
    readme = (ROOT / "README.md").read_text()
    command = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest -n auto"
    assert f"```sh\n{command}\n```" in readme
    assert command in (ROOT / ".ci" / "run").read_text()


def test_fuzz_on_a_spark_master_names_the_extra(no_spark: None, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", str(FUZZ_MODEL), "--runs", "2", "--master", "local[1]", "--out", str(tmp_path / "out")])
    assert code == 2
    line = one_line_naming_the_extra(capsys.readouterr().err)
    assert line.startswith("seqcheck: --master local[1] needs Spark") and "--master none" in line


def test_fuzz_auto_runs_in_process_without_spark(no_spark: None) -> None:
    master, why = chosen_master("auto", IN_PROCESS_STEPS, 2)
    assert master == "none" and "Spark is not installed: pip install 'seqcheck[spark]'" in why


def test_fuzz_without_spark_still_runs_in_process(no_spark: None, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(FUZZ_MODEL), "--runs", "3", "--steps", "20", "--master", "none",
                 "--out", str(tmp_path / "out")]) == 0
    assert "seeds 0..2" in capsys.readouterr().out


def test_swarm_and_bench_name_the_extra(no_spark: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--swarm", "--trace-dir", str(tmp_path), str(SMALL)]) == 2
    line = one_line_naming_the_extra(capsys.readouterr().err)
    assert "--swarm --master local[*] needs Spark" in line
    assert main(["bench", "--fuzz", "--runs", "1"]) == 2
    assert "--no-spark" in one_line_naming_the_extra(capsys.readouterr().err)
