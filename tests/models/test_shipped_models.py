"""Every shipped model reaches its expected verdict, and every counterexample validates and is
shortest (the checker explores breadth-first; validation re-checks that no earlier state violates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.cli import model_paths
from checks.run import check_model
from checks.trace import Trace, validate
from models.modelfile import load

SHIPPED = model_paths([])


def test_there_are_shipped_models_for_every_variant() -> None:
    names = {p.stem for p in SHIPPED}
    for jira in ("jgrp1873", "jgrp1548", "jgrp1586", "jgrp1578", "jgrp1874"):
        assert any(n.startswith(jira) and n.endswith("fixed") for n in names), jira
        assert any(n.startswith(jira) and not n.endswith("fixed") for n in names), jira


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_model_matches_its_expectation(path: Path, tmp_path: Path) -> None:
    model = load(path)
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.matches, outcome.mismatch_reason
    if model.expect == "pass":
        assert outcome.result.stats.complete and outcome.trace is None
        return
    assert outcome.trace_path is not None
    trace = Trace.load(outcome.trace_path)
    assert trace == outcome.trace
    assert len(validate(load(path).world, trace)) == len(trace.actions)
