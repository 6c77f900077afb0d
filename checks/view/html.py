"""The self-contained HTML trace viewer: one file, inline script and style, no network.

It owns turning the chart's steps (``models/chart.py``, the same replay the text chart uses, so it
knows nothing about protocols) into a page: one lane per member, packet arrows from the send step
to the arrival step (lost ones dashed with a cross, duplicates marked), notes as lane marks, and a
side panel with every member's state after the selected step as named fields (``models/state_fields.py``;
changed fields highlighted) and the full text of what the step did. Its title is the model file's path in
the repository, or its file name outside it (never an absolute path).
Trace data reaches the page only as JSON inside ``<script type="application/json">`` with ``<``,
``>`` and ``&`` escaped, and the script renders it with ``textContent``: a trace cannot inject markup.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checks.explore.render import Arrow, ChartStep, Note

_SENT = re.compile(r"-> (m\d+) ")
_NAME = re.compile(r"(m\d+|m\?) ")
_ASSETS = Path(__file__).with_name("assets")
_ROOT = Path(__file__).resolve().parents[2]


def model_title(model_path: Path) -> str:
    """A model file as a viewer page's title: its path in the repository, else its file name."""
    resolved = Path(model_path).resolve()
    try:
        return resolved.relative_to(_ROOT).as_posix()
    except ValueError:
        return resolved.name


def page_data(title: str, header: Sequence[str], members: Sequence[str], steps: Sequence[ChartStep],
              states: Sequence[list[tuple[str, list[tuple[str, str]]]]], in_flight: Sequence[list[str]],
              footer: Sequence[str]) -> dict[str, Any]:
    """The viewer's data: ``states[i]`` is every member's fields after step ``i`` (``states[0]``: initial),
    ``in_flight[i]`` the packets in flight then."""
    sent_at: dict[str, int] = {}
    rows = []
    for step in steps:
        arrows, notes = [], []
        for event in step.events:
            if isinstance(event, Note):
                match = _SENT.match(event.text)
                if match:
                    sent_at[match.group(1)] = step.index
                notes.append({"member": event.member, "text": event.text})
            elif isinstance(event, Arrow):
                name = _NAME.match(event.label)
                sent = sent_at.get(name.group(1), step.index) if name else step.index
                arrows.append({"src": event.src, "dst": event.dst, "label": event.label, "lost": event.lost,
                               "duplicate": "a duplicate" in event.label, "sent": sent})
        rows.append({"index": step.index, "title": step.title, "arrows": arrows, "notes": notes})
    return {"title": title, "header": list(header), "members": list(members), "steps": rows,
            "states": [[{"member": m, "fields": [list(f) for f in fields]} for m, fields in s] for s in states],
            "in_flight": [list(packets) for packets in in_flight], "footer": list(footer)}


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` survives literally."""
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_page(data: dict[str, Any]) -> str:
    """The whole HTML page: the data as JSON, the viewer's style and script inline."""
    style = (_ASSETS / "viewer.css").read_text(encoding="utf-8")
    script = (_ASSETS / "viewer.js").read_text(encoding="utf-8")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
            f"<title>{html.escape(data['title'])} — seqcheck trace</title>\n"
            f"<style>\n{style}</style></head>\n<body>\n"
            "<header><h1 id=\"title\"></h1><pre id=\"summary\"></pre></header>\n"
            "<main><div id=\"chart\"></div><aside id=\"panel\"><h2 id=\"step-title\"></h2>"
            "<h3>What the step did</h3><ul id=\"notes\"></ul>"
            "<div id=\"states\"></div><h3>Packets in flight</h3><ul id=\"in-flight\"></ul></aside></main>\n"
            "<footer><pre id=\"footer\"></pre></footer>\n"
            f"<script type=\"application/json\" id=\"trace-data\">{embed_json(data)}</script>\n"
            f"<script>\n{script}</script>\n</body></html>\n")


def trace_page(world: Any, path: Sequence[tuple[Any, Any]], title: str, header: Sequence[str],
               footer: Sequence[str]) -> str:
    """The viewer page of ``path`` in a world of ``models/world.py`` or ``models/multicast_world.py``."""
    from models.chart import chart_steps, member_labels, member_states

    names = member_labels(world)
    steps, end = chart_steps(world, path)
    states = [world.init_states()[0], *(state for _, state in path)]
    fmt = world.adapter.format_message
    in_flight = [[f"{fmt(p.kind, p.msg)}: {names[p.src]} -> {names[p.dst]}" for p in world.view(s).network]
                 for s in states]
    data = page_data(title, header, names, steps, [member_states(world, s) for s in states], in_flight,
                     [*end, *footer])
    return render_page(data)


def write_page(out: Path, world: Any, path: Sequence[tuple[Any, Any]], title: str, header: Sequence[str],
               footer: Sequence[str]) -> None:
    """Write the viewer page of ``path`` to ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(trace_page(world, path, title, header, footer), encoding="utf-8")


def trace_text(model_path: Path, protocol: str | None, model: Any, trace: Any) -> tuple[list[str], list[str]]:
    """What ``seqcheck show`` prints above a trace's chart (model, verdict) and below it (the violated property)."""
    kind = {"always": "safety property ", "liveness": "liveness property "}.get(trace.kind, "")
    doc = next((p.doc for p in model.world.properties if p.name == trace.prop), "")
    on = f" [{protocol}]" if protocol else ""
    header = [f"{model_path}{on}: {model.description}"]
    if trace.kind == "divergence":
        seed = f" (random walk, seed {trace.seed})" if trace.seed is not None else ""
        header.append(f"the engine diverges from the spec at step {len(trace.actions)}{seed}: "
                      f"{trace.summary[-1] if trace.summary else ''}")
    else:
        how = trace.origin or ("a shortest counterexample" if trace.seed is None
                               else f"found by a random schedule, seed {trace.seed}")
        header.append(f"violates {kind}{trace.prop} after {len(trace.actions)} steps ({how})")
    footer = [f"violated: {trace.prop}" + (f" — {' '.join(doc.split())}" if doc else "")]
    if trace.kind == "liveness":
        footer.append(f"from this state no continuation without further faults reaches what {trace.prop} asks for")
    return header, footer
