"""Text message-sequence charts: one lane per member, packets as arrows, state changes as notes.

This module owns layout only. What happened at each step (who sent which packet, which packet
arrived or was lost, which state fields changed) is given to it as ``ChartStep`` values by the
model (``models/chart.py``); it knows nothing about protocols.

Conventions of the chart:
- A packet gets a name ``m<k>`` when it is first put on the wire; the sender's lane notes
  ``-> m<k> <message> to <member>``.
- Its arrival is an arrow from the sender's lane to the receiver's, labelled with the name, the
  message and the step it was sent at, so a late packet is visible at a glance.
- A lost packet is a dashed arrow ending in ``x`` short of the receiver.
- ``»`` lines under a member say what it did that its state changes do not say at a glance
  (a payload delivered, a window opened, seqnos purged, messages discarded, a packet ignored).
- ``·`` lines under a member are the fields of its state that the step changed (old -> new).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GUTTER = 6


@dataclass(frozen=True)
class Note:
    member: int
    text: str


@dataclass(frozen=True)
class Arrow:
    src: int
    dst: int
    label: str
    lost: bool = False


Event = Note | Arrow


@dataclass(frozen=True)
class ChartStep:
    index: int  # 1-based step number
    title: str  # the action, one line
    events: tuple[Event, ...]


def render_chart(members: Sequence[str], steps: Sequence[ChartStep], *, lane_width: int = 44,
                 footer: Sequence[str] = ()) -> str:
    """The whole chart as text."""
    lanes = _Lanes(len(members), lane_width)
    lines = [lanes.header(members), lanes.rule()]
    for step in steps:
        lines.append(f"{step.index:>{GUTTER - 2}}  {step.title}")
        for event in step.events:
            lines.extend(lanes.note(event) if isinstance(event, Note) else lanes.arrow(event))
    lines.append(lanes.rule())
    lines.extend(footer)
    return "\n".join(line.rstrip() for line in lines) + "\n"


class _Lanes:
    def __init__(self, count: int, width: int) -> None:
        self.count, self.width = count, width

    def column(self, member: int) -> int:
        return GUTTER + member * self.width

    def blank(self) -> str:
        row = [" "] * (GUTTER + self.count * self.width)
        for member in range(self.count):
            row[self.column(member)] = "│"
        return "".join(row)

    def header(self, members: Sequence[str]) -> str:
        row = " " * GUTTER
        for name in members:
            row += name.ljust(self.width)
        return row

    def rule(self) -> str:
        return "─" * (GUTTER + self.count * self.width)

    def note(self, note: Note) -> list[str]:
        """``note.text`` in its member's lane, wrapped to the lanes on its right if long."""
        start = self.column(note.member) + 2
        room = GUTTER + self.count * self.width - start
        text = note.text
        rows = []
        while text:
            chunk, text = _split(text, max(room, 20))
            row = list(self.blank())
            row.extend(" " * max(0, start + len(chunk) - len(row)))
            row[start:start + len(chunk)] = chunk
            rows.append("".join(row))
        return rows

    def arrow(self, arrow: Arrow) -> list[str]:
        """The label on its own row above the arrow, then the arrow from lane to lane."""
        src, dst = self.column(arrow.src), self.column(arrow.dst)
        left, right = min(src, dst), max(src, dst)
        label_row = self.note(Note(min(arrow.src, arrow.dst), arrow.label))
        row = list(self.blank())
        body = "╌" if arrow.lost else "─"
        for i in range(left + 1, right):
            row[i] = body
        if arrow.lost:
            end = right - 3 if dst > src else left + 3
            row[end] = "x"
            for i in (range(end + 1, right) if dst > src else range(left + 1, end)):
                row[i] = " "
        elif dst > src:
            row[right - 1] = "▶"
        else:
            row[left + 1] = "◀"
        return [*label_row, "".join(row)]


def _split(text: str, room: int) -> tuple[str, str]:
    if len(text) <= room:
        return text, ""
    cut = text.rfind(" ", 0, room)
    cut = room if cut <= 0 else cut
    return text[:cut], "  " + text[cut:].lstrip()
