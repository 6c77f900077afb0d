"""The engine against the spec on messages to self (``models/fuzz/unicast3-lockstep-self.toml``,
spec decision 26): the lockstep harness (checks/conform/differential.py) on seeded random walks, and
the planted defects it must catch.

Invariant tested: on every walk, after every step, the engines emitted the spec's datagrams byte for
byte, delivered the same payloads in the same order and hold the spec's abstract state, with every
member sending itself messages (some OOB) beside its messages to others. An engine that treats itself
as a peer (a receive entry and ACKs: the 3.4.x path), one whose loopback delivers only the message it
carries, and one that delivers an OOB message to self again in line must each be reported; on the world with
DONT_LOOPBACK messages to self (decision 27) the walks agree too, and an engine delivering one is reported.
"""

from __future__ import annotations

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast3 import receive
from impl.unicast3.codec import DataMsg
from impl.unicast3.state import Member
from models.modelfile import Model, load

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep-self.toml"
WALKS, STEPS = 40, 300


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


def test_every_member_sends_itself_messages(model: Model) -> None:
    world = model.world
    assert [(s, d) for s, d in world.pairs if s == d] == [(0, 0), (1, 1), (2, 2)]
    assert {(s, d) for s, d, _ in world.bounds.oob if s == d} == {(0, 0), (1, 1), (2, 2)}


def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000


def as_peer(m: Member[int], src: int, msg: DataMsg, *, now: int) -> None:
    m.me = None  # the 3.4.x path: a receive entry for oneself, ACKed
    try:
        receive.on_data(m, src, msg, now=now)
    finally:
        m.me = src


def only_the_message_carried(m: Member[int], msg: DataMsg, *, now: int) -> None:
    entry = m.send.get(m.me) if m.me is not None else None
    if entry is None or not entry.window.hd < msg.seqno <= entry.window.hr:
        return
    if msg.seqno == entry.window.hd + 1:
        m.deliver(m.me, entry.window.get(msg.seqno) or b"")  # type: ignore[arg-type]
        entry.window.purge(msg.seqno, force=True)


ORIGINAL = receive.on_data_from_self


def oob_again_in_line(m: Member[int], msg: DataMsg, *, now: int) -> None:
    entry = m.send.get(m.me) if m.me is not None else None
    if entry is not None and msg.oob and msg.seqno in entry.oob:
        entry.oob.discard(msg.seqno)  # forget that it went OOB: the drain below delivers it again
        if entry.window.hd < msg.seqno <= entry.window.hr:
            m.deliver(m.me, entry.window.get(msg.seqno) or b"")  # type: ignore[arg-type]
    ORIGINAL(m, msg, now=now)


DEFECTS = {
    "as-peer": ("on_data_from_self", as_peer),
    "only-the-message-carried": ("on_data_from_self", only_the_message_carried),
    "oob-again-in-line": ("on_data_from_self", oob_again_in_line),
}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_planted_defects_are_caught(model: Model, defect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, replacement = DEFECTS[defect]
    if defect == "as-peer":
        monkeypatch.setattr(receive, name, lambda m, msg, *, now: as_peer(m, m.me, msg, now=now))
    else:
        monkeypatch.setattr(receive, name, replacement)
    found = [random_walk(model, seed, STEPS).divergence for seed in range(WALKS)]
    assert any(d is not None for d in found), defect


DONT_LOOPBACK = MODELS_DIR / "fuzz" / "unicast3-lockstep-self-dont-loopback.toml"


def test_engine_agrees_with_spec_on_dont_loopback_walks() -> None:
    """Decision 27: some messages to self DONT_LOOPBACK (never sent, never delivered, never resent)."""
    model = load(DONT_LOOPBACK)
    assert {s for s, d, _ in model.world.bounds.dont_loopback if s == d} == {0, 1, 2}
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000


def delivers_dont_loopback(m: Member[int], msg: DataMsg, *, now: int) -> None:
    entry = m.send.get(m.me) if m.me is not None else None
    if entry is not None:
        entry.dont_loopback.clear()  # the drain below delivers them too
    ORIGINAL(m, msg, now=now)


def test_an_engine_delivering_dont_loopback_to_self_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(receive, "on_data_from_self", delivers_dont_loopback)
    model = load(DONT_LOOPBACK)
    found = [random_walk(model, seed, STEPS).divergence for seed in range(WALKS)]
    assert any(d is not None for d in found)
