"""Hypothesis state machine on the multicast world: its actions as rules, "JGroups == spec" as the
invariant, for NAKACK4 (5.4.12 and master) and NAKACK2 with STABLE (5.4.12). The point-to-point
machine (``test_u3_jgroups_machine.JGroupsAgreement``) with the multicast world's own actions as more
rules: application multicasts, drops below the protocol, join answers, stops and merge views."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import precondition, rule, run_state_machine_as_test
from test_u3_jgroups_machine import CHOICE, JGroupsAgreement

from models.modelfile import load
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, Stop

MODELS = Path(__file__).resolve().parents[2] / "models"


class McastAgreement(JGroupsAgreement):
    @precondition(lambda self: bool(self._enabled(AppMcast)))
    @rule(choice=CHOICE)
    def application_multicasts(self, choice: int) -> None:
        self._take(AppMcast, choice)

    @precondition(lambda self: bool(self._enabled(DropBelow)))
    @rule(choice=CHOICE)
    def dropped_below(self, choice: int) -> None:
        self._take(DropBelow, choice)

    @precondition(lambda self: bool(self._enabled(AnswerJoin)))
    @rule(choice=CHOICE)
    def join_answered(self, choice: int) -> None:
        self._take(AnswerJoin, choice)

    @precondition(lambda self: bool(self._enabled(Stop)))
    @rule(choice=CHOICE)
    def member_stops(self, choice: int) -> None:
        self._take(Stop, choice)

    @precondition(lambda self: bool(self._enabled(MergeView)))
    @rule(choice=CHOICE)
    def merge_view_installed(self, choice: int) -> None:
        self._take(MergeView, choice)


class Nakack4On5412(McastAgreement):
    MODEL = load(MODELS / "fuzz" / "nakack4-lockstep-faults.toml")
    VERSION = "5.4.12"


class Nakack4OnMaster(Nakack4On5412):
    VERSION = "master"


class Nakack2On5412(McastAgreement):
    MODEL = load(MODELS / "fuzz" / "nakack2-lockstep.toml")
    VERSION = "5.4.12"


class Nakack2Merges(McastAgreement):  # the merge finding's world: a partition and a merge view
    MODEL = load(MODELS / "nakack2" / "merge-digest-lags-loopback.toml")
    VERSION = "5.4.12"


SETTINGS = settings(max_examples=25, stateful_step_count=80, deadline=None)
TestNakack4On5412 = Nakack4On5412.TestCase
TestNakack4On5412.settings = SETTINGS
TestNakack4OnMaster = Nakack4OnMaster.TestCase
TestNakack4OnMaster.settings = SETTINGS
TestNakack2On5412 = Nakack2On5412.TestCase
TestNakack2On5412.settings = SETTINGS
TestNakack2Merges = Nakack2Merges.TestCase
TestNakack2Merges.settings = SETTINGS


class Nakack4HighestSeqnoNoAck(Nakack4On5412):
    MODEL = load(MODELS / "fuzz" / "nakack4-lockstep.toml")
    FLAGS = ("deliverer_stuck", "highest_seqno_no_ack")


class Nakack2XmitAllGaps(Nakack2On5412):
    FLAGS = ("xmit_all_gaps",)


@pytest.mark.parametrize("machine", [Nakack2XmitAllGaps, Nakack4HighestSeqnoNoAck])
def test_machine_tells_a_spec_that_is_not_the_release(machine: type[McastAgreement]) -> None:
    """The machine catches a spec with a defect 5.4.12 does not have (JGRP-1539's; JGRP-2874's)."""
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(machine, settings=settings(max_examples=300, derandomize=True,
                                                             phases=[Phase.generate], deadline=None))
