"""The Hypothesis state machine of ``test_u3_jgroups_machine.py`` (world actions as rules, "JGroups ==
spec" as the invariant) on UNICAST2: the last release (3.6.20) and the first with the harness (3.2.5),
each against the spec with its release profile; and a spec that is not the release fails it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from test_u3_jgroups_machine import JGroupsAgreement

from models.modelfile import load

MODEL = load(Path(__file__).resolve().parents[2] / "models" / "fuzz" / "unicast2-lockstep.toml")
SETTINGS = settings(max_examples=30, stateful_step_count=80, deadline=None)


class Unicast2On3620(JGroupsAgreement):
    MODEL = MODEL
    VERSION = "3.6.20"


class Unicast2On325(JGroupsAgreement):
    MODEL = MODEL
    VERSION = "3.2.5"


TestUnicast2On3620 = Unicast2On3620.TestCase
TestUnicast2On3620.settings = SETTINGS
TestUnicast2On325 = Unicast2On325.TestCase
TestUnicast2On325.settings = SETTINGS


class FirstAckMissingOn3620(Unicast2On3620):
    FLAGS = ("stale_xmit_record_asks_all", "no_first_ack")  # 3.6.20 has JGRP-1563's ACK


def test_machine_tells_a_spec_that_is_not_the_release() -> None:
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(FirstAckMissingOn3620, settings=settings(
            max_examples=200, derandomize=True, phases=[Phase.generate], deadline=None))
