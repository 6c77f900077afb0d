"""Batches in the multicast world (``models/multicast_batch.py``, ``models/multicast_world.py`` rule 11;
spec decisions 16 and 17) and their models (``models/nakack2/batch-*.toml``, ``models/nakack4/batch-*.toml``).

Invariants tested: the witness needs the batch decision (NAKACK4's one ACK decision per delivered batch
does not replay with ack_threshold 3);
``max_batch = 0`` is the world without batches (NAKACK2: the same states, batches add transitions only);
a batch delivery consumes its packets, holds 2..max_batch packets of one channel, one bundle and one OOB
flag (never a control message with a MSG), and its candidates are those ``successors`` pairs it with; the key is refused
with one clear error for a value of 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.check import WitnessError, check_model, replay_witness
from checks.cli import MODELS_DIR
from models.modelfile import ModelError, load
from models.world import DeliverBatch

N2_LOSS = MODELS_DIR / "nakack2" / "batch-under-loss.toml"
N4_ACK = MODELS_DIR / "nakack4" / "batch-immediate-ack.toml"


def _variant_file(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text
    path = tmp_path / source.name
    path.write_text(text.replace(old, new).replace("\nstates = ", "\n# states = "))
    return path


def test_nakack4_immediate_ack_needs_the_threshold(tmp_path: Path) -> None:
    assert len(replay_witness(load(N4_ACK))) == 4
    higher = load(_variant_file(tmp_path, N4_ACK, "ack_threshold = 2", "ack_threshold = 3"))
    with pytest.raises(WitnessError, match="step 4"):
        replay_witness(higher)


def test_nakack2_batches_add_transitions_not_states(tmp_path: Path) -> None:
    off = load(_variant_file(tmp_path, N2_LOSS, "max_batch = 2", "max_batch = 0"))
    counts = [check_model(m, trace_dir=None).to_json()["unreduced_states"] for m in (off, load(N2_LOSS))]
    assert counts[0] == counts[1] == 19608


def test_batch_candidates_agree_with_successors() -> None:
    world = load(N4_ACK).world
    frontier, batches = [world.init_states()[0]], 0
    seen: set[tuple[int, ...]] = set()
    while frontier and len(seen) < 3000:
        state = frontier.pop(0)
        if state in seen:
            continue
        seen.add(state)
        steps = list(world.successors(state))
        pairs = [(a, s) for a, s in steps if type(a) is DeliverBatch]
        wanted = [(a, world.successor(state, a)) for a in world.candidates(state, DeliverBatch)]
        assert pairs == [(a, s) for a, s in wanted if s is not None]
        for action, after in pairs:
            batches += 1
            gone = set(world.view(state).network) - set(world.view(after).network)
            assert set(action.packets) <= gone and len(action.packets) == 2
            assert len({(p.src, p.dst, world.adapter.bundle(p.msg)) for p in action.packets}) == 1
            assert len({p.kind in ("Data", "XmitRsp") for p in action.packets}) == 1
        frontier += [s for _, s in steps]
    assert batches > 0


@pytest.mark.parametrize("protocol", ["nakack2", "nakack4"])
def test_max_batch_is_validated(tmp_path: Path, protocol: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f'protocol = "{protocol}"\nmembers = ["A", "B"]\n[sends]\nA = 1\n'
                    '[faults]\nmax_batch = 1\n[check]\nexpect = "pass"\n')
    with pytest.raises(ModelError, match=r"faults\.max_batch.*0 \(no batches\) or at least 2"):
        load(path)
