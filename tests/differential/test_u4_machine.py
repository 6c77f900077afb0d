"""Hypothesis state machine on UNICAST4: the environment's actions as rules (blocked sends resumed
by their SEND timer among them), "engine == spec" and the spec's safety properties as invariants
(``lockstep_machine.WorldAgreement``), under every variant (the variant dimension).

Default profile: 60 runs of up to 80 steps; ``pytest --hypothesis-profile=long`` runs 5,000 of up
to 400.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR
from models.modelfile import load


class Unicast4Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "unicast4-lockstep.toml")


TestUnicast4Agreement = Unicast4Agreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_u4_lockstep import purge_not_forced

    from impl.unicast4 import receive

    monkeypatch.setattr(receive, "on_ack", purge_not_forced)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast4Agreement, settings=settings(max_examples=200, derandomize=True,
                                                                         phases=[Phase.generate]))
