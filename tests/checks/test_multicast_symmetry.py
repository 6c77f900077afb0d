"""Symmetry reduction in the multicast world (models/multicast_symmetry.py): each symmetry found is an
automorphism of the labelled transition system (state by state: successors, fault flags, bounds and
every property commute with renaming), the reduced search's reachable states are exactly the orbit
representatives of the full search's, and verdicts, depths and trace lengths are the full search's;
the coordinator rule keeps NAKACK2's coordinator and a member that becomes one apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.explore.search import explore
from checks.explore.system import Liveness, replay
from models.modelfile import load

SHIPPED = Path(__file__).resolve().parents[2] / "models"

MODELS = {
    # name: (file text, expected group order)
    "n2-two-senders-oob": ("""protocol = "nakack2"
members = ["A", "B", "C"]
[sends]
B = 1
C = 1
[oob]
B = [1]
C = [1]
[dont_loopback]
B = [1]
C = [1]
[faults]
max_in_flight = 1
[config]
xmit_interval = 0
[check]
properties = ["all"]
expect = "pass"
""", 2),
    "n4-coordinator-crashes": ("""protocol = "nakack4"
members = ["A", "B", "C"]
[sends]
B = 1
C = 1
[config]
capacity = 1
send_atomically = true
dont_loopback = true
[faults]
max_in_flight = 1
[[views]]
member = "B"
view = ["B", "C"]
[[views]]
member = "C"
view = ["B", "C"]
[[stops]]
member = "A"
kind = "crash"
[check]
properties = ["all"]
expect = "pass"
""", 2),
    "n4-two-senders-loss": ("""protocol = "nakack4"
members = ["A", "B", "C"]
[sends]
B = 1
C = 1
[config]
capacity = 1
send_atomically = true
dont_loopback = true
[faults]
loss = 1
max_in_flight = 1
[check]
properties = ["all"]
expect = "pass"
""", 2),
    "n4-threads": ("""protocol = "nakack4"
members = ["A", "B", "C"]
[sends]
A = 2
[config]
capacity = 2
dont_loopback = true
[faults]
loss = 1
max_in_flight = 1
[check]
properties = ["all"]
expect = "pass"
""", 2),
    "n2-coordinator-crashes": ("""protocol = "nakack2"
members = ["A", "B", "C"]
[sends]
B = 1
C = 1
[config]
xmit_interval = 0
[faults]
max_in_flight = 1
[[views]]
member = "B"
view = ["B", "C"]
[[views]]
member = "C"
view = ["B", "C"]
[[stops]]
member = "A"
kind = "crash"
[check]
properties = ["all"]
expect = "pass"
""", 1),  # B coordinates [B, C] (STABLE): B and C are not interchangeable in NAKACK2
    "n4-leave": ("""protocol = "nakack4"
members = ["A", "B", "C"]
[sends]
B = 1
C = 1
[config]
capacity = 1
send_atomically = true
[faults]
max_in_flight = 1
[[views]]
member = "B"
view = ["B", "C"]
[[views]]
member = "C"
view = ["B", "C"]
[[stops]]
member = "A"
kind = "leave"
[check]
properties = ["all"]
expect = "pass"
""", 1),  # the leave rule waits for B, the lowest other member: B and C are not interchangeable
}


def _model(folder: Path, name: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'description = "{name}"\n' + MODELS[name][0])
    return path


def _reachable(world: object) -> list[tuple[int, ...]]:
    """Every reachable state of the unreduced world, breadth-first (bounds respected as the checker does)."""
    seen = dict.fromkeys(world.init_states())  # type: ignore[attr-defined]
    frontier = list(seen)
    while frontier:
        nxt = []
        for state in frontier:
            if not world.within_bounds(state):  # type: ignore[attr-defined]
                continue
            for _, after in world.successors(state):  # type: ignore[attr-defined]
                if after not in seen:
                    seen[after] = None
                    nxt.append(after)
        frontier = nxt
    return list(seen)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_group_found(tmp_path: Path, name: str) -> None:
    assert load(_model(tmp_path, name)).world.symmetry_group_size == MODELS[name][1]


@pytest.mark.parametrize("name", [n for n in sorted(MODELS) if MODELS[n][1] > 1])
def test_every_symmetry_is_an_automorphism(tmp_path: Path, name: str) -> None:
    """For every reachable state and symmetry: the image's successors (with their fault flags) are the
    images of the state's successors; bounds, end acceptance and every property agree."""
    world = load(_model(tmp_path, name)).world
    symmetry = world.symmetry
    states = _reachable(world)
    for state in states:
        steps = {(world.is_fault(a), after) for a, after in world.successors(state)}
        for k in range(len(symmetry.perms)):
            image = symmetry.image(state, k)
            assert world.within_bounds(image) == world.within_bounds(state)
            assert {(fault, symmetry.image(after, k)) for fault, after in steps} == \
                {(world.is_fault(a), after) for a, after in world.successors(image)}
            for prop in world.properties:
                holds = prop.goal if isinstance(prop, Liveness) else prop.holds
                assert holds(image) == holds(state), prop.name
    assert len(states) > 1000  # the models do something


@pytest.mark.parametrize("name", [n for n in sorted(MODELS) if MODELS[n][1] > 1])
def test_reduced_states_are_the_orbit_representatives(tmp_path: Path, name: str) -> None:
    """The reduced search's states are exactly one per orbit of the full search's, its count of the
    states they stand for is the full count, and verdicts, depth and trace lengths are the full search's;
    every counterexample replays on the unreduced world."""
    path = _model(tmp_path, name)
    full_world = load(path).world
    full = _reachable(full_world)
    plain = explore(load(path).world, stop_at_first=False, symmetry=False)
    model = load(path)
    reduced = explore(model.world, stop_at_first=False)
    assert plain.stats.complete and reduced.stats.complete
    assert plain.stats.distinct == len(full)
    assert reduced.stats.unreduced == plain.stats.distinct
    representatives, _ = full_world.canonical_batch(full)
    orbits = {tuple(row) for row in representatives.tolist()}
    assert reduced.stats.distinct == len(orbits) < plain.stats.distinct
    assert reduced.stats.depth == plain.stats.depth
    assert [(f.prop, f.kind, len(f.path)) for f in reduced.findings] == \
        [(f.prop, f.kind, len(f.path)) for f in plain.findings]
    for finding in reduced.findings:
        world = load(path).world
        recorded = [world.action_to_json(action) for action, _ in finding.path]
        assert [after for _, after in replay(world, recorded)][-1] == \
            world.adopt(model.world.view(finding.path[-1][1]))


def test_reduced_states_computed_by_the_reduced_world_are_those_orbits(tmp_path: Path) -> None:
    """The representatives a reduced search meets (computed from representatives only) are the
    representatives of the full reachable set, state for state (not just as many)."""
    path = _model(tmp_path, "n4-coordinator-crashes")
    world = load(path).world
    full = _reachable(world)
    wanted = {tuple(row) for row in world.canonical_batch(full)[0].tolist()}
    seen = {tuple(row) for row in world.canonical_batch(world.init_states())[0].tolist()}
    frontier = list(seen)
    while frontier:
        nxt = []
        for state in frontier:
            if not world.within_bounds(state):
                continue
            afters = [after for _, after in world.successors(state)]
            for row in (world.canonical_batch(afters)[0].tolist() if afters else []):
                if tuple(row) not in seen:
                    seen.add(tuple(row))
                    nxt.append(tuple(row))
        frontier = nxt
    assert seen == wanted


@pytest.mark.parametrize(("path", "group"), [
    pytest.param("nakack2/three-members-loss.toml", 2, marks=pytest.mark.slow),  # 118,955 states
    ("nakack4/three-members-loss.toml", 2)])
def test_shipped_symmetric_models_agree(path: str, group: int) -> None:
    """The shipped multicast models symmetry reduces: the full search's verdicts and counts."""
    assert load(SHIPPED / path).world.symmetry_group_size == group
    plain = explore(load(SHIPPED / path).world, stop_at_first=False, symmetry=False)
    reduced = explore(load(SHIPPED / path).world, stop_at_first=False)
    assert reduced.stats.unreduced == plain.stats.distinct and reduced.stats.distinct < plain.stats.distinct
    assert [(f.prop, f.kind, len(f.path)) for f in reduced.findings] == \
        [(f.prop, f.kind, len(f.path)) for f in plain.findings]


def test_an_unclassified_node_field_is_refused() -> None:
    """A node field the adapter neither lists as naming no member nor knows how to rename stops the
    renaming (a new field cannot silently break symmetry): the world then offers none and says why."""
    from dataclasses import replace

    model = load(SHIPPED / "nakack2/three-members-loss.toml")
    adapter = model.world.adapter
    node = model.world.node(model.world.init_states()[0], 0)
    original = adapter.member_free
    try:
        type(adapter).member_free = original - {"seqno"}
        with pytest.raises(ValueError, match="'seqno' is not classified"):
            adapter.permute_node(replace(node), (0, 2, 1))
        world = load(SHIPPED / "nakack2/three-members-loss.toml").world  # built anew: no symmetry, and why
        assert world.symmetry_group_size == 1 and "'seqno' is not classified" in world.symmetry.reason
    finally:
        type(adapter).member_free = original


def test_moving_nakack2s_coordinator_is_no_automorphism(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why the coordinator rule: with A crashed, B coordinates [B, C] (STABLE's votes go to B), so swapping
    B and C does not commute with the handlers; without the rule the swap would be taken as a symmetry,
    and some reachable state's successors are not the images of its image's."""
    from models.protocols.nakack2 import Nakack2Adapter

    monkeypatch.setattr(Nakack2Adapter, "coordinator_matters", False)
    world = load(_model(tmp_path, "n2-coordinator-crashes")).world
    assert world.symmetry_group_size == 2
    symmetry, seen, frontier = world.symmetry, set(world.init_states()), list(world.init_states())
    while frontier and len(seen) < 50_000:
        state = frontier.pop(0)
        image = symmetry.image(state, 0)
        if {symmetry.image(after, 0) for _, after in world.successors(state)} != \
                {after for _, after in world.successors(image)}:
            return
        for _, after in world.successors(state):
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    raise AssertionError("the coordinator's renaming commuted with every step explored")
