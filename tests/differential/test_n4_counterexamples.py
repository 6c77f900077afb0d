"""Every NAKACK4 variant's counterexample (and every finding's), found by the checker on the
shipped model, replays on the production engines in lockstep (``seqcheck replay``'s first stage,
``checks/conform/differential.replay_on_engines``): the engines take each step exactly as the spec
(datagrams byte for byte, deliveries, abstract state), so they end in the spec's violating state:
the engine with the flag has the defect the model shows, and nothing else.

Invariant tested: for each violation model of models/nakack4, the checker's shortest
counterexample is replayed action by action, no step diverges, and every engine ends in its spec
member's state at the counterexample's end (the trace is the checker's own, made in the test: no
generated file is read).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR
from checks.conform.differential import replay_on_engines
from impl.nakack4 import Nakack4Engine
from models.modelfile import load

FOLDER = MODELS_DIR / "nakack4"
VIOLATIONS = sorted(p.stem for p in FOLDER.glob("*.toml") if load(p).expect.startswith("violation:"))


@pytest.mark.parametrize("stem", VIOLATIONS)
def test_counterexample_replays_on_the_engines(stem: str, tmp_path: Path) -> None:
    model = load(FOLDER / f"{stem}.toml")
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.matches and outcome.trace is not None, outcome.mismatch_reason
    run, divergence = replay_on_engines(model.path, outcome.trace)
    assert divergence is None, str(divergence)
    assert len(run.path) == len(outcome.trace.actions)
    assert all(isinstance(engine, Nakack4Engine) for engine in run.engines.engines)
    for member in range(run.world.n):  # the engines' final states are the spec's violating ones
        assert run.engines.view(member) == run.shared.spec_view(run.engines, run.state, member)  # type: ignore[union-attr]
