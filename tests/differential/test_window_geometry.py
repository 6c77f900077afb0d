"""Lockstep under tiny window geometry (checks/conform/geometry.py; issue 19, item 5).

Invariants tested: under rows of 1 to 4 slots, one initial row and the smallest retransmit scans
the spec cannot tell apart, the UNICAST2, UNICAST3 and NAKACK2 engines agree with their specs on
every seeded random walk of the fuzz models, and their windows really crossed row boundaries; a scan limit the
spec can tell apart, or a row of 0 slots, is refused with a one-line error; and an off-by-one
planted at a row's last slot in ``impl.window.Table.remove_many`` (monkeypatched) is caught by the
lockstep under tiny geometry and by nothing under the production geometry.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR, main
from checks.conform.differential import EngineFactory, Lockstep, random_walk
from checks.conform.engines import engines_for
from checks.conform.geometry import TINY, Geometry, engines_with, one_slot_rows, two_slot_rows, window_bounds
from impl import window
from impl.window import Table
from models.modelfile import Model, load

WALKS, STEPS = 25, 250
FUZZ = {name: MODELS_DIR / "fuzz" / f"{name}-lockstep.toml" for name in ("unicast2", "unicast3", "nakack2")}


@pytest.fixture(scope="module", params=sorted(FUZZ))
def model(request: pytest.FixtureRequest) -> Model:
    return load(FUZZ[request.param])


def _first_divergence(model: Model, factory: EngineFactory, walks: int = WALKS) -> str | None:
    for seed in range(walks):
        result = random_walk(model, seed, STEPS, engines_for=factory, check_properties=False)
        if result.divergence is not None:
            return f"seed {seed}: {result.divergence}"
    return None


@pytest.mark.parametrize("geometry", TINY, ids=str)
def test_engines_agree_with_the_spec_under_tiny_geometry(model: Model, geometry: Geometry) -> None:
    assert _first_divergence(model, engines_with(geometry)) is None


def test_tiny_geometry_reaches_row_boundaries(model: Model) -> None:
    """The walks are not vacuous: the engines run with rows of one slot, and some receive window
    delivers three messages or more (it crossed row boundaries)."""
    factory, deepest = engines_with(Geometry(1)), 0
    for seed in range(5):
        run = Lockstep(model, factory, check_properties=False)
        assert all(engine.config.xmit_table_msgs_per_row == 1 for engine in run.engines.engines)
        rng = random.Random(seed)
        for _ in range(STEPS):
            enabled = run.enabled()
            if not enabled:
                break
            assert run.step(*enabled[rng.randrange(len(enabled))]) is None
            for member in range(run.world.n):
                view = run.engines.view(member)
                windows = view.recv if hasattr(view, "recv") else view.windows  # NAKACK2: a window per sender
                deepest = max([deepest, *(window.delivered for _, window in windows)])
    assert deepest >= 3


def test_a_scan_the_spec_can_tell_apart_is_refused(model: Model) -> None:
    with pytest.raises(ValueError, match=r"^geometry scan: expected >= [46] \(the model's most messages per window; "
                                         r".* got 2$"):
        Lockstep(model, engines_with(Geometry(2, scan=2)))
    with pytest.raises(ValueError, match=r"^geometry msgs_per_row: expected >= 1, got 0$"):
        Geometry(0)
    assert Lockstep(model, engines_with(Geometry(2, scan=7))).engines.engines  # wider is fine
    with pytest.raises(ValueError, match=r"^geometry: the engine's test_window_geometry\.Config has no window rows \("):
        Geometry(1).apply(type("Config", (), {})(), (6, 9))


def test_window_bounds_come_from_the_models_sends() -> None:
    """Per window: the most messages of one pair (one sender, multicast); per member: all its windows."""
    assert window_bounds(load(FUZZ["unicast3"]).world) == (6, 9)  # B gets 6 from A and 3 from C
    assert window_bounds(load(FUZZ["nakack2"]).world) == (4, 11)  # a window per sender: 4 + 3 + 2 + 2
    assert Geometry(1).scan_for(load(FUZZ["unicast2"]).world) == (6, 9)
    assert Geometry(1, scan=7).scan_for(load(FUZZ["unicast2"]).world) == (7, 9)


# -- a Table defect at a row boundary --------------------------------------------------------------
ORIGINAL_REMOVE_MANY = Table.remove_many


def remove_many_short_of_the_row_end(self: Table[Any], max_items: int = 0) -> list[Any]:
    """``remove_many`` that never takes a row's last slot (``stop`` capped at width - 1): the
    message there, and everything after it, is never delivered."""
    out: list[Any] = []
    while True:
        hd, width = self.hd, self.msgs_per_row
        column = (hd - self.offset) % width  # the column of hd + 1
        if column == width - 1:
            return out  # the planted defect: the row's last slot is never taken
        wanted = width - 1 - column if max_items == 0 else min(width - 1 - column, max_items - len(out))
        if wanted <= 0:
            return out
        got = ORIGINAL_REMOVE_MANY(self, wanted)
        out += got
        if len(got) < wanted:
            return out


def test_a_row_boundary_defect_is_caught_only_under_tiny_geometry(model: Model,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window.Table, "remove_many", remove_many_short_of_the_row_end)
    found = _first_divergence(model, two_slot_rows)
    assert found is not None and ("deliveries of" in found or "state of" in found), found
    assert _first_divergence(model, engines_for) is None  # 1024-slot rows: the last slot is never reached


def _fuzz(out: Path, *more: str) -> dict[str, int]:
    assert main(["fuzz", str(FUZZ["unicast3"]), "--runs", "20", "--steps", "100", "--master", "none", "--out",
                 str(out), "--no-progress", "--no-liveness", "--shrink", "0", "--json", *more]) in (0, 1)
    summary = json.loads((out / "summary.json").read_text())
    verdicts: dict[str, int] = summary["verdicts"]
    return verdicts


def test_fuzz_runs_the_engines_with_tiny_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(FUZZ["unicast3"]), "--engines-with", "rows-of-3", "--out", str(tmp_path)]) == 2
    assert "--engines-with: expected one of rows-of-1, rows-of-2" in capsys.readouterr().err
    monkeypatch.setattr(window.Table, "remove_many", remove_many_short_of_the_row_end)
    assert _fuzz(tmp_path / "default") == {"pass": 20}
    found = _fuzz(tmp_path / "tiny", "--engines-with", "rows-of-2")
    assert found.get("divergence", 0) > 0, found
    assert json.loads((tmp_path / "tiny" / "summary.json").read_text())["engines"] == (
        "checks.conform.geometry:two_slot_rows")


class Unicast3OneSlotRows(WorldAgreement):
    MODEL = load(FUZZ["unicast3"])

    def engine_factory(self) -> EngineFactory:
        return one_slot_rows


class Unicast2TwoSlotRows(WorldAgreement):
    MODEL = load(FUZZ["unicast2"])

    def engine_factory(self) -> EngineFactory:
        return two_slot_rows


TestUnicast3OneSlotRows = pytest.mark.long(Unicast3OneSlotRows.TestCase)
TestUnicast2TwoSlotRows = pytest.mark.long(Unicast2TwoSlotRows.TestCase)
