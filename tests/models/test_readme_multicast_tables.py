"""The NAKACK2 and NAKACK4 tables of the docs (docs/nakack2.md, docs/nakack4.md) cannot rot:
every NAKACK2 row names a model file that exists, states its expected verdict and (for the models of
the default run) the number of states the checker explores now; every shipped NAKACK2 model has a
row; every NAKACK4 row names models that exist, with the verdict they expect and the length of the
counterexample the checker finds. (Time columns are not checked: they depend on the machine.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_sections import doc_section

from checks.check import check_model
from checks.cli import MODELS_DIR
from models.modelfile import load


def tables(section: str) -> list[list[dict[str, str]]]:
    """The tables of the docs' section headed ``section``, as rows of header -> cell."""
    _, body = doc_section(section)
    found: list[list[dict[str, str]]] = []
    current: list[list[str]] = []
    for line in [*body.splitlines(), ""]:
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            header, rule, *rows = current
            assert set("".join(rule)) <= {"-", " "}, rule
            found.append([dict(zip(header, row, strict=True)) for row in rows])
            current = []
    return found


def model_paths(cell: str) -> list[Path]:
    """The model files a cell names (`name` in models/nakack2, or `folder/name`)."""
    names = re.findall(r"`([\w./-]+)`", cell)
    return [MODELS_DIR / f"{name if '/' in name else 'nakack2/' + name}.toml" for name in names]


NAKACK2_ROWS = [row for table in tables("## NAKACK2 models") for row in table]


def test_every_nakack2_model_has_a_row() -> None:
    listed = {p.resolve() for row in NAKACK2_ROWS for p in model_paths(row["model"])}
    shipped = {p.resolve() for p in (MODELS_DIR / "nakack2").glob("*.toml")}
    assert shipped - listed == set(), "NAKACK2 models missing from the tables of docs/nakack2.md"


@pytest.mark.parametrize("row", NAKACK2_ROWS, ids=[row["model"].strip("`") for row in NAKACK2_ROWS])
def test_nakack2_row_matches_its_model_and_the_checker(row: dict[str, str]) -> None:
    (path,) = model_paths(row["model"])
    assert path.is_file(), f"{row['model']}: no such model file"
    model = load(path)
    assert row["expected"].split(" ")[0] == model.expect, (row["expected"], model.expect)
    if path.parent.name != "nakack2":
        return  # models/bench: out of the default run, its figures are the closing note's
    states = model.pinned_states  # the model file's [check] states, which the checker's run of it checks
    if states is None:
        outcome = check_model(model, trace_dir=None)
        assert outcome.matches, outcome.mismatch_reason
        states = outcome.result.stats.distinct
    assert row["states"] == f"{states:,}", (row["model"], states)


NAKACK4_ROWS = [row for table in tables("## NAKACK4 models") for row in table]


@pytest.mark.parametrize("row", NAKACK4_ROWS, ids=[row["model"] for row in NAKACK4_ROWS])
def test_nakack4_row_matches_its_models_and_the_checker(row: dict[str, str]) -> None:
    names = re.findall(r"`([\w-]+)`", row["model"])
    verdicts = [v.strip() for v in row["verdict"].split("/")]
    steps = [s.strip() for s in row["steps"].split("/")]
    assert len(names) == len(verdicts) == len(steps), row
    for name, verdict, length in zip(names, verdicts, steps):
        model = load(MODELS_DIR / "nakack4" / f"{name}.toml")
        assert model.expect == f"violation:{verdict}", (name, model.expect)
        outcome = check_model(model, trace_dir=None)
        assert outcome.matches and outcome.trace is not None, outcome.mismatch_reason
        assert str(len(outcome.trace.actions)) == length, (name, len(outcome.trace.actions))
