"""JGRP-2873 and JGRP-2929 on the JGroups releases (``seqcheck replay TRACE --jgroups``): each
counterexample of ``models/unicast4`` is replayed on the release before the fix, where JGroups itself
violates the property, and JGRP-2873's on the release after it, where it does not. JGRP-2929's fix
is a configuration (master's 10 s defaults, a warning for 0): with both timeouts 0 the sender blocks
for good on 5.4.12 and on master alike, and with the timeouts on, master's own close fails the
blocked send (a lockstep walk of ``jgrp2929-fixed``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks.check import check_model
from checks.jgroups.lockstep import JGroupsLockstep
from checks.jgroups.replay import replay_on_jgroups
from models.modelfile import load

MODELS = Path(__file__).resolve().parents[2] / "models" / "unicast4"


def _trace(name: str, tmp_path: Path) -> Path:
    result = check_model(load(MODELS / f"{name}.toml"), trace_dir=tmp_path)
    assert result.trace_path is not None, result
    return Path(result.trace_path)


@pytest.mark.parametrize(("model", "version", "violated"), [
    ("jgrp2873", "5.4.5", True), ("jgrp2873", "5.4.12", False),
    ("jgrp2929", "5.4.12", True), ("jgrp2929", "master", True),
])
def test_the_defect_on_the_release(tmp_path: Path, model: str, version: str,
                                   violated: bool) -> None:
    trace = _trace(model, tmp_path)
    replay = replay_on_jgroups(trace, str(MODELS / f"{model}.toml"), None, harness_for(version))
    assert replay.divergence is None, replay.divergence
    assert bool(replay.violated) is violated, replay


def test_master_defaults_fail_a_send_blocked_on_a_dead_peer() -> None:
    run = JGroupsLockstep(load(MODELS / "jgrp2929-fixed.toml", reduce_timestamps=False), harness_for("master"))
    names = ["A: application sends to B", "A: application sends to B",
             "A: send entry to B, a thread blocked on it, idle for conn_expiry_timeout: OPEN -> CLOSING",
             "B receives DATA(seqno=1, conn_id=0, first, payload=1) from A",
             "A: conn_close_timeout expires on the CLOSING send entry to B, a thread blocked on it: CLOSED, removed, "
             "its buffer closed"]
    for name in names:
        action, after = next((a, s) for a, s in run.enabled() if run.world.format_action(a) == name)
        assert run.step(action, after) is None
    state = run.harness.command("state", m=0)["state"]
    assert state["send"] == {}  # the entry is gone, and the thread blocked on it failed
