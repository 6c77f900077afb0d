"""``seqcheck check --report DIR``: one static HTML page for a whole run, and a viewer page per counterexample.

It owns the report's table (every model: expected and actual verdict, states, depth, wall and CPU seconds, a link
to the counterexample's viewer page, written beside it by ``checks/view/html.py``). Every string is
escaped with ``html.escape``; the page has no script.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checks.check import display_path
from checks.explore.trace import validate
from checks.view.html import trace_text, write_page

_STYLE = """body { font-family: sans-serif; margin: 1em; } table { border-collapse: collapse; font-size: 0.9em; }
td, th { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; } td.num { text-align: right; }
tr.mismatch td { background: #fde2e2; } caption { text-align: left; margin-bottom: 0.5em; }"""


def page_name(label: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "model"
    name, n = f"{base}.html", 1
    while name in taken:
        n += 1
        name = f"{base}-{n}.html"
    taken.add(name)
    return name


def _viewer(folder: Path, outcome: Any, label: str, taken: set[str]) -> str:
    """The counterexample's viewer page under ``folder/traces`` (its name), or '' when there is none."""
    if outcome.trace is None or outcome.trace.kind == "divergence":
        return ""
    model = outcome.model
    path = validate(model.world, outcome.trace)
    protocol = model.protocol if model.side_by_side else None
    header, footer = trace_text(display_path(model.path), protocol, model, outcome.trace)
    name = page_name(label, taken)
    write_page(folder / "traces" / name, model.world, path, label, header, footer)
    return f"traces/{name}"


def write_check_report(folder: Path, outcomes: Sequence[Any], labels: Sequence[str]) -> Path:
    """Write ``folder/index.html`` for the run's ``outcomes`` (with their ``labels``); return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    rows = []
    for outcome, label in zip(outcomes, labels):
        stats = outcome.result.stats
        link = _viewer(folder, outcome, label, taken)
        trace = f'<a href="{html.escape(link)}">{len(outcome.trace.actions)} steps</a>' if link else "-"
        mark = "ok" if outcome.matches else f"MISMATCH: {outcome.mismatch_reason}"
        cells = [html.escape(label), html.escape(outcome.model.expect), html.escape(outcome.verdict),
                 f"{stats.distinct:,}", str(stats.depth), f"{outcome.seconds:.1f}", f"{outcome.cpu_seconds:.1f}", trace,
                 html.escape(mark)]
        kinds = ["", "", "", "num", "num", "num", "num", "", ""]
        tds = "".join(f'<td class="{k}">{c}</td>' if k else f"<td>{c}</td>" for k, c in zip(kinds, cells))
        rows.append(f'<tr class="{"ok" if outcome.matches else "mismatch"}">{tds}</tr>')
    bad = sum(not o.matches for o in outcomes)
    wall, cpu = sum(o.seconds for o in outcomes), sum(o.cpu_seconds for o in outcomes)
    models = "1 model" if len(outcomes) == 1 else f"{len(outcomes)} models"
    caption = (f"{models}, {len(outcomes) - bad} as expected, {bad} not; {wall:.1f} s (CPU {cpu:.1f} s). Verdicts "
               "hold within each model's bounds (sends, fault budgets, views).")
    head = "".join(f"<th>{h}</th>" for h in ("model", "expected", "verdict", "states", "depth", "seconds",
                                              "CPU seconds", "counterexample", ""))
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>seqcheck check report</title>'
            f"<style>{_STYLE}</style></head><body><h1>seqcheck check</h1>\n<table><caption>{html.escape(caption)}"
            f"</caption>\n<tr>{head}</tr>\n" + "\n".join(rows) + "\n</table></body></html>\n")
    index = folder / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
