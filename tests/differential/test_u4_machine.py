"""Hypothesis state machine on UNICAST4: the environment's actions as rules (blocked sends resumed
by their SEND timer among them), "engine == spec" and the spec's safety properties as invariants
(``lockstep_machine.WorldAgreement``), under every variant (the variant dimension); the same on the
worlds with OOB sends, with batches (a rule of its own for a batch delivery) and with messages to self
(OOB and DONT_LOOPBACK among them).

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


class Unicast4Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "unicast4-lockstep.toml")


TestUnicast4Agreement = Unicast4Agreement.TestCase


class Unicast4OobAgreement(WorldAgreement):
    """The same machine on the world with OOB sends (spec decision 10)."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast4-lockstep-oob.toml")


TestUnicast4OobAgreement = Unicast4OobAgreement.TestCase


class Unicast4BatchAgreement(WorldAgreement):
    """The same machine on the world with batches (spec decision 11), with a rule of its own for them."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast4-lockstep-batch.toml")

    @precondition(lambda self: bool(self._enabled(DeliverBatch)))
    @rule(choice=CHOICE)
    def network_delivers_a_batch(self, choice: int) -> None:
        self._take(DeliverBatch, choice)


TestUnicast4BatchAgreement = Unicast4BatchAgreement.TestCase


class Unicast4SelfAgreement(WorldAgreement):
    """The same machine on the world with messages to self, some OOB, some DONT_LOOPBACK (spec
    decisions 12 and 13)."""

    MODEL = load(MODELS_DIR / "fuzz" / "unicast4-lockstep-self.toml")


TestUnicast4SelfAgreement = Unicast4SelfAgreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_u4_lockstep import purge_not_forced

    from impl.unicast4 import receive

    monkeypatch.setattr(receive, "on_ack", purge_not_forced)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast4Agreement, settings=settings(max_examples=200, derandomize=True,
                                                                         phases=[Phase.generate]))
