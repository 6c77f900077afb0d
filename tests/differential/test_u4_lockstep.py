"""The lockstep harness (checks/conform/differential.py) on the UNICAST4 engine: agreement on random
walks (blocked sends resumed and failed included), and proof that it catches defects planted in the
engine.

Invariant tested: on every seeded random walk of the fuzz model, after every step the engines
emitted the spec's datagrams byte for byte (the spec side's from the reference codec), delivered
the same payloads and have the spec's abstract state. Each planted defect (a monkeypatched engine
handler) must be reported as a divergence within a bounded number of walks.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.fixed_window import FixedBuffer
from impl.unicast4 import receive, state, tasks
from impl.unicast4.codec import AckMsg, DataMsg, SendFirstSeqnoMsg
from impl.unicast4.state import Member, RecvEntry, SendEntry
from models.modelfile import Model, load
from models.world import FireTimer
from spec import unicast4 as u4

FUZZ = MODELS_DIR / "fuzz" / "unicast4-lockstep.toml"
WALKS, STEPS = 60, 300


@pytest.fixture(scope="module")
def model() -> Model:
    return load(FUZZ)


@pytest.mark.long
def test_engine_agrees_with_spec_on_random_walks(model: Model) -> None:
    steps = 0
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 5_000  # the walks really walked


@pytest.mark.long
def test_walks_reach_blocking_resuming_and_failing(model: Model) -> None:
    """The fuzz model is not vacuous for UNICAST4: random walks block sends, resume them (SEND) and
    close entries with sends blocked on them (CLOSE_BLOCKED)."""
    world, kinds = model.world, Counter[int]()
    for seed in range(WALKS):
        rng, state_ = random.Random(seed), world.init_states()[0]
        for _ in range(STEPS):
            steps = list(world.successors(state_))
            if not steps:
                break
            action, state_ = steps[rng.randrange(len(steps))]
            if isinstance(action, FireTimer):
                kinds[action.timer.kind] += 1
    assert kinds[u4.SEND] > 50 and kinds[u4.CLOSE_BLOCKED] > 0 and kinds[u4.IDLE_BLOCKED] > 0, kinds


def first_divergence(model: Model, walks: int = WALKS) -> tuple[int, str]:
    for seed in range(walks):
        result = random_walk(model, seed, STEPS)
        if result.divergence is not None:
            assert result.trace is not None and result.trace.seed == seed
            return seed, str(result.divergence)
    raise AssertionError(f"no divergence in {walks} walks: the harness missed the planted defect")


# -- planted defects ------------------------------------------------------------------------------
def purge_not_forced(m: Member[int], src: int, msg: AckMsg, *, now: int) -> None:
    """A non-forced purge (clamped to the send window's hd, which a sender never moves): nothing purges."""
    entry = m.send.get(src)
    if entry is None or entry.conn_id != msg.conn_id or not m.accept_timestamp(entry, msg.timestamp):
        return
    if entry.window.purge(msg.seqno, force=False) and entry.blocked:
        receive.resume(m, src, entry, now=now)


ORIGINAL_ON_DATA = receive.on_data


def answer_without_first_flag(m: Member[int], src: int, msg: SendFirstSeqnoMsg) -> None:
    """The answer to SEND_FIRST_SEQNO resends low+1 without marking it first."""
    entry = m.send.get(src)
    if entry is None or not m.accept_timestamp(entry, msg.timestamp):
        return
    payload = entry.window.get(entry.acked + 1)
    if payload is not None:
        m.emit(src, DataMsg(entry.acked + 1, entry.conn_id, entry.acked == 0, payload))


def blocks_one_early(self: FixedBuffer[bytes], seqno: int) -> bool:
    return seqno - self.low >= self.capacity


def no_reopen_on_send(m: Member[int], dst: int, entry: SendEntry, seqno: int, payload: bytes, *, now: int) -> None:
    state_ = entry.state
    ORIGINAL_ADD_AND_SEND(m, dst, entry, seqno, payload, now=now)
    entry.state = state_


ORIGINAL_ADD_AND_SEND = receive.add_and_send


def ack_pending_never_set(self: Member[int], peer: int, entry: RecvEntry, n: int) -> None:
    total = entry.acks_counted + n
    if total >= self.config.threshold:
        entry.acks_counted = 0
        self.send_ack(peer, entry)
    else:
        entry.acks_counted = total


DEFECTS: dict[str, tuple[object, str, Callable[..., object]]] = {
    "purge not forced": (receive, "on_ack", purge_not_forced),
    "SEND_FIRST_SEQNO answer without first flag": (receive, "on_send_first_seqno", answer_without_first_flag),
    "window full one early": (FixedBuffer, "full_for", blocks_one_early),
    "no reopen on send": (receive, "add_and_send", no_reopen_on_send),
    "no receive-side close expiry": (tasks, "remove_receive_connection", lambda m, peer: None),
}


@pytest.fixture(params=sorted(DEFECTS))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    owner, name, defect = DEFECTS[request.param]
    monkeypatch.setattr(owner, name, defect)
    yield request.param


def test_harness_catches_planted_defect(model: Model, planted: str) -> None:
    _seed, report = first_divergence(model)
    assert "differ" in report, report


def test_pending_ack_defect_caught_with_a_threshold(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With the fuzz model's capacity 2 the threshold is 0 (every count ACKs at once); with
    ack_threshold 3 the pending flag matters, and an engine that never sets it diverges."""
    path = tmp_path / "u4-threshold.toml"
    path.write_text(FUZZ.read_text().replace("capacity = 2\n", "capacity = 8\nack_threshold = 3\n"))
    monkeypatch.setattr(state.Member, "count_acks", ack_pending_never_set)
    _seed, report = first_divergence(load(path))
    assert "differ" in report, report
