"""Rule 5b of ``models/world.py`` (``models/conn_ranks.py``): conn_ids ranked per stream among three
members or more. The ranked world is the image of the unranked one, step for step: every reachable
unranked state ranks to a reachable ranked state and back, every unranked step maps to the ranked
step of the same action (named as ``canonical_action`` names it), and the verdicts agree, on small
models where members open several connections, reopen them after a view and lose receive windows."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

from checks.explore.search import explore
from models.conn_ranks import ConnRanks
from models.modelfile import load

VIEWS = '[[views]]\nmember = "A"\nview = ["A", "C"]\n[[views]]\nmember = "A"\nview = ["A", "B", "C"]\n'


def _model(faults: str, *, variant: str = "", views: bool = False, expect: str = "pass") -> str:
    """A opens a connection to B and one to C (one message each), with ``faults``."""
    return (f'protocol = "unicast3"\nmembers = ["A", "B", "C"]\nvariant = [{variant}]\n'
            f'[sends]\n"A->B" = 1\n"A->C" = 1\n[faults]\n{faults}\nmax_in_flight = 2\n'
            f'{VIEWS if views else ""}[check]\nexpect = "{expect}"\n')


MODELS = {
    "two-openings-and-a-view": _model("", views=True),
    "removals": _model("receiver_removals = 1"),
    "jgrp1548-three-members": _model("loss = 1", variant='"no_hs_resend"', expect="violation:eventually_delivered"),
    # JGRP-1586's variant: a view change removes both entries of a peer that left at once
    "jgrp1586-three-members": _model("", variant='"remove_on_view_change"', views=True),
}


def _worlds(tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.toml"
    path.write_text(MODELS[name])
    return load(path).world, load(path, rank_conn_ids=False).world


def _reachable(world, limit: int = 60_000, *, stop: bool = False) -> list[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    """Every reachable state (``stop``: the first ``limit``, breadth-first)."""
    init = world.init_states()
    seen, queue, order = set(init), deque(init), list(init)
    while queue:
        state = queue.popleft()
        if not world.within_bounds(state):
            continue
        for _, after in world.successors(state):
            if after not in seen:
                seen.add(after)
                queue.append(after)
                order.append(after)
        if stop and len(order) >= limit:
            return order[:limit]
        assert len(order) < limit, "the test model grew past its limit"
    return order


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(MODELS))
def test_ranked_world_is_the_image_of_the_unranked_one(tmp_path: Path, name: str) -> None:
    ranked, plain = _worlds(tmp_path, name)
    assert ranked.ranks_conn_ids and not plain.ranks_conn_ids
    plain_states = _reachable(plain)
    ranked_states = set(_reachable(ranked))
    image = {ranked.adopt(plain.view(state)) for state in plain_states}
    assert image == ranked_states
    assert len(ranked_states) < len(plain_states)  # the rule merges states in every one of these models
    for state in ranked_states:
        assert ranked.conn_ranks.streams_in_use(state[:ranked.n], state[ranked.n]) is None  # already ranks


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_unranked_step_is_a_ranked_step(tmp_path: Path, name: str) -> None:
    ranked, plain = _worlds(tmp_path, name)
    namer = ConnRanks(plain)  # names plain's actions as the ranked world does (canonical_action's part)
    for state in _reachable(plain)[:4_000]:
        if not plain.within_bounds(state):
            continue
        image = ranked.adopt(plain.view(state))
        for action, after in plain.successors(state):
            named = namer.renamed_action(state, action)
            assert ranked.successor(image, named) == ranked.adopt(plain.view(after)), (action, named)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_verdicts_agree(tmp_path: Path, name: str) -> None:
    ranked, plain = _worlds(tmp_path, name)
    with_rule = explore(ranked, stop_at_first=False, symmetry=False)
    without = explore(plain, stop_at_first=False, symmetry=False)
    assert with_rule.stats.complete and without.stats.complete
    assert sorted({f.prop for f in with_rule.findings}) == sorted({f.prop for f in without.findings})
    assert with_rule.stats.distinct < without.stats.distinct
    if with_rule.findings:  # the shortest counterexample is as short in both
        assert min(len(f.path) for f in with_rule.findings) == min(len(f.path) for f in without.findings)


def test_two_member_worlds_do_not_rank(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text('protocol = "unicast3"\nmembers = ["A", "B"]\n[sends]\n"A->B" = 1\n[check]\nexpect = "pass"\n')
    world = load(path).world
    assert world.conn_ranks is None and not world.ranks_conn_ids


def test_an_unreduced_world_names_actions_as_the_ranked_one(tmp_path: Path) -> None:
    """The lockstep harness's world (real timestamps, real conn_ids) keeps the ranking to name its
    actions and fingerprint its states as the checker's world does."""
    path = tmp_path / "m.toml"
    path.write_text(MODELS["two-openings-and-a-view"])
    ranked, unreduced = load(path).world, load(path, reduce_timestamps=False).world
    assert unreduced.conn_ranks is not None and not unreduced.ranks_conn_ids
    renamed = 0
    for state in _reachable(unreduced, 3_000, stop=True):  # real timestamps: an infinite graph
        image = ranked.adopt(unreduced.view(state))
        for action, after in unreduced.successors(state):
            named = unreduced.canonical_action(state, action)
            renamed += named != action
            assert ranked.successor(image, named) == ranked.adopt(unreduced.view(after))
    assert renamed > 0
