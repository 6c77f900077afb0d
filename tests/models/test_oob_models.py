"""UNICAST3's OOB models (``models/unicast3/oob-*.toml``; spec decision 12).

Invariants tested: the witness of ``oob-message-cache`` delivers #2 (OOB, cached) before #1 and each
once, and replays under the defect variant too, where the drain then delivers #2 again;
``oob-redelivers`` is the twin of ``oob-message-cache`` (the same world, the defect flag alone); a
world whose OOB choice breaks the members' symmetry is explored without that symmetry; and flagging
no send OOB gives the states of the model without ``[oob]``.
"""

from __future__ import annotations

from pathlib import Path

from checks.check import check_model, replay_witness
from checks.cli import MODELS_DIR
from models.modelfile import load

CACHE = MODELS_DIR / "unicast3" / "oob-message-cache.toml"
DEFECT = MODELS_DIR / "unicast3" / "oob-redelivers.toml"


def deliveries(path: list[tuple[object, object]], world: object) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    state = world.init_states()[0]  # type: ignore[attr-defined]
    for action, after in path:
        out += world.step_effects(state, action)[2]  # type: ignore[attr-defined]
        state = after
    return out


def test_the_cached_oob_message_is_delivered_first_and_once() -> None:
    model = load(CACHE)
    assert deliveries(replay_witness(model), model.world) == [(0, 2), (0, 1)]


def test_under_the_defect_the_drain_delivers_it_again() -> None:
    model = load(CACHE, variant=("oob_redelivers",))
    path = replay_witness(load(CACHE))  # the same actions, replayed on the defect's world
    state, out = model.world.init_states()[0], []
    for action, _ in path:
        out += model.world.step_effects(state, action)[2]
        state = model.world.successor(state, action)
    assert out == [(0, 2), (0, 1), (0, 2)]


def test_the_defect_model_is_the_twin_of_the_passing_one() -> None:
    cached, defect = load(CACHE), load(DEFECT)
    assert cached.world.bounds == defect.world.bounds and cached.world.bounds.oob == {(0, 1, 2)}
    assert (cached.variant, defect.variant) == ((), ("oob_redelivers",))
    assert (cached.expect, defect.expect) == ("pass", "violation:no_duplicate")


def test_an_oob_choice_on_one_direction_breaks_the_symmetry(tmp_path: Path) -> None:
    text = ('description = "d"\nprotocol = "unicast3"\nmembers = ["A", "B"]\n[sends]\n"A->B" = 1\n"B->A" = 1\n'
            '{oob}[check]\nexpect = "pass"\n')
    (tmp_path / "plain.toml").write_text(text.format(oob=""))
    (tmp_path / "oob.toml").write_text(text.format(oob='[oob]\n"A->B" = [1]\n'))
    (tmp_path / "both.toml").write_text(text.format(oob='[oob]\n"A->B" = [1]\n"B->A" = [1]\n'))
    plain, oob, both = (load(tmp_path / f"{n}.toml") for n in ("plain", "oob", "both"))
    assert plain.world.symmetry_group_size == 2 and both.world.symmetry_group_size == 2
    assert oob.world.symmetry_group_size == 1
    results = [check_model(m, trace_dir=None).to_json() for m in (plain, oob, both)]
    assert [r["verdict"] for r in results] == ["pass"] * 3
    assert len({r["unreduced_states"] for r in results}) == 1
