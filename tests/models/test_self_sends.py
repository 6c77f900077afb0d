"""Messages to self in the point-to-point world (``"A->A"`` in ``[sends]``, UNICAST3's decision 26).

Invariants tested: the world has a channel from a member to itself exactly when the model sends on
it (so every other model keeps its state space); a protocol without the self path refuses the key in
one line naming it; the self channel's deliveries are checked like any other's (a spec that delivers
a message to self twice is caught by the properties), and the partial-order reduction and workers
give the one-process verdict on a self model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.explore.search import explore
from models.modelfile import ModelError, load
from spec import unicast3 as u3

MODELS = Path(__file__).resolve().parents[2] / "models"
SELF = MODELS / "unicast3" / "self-under-loss.toml"


def test_a_self_channel_exists_only_where_the_model_sends_on_it() -> None:
    assert [(s, d) for s, d in load(SELF).world.pairs if s == d] == [(0, 0)]
    assert all(s != d for s, d in load(MODELS / "unicast3" / "oob-under-loss.toml").world.pairs)


def test_a_protocol_without_the_self_path_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "u2.toml"
    path.write_text('protocol = "unicast2"\nmembers = ["A", "B"]\n[sends]\n"A->A" = 1\n[check]\nexpect = "pass"\n')
    with pytest.raises(ModelError, match=r'sends\.A->A: expected two different members \(protocol unicast2 has no '
                                         r"messages to self here; UNICAST3 has\)"):
        load(path)


def test_a_spec_that_delivers_to_self_twice_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    original = u3.on_data_from_self

    def twice(cfg: u3.Config, node: u3.Node, msg: u3.Data) -> u3.Step:
        step = original(cfg, node, msg)
        return u3.Step(step.node, step.effects + tuple(e for e in step.effects if type(e).__name__ == "Deliver"))

    monkeypatch.setattr(u3, "on_data_from_self", twice)
    model = load(SELF)
    first = explore(model.world, max_states=model.max_states).first()
    assert first is not None and first.prop == "no_duplicate"


@pytest.mark.parametrize("reduced", [True, False])
def test_reductions_keep_the_self_models_verdict(reduced: bool) -> None:
    model = load(SELF)
    if reduced:
        model.world.enable_partial_order()
    result = explore(model.world, max_states=model.max_states, partial_order=reduced, symmetry=not reduced)
    assert result.stats.complete and result.first() is None
