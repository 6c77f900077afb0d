"""Hypothesis state machine: the point-to-point world's actions as rules, "JGroups == spec" as the
invariant (``checks/jgroups/lockstep.JGroupsLockstep`` compares); a failure shrinks to a short
program of named environment actions. A divergence the table of known differences explains ends
the example (the two sides no longer stand for each other); any other fails it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from jgroups_harness import harness_for

from checks.jgroups.explained import explain
from checks.jgroups.lockstep import Divergence, JGroupsLockstep
from models.modelfile import Model, load
from models.world import AppSend, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, RemoveReceiver

CHOICE = st.integers(min_value=0, max_value=1_000)
MODELS = Path(__file__).resolve().parents[2] / "models"


class JGroupsAgreement(RuleBasedStateMachine):
    MODEL: ClassVar[Model]
    VERSION: ClassVar[str]
    FLAGS: ClassVar[tuple[str, ...] | None] = None  # the spec's flags; None: the release's own

    def __init__(self) -> None:
        super().__init__()
        self.run: JGroupsLockstep
        self.divergence: Divergence | None = None
        self.ended = False

    @initialize()
    def start(self) -> None:
        self.run = JGroupsLockstep(self.MODEL, harness_for(self.VERSION), flags=self.FLAGS)

    def _enabled(self, kind: type) -> list[tuple[Any, Any]]:
        if self.ended:
            return []
        world = self.run.world
        options = [(a, s) for a, s in self.run.enabled() if isinstance(a, kind)]
        return sorted(options, key=lambda pair: json.dumps(world.action_to_json(pair[0]), sort_keys=True))

    def _take(self, kind: type, choice: int) -> None:
        options = self._enabled(kind)
        action, after = options[choice % len(options)]
        divergence = self.run.step(action, after)
        if divergence is not None and explain(divergence, self.run) is not None:
            self.ended = True
        else:
            self.divergence = divergence

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

    @rule()
    def nothing_happens(self) -> None:
        """Always possible: after an explained divergence, or in a state with nothing enabled."""

    @invariant()
    def jgroups_agrees(self) -> None:
        assert self.divergence is None, str(self.divergence)

    def teardown(self) -> None:
        if not self.ended and self.divergence is None and hasattr(self, "run"):
            divergence = self.run.check_all()
            assert divergence is None or explain(divergence, self.run) is not None, str(divergence)


class Unicast3On3620(JGroupsAgreement):
    MODEL = load(MODELS / "fuzz" / "unicast3-lockstep.toml")
    VERSION = "3.6.20"


TestUnicast3On3620 = Unicast3On3620.TestCase
TestUnicast3On3620.settings = settings(max_examples=40, stateful_step_count=80, deadline=None)


class AckOnlyNewOn3620(Unicast3On3620):
    FLAGS = ("ack_only_new",)


def test_machine_tells_a_spec_that_is_not_the_release() -> None:
    """The machine, not only the walks, catches a spec that is not JGroups (JGRP-1578's defect flag)."""
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(AckOnlyNewOn3620, settings=settings(max_examples=200, derandomize=True,
                                                                        phases=[Phase.generate], deadline=None))
