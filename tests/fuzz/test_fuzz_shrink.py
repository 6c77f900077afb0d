"""Shrinking a fuzz failure (``checks/fuzz/shrink.py`` rule 2): removal, loss for delivery,
replay by matching, budgets and determinism, on synthetic checks and on shipped bug models whose
failing seeds shrink to the checker's shortest counterexample only with rules 2b and 2c.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR
from checks.fuzz.model import write_scaled_model
from checks.fuzz.run import Failure, FuzzPlan, Runner, Walk
from checks.fuzz.shrink import Actions, Replayed, Shrunk, action_shape, matching_action, reproduce_and_shrink, shrink
from models.modelfile import load
from models.world import AppSend


def failing(actions: Actions, step: int) -> Replayed:
    return Replayed(actions[:step], Failure("violation:p", "p", step, ""))


# ---------------------------------------------------------------- synthetic checks
def test_shrink_keeps_what_the_failure_needs() -> None:
    def check(actions: Actions) -> Replayed | None:
        seen = [a["n"] for a in actions]
        if 3 in seen and 7 in seen and seen.index(3) < seen.index(7):
            return failing(actions, seen.index(7) + 1)
        return None

    shrunk, replays = shrink([{"n": n} for n in range(20)], "violation:p", check, liveness=False)
    assert [a["n"] for a in shrunk] == [3, 7] and replays > 0


def test_shrink_keeps_the_actions_the_replay_took() -> None:
    """The best becomes the actions the replay took, not the candidate: here a replay skips an
    action whose cause (the action ``n - 1``, a request before its reply) was not taken (rule 2c),
    and the failure needs action 5; the noise between the links is never taken."""
    def check(actions: Actions) -> Replayed | None:
        taken: Actions = []
        for action in actions:
            if action["n"] == 0 or (taken and taken[-1]["n"] == action["n"] - 1):
                taken.append(action)
        numbers = [a["n"] for a in taken]
        return failing(taken, len(taken)) if 5 in numbers else None

    noise = [{"n": 100 + k} for k in range(6)]
    actions = [a for pair in zip(noise, [{"n": n} for n in range(6)]) for a in pair]
    shrunk, _ = shrink(actions, "violation:p", check, liveness=False)
    assert [a["n"] for a in shrunk] == [0, 1, 2, 3, 4, 5]


def test_a_lost_packet_replaces_what_its_delivery_needed() -> None:
    """Rule 2b: the failure needs the delivery of packet 1 and two more actions, or the loss of
    packet 1 alone; no removal reaches the loss."""
    def check(actions: Actions) -> Replayed | None:
        kinds = [(a["action"], a.get("packet")) for a in actions]
        if ("LosePacket", 1) in kinds:
            return failing(actions, kinds.index(("LosePacket", 1)) + 1)
        if {("DeliverPacket", 1), ("AppSend", None), ("FireTimer", None)} <= set(kinds):
            return failing(actions, len(actions))
        return None

    actions: Actions = [{"action": "DeliverPacket", "packet": 1}, {"action": "AppSend"}, {"action": "FireTimer"}]
    shrunk, _ = shrink(actions, "violation:p", check, liveness=False)
    assert shrunk == [{"action": "LosePacket", "packet": 1}]


def test_shrinking_stops_at_its_replay_budget() -> None:
    calls: list[int] = []

    def check(actions: Actions) -> Replayed | None:
        calls.append(len(actions))
        return failing(actions, len(actions)) if actions else None

    shrunk, replays = shrink([{"n": n} for n in range(50)], "violation:p", check, liveness=False, max_replays=4)
    assert replays == len(calls) == 4 and 0 < len(shrunk) < 50


# ---------------------------------------------------------------- replay by matching (rule 2c)
def test_a_renamed_packet_matches_its_analogue() -> None:
    """Two sends put DATA 1 and 2 in flight; with the first send gone, the delivery of DATA 2
    (as the original run named it) matches the delivery of DATA 1, the only DATA from A to B."""
    derived = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
    walk = Walk(Runner(FuzzPlan(derived.name, derived.read_text(), 10), derived))
    lock, world = walk.lock, walk.lock.world
    sends = [(a, t) for a, t in lock.enabled() if isinstance(a, AppSend)]
    walk.step(*sends[0], 1)
    wanted: dict[str, Any] = {"action": "DeliverPacket", "packet": {
        "type": "Packet", "src": 0, "dst": 1, "kind": "Data",
        "msg": {"type": "Data", "seqno": 2, "conn_id": 0, "first": False, "payload": 2}}}
    match = matching_action(lock, wanted)
    assert match is not None and match[2] != wanted and action_shape(match[2]) == action_shape(wanted)
    assert match[2]["packet"]["msg"]["seqno"] == 1
    assert world.action_to_json(world.canonical_action(lock.state, match[0])) == match[2]
    assert matching_action(lock, {"action": "RemoveReceiver", "member": 1, "peer": 0}) is None  # nothing to remove


# ---------------------------------------------------------------- shipped bug models
def shrink_seed(model: Path, seed: int, out: Path) -> Shrunk:
    derived = write_scaled_model(model, 1, out)
    plan = FuzzPlan(derived.name, derived.read_text(), 100)
    _, _, failure = Runner(plan, derived).walk(seed)
    assert failure is not None
    return reproduce_and_shrink(plan, derived, seed, failure.verdict, failure.step, out / "traces")


@pytest.mark.parametrize(("model", "seed", "stuck_at"), [
    ("unicast3/jgrp1873-no-timestamps", 1429, 15),  # rule 2c: removals upstream renamed later packets
    ("unicast3/jgrp1586-remove-on-view-change", 3, 4),  # rule 2b: the loss of DATA 1 replaces its delivery
    ("unicast2/stable-cap-never-purges", 9, 8),
])
def test_a_fuzz_failure_shrinks_to_the_checkers_shortest(model: str, seed: int, stuck_at: int,
                                                          tmp_path: Path) -> None:
    path = MODELS_DIR / f"{model}.toml"
    found = shrink_seed(path, seed, tmp_path)
    shortest = check_model(load(path), trace_dir=None).trace  # the checker's shortest counterexample
    assert shortest is not None
    assert found.trace.prop == shortest.prop
    assert len(found.trace.actions) == len(shortest.actions) < stuck_at < found.original_length


def test_shrinking_is_deterministic(tmp_path: Path) -> None:
    model = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
    first = shrink_seed(model, 1429, tmp_path)
    text = first.path.read_text()
    second = shrink_seed(model, 1429, tmp_path)
    assert second.path == first.path and second.path.read_text() == text and second.replays == first.replays
