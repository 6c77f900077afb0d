"""The multicast world (models/multicast_world.py) and its model-file section
(models/multicast_factory.py): copies per member, budgets, joins, the below-drop budget, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.modelfile import ModelError, load
from models.multicast_world import (
    PREMATURE,
    AnswerJoin,
    AppMcast,
    DropBelow,
    McastEnv,
    MergeView,
    MulticastWorld,
    Stop,
)
from models.world import DeliverPacket, FireTimer, InstallView, LosePacket

HEAD = 'protocol = "nakack2"\nmembers = ["A", "B", "C"]\n'
CHECK = '\n[check]\nexpect = "pass"\n'


def world_of(tmp_path: Path, text: str) -> MulticastWorld:
    path = tmp_path / "m.toml"
    path.write_text(HEAD + text + CHECK)
    world = load(path).world
    assert isinstance(world, MulticastWorld)
    return world


def env_of(world: MulticastWorld, state: tuple[int, ...]) -> McastEnv:
    env = world.view(state).env
    assert isinstance(env, McastEnv)
    return env


def step(world: MulticastWorld, state: tuple[int, ...], kind: type) -> tuple[object, tuple[int, ...]]:
    return next((a, s) for a, s in world.successors(state) if isinstance(a, kind))


def test_a_multicast_puts_one_copy_per_member_loopback_included(tmp_path: Path) -> None:
    world = world_of(tmp_path, "[sends]\nA = 1\n")
    _, after = step(world, world.init_states()[0], AppMcast)
    network = world.view(after).network
    assert sorted(p.dst for p in network) == [0, 1, 2]
    assert all(p.src == 0 and p.kind == "Data" for p in network)
    assert all(c.sent == 1 for c in world.view(after).history.channels[0:3])


def test_loopback_copies_are_never_lost_or_dropped_below(tmp_path: Path) -> None:
    world = world_of(tmp_path, "[sends]\nA = 1\n[faults]\nloss = 1\nbelow_drop = 1\n")
    _, after = step(world, world.init_states()[0], AppMcast)
    faulted = [a for a, _ in world.successors(after) if isinstance(a, (LosePacket, DropBelow))]
    assert {(type(a).__name__, a.packet.dst) for a in faulted} == {
        ("LosePacket", 1), ("LosePacket", 2), ("DropBelow", 1), ("DropBelow", 2)}


def test_below_drop_has_its_own_budget(tmp_path: Path) -> None:
    world = world_of(tmp_path, "[sends]\nA = 1\n[faults]\nbelow_drop = 1\n")
    _, after = step(world, world.init_states()[0], AppMcast)
    dropped = next(s for a, s in world.successors(after) if isinstance(a, DropBelow))
    assert len(world.view(dropped).network) == 2
    assert not [a for a, _ in world.successors(dropped) if isinstance(a, (DropBelow, LosePacket))]
    env = world.view(dropped).env
    assert isinstance(env, McastEnv) and env.below_drop == 0 and env.loss == 0


def test_a_joiner_gets_the_coordinators_digest(tmp_path: Path) -> None:
    world = world_of(tmp_path, '[sends]\nA = 1\n[[joins]]\njoiner = "C"\ncoordinator = "A"\n'
                               '[[views]]\nmember = "A"\nview = ["A", "B", "C"]\n')
    state = world.init_states()[0]
    assert world.view(state).nodes[2].windows[0] is None  # the joiner has no window yet
    _, state = step(world, state, AppMcast)
    loopback = next(p for p in world.view(state).network if p.dst == 0)
    state = next(s for a, s in world.successors(state) if getattr(a, "packet", None) == loopback
                 and type(a).__name__ == "DeliverPacket")
    _, state = step(world, state, AnswerJoin)
    rsp = next(p for p in world.view(state).network if p.kind == "JoinRsp")
    assert rsp.dst == 2 and rsp.msg.digest[0] == (1, 1)
    assert world.view(state).nodes[0].members == frozenset({0, 1, 2})
    state = next(s for a, s in world.successors(state) if getattr(a, "packet", None) == rsp)
    window = world.view(state).nodes[2].windows[0]
    assert window is not None and window.delivered == 1  # created at the digest's hd
    assert not any(isinstance(a, AnswerJoin) for a, _ in world.successors(state))


@pytest.mark.parametrize("text, key", [
    ("[sends]\nD = 1\n", "sends.D"),
    ("[faults]\nbelow_drop = -1\n", "faults.below_drop"),
    ('[[joins]]\njoiner = "C"\ncoordinator = "A"\n', "joins[0]"),
    ('[[joins]]\njoiner = "C"\n', "joins"),
    ('[[joins]]\njoiner = "C"\ncoordinator = "C"\n[[views]]\nmember = "C"\nview = ["C"]\n', "joins[0].coordinator"),
    ("[config]\nuse_mcast_xmit = 1\n", "config.use_mcast_xmit"),
    ("[config]\nxmit_interval = true\n", "config.xmit_interval"),
    ("sends_after_joins = 3\n", "sends_after_joins"),
    ('variant = ["JGRP-0"]\n', "variant"),
    ('[[stops]]\nmember = "B"\nkind = "quit"\n', "stops[0].kind"),
    ('[[stops]]\nmember = "B"\nkind = "crash"\n[[stops]]\nmember = "B"\nkind = "leave"\n', "stops[1].member"),
    ('[[stops]]\nmember = "B"\n', "stops"),
    ('merges = "A"\n', "merges"),
    ('merges = ["D"]\n', "merges"),
    ('merges = ["A"]\n', "merges"),  # A has no view script: nothing to install as a merge view
])
def test_bad_model_files_are_one_line_errors(tmp_path: Path, text: str, key: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(HEAD + text + CHECK)
    with pytest.raises(ModelError) as error:
        load(path)
    message = str(error.value)
    assert "\n" not in message and f"{path}: {key}: expected" in message


def test_a_nakack2_path_draws_as_a_chart_with_its_message_names(tmp_path: Path) -> None:
    from models.chart import chart

    world = world_of(tmp_path, '[sends]\nA = 1\n[faults]\nbelow_drop = 1\n[[joins]]\njoiner = "C"\ncoordinator = "A"\n'
                               '[[views]]\nmember = "A"\nview = ["A", "B", "C"]\n')
    state = world.init_states()[0]
    path = []
    for kind in (AnswerJoin, AppMcast, DropBelow):
        action, state = step(world, state, kind)
        path.append((action, state))
    drawing = chart(world, path)  # type: ignore[arg-type]
    assert "A answers C's join (digest, new view)" in drawing
    assert "JOIN_RSP(view=[0, 1, 2]" in drawing and "A: application multicasts" in drawing
    assert "(dropped below NAKACK2)" in drawing and "windows[A]" in drawing


def test_a_nakack2_chart_names_no_conn_id(tmp_path: Path) -> None:
    """NAKACK2 has no connections: the joiner's windows open without a unicast conn_id."""
    from models.chart import chart

    world = world_of(tmp_path, '[[joins]]\njoiner = "C"\ncoordinator = "A"\n'
                               '[[views]]\nmember = "A"\nview = ["A", "B", "C"]\n')
    path = []
    action, state = step(world, world.init_states()[0], AnswerJoin)
    path.append((action, state))
    rsp = next(p for p in world.view(state).network if p.kind == "JoinRsp")
    path.append((DeliverPacket(rsp), next(s for a, s in world.successors(state) if a == DeliverPacket(rsp))))
    drawing = chart(world, path)  # type: ignore[arg-type]
    assert "» opens a receive window for A, next" in drawing and "conn_id" not in drawing


@pytest.mark.parametrize("bound, expect", [(0, "violation:window_bounded"), (2, "pass")])
def test_window_bounded_reports_a_window_holding_more_than_the_bound(tmp_path: Path, bound: int, expect: str) -> None:
    """Two multicasts, the first dropped below the protocol, no retransmission: B holds #2 above
    the gap for ever, one message: over a bound of 0, within 2."""
    from checks.cli import main

    path = tmp_path / "grow.toml"
    path.write_text('protocol = "nakack2"\nmembers = ["A", "B"]\n'
                    f"window_bound = {bound}\n[sends]\nA = 2\n[faults]\nbelow_drop = 1\nmax_in_flight = 2\n"
                    "[config]\nxmit_interval = 0\n"
                    f'[check]\nproperties = ["all"]\nexclude = ["eventually_delivered", "window_drains"]\n'
                    f'expect = "{expect}"\n')
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(path)]) == 0


def test_a_crashed_member_acts_no_more_and_its_packets_stay(tmp_path: Path) -> None:
    world = world_of(tmp_path, '[sends]\nA = 1\nB = 1\n[[stops]]\nmember = "B"\nkind = "crash"\n')
    _, state = step(world, world.init_states()[0], AppMcast)  # A's copies to A, B, C
    state = next(s for a, s in world.successors(state) if a == AppMcast(1))  # B's copies too
    _, state = step(world, state, Stop)
    actions = [a for a, _ in world.successors(state)]
    assert AppMcast(1) not in actions
    assert not any(isinstance(a, FireTimer) and a.member == 1 for a in actions)
    assert {p.src for p in world.view(state).network} == {0, 1}  # B's packets stay in flight
    to_b = next(p for p in world.view(state).network if p.dst == 1)
    after = next(s for a, s in world.successors(state) if a == DeliverPacket(to_b))
    assert world.view(after).nodes[1] == world.view(state).nodes[1] and to_b not in world.view(after).network
    assert world.stimulus_of(state, DeliverPacket(to_b)) is None


def test_a_leave_waits_for_the_view_without_the_leaver(tmp_path: Path) -> None:
    world = world_of(tmp_path, '[[stops]]\nmember = "A"\nkind = "leave"\n'
                               '[[views]]\nmember = "B"\nview = ["B", "C"]\n')
    state = world.init_states()[0]
    assert not any(isinstance(a, Stop) for a, _ in world.successors(state))
    state = next(s for a, s in world.successors(state) if isinstance(a, InstallView) and a.member == 1)
    assert world.view(state).nodes[1].windows[0] is None  # the leaver's window is gone at B
    action, state = step(world, state, Stop)
    assert action == Stop(0, False)
    assert env_of(world, state).stopped == 1


def test_a_request_for_a_young_copy_sets_the_premature_bit(tmp_path: Path) -> None:
    """JGRP-1539's variant asks for #1 on the first run that sees the gap, while #1 is on its way."""
    world = world_of(tmp_path, 'variant = ["JGRP-1539"]\n[sends]\nA = 2\n[config]\nresend_last_seqno = false\n')
    assert world.bounds.track_young
    state = world.init_states()[0]
    for _ in range(2):
        _, state = step(world, state, AppMcast)
    assert len(env_of(world, state).young) == 4  # the copies to B and C; loopbacks are never young
    second = next(p for p in world.view(state).network if p.dst == 1 and p.msg.seqno == 2)
    state = next(s for a, s in world.successors(state) if a == DeliverPacket(second))
    run = next(s for a, s in world.successors(state) if a == FireTimer(1, world.adapter.spec.Timer(0)))
    assert world.view(run).history.step_violations & PREMATURE
    assert not any(p.dst == 1 for p in env_of(world, run).young)  # B's run aged its copies


def test_a_merge_view_sets_the_merge_digest_from_each_senders_own_window(tmp_path: Path) -> None:
    """Rule 10: the merge view installs MERGE_DIGEST first; a window below the digest restarts at it."""
    world = world_of(tmp_path, 'merges = ["C"]\n[sends]\nA = 1\n[[views]]\nmember = "C"\nview = ["C"]\n'
                               '[[views]]\nmember = "C"\nview = ["A", "B", "C"]\n')
    state = world.init_states()[0]
    _, state = step(world, state, AppMcast)  # A multicasts #1, its loopback copy in flight
    loopback = next(a for a, _ in world.successors(state)
                    if isinstance(a, DeliverPacket) and a.packet.src == a.packet.dst == 0)
    state = dict(world.successors(state))[loopback]  # A delivers its own #1: its hd is 1
    action, state = step(world, state, InstallView)  # C installs [C]: its window for A goes
    assert action == InstallView(2, (2,))
    assert not any(isinstance(a, InstallView) and a.member == 2 for a, _ in world.successors(state))
    action, state = step(world, state, MergeView)
    assert action == MergeView(2, (0, 1, 2))
    c = world.view(state).nodes[2]
    assert c.members == frozenset({0, 1, 2}) and c.windows[0].delivered == 1 and c.windows[1].delivered == 0
