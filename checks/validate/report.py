"""The chart of a log's first disallowed step: the steps before it, as the trace viewer shows them.

This module owns turning a member's replayed steps (``checks/validate/member.py``'s ``Seen``) into
the charts every trace of seqcheck is drawn as (``checks/explore/render.py``'s ``ChartStep``): one
lane per member, an arrow for each datagram that arrived, notes for what was sent and delivered,
and, in the HTML viewer (``checks/view/html.py``), the spec member's state after every step. The
last step is the one the spec does not allow, marked with what differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checks.explore.render import Arrow, ChartStep, Note, render_chart
from checks.validate.member import MemberReplay, Violation
from checks.view.html import page_data, render_page
from models.state_fields import state_rows


def member_names(n: int) -> list[str]:
    return [chr(ord("A") + i) if n <= 26 else f"m{i}" for i in range(n)]


def _short(text: str, room: int = 90) -> str:
    return text if len(text) <= room else text[:room - 3] + "..."


def _describe(replay: MemberReplay, data_hex: str) -> str:
    try:
        return repr(replay.decode(bytes.fromhex(data_hex)))
    except ValueError as error:
        return f"malformed ({error})"


def chart_steps(replay: MemberReplay, violation: Violation | None, names: Sequence[str]) -> list[ChartStep]:
    me = replay.me
    seen = [(s.line, s.step, s.t, s.record) for s in replay.history]
    if violation is not None and replay.last is not None and replay.last[0] == violation.line:
        seen.append((violation.line, violation.step, violation.t, replay.last[1]))
    out: list[ChartStep] = []
    for index, (line, step, t, record) in enumerate(seen):
        events: list[Note | Arrow] = []
        ev = record.get("ev")
        title = f"line {line}, step {step}, t={t} ms: {names[me]} {ev}"
        if ev == "in" and isinstance(record.get("from"), int) and isinstance(record.get("data"), str):
            src = record["from"]
            events.append(Arrow(src if 0 <= src < len(names) else me, me,
                                _short(_describe(replay, record["data"]))))
        elif ev in ("send", "mcast"):
            to = record.get("to")
            title += f" {_short(str(record.get('payload', '')), 24)}"
            if ev == "send" and isinstance(to, int) and 0 <= to < len(names):
                title += f" to {names[to]}"
        elif ev in ("view", "join", "merge"):
            title += f" {record.get('members', record.get('view'))}"
        for item in record.get("out", []) if isinstance(record.get("out"), list) else []:
            if isinstance(item, list) and len(item) >= 2 and isinstance(item[1], str):
                dst = names[item[0]] if isinstance(item[0], int) and 0 <= item[0] < len(names) else str(item[0])
                events.append(Note(me, _short(f"-> {_describe(replay, item[1])} to {dst}")))
        for item in record.get("up", []) if isinstance(record.get("up"), list) else []:
            if isinstance(item, list) and len(item) == 2:
                events.append(Note(me, _short(f"» delivers {item[1]} from {item[0]}")))
        if violation is not None and index == len(seen) - 1 and line == violation.line:
            events.append(Note(me, _short(f"✗ {violation.what}", 200)))
        out.append(ChartStep(index + 1, title, tuple(events)))
    return out


def text_chart(replay: MemberReplay, violation: Violation | None) -> str:
    names = member_names(replay.n)
    footer = [] if violation is None else [f"not allowed: {violation.what}"]
    return render_chart(names, chart_steps(replay, violation, names), lane_width=40, footer=footer)


def write_page(out: Path, replay: MemberReplay, violation: Violation) -> Path:
    """The viewer page of the steps up to ``violation`` (the spec member's state after each)."""
    names = member_names(replay.n)
    steps = chart_steps(replay, violation, names)
    nodes = [replay.before, *(s.node for s in replay.history)]
    if len(steps) > len(replay.history):
        nodes.append(replay.history[-1].node if replay.history else replay.before)  # the refused step: no new state
    me = names[replay.me]
    layout = replay.adapter.state_layout
    states = [[(me, state_rows(node, layout, names))] for node in nodes]
    header = [f"{violation.path}: the first step the spec does not allow ({replay.header.protocol.name}, member {me})",
              f"line {violation.line}, step {violation.step}, t={violation.t} ms: {violation.what}"]
    footer = [f"spec:   {violation.spec}", f"logged: {violation.logged}"] if violation.spec or violation.logged else []
    data = page_data(f"seqcheck validate: {Path(violation.path).name}", header, names, steps, states,
                     [[] for _ in states], footer)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_page(data), encoding="utf-8")
    return out
