"""Hypothesis state machine: the environment's actions as rules, "engine == spec" and the spec's
safety properties as invariants (checks/differential.Lockstep does the comparing).

Each rule picks one enabled world action of its kind (Hypothesis shrinks the choice index), so a
failure prints as a short program of named environment actions. Default profile: 60 runs of up
to 80 steps; ``pytest --hypothesis-profile=long`` runs 5,000 of up to 400.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from checks.cli import MODELS_DIR
from checks.differential import Divergence, Lockstep
from models.modelfile import load
from models.world import AppSend, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, RemoveReceiver

MODEL = load(MODELS_DIR / "fuzz" / "unicast3-lockstep.toml")
CHOICE = st.integers(min_value=0, max_value=1_000)


class Unicast3Agreement(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.run = Lockstep(MODEL)
        self.divergence: Divergence | None = None

    def _enabled(self, kind: type) -> list[tuple[Any, Any]]:
        return [(a, s) for a, s in self.run.enabled() if isinstance(a, kind)]

    def _take(self, kind: type, choice: int) -> None:
        options = self._enabled(kind)
        action, after = options[choice % len(options)]
        self.divergence = self.run.step(action, after)

    @precondition(lambda self: bool(self._enabled(AppSend)))
    @rule(choice=CHOICE)
    def application_sends(self, choice: int) -> None:
        self._take(AppSend, choice)

    @precondition(lambda self: bool(self._enabled(DeliverPacket)))
    @rule(choice=CHOICE)
    def network_delivers(self, choice: int) -> None:
        self._take(DeliverPacket, choice)

    @precondition(lambda self: bool(self._enabled(LosePacket)))
    @rule(choice=CHOICE)
    def network_loses(self, choice: int) -> None:
        self._take(LosePacket, choice)

    @precondition(lambda self: bool(self._enabled(DuplicatePacket)))
    @rule(choice=CHOICE)
    def network_duplicates(self, choice: int) -> None:
        self._take(DuplicatePacket, choice)

    @precondition(lambda self: bool(self._enabled(FireTimer)))
    @rule(choice=CHOICE)
    def timer_fires(self, choice: int) -> None:
        self._take(FireTimer, choice)

    @precondition(lambda self: bool(self._enabled(InstallView)))
    @rule(choice=CHOICE)
    def view_installed(self, choice: int) -> None:
        self._take(InstallView, choice)

    @precondition(lambda self: bool(self._enabled(RemoveReceiver)))
    @rule(choice=CHOICE)
    def receiver_removed(self, choice: int) -> None:
        self._take(RemoveReceiver, choice)

    @precondition(lambda self: not self.run.enabled())
    @rule()
    def quiescent(self) -> None:
        """Nothing is enabled: every message is delivered and acknowledged, or a bound is hit."""

    @invariant()
    def engine_agrees_with_spec(self) -> None:
        assert self.divergence is None, str(self.divergence)


TestUnicast3Agreement = Unicast3Agreement.TestCase


def test_machine_finds_a_planted_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine, not just the random walks, catches a defect (and shrinks it to a short program)."""
    from test_u3_lockstep import purge_one_past_the_ack

    from impl.unicast3 import receive

    monkeypatch.setattr(receive, "on_ack", purge_one_past_the_ack)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast3Agreement, settings=settings(max_examples=200, derandomize=True,
                                                                         phases=[Phase.generate]))
