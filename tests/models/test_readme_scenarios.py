"""The UNICAST2 scenario table (docs/unicast2.md) cannot rot: every row names a model file that exists, states
that file's expected verdict and the length of the counterexample the checker finds now, and the
UNICAST3 verdict its side-by-side model expects; every UNICAST2 model has a row. (The time column is
not checked: it depends on the machine.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest
from doc_sections import doc_section

from checks.check import check_model
from checks.cli import MODELS_DIR
from models.modelfile import load

SECTION = "## UNICAST2 scenarios"
HEADER = ["scenario", "what happens", "model", "expected", "trace", "s", "UNICAST3 (side by side)"]
U3_CELL = re.compile(r"^(pass|violation:\w+) \(`(side-by-side/[\w.-]+)`\)$")


class Row(NamedTuple):
    scenario: str
    text: str
    model: str
    expected: str
    trace: str
    seconds: str
    unicast3: str

    @property
    def path(self) -> Path:
        return MODELS_DIR / f"{self.model.strip('`')}.toml"


def table_rows() -> list[Row]:
    """The rows of the first table in the docs' UNICAST2 section."""
    _, section = doc_section(SECTION)
    lines = [line for line in section.splitlines() if line.startswith("|")]
    assert lines, "the section has no table"
    cells = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    assert cells[0] == HEADER, cells[0]
    assert set("".join(cells[1])) <= {"-", " "}, "the second line is not the header rule"
    rows = []
    for row in cells[2:]:
        assert len(row) == len(HEADER), row
        rows.append(Row(*row))
    return rows


ROWS = table_rows()


def test_the_table_has_a_row_for_every_unicast2_model() -> None:
    listed = {row.path.resolve() for row in ROWS}
    shipped = {p.resolve() for p in (MODELS_DIR / "unicast2").glob("*.toml")}
    assert shipped - listed == set(), "UNICAST2 models missing from the table of docs/unicast2.md"
    assert len(ROWS) == len({row.model for row in ROWS}), "a model is listed twice"


def test_the_table_covers_every_seed_scenario() -> None:
    named = {row.scenario for row in ROWS}
    for number in range(1, 10):
        assert any(re.search(rf"#{number}\b", name) for name in named), number
    assert "Motivation" in named


@pytest.mark.parametrize("row", ROWS, ids=[row.model.strip("`") for row in ROWS])
def test_row_matches_its_model_and_the_checker(row: Row) -> None:
    assert row.path.is_file(), f"{row.model}: no such model file"
    model = load(row.path)
    assert row.expected == model.expect
    outcome = check_model(model, trace_dir=None)
    assert outcome.matches, outcome.mismatch_reason
    length = str(len(outcome.trace.actions)) if outcome.trace else "-"
    assert row.trace == length, f"{row.model}: the table says {row.trace}, the checker finds {length}"
    assert re.fullmatch(r"\d+\.\d", row.seconds), row.seconds


@pytest.mark.parametrize("row", ROWS, ids=[row.model.strip("`") for row in ROWS])
def test_unicast3_column_names_a_side_by_side_model_and_its_verdict(row: Row) -> None:
    found = U3_CELL.match(row.unicast3)
    assert found, f"{row.unicast3!r}: expected 'pass (`side-by-side/<name>`)' or 'violation:<p> (...)'"
    verdict, name = found.groups()
    path = MODELS_DIR / f"{name}.toml"
    assert path.is_file(), f"{name}: no such side-by-side model"
    unicast3 = load(path, protocol="unicast3")
    assert unicast3.side_by_side and "unicast2" in unicast3.protocols
    assert verdict == unicast3.expect
