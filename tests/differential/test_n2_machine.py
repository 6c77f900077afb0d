"""Hypothesis state machine on NAKACK2: the multicast world's actions as rules (multicasts, copies
delivered, lost, duplicated and dropped below the protocol, timers, views, a join, a leave),
"engine == spec" and the spec's safety properties as invariants (``lockstep_machine.WorldAgreement``
on ``models/fuzz/nakack2-lockstep.toml``: three founders and a joiner; and on its DONT_LOOPBACK twin
``nakack2-lockstep-dont-loopback.toml``, its mix, ``nakack2-lockstep-dont-loopback-mixed.toml``, and the
OOB world ``nakack2-lockstep-oob.toml``).

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


class Nakack2Agreement(WorldAgreement):
    MODEL = load(MODELS_DIR / "fuzz" / "nakack2-lockstep.toml")


TestNakack2Agreement = Nakack2Agreement.TestCase


class Nakack2DontLoopbackAgreement(WorldAgreement):
    """The same world with every multicast DONT_LOOPBACK (spec decision 15)."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack2-lockstep-dont-loopback.toml")


TestNakack2DontLoopbackAgreement = Nakack2DontLoopbackAgreement.TestCase


class Nakack2MixedDontLoopbackAgreement(WorldAgreement):
    """The same world with some multicasts DONT_LOOPBACK ([dont_loopback]: the removal filter)."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack2-lockstep-dont-loopback-mixed.toml")


TestNakack2MixedDontLoopbackAgreement = Nakack2MixedDontLoopbackAgreement.TestCase


class Nakack2BatchAgreement(WorldAgreement):
    """The same machine on the world with batches (spec decision 16), with a rule of its own for them."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack2-lockstep-batch.toml")

    @precondition(lambda self: bool(self._enabled(DeliverBatch)))
    @rule(choice=CHOICE)
    def network_delivers_a_batch(self, choice: int) -> None:
        self._take(DeliverBatch, choice)


TestNakack2BatchAgreement = Nakack2BatchAgreement.TestCase


class Nakack2OobAgreement(WorldAgreement):
    """The same world with some multicasts OOB ([oob]: the placeholder, the delivery on add; decision 17)."""

    MODEL = load(MODELS_DIR / "fuzz" / "nakack2-lockstep-oob.toml")


TestNakack2OobAgreement = Nakack2OobAgreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_n2_lockstep import resend_after_an_application_send

    from impl.nakack2 import tasks

    monkeypatch.setattr(tasks, "resend_last_seqno", resend_after_an_application_send)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Nakack2Agreement, settings=settings(max_examples=300, derandomize=True,
                                                                        phases=[Phase.generate]))
