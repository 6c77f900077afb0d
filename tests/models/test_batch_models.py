"""UNICAST3's batch models (``models/unicast3/batch-*.toml``; ``models/world.py`` rule 6b, spec decision 25),
and UNICAST4's where the world is the same (``models/unicast4/batch-*.toml``, its spec decision 11).

Invariants tested: the witness of ``batch-immediate-ack`` (an ACK at once for a batch of two) does not
replay with ack_threshold = 3, where the same batch leaves its ACK pending; batches (``[faults]
max_batch``) add transitions and states, and ``max_batch = 0`` is the world without them; a batch
delivery consumes its packets and its candidates are those ``successors`` pairs it with; the key is
refused with one clear error for a value of 1 and for a protocol without a batch input.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.check import WitnessError, check_model, replay_witness
from checks.cli import MODELS_DIR
from models.modelfile import ModelError, load
from models.world import DeliverBatch

IMMEDIATE = MODELS_DIR / "unicast3" / "batch-immediate-ack.toml"
LOSS = MODELS_DIR / "unicast3" / "batch-under-loss.toml"


def _variant_file(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text
    path = tmp_path / source.name
    path.write_text(text.replace(old, new).replace("\nstates = ", "\n# states = "))
    return path


def test_the_immediate_ack_needs_the_threshold(tmp_path: Path) -> None:
    assert len(replay_witness(load(IMMEDIATE))) == 4
    higher = load(_variant_file(tmp_path, IMMEDIATE, "ack_threshold = 2", "ack_threshold = 3"))
    with pytest.raises(WitnessError, match="step 4"):
        replay_witness(higher)


@pytest.mark.long  # three models of 58,957 to 70,502 states
def test_without_batches_the_world_is_the_plain_one(tmp_path: Path) -> None:
    off = load(_variant_file(tmp_path, LOSS, "max_batch = 3", "max_batch = 0"))
    on = load(LOSS)
    counts = [check_model(m, trace_dir=None).to_json()["unreduced_states"] for m in (off, on)]
    assert counts[0] < counts[1]
    plain = tmp_path / "plain.toml"
    plain.write_text(LOSS.read_text().replace("max_batch = 3\n", "").replace("\nstates = ", "\n# states = "))
    assert check_model(load(plain), trace_dir=None).to_json()["unreduced_states"] == counts[0]


U4_OOB = MODELS_DIR / "unicast4" / "batch-oob-under-loss.toml"


@pytest.mark.parametrize("path", [LOSS, U4_OOB], ids=lambda p: p.parent.name)
def test_batch_candidates_agree_with_successors(path: Path) -> None:
    world = load(path).world
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
            assert set(action.packets) <= gone and 2 <= len(action.packets) <= world.bounds.max_batch
            assert len({p.msg.oob for p in action.packets}) == 1
        frontier += [s for _, s in steps]
    assert batches > 0


@pytest.mark.parametrize("protocol, value, message", [
    ("unicast3", 1, "0 (no batches) or at least 2"),
    ("unicast4", 1, "0 (no batches) or at least 2"),
    ("unicast2", 2, "protocol unicast2 has no batch input"),
])
def test_max_batch_is_validated(tmp_path: Path, protocol: str, value: int, message: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f'protocol = "{protocol}"\nmembers = ["A", "B"]\n[sends]\n"A->B" = 1\n'
                    f'[faults]\nmax_batch = {value}\n[check]\nexpect = "pass"\n')
    with pytest.raises(ModelError, match=r"faults\.max_batch") as info:
        load(path)
    assert message in str(info.value)
