"""Hypothesis state machine on UNICAST3: the environment's actions as rules, "engine == spec" and
the spec's safety properties as invariants (``lockstep_machine.WorldAgreement``).

Default profile: 60 runs of up to 80 steps; ``pytest --hypothesis-profile=long`` runs 5,000 of up
to 400.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import precondition, rule, run_state_machine_as_test
from lockstep_machine import CHOICE, WorldAgreement

from checks.cli import MODELS_DIR
from models.modelfile import load
from models.world import DeliverBatch


class Unicast3Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "unicast3-lockstep.toml")


TestUnicast3Agreement = Unicast3Agreement.TestCase


class Unicast3OobAgreement(WorldAgreement):
    """The same machine on the world with OOB sends on every pair (spec decision 12)."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast3-lockstep-oob.toml")


TestUnicast3OobAgreement = Unicast3OobAgreement.TestCase


class Unicast3BatchAgreement(WorldAgreement):
    """The same machine on the world with batches (spec decision 25), with a rule of its own for them."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast3-lockstep-batch.toml")

    @precondition(lambda self: bool(self._enabled(DeliverBatch)))
    @rule(choice=CHOICE)
    def network_delivers_a_batch(self, choice: int) -> None:
        self._take(DeliverBatch, choice)


TestUnicast3BatchAgreement = Unicast3BatchAgreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_u3_lockstep import purge_one_past_the_ack

    from impl.unicast3 import receive

    monkeypatch.setattr(receive, "on_ack", purge_one_past_the_ack)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast3Agreement, settings=settings(max_examples=200, derandomize=True,
                                                                         phases=[Phase.generate]))


class Unicast3SelfAgreement(WorldAgreement):
    """The same machine on the world where members send themselves messages (spec decision 26)."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast3-lockstep-self.toml")


TestUnicast3SelfAgreement = Unicast3SelfAgreement.TestCase
