"""Hypothesis state machine on UNICAST2: the environment's actions as rules, "engine == spec" and
the safety properties the fuzz model checks as invariants (``lockstep_machine.WorldAgreement``).

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


class Unicast2Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "unicast2-lockstep.toml")


TestUnicast2Agreement = Unicast2Agreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_u2_lockstep import no_ack_for_a_duplicate_first

    from impl.unicast2 import receive

    monkeypatch.setattr(receive, "on_data", no_ack_for_a_duplicate_first)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast2Agreement, settings=settings(max_examples=200, derandomize=True,
                                                                         phases=[Phase.generate]))
