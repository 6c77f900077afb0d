"""``seqcheck fuzz ... --report DIR``: one static HTML page for a fuzz job, and a viewer page per failure.

It owns the page: the job's summary, coverage against schedules (distinct states after the first
``n`` runs, ``checks/fuzz/curve.py``) as an inline SVG line chart, the fault x phase table
(``checks/fuzz/coverage.py``) as an inline SVG heat map, and every failure with its shrunk trace
linked to its viewer page (``DIR/traces/*.html``, written by ``checks/view/html.py``). The plots
are SVG elements with numeric attributes; every string on the page is escaped with
``html.escape``; the page has no script.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checks.check import display_path
from checks.explore.trace import TraceError, validate
from checks.fuzz.coverage import TOTAL_ROW, UNICAST, Scheme, scheme_for
from checks.view.html import trace_text, write_page
from checks.view.report import page_name

_STYLE = """body { font-family: sans-serif; margin: 1em; max-width: 60em; } table { border-collapse: collapse;
font-size: 0.9em; } td, th { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; }
td.num { text-align: right; } .mismatch { background: #fde2e2; } .ok { background: #e2f5e2; }
svg text { font-family: sans-serif; font-size: 11px; } dt { font-weight: bold; } dd { margin-bottom: 0.3em; }"""

def _heat_caption(scheme: Scheme) -> str:
    where = "on a connection it touched" if scheme is UNICAST else "at a member it concerned"
    return (f"Each fault counted once per phase that held {where}, just before it; summed over every run. "
            "Shade: log of the count. Grey: never.")



_LIGHT, _DARK = (0xF7, 0xFB, 0xFF), (0x08, 0x30, 0x6B)  # the heat map's ends (no hits: grey)


def write_fuzz_report(folder: Path, report: Any) -> Path:
    """Write ``folder/index.html`` for ``report`` (a ``checks.fuzz.command.FuzzReport``); return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    t = report.totals
    parts = [f"<h1>seqcheck fuzz: {_e(str(report.model.path.name))}</h1>", _outcome(report), _summary(report),
             "<h2>Coverage against schedules</h2>",
             coverage_svg(t.coverage_curve, report.exhaustive_states[0]),
             f"<p>{_e(_coverage_caption(report))}</p>",
             "<h2>Faults met in protocol phases</h2>",
             f"<p>{_e(_heat_caption(scheme_for(report.model.world)))}</p>",
             heat_map_svg(t.phase_hits, scheme_for(report.model.world)), _legend(scheme_for(report.model.world)),
             "<h2>Failures</h2>", _failures(folder, report)]
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>seqcheck fuzz report</title>'
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")
    index = folder / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _outcome(report: Any) -> str:
    if report.mismatch:
        return f'<p class="mismatch">MISMATCH: {_e(report.mismatch)}</p>'
    return f'<p class="ok">as expected ({_e(report.model.expect)})</p>'


def _summary(report: Any) -> str:
    o, t = report.options, report.totals
    rate = report.job_seconds or 1e-9
    rows = [("model", f"{report.model.path} (expected {report.model.expect})"),
            ("seeds", f"{o.seed}..{o.seed + o.runs - 1}, up to {o.steps} steps each"),
            ("weights", o.weights.text() + (" (--swarm)" if o.swarm else "") + (" (--pct)" if o.pct else "")),
            ("ran on", "this process" if report.ran_on == "none" else f"Spark {report.ran_on}, {report.cores} cores"),
            ("runs", f"{t.runs:,}"), ("steps", f"{t.steps:,}"),
            ("seconds", f"{report.job_seconds:,.1f} wall ({t.runs / rate:,.1f} runs/s, {t.steps / rate:,.0f} steps/s); "
                        f"{report.cpu_text}"),
            ("verdicts", ", ".join(f"{v} {n:,}" for v, n in sorted(t.verdicts.items()))),
            ("distinct states", f"{t.distinct_states:,}" + ("" if t.exact_distinct else " (estimated)"))]
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _coverage_caption(report: Any) -> str:
    curve = report.totals.coverage_curve
    if not curve:
        return "No coverage curve: the job recorded no runs."
    exhaustive = report.exhaustive_states[1]
    last = curve[-1][1]
    half = next((runs for runs, states in curve if states * 2 >= last), curve[-1][0])
    return (f"{last:,} distinct canonical states after {curve[-1][0]:,} runs; half of them were met within the "
            f"first {half:,} runs. Exhaustive count of the model: {exhaustive}. Each state is credited to the "
            "lowest seed that visited it; the counts are exact.")


# -- plots ----------------------------------------------------------------------------------------
def _ticks(top: int, count: int = 5) -> list[int]:
    """Round tick values from 0 to at least ``top``."""
    if top <= 0:
        return [0, 1]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    step = max(1, int(step))
    return list(range(0, top + step, step)) if top % step else list(range(0, top + 1, step))


def coverage_svg(curve: Sequence[tuple[int, int]], exhaustive: int | None,
                 width: int = 640, height: int = 300) -> str:
    """Distinct states (y) against runs (x) as a polyline from (0, 0); the exhaustive count, when
    known, as a dashed line."""
    if not curve:
        return "<p>(no runs)</p>"
    left, right, top, bottom = 70, 20, 15, 40
    x_ticks = _ticks(curve[-1][0])
    y_ticks = _ticks(max(curve[-1][1], exhaustive or 0))
    x_max, y_max = x_ticks[-1] or 1, y_ticks[-1] or 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(runs: float) -> float:
        return left + plot_w * runs / x_max

    def y(states: float) -> float:
        return top + plot_h * (1 - states / y_max)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'class="coverage" aria-label="distinct states against runs">']
    for v in x_ticks:
        parts.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{top + plot_h}" stroke="#eee"/>'
                     f'<text x="{x(v):.1f}" y="{top + plot_h + 15}" text-anchor="middle">{v:,}</text>')
    for v in y_ticks:
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" y2="{y(v):.1f}" stroke="#eee"/>'
                     f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 5}" text-anchor="middle">runs (schedules)</text>'
                 f'<text x="12" y="{top + plot_h / 2:.0f}" text-anchor="middle" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.0f})">distinct states</text>')
    if exhaustive:
        parts.append(f'<line class="exhaustive" x1="{left}" y1="{y(exhaustive):.1f}" x2="{left + plot_w}" '
                     f'y2="{y(exhaustive):.1f}" stroke="#c00" stroke-dasharray="6 4"/>'
                     f'<text x="{left + plot_w - 4}" y="{y(exhaustive) - 4:.1f}" text-anchor="end" fill="#c00">'
                     f"exhaustive: {exhaustive:,}</text>")
    points = " ".join(f"{x(r):.1f},{y(s):.1f}" for r, s in [(0, 0), *curve])
    parts.append(f'<polyline class="curve" points="{points}" fill="none" stroke="#08306b" stroke-width="2"/>')
    parts.append("</svg>")
    return "".join(parts)


def _shade(fraction: float) -> str:
    r, g, b = (round(lo + (hi - lo) * fraction) for lo, hi in zip(_LIGHT, _DARK))
    return f"#{r:02x}{g:02x}{b:02x}"


def heat_map_svg(hits: Sequence[int], scheme: Scheme = UNICAST, cell_w: int = 96, cell_h: int = 24) -> str:
    """The fault x phase counts (the scheme's cells row-major, then one total per fault) as shaded
    cells, shade by log count; the totals as the last row."""
    faults, cells = scheme.faults, scheme.cells
    if len(hits) != scheme.width:
        return "<p>(no phase counts)</p>"
    label_w = 8 * max(len(n) for n in (*scheme.phase_names, TOTAL_ROW)) + 10
    rows = [*scheme.phase_names, TOTAL_ROW]
    width, height = label_w + cell_w * len(faults), cell_h * (len(rows) + 1)
    top = max(hits[:len(cells)], default=0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'class="heatmap" aria-label="faults met in protocol phases">']
    for j, fault in enumerate(faults):
        parts.append(f'<text x="{label_w + cell_w * (j + 0.5):.0f}" y="{cell_h - 8}" text-anchor="middle" '
                     f'font-weight="bold">{_e(fault)}</text>')
    for i, phase in enumerate(rows):
        y0 = cell_h * (i + 1)
        parts.append(f'<text x="4" y="{y0 + cell_h - 8}">{_e(phase)}</text>')
        for j, fault in enumerate(faults):
            count = hits[len(cells) + j] if phase == TOTAL_ROW else hits[i * len(faults) + j]
            fraction = math.log1p(count) / math.log1p(top) if top and phase != TOTAL_ROW else 0.0
            fill = "#e0e0e0" if count == 0 else ("#ffffff" if phase == TOTAL_ROW else _shade(fraction))
            ink = "#ffffff" if fraction > 0.6 else "#000000"
            x0 = label_w + cell_w * j
            parts.append(f'<g class="cell" data-phase="{_e(phase)}" data-fault="{_e(fault)}" data-count="{count}">'
                         f"<title>{_e(f'{fault} x {phase}: {count:,}')}</title>"
                         f'<rect x="{x0}" y="{y0}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}"/>'
                         f'<text x="{x0 + cell_w / 2:.0f}" y="{y0 + cell_h - 8}" text-anchor="middle" '
                         f'fill="{ink}">{f"{count:,}" if count else "·"}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _legend(scheme: Scheme) -> str:
    items = "".join(f"<dt>{_e(name)}</dt><dd>{_e(doc)}</dd>" for name, doc in scheme.phases)
    return f"<dl>{items}</dl>"


# -- failures -------------------------------------------------------------------------------------
def _failures(folder: Path, report: Any) -> str:
    if not report.shrunk:
        return "<p>No failing run.</p>"
    taken: set[str] = set()
    rows = []
    for item in report.shrunk:
        if isinstance(item, str):
            rows.append(f'<tr class="mismatch"><td colspan="5">NOT REPRODUCED: {_e(item)}</td></tr>')
            continue
        link = _viewer(folder, report, item, taken)
        steps = f"{item.original_length} → {len(item.trace.actions)}"
        view = f'<a href="{_e(link)}">viewer</a>' if link.startswith("traces/") else _e(link)
        commands = "<br>".join(f"<code>{_e(f'seqcheck {verb} {item.path}')}</code>" for verb in ("show", "replay"))
        cells = [_e(item.verdict), str(item.seed), steps, view, commands]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("verdict", "seed", "steps (run → shrunk)", "trace", "commands"))
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "\n</table>"


def _viewer(folder: Path, report: Any, item: Any, taken: set[str]) -> str:
    """The shrunk trace's viewer page under ``folder/traces`` (its relative path), or why there is none."""
    model = report.model
    try:
        path = validate(model.world, item.trace)
    except TraceError as error:
        return f"no viewer page: {error}"
    header, footer = trace_text(display_path(model.path), None, model, item.trace)
    name = page_name(f"{item.verdict}-seed-{item.seed}", taken)
    write_page(folder / "traces" / name, model.world, path, f"{model.path.name}, seed {item.seed}", header, footer)
    return f"traces/{name}"
