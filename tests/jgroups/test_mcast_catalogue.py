"""The multicast bug catalogue and seqcheck's NAKACK2/NAKACK4 findings on real JGroups
(``checks/jgroups/mcast_catalogue.py``): each bug's counterexample reproduces on the release that had the
bug and not on the one that fixed it; each finding's counterexample violates its property on the
releases it is about (or, where the release refuses the model's setting, is followed and recovered
from with the setting the release requires). Counterexamples are made here from the shipped models."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.jgroups.mcast_catalogue import CATALOGUE, Entry, run_entry, verdict

SLOW = {"merge-digest-lags-loopback"}  # its model explores 183,035 states before the trace (about 30 s)


def _entries() -> list[object]:
    return [pytest.param(e, id=e.name, marks=pytest.mark.slow) if e.name in SLOW else pytest.param(e, id=e.name)
            for e in CATALOGUE]


@pytest.mark.parametrize("entry", _entries())
def test_catalogue_entry(tmp_path: Path, entry: Entry) -> None:
    runs = run_entry(entry, harness_for, tmp_path)
    for run in runs:  # no run diverged from the spec without an explanation
        if run.replay is not None and run.replay.divergence is not None:
            assert run.replay.explained is not None, f"{run.version}: {run.replay.divergence}"
    text = verdict(entry, runs)
    if entry.kind == "bug":
        before, after = runs
        assert before.violated, text
        if entry.name == "JGRP-2675":  # 5.4.4 on refuse the model's xmit_interval=0
            assert after.error is not None and "xmit_interval has to be > 0" in after.error
        else:
            assert after.clean, text
    elif entry.replay_model:
        assert all(r.clean and r.replay is not None and r.replay.continuation == "reached" for r in runs), text
    else:
        assert all(r.violated for r in runs), text
