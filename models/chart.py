"""What happened at each step of a world path, as chart events for ``checks/render.py``.

For every step: the action's title; packets put on the wire (named ``m1``, ``m2``, ... in the
order they first appear, a name living as long as that packet is in flight); the packet that
arrived, was duplicated or was lost; and, per member, the state fields that changed. The footer
describes the last state of every connection and names the violated property.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from checks.render import Arrow, ChartStep, Event, Note, render_chart
from models.world import DeliverPacket, DuplicatePacket, LosePacket, Packet, World, WorldView

PER_PEER_FIELDS = {"send", "recv", "xmit_last"}
STATE_NAMES = ("OPEN", "CLOSING")  # connection states of the unicast specs


def chart(world: World, path: Sequence[tuple[Any, Any]], *, footer: Sequence[str] = ()) -> str:
    """The message-sequence chart of ``path`` (``[(action, state_after)]`` from the initial state)."""
    names = world.member_names or tuple(str(m) for m in range(world.n))
    state_before: tuple[int, ...] = world.init_states()[0]
    before = world.view(state_before)
    in_flight: dict[Packet, tuple[str, int]] = {}  # packet -> (name, step it was sent at)
    counter = 0
    steps: list[ChartStep] = []
    fmt = world.adapter.format_message
    for index, (action, state) in enumerate(path, 1):
        after = world.view(state)
        events: list[Event] = []
        arrived = getattr(action, "packet", None)
        if arrived is not None:
            label, sent_at = in_flight.get(arrived, ("m?", 0))
            text = f"{label} {fmt(arrived.kind, arrived.msg)}"
            late = f" (sent at step {sent_at})" if sent_at else ""
            if isinstance(action, LosePacket):
                events.append(Arrow(arrived.src, arrived.dst, f"{label} lost: {fmt(arrived.kind, arrived.msg)}", True))
            elif isinstance(action, DuplicatePacket):
                events.append(Arrow(arrived.src, arrived.dst, f"{text}, a duplicate{late}"))
            else:
                events.append(Arrow(arrived.src, arrived.dst, f"{text}{late}"))
        emitted = world.emitted(state_before, action)
        for packet in after.network:
            if packet not in in_flight or (packet == arrived and isinstance(action, DeliverPacket)):
                counter += 1
                in_flight[packet] = (f"m{counter}", index)
                events.append(Note(packet.src, f"-> m{counter} {fmt(packet.kind, packet.msg)} to {names[packet.dst]}"))
        for packet in emitted:
            if packet in before.network and packet != arrived:
                events.append(Note(packet.src, f"-> {in_flight[packet][0]} again (a copy is still in flight)"))
        for packet in list(in_flight):
            if packet not in after.network:
                del in_flight[packet]
        for member in range(world.n):
            for line in _changes(before.nodes[member], after.nodes[member], names):
                events.append(Note(member, f"· {line}"))
        steps.append(ChartStep(index, world.format_action(action), tuple(events)))
        before, state_before = after, state
    end = [f"end state of {names[m]}: {line}" for m in range(world.n)
           for line in world.adapter.describe_node(before.nodes[m], names)]
    for s, d in world.pairs:
        end.extend(world.adapter.describe_pair(before.nodes[s], before.nodes[d], names))
    return render_chart(names, steps, footer=[*end, *footer])


def _changes(old: Any, new: Any, names: Sequence[str], path: str = "") -> Iterator[str]:
    """``field: old -> new`` for every leaf of a frozen state value that differs."""
    if old == new:
        return
    if dataclasses.is_dataclass(old) and type(old) is type(new):
        for field in dataclasses.fields(old):
            name = field.name
            a, b = getattr(old, name), getattr(new, name)
            if name in PER_PEER_FIELDS and isinstance(a, tuple):
                for peer, (x, y) in enumerate(zip(a, b)):
                    yield from _changes(x, y, names, f"{path}{name}[{names[peer]}]")
            else:
                yield from _changes(a, b, names, f"{path}.{name}" if path else name)
        return
    if path.endswith(".state") and isinstance(old, int) and isinstance(new, int):
        yield f"{path}: {STATE_NAMES[old]} -> {STATE_NAMES[new]}"
        return
    yield f"{path}: {_value(old, names)} -> {_value(new, names)}"


def _value(value: Any, names: Sequence[str]) -> str:
    if value is None:
        return "none"
    if isinstance(value, frozenset):
        return "{" + ", ".join(names[m] for m in sorted(value)) + "}"
    if dataclasses.is_dataclass(value):
        parts = []
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if isinstance(item, bool):
                parts.extend([f.name] if item else [])
            elif f.name == "state" and isinstance(item, int):
                parts.append(STATE_NAMES[item] if item < len(STATE_NAMES) else str(item))
            else:
                parts.append(f"{f.name}={_value(item, names)}")
        return f"{type(value).__name__}({', '.join(parts)})"
    if isinstance(value, tuple) and value and all(v is None or hasattr(v, "seqno") for v in value):
        return "[" + ", ".join("_" if v is None else f"#{v.seqno}" for v in value) + "]"
    return repr(value)


def summary_lines(world: World, view: WorldView, describe: Callable[[Any, Sequence[str]], list[str]]) -> list[str]:
    names = world.member_names or tuple(str(m) for m in range(world.n))
    return [f"{names[m]}: {line}" for m in range(world.n) for line in describe(view.nodes[m], names)]
