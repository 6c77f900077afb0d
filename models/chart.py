"""What happened at each step of a world path, as chart events for ``checks/explore/render.py``.

For every step: the action's title; packets put on the wire (named ``m1``, ``m2``, ... in the
order they first appear, a name living as long as that packet is in flight); the packet that
arrived, was duplicated or was lost; what the step did that its state changes do not say at a
glance (``»`` lines: payloads delivered, receive windows opened or removed, seqnos purged,
unacknowledged messages discarded, a packet ignored); and, per member, the state fields that
changed. The footer describes the last state of every connection and names the violated property.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from checks.explore.render import Arrow, ChartStep, Event, Note, render_chart
from models.state_fields import GENERIC, StateLayout, state_rows
from models.world import (
    AppSend,
    DeliverBatch,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    InstallView,
    LosePacket,
    Packet,
    RemoveReceiver,
    World,
    WorldView,
)


def member_labels(world: World) -> tuple[str, ...]:
    """The members' names as charts print them (the model file's names, else their indices)."""
    return world.member_names or tuple(str(m) for m in range(world.n))


def chart(world: World, path: Sequence[tuple[Any, Any]], *, footer: Sequence[str] = ()) -> str:
    """The message-sequence chart of ``path`` (``[(action, state_after)]`` from the initial state)."""
    names = member_labels(world)
    steps, end = chart_steps(world, path)
    return render_chart(names, steps, footer=[*end, *footer])


def member_states(world: World, state: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every member's state as named rows (``models/state_fields.py``, by the protocol's declared layout),
    for the HTML viewer's panel."""
    names = member_labels(world)
    layout = world.adapter.state_layout
    return [(names[member], state_rows(node, layout, names)) for member, node in enumerate(world.view(state).nodes)]


def chart_steps(world: World, path: Sequence[tuple[Any, Any]]) -> tuple[list[ChartStep], list[str]]:
    """The chart's steps for ``path`` and the end-of-trace lines (each member's and connection's end state)."""
    names = member_labels(world)
    state_before: tuple[int, ...] = world.init_states()[0]
    before = world.view(state_before)
    in_flight: dict[Packet, tuple[str, int]] = {}  # packet -> (name, step it was sent at)
    arrivals: list[tuple[Packet, str, int]] = []  # packets that arrived, with name and step sent at
    counter = 0
    for packet in before.network:  # in flight from the start: none, unless drawn from a later state (a CTI's)
        counter += 1
        in_flight[packet] = (f"m{counter}", 0)
    steps: list[ChartStep] = []
    fmt = world.adapter.format_message
    for index, (action, state) in enumerate(path, 1):
        after = world.view(state)
        events: list[Event] = []
        arrived = getattr(action, "packet", None)
        if arrived is not None:
            label, sent_at = in_flight.get(arrived, ("m?", 0))
            text = f"{label} {fmt(arrived.kind, arrived.msg)}"
            late = _late(arrived, sent_at, arrivals)
            if not isinstance(action, LosePacket):
                arrivals.append((arrived, label, sent_at))
            if isinstance(action, LosePacket):
                events.append(Arrow(arrived.src, arrived.dst, f"{label} lost: {fmt(arrived.kind, arrived.msg)}", True))
            elif isinstance(action, DuplicatePacket):
                events.append(Arrow(arrived.src, arrived.dst, f"{text}, a duplicate{late}"))
            else:
                events.append(Arrow(arrived.src, arrived.dst, f"{text}{late}"))
        for packet in getattr(action, "packets", ()):  # a batch (rule 6b): an arrow per DATA
            label, sent_at = in_flight.get(packet, ("m?", 0))
            events.append(Arrow(packet.src, packet.dst, f"{label} {fmt(packet.kind, packet.msg)}, in a batch"))
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
        events.extend(_did(world, before, after, action, names))
        for member in range(world.n):
            for line in _changes(before.nodes[member], after.nodes[member], names, world.adapter.state_layout):
                events.append(Note(member, f"· {line}"))
        steps.append(ChartStep(index, world.format_action(action), tuple(events)))
        before, state_before = after, state
    end = [f"end state of {names[m]}: {line}" for m in range(world.n)
           for line in world.adapter.describe_node(before.nodes[m], names)]
    for s, d in world.pairs:
        end.extend(world.adapter.describe_pair(before.nodes[s], before.nodes[d], names))
    return steps, end


def _late(packet: Packet, sent_at: int, arrivals: Sequence[tuple[Packet, str, int]]) -> str:
    """`` (sent at step N)``, and which packets sent later on the same channel arrived before it."""
    if not sent_at:
        return ""
    overtaking = [name for other, name, other_sent in arrivals
                  if (other.src, other.dst) == (packet.src, packet.dst) and other_sent > sent_at]
    return f" (sent at step {sent_at})" + (f", overtaken by {', '.join(overtaking)}" if overtaking else "")


def _did(world: World, before: WorldView, after: WorldView, action: Any, names: Sequence[str]) -> list[Note]:
    """``»`` notes: what the member that acted did, from the observations its handler returned."""
    acting = _stimulus(world, before, action)
    if acting is None:
        return []
    member, stimulus = acting
    node = before.nodes[member]
    _, effects = world.adapter.handle(world.cfg, node, stimulus)
    notes = []
    for effect in effects:
        kind = type(effect).__name__
        if kind == "Deliver":
            notes.append(f"» delivers payload {effect.payload} from {names[effect.src]}")
        elif kind == "WindowCreated" and effect.src == member and world.adapter.has_connections:  # UNICAST3 26
            notes.append(f"» opens its send window to itself (conn_id={_conn(effect.conn_id)}): its messages to "
                         "itself are delivered from it")
        elif kind == "WindowCreated":
            conn = f" (conn_id={_conn(effect.conn_id)})" if world.adapter.has_connections else ""
            notes.append(f"» opens a receive window for {names[effect.src]}{conn}, next expected #{effect.offset + 1}")
        elif kind == "WindowRemoved":
            notes.append(f"» removes its receive window for {names[effect.src]}")
        elif kind == "Purged":
            entry = node.send[effect.dst]
            low = entry.acked + 1 if entry is not None and entry.conn_id == effect.conn_id else 1
            span = f"#{low}" if low == effect.upto else f"#{low}..#{effect.upto}"
            notes.append(f"» purges {span} from its send window to {names[effect.dst]} "
                         f"(conn_id={_conn(effect.conn_id)}): never sent again")
        elif kind == "SyncRequested":
            notes.append(f"» no receive window for {names[effect.dst]} on this connection: asks "
                         f"{names[effect.dst]} for its first seqno")
        elif kind == "SyncAnswered":
            notes.append(f"» answers the SEND_FIRST_SEQNO by resending {effect.resent} message"
                         + ("s" if effect.resent > 1 else ""))
        elif kind == "Discarded":
            payloads = ", ".join(map(str, effect.payloads))
            plural = "s" if len(effect.payloads) > 1 else ""
            notes.append(f"» discards unacknowledged payload{plural} {payloads} to {names[effect.dst]}")
    ended, unexcused = _judged(world, before, member, stimulus, effects, names)
    notes = ended + notes + unexcused
    if isinstance(action, (DeliverPacket, DuplicatePacket)) and not effects and after.nodes[member] == node:
        notes.append("» ignores it: nothing changes")
    return [Note(member, text) for text in notes]


END_CAUSES = {"stale-close": "a CLOSE of another connection", "older-first": "a first DATA of an older connection",
              "early-expiry": "conn_close_timeout while it was not CLOSING", "left-view": "a view without {peer}",
              "other": "this step"}


def _judged(world: World, before: WorldView, member: int, stimulus: Any, effects: tuple[Any, ...],
            names: Sequence[str]) -> tuple[list[str], list[str]]:
    """``»`` notes for what the world judges in this step: a receive window ended by a cause its
    protocol does not allow (no_spurious_reset), and a discard after a grace period that excuses
    nothing (``History.grace``: eventually_delivered still counts those messages)."""
    node, n = before.nodes[member], len(before.nodes)
    new, _ = world.adapter.handle(world.cfg, node, stimulus)
    notes, unexcused = [], []
    legitimate = getattr(world.adapter, "legitimate_window_ends", None)
    for kind, value in world.adapter.step_observations(node, new, stimulus, effects):
        if kind == "WindowEnded" and legitimate is not None and value.cause not in legitimate(world.cfg.variant):
            cause = END_CAUSES.get(value.cause, value.cause).format(peer=names[value.src])
            notes.append(f"» its receive window for {names[value.src]} (conn_id={_conn(value.conn_id)}) ends by "
                         f"{cause}: no_spurious_reset")
    for effect in effects:
        if type(effect).__name__ == "Discarded" and effect.flushed and not before.history.grace >> (
                member * n + effect.dst) & 1:
            unexcused.append(f"» not excused: the entry did not become CLOSING by {names[effect.dst]} leaving the "
                             f"view or by idling out, or {names[effect.dst]} is back in the view")
    return notes, unexcused


def _conn(conn_id: int) -> str:
    return "none" if conn_id < 0 else str(conn_id)


def _stimulus(world: World, before: WorldView, action: Any) -> tuple[int, Any] | None:
    """(member, handler input) of a world action, as ``World.step_effects`` derives them."""
    if isinstance(action, AppSend):
        sent = before.channel(action.src, action.dst).sent
        return action.src, world.send_stimulus(action.src, action.dst, sent + 1)
    if isinstance(action, (DeliverPacket, DuplicatePacket)):
        return action.packet.dst, action.packet
    if isinstance(action, DeliverBatch):
        return action.packets[0].dst, world.batch_stimulus(action)
    if isinstance(action, FireTimer):
        return action.member, ("timer", action.timer)
    if isinstance(action, InstallView):
        return action.member, ("view", frozenset(action.members))
    if isinstance(action, RemoveReceiver):
        return action.member, ("remove", action.peer)
    return None


def _changes(old: Any, new: Any, names: Sequence[str], layout: StateLayout = GENERIC) -> Iterator[str]:
    """``path: old -> new`` for every named row of a member's state that differs, worded as the
    viewer's panel words it (``models/state_fields.py``: ``send[B].acked: #1 -> #2``); an entry that
    appears or goes away is one line with its rows (``send[B]: none -> conn_id 0, state OPEN, ...``)."""
    if old == new:
        return
    before, after = dict(state_rows(old, layout, names)), dict(state_rows(new, layout, names))
    done: set[str] = set()
    for path in [*after, *(p for p in before if p not in after)]:
        if path in done:
            continue
        entry = path.split(".", 1)[0] if "[" in path.split(".", 1)[0] and "." in path else None
        if entry is not None and (not _under(before, entry) or not _under(after, entry)):
            rows = after if _under(after, entry) else before
            parts = ", ".join(f"{p[len(entry) + 1:]} {v}" for p, v in rows.items() if p.startswith(entry + "."))
            done.update(p for p in [*before, *after] if p.startswith(entry + "."))
            yield f"{entry}: none -> {parts}" if rows is after else f"{entry}: {parts} -> none"
            continue
        done.add(path)
        if before.get(path, "none") != after.get(path, "none"):
            yield f"{path}: {before.get(path, 'none')} -> {after.get(path, 'none')}"


def _under(rows: dict[str, str], entry: str) -> bool:
    return any(p.startswith(entry + ".") for p in rows)


def summary_lines(world: World, view: WorldView, describe: Callable[[Any, Sequence[str]], list[str]]) -> list[str]:
    names = member_labels(world)
    return [f"{names[m]}: {line}" for m in range(world.n) for line in describe(view.nodes[m], names)]
