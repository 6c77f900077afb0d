"""``ExtraFigures`` (checks/explore/system.py): a system's own figures in its row of ``check --json``,
checked; a system whose figures are not a small dict of names -> numbers or short strings is a
one-line error naming the file, the protocol and the system, before the search."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest

from checks.check import check_model
from checks.cli import main
from checks.explore.system import ContractError, extra_figures
from models.modelfile import ModelError, load

MODEL = Path(__file__).resolve().parents[2] / "models" / "unicast3" / "jgrp1548-fixed.toml"


class Figures:
    name = "figured"

    def __init__(self, figures: Any) -> None:
        self.figures = figures

    def extra_figures(self) -> Any:
        return self.figures


def test_the_shipped_worlds_give_their_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--json", "--no-progress", "--trace-dir", str(tmp_path), str(MODEL)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert set(row["extra"]) == {"node_states", "networks", "environments", "histories"}
    assert all(isinstance(v, int) and v > 0 for v in row["extra"].values())


def test_a_system_without_figures_has_none() -> None:
    assert extra_figures(object()) == {}


def test_good_figures_are_kept() -> None:
    good = {"a": 1, "b": 2.5, "c": "text", "d": -3}
    assert extra_figures(Figures(good)) == good


@pytest.mark.parametrize(("figures", "what"), [
    ([("a", 1)], "got list"),
    ({"a": True}, "got 'a': 'True' (bool)"),
    ({"a": math.inf}, "got 'a': 'inf' (float)"),
    ({"a": [1]}, "got 'a': '[1]' (list)"),
    ({"a": None}, "got 'a': 'None' (NoneType)"),
    ({"a": "x" * 201}, "(str)"),
    ({"": 1}, "got the name ''"),
    ({3: 1}, "got the name '3'"),
    ({f"f{i}": i for i in range(65)}, "got 65 figures"),
])
def test_bad_figures_are_one_line_naming_the_system(figures: Any, what: str) -> None:
    with pytest.raises(ContractError) as error:
        extra_figures(Figures(figures))
    message = str(error.value)
    assert message.startswith("system 'figured': extra_figures(): expected a dict of at most 64 names")
    assert what in message and "\n" not in message


def test_a_bad_figure_stops_the_check_before_its_search() -> None:
    model = load(MODEL)
    world = model.world
    world.extra_figures = lambda: {"node_states": [1, 2]}
    calls: list[int] = []
    init_states = world.init_states

    def counted() -> Any:
        calls.append(1)
        return init_states()

    world.init_states = counted
    with pytest.raises(ModelError, match=f"^{MODEL}: protocol unicast3: system '[^']+': extra_figures\\(\\)"):
        check_model(dataclasses.replace(model, world=world), trace_dir=None)
    assert calls == []
