"""Hypothesis state machine on NAKACK4: the multicast world's actions as rules (multicasts, copies
and ACKs delivered, lost, duplicated and dropped below the protocol, timers including a blocked
sender's SEND, views, a join, a leave), "engine == spec" and the spec's safety properties as
invariants (``lockstep_machine.WorldAgreement`` on ``models/fuzz/nakack4-lockstep.toml``: three
founders and a joiner, windows of capacity 2; and on its OOB twin
``nakack4-lockstep-oob.toml``). NAKACK4 adds no world action type: a blocked
sender's release and the delivery fault are timers (``FireTimer``), which the machine has.

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


class Nakack4Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "nakack4-lockstep.toml")


TestNakack4Agreement = Nakack4Agreement.TestCase


class Nakack4BatchAgreement(WorldAgreement):
    """The same machine on the world with batches (spec decision 17), with a rule of its own for them."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack4-lockstep-batch.toml")

    @precondition(lambda self: bool(self._enabled(DeliverBatch)))
    @rule(choice=CHOICE)
    def network_delivers_a_batch(self, choice: int) -> None:
        self._take(DeliverBatch, choice)


TestNakack4BatchAgreement = Nakack4BatchAgreement.TestCase


class Nakack4OobAgreement(WorldAgreement):
    """The same world with some multicasts OOB ([oob]: the placeholder, the delivery on add, its ACK)."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack4-lockstep-oob.toml")


TestNakack4OobAgreement = Nakack4OobAgreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_n4_lockstep import resend_after_an_application_send

    from impl.nakack4 import tasks

    monkeypatch.setattr(tasks, "retransmit", resend_after_an_application_send)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Nakack4Agreement, settings=settings(max_examples=300, derandomize=True,
                                                                        phases=[Phase.generate]))
