"""Messages to self in the point-to-point world (``"A->A"`` in ``[sends]``, UNICAST3's decision 26).

Invariants tested: the world has a channel from a member to itself exactly when the model sends on
it (so every other model keeps its state space); a protocol without the self path refuses the key in
one line naming it; the self channel's deliveries are checked like any other's (a spec that delivers
a message to self twice is caught by the properties), and the partial-order reduction and workers
give the one-process verdict on a self model. ``[dont_loopback]`` (UNICAST3's decision 27, UNICAST4's
13) is accepted on a member's sends to itself only, by the protocols that have it, each refusal one line
naming the key; a model with messages to self refuses batches; a DONT_LOOPBACK send to self is never
delivered (``no_self_delivery``) and is no loss, and the defect twin that delivers it is caught.
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
                                         r"messages to self here; UNICAST3 and UNICAST4 have\)"):
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


def test_the_retransmit_task_per_connection_runs_for_oneself_too(tmp_path: Path) -> None:
    """With ``[timers] xmit_per_connection``, the connection to oneself has its own retransmit run (its
    highest-sent resend brings back a lost last loopback): without it the model claimed a message to
    self lost for good (eventually_delivered violated, 3,570 states)."""
    path = _model(tmp_path, '[sends]\n"A->A" = 2\n"A->B" = 1\n[timers]\nxmit_per_connection = true\n'
                            '[faults]\nloss = 1\nmax_in_flight = 3', protocol="unicast3")
    model = load(path)
    result = explore(model.world, max_states=100_000)
    assert result.stats.complete and result.first() is None and result.stats.distinct == 12_362


def _model(tmp_path: Path, body: str, protocol: str = "unicast4") -> Path:
    path = tmp_path / "m.toml"
    path.write_text(f'protocol = "{protocol}"\nmembers = ["A", "B"]\n{body}\n[check]\nexpect = "pass"\n')
    return path


@pytest.mark.parametrize(("protocol", "body", "message"), [
    ("unicast4", '[sends]\n"A->B" = 2\n[dont_loopback]\n"A->B" = [1]',
     r'dont_loopback\.A->B: expected a member\'s sends to itself \("A->A"\): DONT_LOOPBACK on a unicast to another '
     r"member changes nothing in UNICAST3/UNICAST4"),
    ("unicast4", '[sends]\n"A->A" = 2\n[dont_loopback]\n"A->A" = [3]',
     r"dont_loopback\.A->A: expected a list of distinct send numbers from 1 to 2 \(sends\.A->A\), got \[3\]"),
    ("unicast2", '[sends]\n"A->B" = 1\n[dont_loopback]\n"A->B" = [1]',
     r"dont_loopback: expected no \[dont_loopback\] table: protocol unicast2 has no DONT_LOOPBACK unicasts to self "
     r"here \(UNICAST3 and UNICAST4 have\)"),
    ("unicast3", '[sends]\n"A->A" = 2\n[faults]\nmax_batch = 2',
     r'faults\.max_batch: expected 0 in a model with messages to self \("A->A" in \[sends\]\): batches from self '
     r"\(handleBatchFromSelf\) are not modelled"),
])
def test_flags_and_batches_refused_in_one_line(tmp_path: Path, protocol: str, body: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        load(_model(tmp_path, body, protocol))


def test_unicast4_takes_sends_to_self_and_their_flags(tmp_path: Path) -> None:
    model = load(_model(tmp_path, '[sends]\n"A->A" = 3\n[oob]\n"A->A" = [1]\n[dont_loopback]\n"A->A" = [1, 2]'))
    world = model.world
    assert [(s, d) for s, d in world.pairs if s == d] == [(0, 0)]
    assert world.send_stimulus(0, 0, 1) == ("send", 0, 1, "oob", "dont_loopback")
    assert world.send_stimulus(0, 0, 2) == ("send", 0, 2, "dont_loopback")
    assert world.send_stimulus(0, 0, 3) == ("send", 0, 3)


@pytest.mark.parametrize(("name", "verdict"), [("dont-loopback-mixed", None),
                                               ("dont-loopback-delivered", "no_self_delivery")])
def test_a_dont_loopback_send_to_self_is_never_delivered_and_no_loss(name: str, verdict: str | None) -> None:
    model = load(MODELS / "unicast4" / f"{name}.toml")
    assert "no_self_delivery" in [p.name for p in model.world.properties]
    first = explore(model.world, max_states=model.max_states).first()
    assert (first.prop if first is not None else None) == verdict
