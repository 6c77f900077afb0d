"""The UNICAST4 engine against its spec on OOB sends and batches (``models/fuzz/unicast4-lockstep-oob.toml``,
``unicast4-lockstep-batch.toml``; spec/unicast4.py decision 10, spec/unicast4_batch.py decision 11): the
lockstep harness (checks/conform/differential.py) on seeded random walks, and the planted defects it must catch.

Invariant tested: on every walk, after every step (OOB sends, batch deliveries of both modes among them),
the engines emitted the spec's datagrams byte for byte (the OOB flag and the counted ACKs among them),
delivered the same payloads in the same order and hold the spec's abstract state (the OOB seqnos of a send
entry, the placeholders of a receive window, the ACK counters). A drain that counts OOB placeholders, a
batch whose adds are counted, an OOB DATA held as a regular one (delivered in order, not on receipt) and a
batch that keeps every conn_id must each be reported as a divergence.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast4 import receive
from impl.unicast4.codec import DataMsg
from impl.unicast4.state import Member, RecvEntry
from models.modelfile import Model, load
from models.world import DeliverBatch

OOB = MODELS_DIR / "fuzz" / "unicast4-lockstep-oob.toml"
BATCH = MODELS_DIR / "fuzz" / "unicast4-lockstep-batch.toml"
WALKS, STEPS = 30, 300


@pytest.fixture(scope="module")
def oob_model() -> Model:
    return load(OOB)


@pytest.fixture(scope="module")
def batch_model() -> Model:
    return load(BATCH)


def walks(model: Model, count: int = WALKS) -> Iterator[tuple[int, Any]]:
    for seed in range(count):
        yield seed, random_walk(model, seed, STEPS)


@pytest.mark.parametrize("which", ["oob", "batch"])
def test_engine_agrees_with_spec_on_random_walks(oob_model: Model, batch_model: Model, which: str) -> None:
    model = oob_model if which == "oob" else batch_model
    steps = 0
    for seed, result in walks(model):
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 2_000


def test_the_walks_send_oob_and_deliver_batches(batch_model: Model) -> None:
    """The batch walks do reach what they are for: OOB DATA on the wire and batch deliveries."""
    world, oob, batches = batch_model.world, 0, 0
    for seed in range(WALKS):
        rng, state = random.Random(seed), world.init_states()[0]
        for _ in range(STEPS):
            enabled = list(world.successors(state)) if world.within_bounds(state) else []
            if not enabled:
                break
            action, state = enabled[rng.randrange(len(enabled))]
            batches += type(action) is DeliverBatch
            packet = getattr(action, "packet", None)
            oob += packet is not None and bool(getattr(packet.msg, "oob", False))
    assert oob > 20 and batches > 20


REMOVE_AND_DELIVER, ON_BATCH, ADD = receive._remove_and_deliver, receive.on_batch, receive._add


def counts_placeholders(m: Member[int], src: int, entry: RecvEntry, before: Any, *, now: int) -> None:
    """The drain counts the OOB placeholders it passes over (an OOB message counted twice)."""
    placeholders = sum(1 for s in entry.window.seqnos() if s <= _run_end(entry) and _is_oob(entry, s))
    REMOVE_AND_DELIVER(m, src, entry, before, now=now)
    if placeholders:
        m.count_acks(src, entry, placeholders)


def _run_end(entry: RecvEntry) -> int:
    end = entry.window.hd
    while entry.window.get(end + 1) is not None:
        end += 1
    return end


def _is_oob(entry: RecvEntry, seqno: int) -> bool:
    held = entry.window.get(seqno)
    return held is not None and held.oob


def counts_batch_adds(m: Member[int], src: int, batch: list[DataMsg], *, now: int) -> None:
    """handleBatchReceived counting its adds (as addMessage does for a single DATA)."""
    ON_BATCH(m, src, batch, now=now)
    entry = m.recv.get(src)
    if entry is not None and entry.conn_id == batch[0].conn_id:
        m.count_acks(src, entry, len(batch))


def oob_held_as_regular(m: Member[int], src: int, entry: RecvEntry, msg: DataMsg, *, now: int) -> bool | None:
    """An OOB DATA added as a regular one: delivered in order by the drain, not on receipt."""
    return ADD(m, src, entry, DataMsg(msg.seqno, msg.conn_id, msg.first, msg.payload), now=now)


def keeps_every_conn_id(m: Member[int], src: int, batch: list[DataMsg], *, now: int) -> None:
    """A batch's DATA of every conn_id go through the single path's rule, one by one."""
    for msg in batch:
        receive.on_data(m, src, msg, now=now)


DEFECTS: dict[str, tuple[str, str, Callable[..., Any]]] = {
    "drain-counts-oob-placeholders": ("oob", "_remove_and_deliver", counts_placeholders),
    "batch-adds-counted": ("batch", "on_batch", counts_batch_adds),
    "oob-held-as-regular": ("oob", "_add", oob_held_as_regular),
    "batch-keeps-every-conn-id": ("batch", "on_batch", keeps_every_conn_id),
}


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_a_planted_defect_diverges(oob_model: Model, batch_model: Model, monkeypatch: pytest.MonkeyPatch,
                                   name: str) -> None:
    which, attribute, defect = DEFECTS[name]
    monkeypatch.setattr(receive, attribute, defect)
    model = oob_model if which == "oob" else batch_model
    found = next((seed for seed, result in walks(model, 200) if result.divergence is not None), None)
    assert found is not None, f"{name}: none of 200 walks diverged"
