"""The viewer's state panel (models/state_fields.py): each protocol's declared layout matches its spec's
fields, and every state the first levels of a shipped model reach reads as named rows, members by name,
with no Python repr."""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from checks.cli import MODELS_DIR
from models.chart import member_labels, member_states
from models.modelfile import load
from models.state_fields import StateLayout, state_rows

MODELS = {
    "unicast2": MODELS_DIR / "unicast2/jgrp1563-no-first-ack.toml",
    "unicast3": MODELS_DIR / "unicast3/jgrp1873-no-timestamps.toml",
    "unicast4": MODELS_DIR / "unicast4/close-releases-blocked.toml",
    "nakack2": MODELS_DIR / "nakack2/below-drop-no-xmit.toml",
    "nakack4": MODELS_DIR / "nakack4/jgrp2853.toml",
}
REPR = re.compile(r"\b(None|True|False)\b|\w+Entry\(|Window\(|\[_|\(\d+, |frozenset")


def _records(cls: type) -> Iterator[type]:
    """``cls`` and every dataclass its fields hold (a node's send and receive entries, its windows)."""
    yield cls
    for hint in typing.get_type_hints(cls).values():
        for arg in _leaves(hint):
            if dataclasses.is_dataclass(arg) and isinstance(arg, type) and arg is not cls:
                yield from _records(arg)


def _leaves(hint: Any) -> Iterator[Any]:
    yield hint
    for arg in typing.get_args(hint):
        yield from _leaves(arg)


def _variadic(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple and typing.get_args(hint)[-1:] == (Ellipsis,)


def _spec_fields(protocol: str) -> tuple[Any, set[str]]:
    """A protocol's world and the names of every field of its node and the records the node holds."""
    world: Any = load(MODELS[protocol]).world
    node = world.view(world.init_states()[0]).nodes[0]
    return world, {name for record in _records(type(node)) for name in typing.get_type_hints(record)}


@pytest.mark.parametrize("protocol", sorted(MODELS))
def test_every_tuple_field_says_what_its_positions_are(protocol: str) -> None:
    """A tuple of a protocol's state is declared per member, seqnos, entries of named parts, or a fixed
    tuple of named parts: a field added to a spec without saying so fails here, not in a reader's panel."""
    world, _ = _spec_fields(protocol)
    layout: StateLayout = world.adapter.state_layout
    node = world.view(world.init_states()[0]).nodes[0]
    declared = layout.per_member | layout.seqnos | set(layout.entries) | set(layout.parts)
    for record in _records(type(node)):
        for name, hint in typing.get_type_hints(record).items():
            if typing.get_origin(hint) is tuple:
                assert name in declared, f"{protocol}: {record.__name__}.{name} is a tuple no layout explains"
                if not _variadic(hint):
                    assert len(layout.parts.get(name, ())) == len(typing.get_args(hint)), name
    for name in layout.per_member:
        assert len(getattr(node, name, ())) in (0, world.n), name


def test_layouts_name_only_fields_their_protocols_have() -> None:
    """A layout shared by several protocols (the unicast ones) names only fields one of them has."""
    sharing: dict[int, tuple[StateLayout, set[str]]] = {}
    for protocol in MODELS:
        world, names = _spec_fields(protocol)
        layout = world.adapter.state_layout
        sharing.setdefault(id(layout), (layout, set()))[1].update(names)
    for layout, names in sharing.values():
        mentioned = (layout.per_member | layout.member_set | set(layout.enums) | set(layout.absent)
                     | (layout.member - {"from", "sender"}) | set(layout.entries) | set(layout.parts))
        assert mentioned <= names, f"the layout names fields no spec has: {mentioned - names}"


def _reachable(world: Any, limit: int) -> list[Any]:
    """The first ``limit`` states of a breadth-first search (a deterministic sample with faults in it)."""
    seen = list(world.init_states())
    index = 0
    while index < len(seen) and len(seen) < limit:
        for _, state in world.successors(seen[index]):
            if state not in seen:
                seen.append(state)
        index += 1
    return seen[:limit]


@pytest.mark.parametrize("protocol", sorted(MODELS))
def test_reachable_states_read_as_named_fields(protocol: str) -> None:
    world: Any = load(MODELS[protocol]).world
    names = member_labels(world)
    assert all(not name.isdigit() for name in names)
    for state in _reachable(world, 150):
        members = member_states(world, state)
        assert [m for m, _ in members] == list(names)
        for name, rows in members:
            row = dict(rows)
            assert len(row) == len(rows), f"a path named twice: {rows}"
            assert row["me"] == name
            assert [(k, v) for k, v in rows if REPR.search(v)] == []
            for key in row:
                index = re.findall(r"\[([^\]]+)\]", key)
                assert all(i in names for i in index), key


def test_positions_are_named_by_member_and_part() -> None:
    """UNICAST3's send entry: one row per field, the watermark's two positions by name; NAKACK4's ack_table:
    one row per member with an entry (NO_ENTRY left out)."""
    from spec import nakack4_state, unicast3

    u3: Any = load(MODELS["unicast3"]).world
    entry = unicast3.SendEntry(conn_id=0, state=unicast3.CLOSING, acked=1, unacked=(2, 3), watermark=(1, 3),
                               last_ts=0, oob=frozenset({3}))
    node = dataclasses.replace(u3.view(u3.init_states()[0]).nodes[0], send=(None, entry))
    rows = dict(state_rows(node, u3.adapter.state_layout, ("A", "B")))
    assert rows["send[B].state"] == "CLOSING" and rows["send[B].unacked"] == "#2, #3"
    assert rows["send[B].watermark.highest_acked"] == "1" and rows["send[B].watermark.highest_sent"] == "3"
    assert rows["send[B].oob"] == "#3" and "send[A].conn_id" not in rows and rows["recv"] == "none"
    n4: Any = load(MODELS["nakack4"]).world
    node4 = n4.view(n4.init_states()[0]).nodes[0]
    node4 = dataclasses.replace(node4, ack_table=(4, nakack4_state.NO_ENTRY),
                                deliverer=(nakack4_state.READY, nakack4_state.STUCK))
    rows = dict(state_rows(node4, n4.adapter.state_layout, ("A", "B")))
    assert rows["ack_table[A]"] == "4" and "ack_table[B]" not in rows
    assert rows["deliverer[A]"] == "READY" and rows["deliverer[B]"] == "STUCK"

