"""The engine against the spec on OOB messages (``models/fuzz/unicast3-lockstep-oob.toml``): the
lockstep harness (checks/conform/differential.py) on seeded random walks, and the planted defects it
must catch.

Invariant tested: on every walk, after every step, the engines emitted the spec's datagrams byte for
byte (the OOB flag among them), delivered the same payloads in the same order and hold the spec's
abstract state (the send entries' OOB seqnos among it). A drain that delivers an OOB placeholder's
message again, an OOB message delivered only by the drain, and a resend without the flag must each be
reported as a divergence.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast3 import receive, state
from impl.unicast3.codec import DataMsg
from impl.unicast3.state import Member
from models.modelfile import Model, load

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep-oob.toml"
WALKS, STEPS = 40, 300


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


def test_the_model_flags_oob_sends_on_every_pair(model: Model) -> None:
    assert {(s, d) for s, d, _ in model.world.bounds.oob} == {(0, 1), (1, 0), (0, 2), (2, 1)}


def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000


def redeliver_drained(m: Member[int], src: int, items: list[DataMsg]) -> bool:
    m.deliver_all(src, items)  # placeholders included (they carry no payload: b"")
    return bool(items)


ORIGINAL_ADD_ONLY = receive._add_only


def oob_only_by_the_drain(m: Member[int], src: int, entry: receive.RecvEntry, msg: DataMsg, *, now: int,
                          cached: bool) -> bool:
    plain = DataMsg(msg.seqno, msg.conn_id, msg.first, msg.payload)
    return ORIGINAL_ADD_ONLY(m, src, entry, plain, now=now, cached=cached)


ORIGINAL_RESEND = state.Member.resend


def resend_without_flag(self: Member[int], dst: int, entry: object, seqnos: object, budget: object, *,
                        marked: int = 0) -> None:
    saved = entry.oob  # type: ignore[attr-defined]
    entry.oob = set()  # type: ignore[attr-defined]
    try:
        ORIGINAL_RESEND(self, dst, entry, seqnos, budget, marked=marked)  # type: ignore[arg-type]
    finally:
        entry.oob = saved  # type: ignore[attr-defined]


DEFECTS = {
    "redeliver-drained": (receive, "_deliver_drained", redeliver_drained),
    "oob-only-by-the-drain": (receive, "_add_only", oob_only_by_the_drain),
    "resend-without-flag": (state.Member, "resend", resend_without_flag),
}


@pytest.fixture(params=sorted(DEFECTS))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    owner, name, defect = DEFECTS[request.param]
    monkeypatch.setattr(owner, name, defect)
    yield request.param


def test_harness_catches_planted_defect(model: Model, planted: str) -> None:
    for seed in range(WALKS):
        if random_walk(model, seed, STEPS).divergence is not None:
            return
    raise AssertionError(f"{planted}: no divergence in {WALKS} walks")


def test_a_script_of_an_oob_path_sends_oob_and_exempts_it_from_in_order() -> None:
    """``seqcheck replay``'s script (checks/conform/replay.py): the witness of oob-message-cache sends
    its second message OOB, and the engine's delivery of #2 before #1 breaks nothing."""
    from checks.check import replay_witness
    from checks.conform.replay import script_calls
    from checks.conform.script import EngineScript

    model = load(MODELS_DIR / "unicast3" / "oob-message-cache.toml")
    calls = script_calls(model, replay_witness(model))
    assert [call.kwargs for call, _ in calls if call.method == "send"] == [(), (("oob", True),)]
    net = EngineScript(model.members)
    for call, _ in calls:
        call.run(net)
    assert net.violations == set() and net.delivered[("A", "B")] == {1, 2}
