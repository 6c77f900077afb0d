"""The shipped NAKACK4 models (models/nakack4/) and NAKACK4 in the multicast world: each modelled
defect sits beside a twin with the same world that passes, each verdict and counterexample length
is the catalogue's, the world runs application threads and blocked senders, and ``seqcheck list``
names every NAKACK4 property."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR, main
from models.modelfile import ModelError, load
from models.multicast_world import AppMcast, McastEnv, MulticastWorld
from models.protocols.nakack4 import NAKACK4
from models.world import FireTimer, InstallView
from spec import nakack4 as nk

FOLDER = MODELS_DIR / "nakack4"
# The fixed twin of JGRP-3034 fails too, more narrowly: the fix strands a last message (its description).
TWINS_THAT_FAIL = {"jgrp3034-fixed"}
# model -> (verdict, steps of the shortest counterexample; 0 for a pass): the bug catalogue
CATALOGUE = {
    "window-edge": ("pass", 0),
    "window-edge-seed": ("violation:blocks_only_when_full", 2),
    "send-atomically": ("pass", 0),
    "send-atomically-lock-after-seqno": ("violation:no_spurious_xmit_req", 5),
    "send-atomically-blocked-overtaken": ("violation:no_spurious_xmit_req", 11),
    "jgrp2904": ("violation:ack_table_members", 4),
    "jgrp2904-blocked": ("violation:senders_released", 10),
    "jgrp2904-fixed": ("pass", 0),
    "jgrp3034-deliver-stranded": ("pass", 0),
    "jgrp2874": ("violation:senders_released", 5),
    "jgrp2853": ("violation:senders_released", 5),
    "jgrp2853-fixed": ("pass", 0),
    "jgrp2873": ("violation:seqno_discipline", 2),
    "jgrp2873-fixed": ("pass", 0),
    "jgrp2829": ("violation:senders_released", 2),
    "jgrp2829-fixed": ("pass", 0),
    "jgrp3034": ("violation:deliverer_released", 3),
    "jgrp3034-fixed": ("violation:eventually_delivered", 5),
    "join-purge-race": ("violation:purge_covered", 8),
    "join-queue-drops-newest": ("pass", 0),
    "join-threshold-0": ("violation:senders_released", 7),
    "three-members-crash": ("pass", 0),
    "lost-ack-threshold-0": ("violation:senders_released", 6),
    "lost-ack-threshold-2": ("pass", 0),
    "three-members-loss": ("pass", 0),
    "batch-under-loss": ("pass", 0),
    "batch-immediate-ack": ("pass", 0),
    "oob-under-loss": ("pass", 0),
    "oob-threads": ("pass", 0),
    "oob-dont-loopback": ("pass", 0),
    "oob-ack-threshold-1": ("violation:eventually_delivered", 5),
    "oob-ack-threshold-2": ("pass", 0),
}


def test_the_catalogue_lists_every_shipped_model() -> None:
    assert {p.stem for p in FOLDER.glob("*.toml")} == set(CATALOGUE)


@pytest.mark.parametrize("stem", sorted(CATALOGUE))
def test_each_model_reaches_its_catalogued_verdict(stem: str, tmp_path: Path) -> None:
    model = load(FOLDER / f"{stem}.toml")
    verdict, steps = CATALOGUE[stem]
    assert model.expect == verdict
    outcome = check_model(model, trace_dir=tmp_path)
    assert outcome.verdict == verdict and outcome.matches, outcome.mismatch_reason
    assert (0 if outcome.trace is None else len(outcome.trace.actions)) == steps


@pytest.mark.parametrize("alias", sorted(NAKACK4.variant_aliases))
def test_each_variant_has_a_violation_model_beside_a_twin_that_passes(alias: str) -> None:
    """Same members, sends, faults, views and stops, and the same settings but for the variant."""
    flag = NAKACK4.variant_aliases[alias]
    models = [load(path) for path in sorted(FOLDER.glob("*.toml"))]
    flagged = [m for m in models if m.variant == (flag,)]
    assert flagged, f"no model of {alias}"
    if alias.startswith("fix:"):  # a fix the spec proposes: it passes where the protocol as shipped fails
        for model in flagged:
            assert model.expect == "pass", model.path
            world = model.world
            assert isinstance(world, MulticastWorld)
            shipped = [t for t in models if t.variant == () and isinstance(t.world, MulticastWorld)
                       and t.world.cfg == replace(world.cfg, variant=t.world.cfg.variant)
                       and t.world.bounds == world.bounds]
            assert shipped and all(t.expect.startswith("violation:") for t in shipped), model.path
        return
    for model in flagged:
        assert model.expect.startswith("violation:"), model.path
        world = model.world
        assert isinstance(world, MulticastWorld)
        twins = [t for t in models if t.variant == () and isinstance(t.world, MulticastWorld)
                 and t.world.cfg == replace(world.cfg, variant=t.world.cfg.variant) and t.world.bounds == world.bounds]
        assert twins and all(t.expect == "pass" or t.path.stem in TWINS_THAT_FAIL for t in twins), model.path


@pytest.mark.parametrize(("broken_path", "fixed_path"), [
    (FOLDER / "lost-ack-threshold-0.toml", FOLDER / "lost-ack-threshold-2.toml"),
    (FOLDER / "oob-ack-threshold-1.toml", FOLDER / "oob-ack-threshold-2.toml"),
    (FOLDER / "join-threshold-0.toml", MODELS_DIR / "bench" / "nakack4-join-threshold-2.toml")])
def test_the_threshold_pairs_differ_in_the_ack_threshold_alone(broken_path: Path, fixed_path: Path) -> None:
    broken, fixed = load(broken_path), load(fixed_path)
    assert isinstance(broken.world, MulticastWorld) and isinstance(fixed.world, MulticastWorld)
    assert broken.world.bounds == fixed.world.bounds and replace(broken.world.cfg, ack_threshold=2) == fixed.world.cfg
    assert broken.expect.startswith("violation:") and fixed.expect == "pass"


def world_of(tmp_path: Path, config: str) -> MulticastWorld:
    path = tmp_path / "m.toml"
    path.write_text(f'protocol = "nakack4"\nmembers = ["A", "B"]\n[sends]\nA = 2\n[config]\n{config}\n'
                    '[check]\nexpect = "pass"\nproperties = ["all"]\n')
    world = load(path).world
    assert isinstance(world, MulticastWorld)
    return world


def test_the_world_offers_a_multicast_only_to_a_free_application_thread(tmp_path: Path) -> None:
    world = world_of(tmp_path, "capacity = 4\nsender_threads = 1")
    state = world.init_states()[0]
    state = next(s for a, s in world.successors(state) if isinstance(a, AppMcast))
    actions = [a for a, _ in world.successors(state)]
    assert not any(isinstance(a, AppMcast) for a in actions)  # the one thread holds #1
    assert FireTimer(0, nk.Timer(nk.SEND, 1)) in actions
    assert world.format_action(FireTimer(0, nk.Timer(nk.SEND, 1))) == (
        "A: the application thread holding #1 adds it and passes it down")


def test_a_blocked_thread_is_not_offered_until_the_window_has_room(tmp_path: Path) -> None:
    world = world_of(tmp_path, "capacity = 1\nsend_atomically = true")
    state = world.init_states()[0]
    for _ in range(2):
        state = next(s for a, s in world.successors(state) if isinstance(a, AppMcast))
    assert world.view(state).nodes[0].sending == ((2, 2),)
    assert not any(isinstance(a, FireTimer) and a.timer.kind == nk.SEND for a, _ in world.successors(state))


def test_seqcheck_list_names_every_nakack4_property(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("protocol nakack4"):]
    section = section[:section.index("\nprotocol ") if "\nprotocol " in section else len(section)]
    for name, doc in NAKACK4.all_property_docs().items():
        assert re.search(rf"(?m)^\s+{re.escape(name)}\s+{re.escape(doc)}$", section), name
    for alias, flag in NAKACK4.variant_aliases.items():
        assert re.search(rf"(?m)^\s+{flag}\s+{re.escape(alias)}$", section), alias
    for setting in ("capacity", "ack_threshold", "send_atomically", "sender_threads"):
        assert re.search(rf"(?m)^\s+{setting}\s+default ", section), setting


def test_views_are_progress_makes_scripted_views_part_of_fault_free_continuations(tmp_path: Path) -> None:
    view = '[[views]]\nmember = "A"\nview = ["A"]\n'
    for switch, fault in (("", True), ("views_are_progress = true\n", False)):
        path = tmp_path / "m.toml"
        path.write_text(f'protocol = "nakack4"\nmembers = ["A", "B"]\n{switch}{view}[check]\nexpect = "pass"\n')
        world = load(path).world
        assert isinstance(world, MulticastWorld)
        assert world.is_fault(InstallView(0, (0,))) is fault


def test_views_are_progress_must_be_a_switch(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('protocol = "nakack4"\nmembers = ["A", "B"]\nviews_are_progress = 1\n[check]\nexpect = "pass"\n')
    with pytest.raises(ModelError, match=r"views_are_progress: expected true or false, got 1$"):
        load(path)


def reachable(world: MulticastWorld, start: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    seen, frontier = set(start), list(start)
    while frontier:
        for _, after in world.successors(frontier.pop()):
            if after not in seen and world.within_bounds(after):
                seen.add(after)
                frontier.append(after)
    return seen


def crashed_and_quiet(world: MulticastWorld, state: tuple[int, ...], member: int) -> bool:
    """``member`` has crashed and none of its packets is still on its way."""
    view = world.view(state)
    assert isinstance(view.env, McastEnv)
    return bool(view.env.stopped >> member & 1) and not any(p.src == member for p in view.network)


def test_a_silent_member_stalls_nakack2s_memory_and_blocks_nakack4s_sender() -> None:
    """models/side-by-side/silent-member.toml. NAKACK2: some state has B crashed (nothing of it in
    flight) before delivering anything and A's own window holding both multicasts, and from there
    A's window never purges. NAKACK4: A's window stays within capacity 1, and some state has B crashed and A's
    thread blocked on #2 for good."""
    path = MODELS_DIR / "side-by-side" / "silent-member.toml"
    for protocol in ("nakack2", "nakack4"):
        world = load(path, protocol=protocol).world
        assert isinstance(world, MulticastWorld)
        states = reachable(world, list(world.init_states()))
        silent = [s for s in states if crashed_and_quiet(world, s, 1)]
        if protocol == "nakack2":
            stalled = [s for s in silent if len(world.view(s).nodes[0].windows[0].kept) == 2
                       and world.view(s).nodes[1].windows[0].delivered == 0]  # B delivered nothing
            assert stalled
            assert all(world.view(s).nodes[0].windows[0].low == 0 for s in reachable(world, stalled))
        else:
            assert all(world.view(s).nodes[0].windows[0].high - world.view(s).nodes[0].windows[0].low <= 1
                       for s in states)
            blocked = [s for s in silent if world.view(s).nodes[0].sending == ((2, 2),)
                       and world.view(s).nodes[0].ack_table[1] == 0]
            assert blocked
            assert all(world.view(s).nodes[0].sending == ((2, 2),) for s in reachable(world, blocked))


def test_the_adapter_refuses_a_stimulus_it_has_no_handler_for() -> None:
    config = nk.Config(2, capacity=4)
    node = nk.initial_node(0, config, frozenset({0, 1}))
    with pytest.raises(ValueError, match="no handler"):
        NAKACK4.handle(config, node, ("rejoin", 1))
    merged, _ = NAKACK4.handle(config, node, ("merge", ((0, 0), (2, 2)), frozenset({0, 1})))
    assert merged.windows[1] == nk.new_window(2) and NAKACK4.own_digest(merged) == (0, 0)
