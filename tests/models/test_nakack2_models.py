"""The shipped NAKACK2 models: every modelled defect of the digest sits beside a twin with the same
world (members, sends, faults, views, joins, stops, settings) that differs in the variant flag alone;
the flagged model expects a violation and the twin passes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from checks.cli import MODELS_DIR
from models.modelfile import load
from models.multicast_world import MulticastWorld
from models.protocols.nakack2 import NAKACK2

FOLDER = MODELS_DIR / "nakack2"
# jgrp2675-window-grows is jgrp2675 with a third multicast (the window's growth); its fix is shown by
# jgrp2675-fixed with two: a three-multicast twin would cost the default run as much again (16 s).
NO_TWIN_OF_ITS_OWN = {"jgrp2675-window-grows"}


@pytest.mark.parametrize("jira", ["JGRP-2675", "JGRP-1539", "JGRP-2678"])
def test_each_modelled_defect_has_a_twin_that_passes(jira: str) -> None:
    flag = NAKACK2.variant_aliases[jira]
    models = [load(path) for path in sorted(FOLDER.glob("*.toml"))]
    flagged = [m for m in models if m.variant == (flag,)]
    assert flagged, f"no model of {jira}"
    for model in flagged:
        assert model.expect.startswith("violation:"), model.path
        if model.path.stem in NO_TWIN_OF_ITS_OWN:
            continue
        world = model.world
        assert isinstance(world, MulticastWorld)
        twins = [t for t in models if t.variant == () and isinstance(t.world, MulticastWorld)
                 and t.world.n == world.n and t.world.cfg == replace(world.cfg, variant=t.world.cfg.variant)
                 and _same_world(t.world, world)]
        assert twins and all(t.expect == "pass" for t in twins), model.path


def _same_world(a: MulticastWorld, b: MulticastWorld) -> bool:
    """The same budgets, scripts and joins; a twin may add faults to make its witness reachable."""
    x, y = a.bounds, b.bounds
    return (x.sends, x.views, x.joins, x.stops, x.sends_after_joins) == (y.sends, y.views, y.joins, y.stops,
                                                                          y.sends_after_joins)
