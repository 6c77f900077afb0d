"""``World.expand_batch`` (models/batch.py) against ``World.successors``: same successor states in
the same order, the same fault flags, the same cut states, on every reachable world of small models
that between them use every world action (sends both ways, loss, duplication, views, receiver
removals, idle expiry, stale packets, real timestamps, conn_ids ranked among three members)."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

from checks.explore.search import explore
from models.modelfile import load

MODELS = {
    "loss-dup-both-ways": """
protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 2
"B->A" = 1
[faults]
loss = 1
duplicate = 1
max_in_flight = 2
[check]
expect = "pass"
""",
    "views-and-removals": """
protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 2
[faults]
loss = 1
receiver_removals = 1
[[views]]
member = "A"
view = ["A"]
[[views]]
member = "A"
view = ["A", "B"]
[check]
expect = "pass"
""",
    "stale-three-members": """
protocol = "unicast3"
members = ["A", "B", "C"]
[sends]
"A->B" = 1
"C->B" = 1
[faults]
duplicate = 1
receiver_removals = 1
stale_packets = true
max_in_flight = 2
[timers]
conn_expiry = true
[check]
expect = "pass"
""",
    "conn-ranks-three-members": """
protocol = "unicast3"
members = ["A", "B", "C"]
[sends]
"A->B" = 2
"A->C" = 1
"B->A" = 1
[faults]
loss = 1
receiver_removals = 1
max_in_flight = 2
[[views]]
member = "A"
view = ["A", "C"]
[[views]]
member = "A"
view = ["A", "B", "C"]
[check]
expect = "pass"
""",
}


def _load(tmp_path: Path, name: str, *, reduce_timestamps: bool = True):  # type: ignore[no-untyped-def]
    path = tmp_path / f"{name}.toml"
    path.write_text(MODELS[name])
    return load(path, reduce_timestamps=reduce_timestamps)


@pytest.mark.parametrize("reduce_timestamps", [True, False])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_batch_expansion_agrees_with_successors(tmp_path: Path, name: str, reduce_timestamps: bool) -> None:
    world = _load(tmp_path, name, reduce_timestamps=reduce_timestamps).world
    init = world.init_states()
    seen, queue, checked = set(init), deque(init), 0
    while queue and checked < 20_000:
        batch = [queue.popleft() for _ in range(min(len(queue), 64))]
        afters, counts, progress = world.expand_batch(batch)
        at = 0
        for state, count in zip(batch, counts):
            if not world.within_bounds(state):
                assert count == -1
                continue
            expected = list(world.successors(state))
            assert afters[at:at + count] == [after for _, after in expected]
            assert progress[at:at + count] == [not world.is_fault(action) for action, _ in expected]
            at += count
            checked += 1
            for _, after in expected:
                if after not in seen:
                    seen.add(after)
                    queue.append(after)
        assert at == len(afters) == len(progress)
    assert checked > 200


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(MODELS))
def test_checker_fast_path_finds_what_the_generic_path_finds(tmp_path: Path, name: str) -> None:
    """The same model explored with and without the world's optional capabilities."""

    class Plain:  # the TransitionSystem methods only
        def __init__(self, world: object) -> None:
            self._world = world

        def __getattr__(self, attr: str) -> object:
            if attr in ("expand_batch", "state_width", "property_key"):
                raise AttributeError(attr)
            return getattr(self._world, attr)

    fast = explore(_load(tmp_path, name).world, max_states=30_000, stop_at_first=False)
    plain = explore(Plain(_load(tmp_path, name).world), max_states=30_000, stop_at_first=False)  # type: ignore[arg-type]
    for field in ("distinct", "transitions", "depth", "cut", "max_frontier", "complete"):
        assert getattr(fast.stats, field) == getattr(plain.stats, field), field
    assert [(f.prop, f.kind, f.state_index, len(f.path)) for f in fast.findings] == \
        [(f.prop, f.kind, f.state_index, len(f.path)) for f in plain.findings]
    assert fast.witnessed == plain.witnessed


@pytest.mark.long
def test_emptied_memos_give_the_same_successors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule 3 of models/batch.py: the growing memos emptied every 64 entries change nothing."""
    import models.batch

    monkeypatch.setattr(models.batch, "MEMO_LIMIT", 64)
    test_batch_expansion_agrees_with_successors(tmp_path, "conn-ranks-three-members", True)
    world = _load(tmp_path, "conn-ranks-three-members").world
    small = explore(world, max_states=30_000, stop_at_first=False)
    expander = world._batch
    assert expander is not None and 0 < len(expander.hist_after) <= 64 and len(expander.handled) <= 64
    monkeypatch.setattr(models.batch, "MEMO_LIMIT", 2_000_000)
    large = explore(_load(tmp_path, "conn-ranks-three-members").world, max_states=30_000, stop_at_first=False)
    assert small.stats.distinct == large.stats.distinct and small.stats.levels == large.stats.levels
