"""Symmetry reduction (models/symmetry.py, checks/explore/search.py rule 7): the reduced search
gives the unreduced search's verdicts, trace lengths and, summed over orbits, its exact state
count; representatives do not depend on the orbit member; traces replay on the unreduced world."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from checks.check import check_model
from checks.explore.search import explore
from checks.explore.system import replay
from models.modelfile import ModelError, load

SHIPPED = Path(__file__).resolve().parents[2] / "models"

MODELS = {
    # name: (file text, expected group order)
    "u3-both-ways-loss": ("""protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 1
"B->A" = 1
[faults]
loss = 1
duplicate = 1
[check]
expect = "pass"
""", 2),
    "u3-jgrp1578-both-ways": ("""protocol = "unicast3"
variant = ["JGRP-1578"]
members = ["A", "B"]
[sends]
"A->B" = 1
"B->A" = 1
[faults]
loss = 1
[check]
expect = "violation:eventually_acked"
""", 2),
    "u2-fan-out": ("""protocol = "unicast2"
members = ["A", "B", "C"]
[sends]
"A->B" = 1
"A->C" = 1
[faults]
loss = 1
[check]
expect = "violation:eventually_acked"
""", 2),
    "u3-jgrp1873-both-ways": ("""protocol = "unicast3"
variant = ["JGRP-1873"]
members = ["A", "B"]
[sends]
"A->B" = 2
"B->A" = 1
[faults]
receiver_removals = 1
max_in_flight = 3
[check]
expect = "violation:no_spurious_purge"
""", 1),  # asymmetric sends: nothing to reduce, the search must be the plain one
}


def _model(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(f'description = "{name}"\n' + MODELS[name][0])
    return path


def _compare(path: Path) -> None:
    plain = explore(load(path).world, stop_at_first=False, symmetry=False)
    model = load(path)
    reduced = explore(model.world, stop_at_first=False)
    assert plain.stats.complete and reduced.stats.complete
    assert reduced.stats.unreduced == plain.stats.distinct  # exact, orbit by orbit
    assert [(f.prop, f.kind, len(f.path)) for f in reduced.findings] == \
        [(f.prop, f.kind, len(f.path)) for f in plain.findings]
    assert reduced.stats.depth == plain.stats.depth
    if model.world.symmetry_group_size > 1:
        assert reduced.stats.distinct < plain.stats.distinct
    for finding in reduced.findings:  # rebuilt on the unreduced world: the actions replay from the start
        world = load(path).world
        recorded = [world.action_to_json(action) for action, _ in finding.path]
        assert [after for _, after in replay(world, recorded)][-1] == \
            world.adopt(model.world.view(finding.path[-1][1]))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_reduced_search_agrees_with_the_plain_one(tmp_path: Path, name: str) -> None:
    path = _model(tmp_path, name)
    assert load(path).world.symmetry_group_size == MODELS[name][1]
    _compare(path)


def test_a_symmetric_system_without_packed_states(tmp_path: Path) -> None:
    """The generic path (no ``state_width``, ``expand_batch``, ``property_key``) reduces alike."""

    class Plain:
        def __init__(self, world: object) -> None:
            self._world = world

        def __getattr__(self, attr: str) -> object:
            if attr in ("expand_batch", "state_width", "property_key"):
                raise AttributeError(attr)
            return getattr(self._world, attr)

    path = _model(tmp_path, "u2-fan-out")
    fast = explore(load(path).world, stop_at_first=False)
    plain = explore(Plain(load(path).world), stop_at_first=False)  # type: ignore[arg-type]
    assert plain.stats.symmetry_group == 2
    assert (plain.stats.distinct, plain.stats.unreduced) == (fast.stats.distinct, fast.stats.unreduced)
    assert [(f.prop, len(f.path)) for f in plain.findings] == [(f.prop, len(f.path)) for f in fast.findings]


@pytest.mark.parametrize(("path", "group"), [("unicast2/scenario-7-disjoint-merge.toml", 2)])
def test_shipped_symmetric_models_agree(path: str, group: int) -> None:
    """(The three-member ring's reduced count is compared with its pinned plain count by every
    ``seqcheck check``: tests/models/test_shipped_models.py.)"""
    assert load(SHIPPED / path).world.symmetry_group_size == group
    _compare(SHIPPED / path)


def test_every_shipped_model_has_the_expected_group() -> None:
    """Only the models whose sends, views and scripts are alike for two members are reduced
    (the rest explore exactly as before)."""
    from models.modelfile import load_all

    symmetric = {str(p.relative_to(SHIPPED)) + "#" + m.protocol
                 for p in sorted(SHIPPED.rglob("*.toml")) for m in load_all(p)
                 if m.world.symmetry_group_size > 1}
    assert symmetric == {"bench/unicast3-bench.toml#unicast3", "side-by-side/scenario-7.toml#unicast2",
                         "bench/unicast3-newcomer.toml#unicast3",  # A and B alike (checked with reduction instead)
                         "side-by-side/scenario-7.toml#unicast3", "unicast2/scenario-7-disjoint-merge.toml#unicast2",
                         "unicast3/three-member-ring.toml#unicast3",
                         "unicast3/per-connection-ring.toml#unicast3",  # (checked with partial-order reduction instead)
                         # the multicast world (models/multicast_symmetry.py): B and C alike, A the coordinator
                         "nakack2/three-members-loss.toml#nakack2", "nakack4/three-members-loss.toml#nakack4",
                         "bench/nakack4-three-members-blocking.toml#nakack4",
                         "bench/nakack4-three-members-loss.toml#nakack4"}


GAPS = """description = "gaps both ways"
protocol = "{protocol}"
variant = {variant}
members = ["A", "B", "C"]
[sends]
"A->B" = 3
"B->A" = 3
"A->C" = 3
"C->A" = 3
[faults]
loss = 2
duplicate = 1
max_in_flight = 3
[check]
expect = "pass"
"""


@pytest.mark.parametrize(("protocol", "variant", "three"), [
    ("unicast2", [], True), ("unicast3", [], False), ("unicast3", [], True), ("unicast3", ["JGRP-1873"], True),
    ("unicast2", ["fix:JGRP-1873"], False), ("unicast2", ["fix:JGRP-1873"], True)])
def test_symmetries_map_successors_to_successors(tmp_path: Path, protocol: str, variant: list[str],
                                                 three: bool) -> None:
    """On states deep enough to have gaps, retransmissions and timestamps: the representative is
    the same from every member of an orbit, and renaming commutes with taking successors."""
    path = tmp_path / "gaps.toml"
    text = GAPS.format(protocol=protocol, variant=json.dumps(variant))
    if not three:
        text = text.replace(', "C"]', "]").replace('"A->C" = 3\n"C->A" = 3\n', "")
    path.write_text(text)
    world = load(path).world
    symmetry = world.symmetry
    assert symmetry.group_size == 2
    rng = random.Random(7)
    picked = list(world.init_states())
    for _ in range(200):  # random walks: deep states (gaps need a third message on a pair)
        state = world.init_states()[0]
        for _ in range(rng.randrange(5, 80)):
            steps = list(world.successors(state))
            if not steps:
                break
            state = rng.choice(steps)[1]
            if rng.random() < 0.05:
                picked.append(state)
    reps, sizes = world.canonical_batch(picked)
    images = [symmetry.image(state, 0) for state in picked]
    again, again_sizes = world.canonical_batch(images)
    assert again.tolist() == reps.tolist() and again_sizes == sizes
    for image, state in zip(images, picked):
        forward = sorted(symmetry.image(after, 0) for _, after in world.successors(state))
        assert forward == sorted(after for _, after in world.successors(image))
    assert sizes[0] == 1 and 2 in sizes  # the initial world is its own image; most are not


def test_model_file_turns_symmetry_off(tmp_path: Path) -> None:
    path = _model(tmp_path, "u3-both-ways-loss")
    path.write_text(path.read_text() + "symmetry = false\n")
    outcome = check_model(load(path), trace_dir=None)
    assert outcome.result.stats.symmetry_group == 1
    assert outcome.result.stats.distinct == outcome.result.stats.unreduced
    reduced = check_model(load(_model(tmp_path / "on", "u3-both-ways-loss")), trace_dir=None)
    assert reduced.result.stats.unreduced == outcome.result.stats.distinct > reduced.result.stats.distinct


def test_model_file_symmetry_must_be_a_flag(tmp_path: Path) -> None:
    path = _model(tmp_path, "u3-both-ways-loss")
    path.write_text(path.read_text() + "symmetry = 2\n")
    with pytest.raises(ModelError, match=r"check\.symmetry.*true or false"):
        load(path)


def test_timestamps_ranked_per_stream_keep_three_members_symmetric(tmp_path: Path) -> None:
    """A member stamps for all its peers from one counter; ranked per issuer, the ranks of what
    it stamped for B and for C would record an order that renaming B and C reverses."""
    path = tmp_path / "gaps.toml"
    path.write_text(GAPS.format(protocol="unicast3", variant="[]"))
    assert load(path).world.symmetry.group_size == 2


def test_views_naming_one_member_break_the_symmetry(tmp_path: Path) -> None:
    path = _model(tmp_path, "u3-both-ways-loss")
    path.write_text(path.read_text().replace("[check]", '[[views]]\nmember = "A"\nview = ["A"]\n\n[check]'))
    symmetry = load(path).world.symmetry
    assert symmetry.group_size == 1 and "views" in symmetry.reason
