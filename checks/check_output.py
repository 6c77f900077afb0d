"""What ``seqcheck check`` prints (``checks/check_command.py`` runs it): the table of verdicts and its
footer, the progress line (rewritten in place on a terminal, a line every ``LOG_PROGRESS_EVERY``
seconds in a log, a JSON object with ``--json``) with the growth per level and its projection from
the third level on, the one-line warning when the projection passes a budget
(``checks/explore/growth.py``), and why a search was incomplete. Every time printed is CPU
seconds beside wall seconds; projections and ``--time-limit`` are CPU time only.
"""

from __future__ import annotations

import json
import resource
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from checks.check import MODELS_DIR, Outcome, display_path
from checks.explore.growth import HORIZON, Alarm, Projection, count, describe, duration, growth_factors, project
from checks.explore.search import Progress, Stats
from checks.explore.system import Always
from models.knobs import advice
from models.modelfile import Model

LOG_PROGRESS_EVERY = 10.0  # seconds between two progress lines when stderr is a log, not a terminal


def label(model: Model, *, short: bool = True, for_files: bool = False) -> str:
    """A row's name: the model file (relative to the checkout when inside it, else as given;
    ``short`` off: its name only; ``for_files``: ``display_path``, never absolute, for the names of
    a report's pages), and ``[protocol]`` for each protocol of a side-by-side file."""
    if for_files:
        name = str(display_path(model.path))
    elif short:
        try:
            name = str(model.path.resolve().relative_to(MODELS_DIR.parent))
        except ValueError:
            name = str(model.path)
    else:
        name = model.path.name
    return f"{name} [{model.protocol}]" if model.side_by_side else name


def max_states_budget(model: Model) -> str:
    """``max_states = N`` and where it comes from."""
    return f"max_states = {model.max_states:,}" + ("" if model.max_states_given else " (the default)")


def cut_advice(model: Model, budget: str = "max_states") -> str:
    """What to cut, in the model's own keys (``models/knobs.py``), or which ``budget`` to raise."""
    raise_it = "--time-limit" if budget == "time_limit" else "[check] max_states"
    return f"to cut: {advice(model.world)}; or raise {raise_it}"


def budget_lines(budgets: Sequence[tuple[int, dict[str, tuple[float, int]]]]) -> list[str]:
    """The mean use of each model budget at the deepest levels (``BudgetUsage``), one line a level."""
    return [f"budgets used at depth {depth} (mean of a sample / budget): "
            + ", ".join(f"{name} {used:.1f}/{budget}" for name, (used, budget) in usage.items() if budget)
            for depth, usage in budgets]


def alarm_line(name: str, model: Model, alarm: Alarm, time_limit: float | None) -> str:
    """The one-line warning printed the first time a search's projection passes a budget (growth
    rule 5): the growth, where the budget is passed, the budgets in use and what to cut."""
    p = alarm.projection
    if alarm.reason == "max_states":
        at = p.max_states_at
        assert at is not None
        passed = (f"passes {max_states_budget(model)} at depth {at.depth} (about {count(at.total)} states, "
                  f"{duration(max(at.cpu - alarm.cpu, 0))} of CPU from now)")
    else:
        late = p.time_limit_at
        assert late is not None and time_limit is not None
        passed = (f"passes --time-limit {time_limit:g} (CPU seconds) at depth {late.depth} "
                  f"(about {count(late.total)} states)")
    budgets = [max_states_budget(model)] + ([f"--time-limit {time_limit:g}"] if time_limit is not None else [])
    first = max(p.depth - len(p.factors) + 1, p.depth - 3)
    return (f"seqcheck: warning: {name}: the levels grow {' '.join(f'x{f:.1f}' for f in p.factors[-4:])} "
            f"(depths {first} to {p.depth}); at this rate the search {passed} and would end incomplete "
            f"(a projection: the rate may still fall). Budgets: {', '.join(budgets)}; "
            f"{cut_advice(model, alarm.reason)}. "
            "seqcheck check --estimate projects without the search.")


def progress_reporter(name: str, model: Model, *, terminal: bool, json_lines: bool = False,
                      time_limit: float | None = None, out: TextIO | None = None, alarms: bool = True,
                      lines: bool = True) -> Progress:
    """Progress on ``out`` (stderr): a line rewritten in place on a terminal, in a log a line every
    ``LOG_PROGRESS_EVERY`` seconds of a search, with ``json_lines`` a JSON object instead (none
    without ``lines``: ``--no-progress``); the alarm (``Stats.alarm``) at once, whatever the cadence,
    unless ``alarms`` is off (``--estimate``'s search, whose ``max_states`` is not the model's: its
    lines then give no projection either)."""
    last, alarmed = [0.0], [False]

    def report(stats: Stats, frontier: int) -> None:
        stream = out or sys.stderr
        in_place = terminal and not json_lines
        if alarms and stats.alarm is not None and not alarmed[0]:
            alarmed[0] = True
            if json_lines:
                print(json.dumps(alarm_json(name, model, stats.alarm, time_limit)), file=stream, flush=True)
            else:
                print(("\r\033[K" if in_place and lines else "") + alarm_line(name, model, stats.alarm, time_limit),
                      file=stream, flush=True)
        if not lines or (not in_place and stats.seconds - last[0] < LOG_PROGRESS_EVERY):
            return
        last[0] = stats.seconds
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if json_lines:
            print(json.dumps(progress_json(name, stats, frontier, rss, projection=alarms)), file=stream, flush=True)
            return
        line = (f"  {name}: {stats.distinct:,} states, frontier {frontier:,}, depth {stats.depth}, "
                f"{stats.states_per_second:,.0f} states/s, {rss:,.0f} MB, {stats.seconds:.0f} s "
                f"(CPU {stats.cpu_seconds:.0f} s)")
        if stats.projection is not None and alarms:
            line += f"; {describe(stats.projection, cpu=stats.cpu_seconds)}"
        if in_place:
            width = shutil.get_terminal_size((120, 24)).columns - 1
            print(f"\r\033[K{line if len(line) <= width else line[:width - 1] + '…'}", end="", file=stream,
                  flush=True)
        else:
            print(line, file=stream, flush=True)

    return report


def progress_json(name: str, stats: Stats, frontier: int, rss_mb: float, *, projection: bool = True
                  ) -> dict[str, Any]:
    projected = stats.projection if projection else None
    return {"progress": name, "states": stats.distinct, "frontier": frontier, "depth": stats.depth,
            "states_per_s": round(stats.states_per_second), "rss_mb": round(rss_mb, 1),
            "seconds": round(stats.seconds, 2), "cpu_seconds": round(stats.cpu_seconds, 2),
            "levels": stats.levels, "growth_factors": growth_factors(stats.levels[:len(stats.level_cpu)]),
            "projection": None if projected is None else projected.to_json()}


def alarm_json(name: str, model: Model, alarm: Alarm, time_limit: float | None) -> dict[str, Any]:
    return {"alarm": alarm.reason, "model": name, "cpu_seconds": round(alarm.cpu, 2),
            "max_states": model.max_states, "max_states_given": model.max_states_given, "time_limit": time_limit,
            "projection": alarm.projection.to_json(),
            "budgets": None if alarm.budgets is None else budgets_json([alarm.budgets]),
            "message": alarm_line(name, model, alarm, time_limit)}


def budgets_json(budgets: Sequence[tuple[int, dict[str, tuple[float, int]]]]) -> list[dict[str, Any]]:
    return [{"depth": depth, "used": {name: {"mean": round(used, 3), "budget": budget}
                                      for name, (used, budget) in usage.items()}}
            for depth, usage in budgets]


def growth_lines(outcome: Outcome, time_limit: float | None = None) -> list[str]:
    """Why a search was incomplete: the budget that stopped it, its size per BFS level (so the user
    sees where it grows), the projection of the next levels, the model budgets it spends."""
    stats, model = outcome.result.stats, outcome.model
    levels = stats.levels
    shown = ", ".join(f"{n:,}" for n in levels[-6:])
    if stats.stopped_by == "time_limit" and time_limit is not None:
        stopped = (f"--time-limit {time_limit:g} (CPU seconds) reached at depth {stats.depth} "
                   f"({stats.distinct:,} states)")
    else:
        stopped = f"{max_states_budget(model)} reached at depth {stats.depth}"
    ratio = f"; the last complete level grew {levels[-2] / max(levels[-3], 1):.1f}x" if len(levels) >= 3 else ""
    lines = [f"incomplete: {stopped}; new states per level (last {min(6, len(levels))}): {shown}{ratio}."]
    projection = final_projection(stats, model.max_states, time_limit)
    if projection is not None and projection.levels:
        lines.append("at that rate: " + ", ".join(f"depth {lv.depth} ~{count(lv.new)} new ({count(lv.total)} in all)"
                                                  for lv in projection.levels))
    lines += budget_lines(stats.budgets)
    lines.append(f"The budgets far from spent at the deepest level still branch every state there; "
                 f"{cut_advice(model, stats.stopped_by)}.")
    return lines


def final_projection(stats: Stats, max_states: int, time_limit: float | None = None,
                     horizon: int = HORIZON) -> Projection | None:
    """The projection from the complete levels of a search that stopped (its last level may be partial)."""
    return project(stats.levels[:len(stats.level_cpu)], stats.level_cpu, distinct=stats.distinct,
                   cpu=stats.cpu_seconds, max_states=max_states, time_limit=time_limit, horizon=horizon)


def partial_order_line(o: Outcome) -> str:
    """What partial-order reduction did in one check (``checks/explore/reduction.py``)."""
    counts = o.result.stats.partial_order
    assert counts is not None
    full = counts.full_cycle + counts.full_bound + counts.full_key
    line = (f"partial-order reduction: {counts.reduced:,} expanded states took a persistent subset of their "
            f"successors, {full:,} all of them by a proviso (not yet expanded: {counts.full_cycle:,}, bounds: "
            f"{counts.full_bound:,}, no key action: {counts.full_key:,}), {counts.full_none:,} had no smaller one; "
            "depths are the reduced graph's")
    if o.trace is not None:
        line += "; the trace " + ("is a shortest counterexample" if o.shortest else
                                  "was shortened but is not proven shortest")
    return line


def interrupted_line(outcome: Outcome) -> str:
    """What a search stopped by Ctrl-C established."""
    stats, model = outcome.result.stats, outcome.model
    violated = {f.prop for f in outcome.result.findings}
    held = [p.name for p in model.world.properties if isinstance(p, Always) and p.name not in violated]
    unjudged = [p.name for p in model.world.properties if not isinstance(p, Always)]
    return (f"seqcheck: interrupted in {label(model)} after {stats.distinct:,} states to depth {stats.depth} "
            f"({stats.seconds:.1f} s, CPU {stats.cpu_seconds:.1f} s); on every state explored these held: "
            f"{', '.join(held) or 'none'}; not judged (the search is partial): {', '.join(unjudged) or 'none'}; "
            "later models not checked")


class Table:
    """The verdicts, one row per model, and the footer."""

    def __init__(self, out: TextIO, labels: Sequence[str], trace_dir: Path, time_limit: float | None = None) -> None:
        self.out, self.trace_dir, self.time_limit = out, trace_dir, time_limit
        self.width = max([44, *map(len, labels)])
        self.single = len(labels) == 1  # one model: the details a table of many leaves to its footer
        self.header = f"{'model':<{self.width}} {'expected':<30} {'verdict':<30} {'states':>10} {'depth':>5} " \
                      f"{'cut':>7} {'trace':>5} {'seconds':>8} {'cpu':>7}"
        self.say(self.header)
        self.say("─" * len(self.header))
        self.rows: list[Outcome] = []

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def row(self, o: Outcome) -> None:
        self.rows.append(o)
        s = o.result.stats
        trace = str(len(o.trace.actions)) if o.trace else "-"
        mark = "ok" if o.matches else f"MISMATCH: {o.mismatch_reason}"
        self.say(f"{label(o.model):<{self.width}} {o.model.expect:<30} {o.verdict:<30} {s.distinct:>10,} "
                 f"{s.depth:>5} {s.cut:>7,} {trace:>5} {o.seconds:>8.1f} {o.cpu_seconds:>7.1f}  {mark}")
        if s.symmetry_group > 1:
            self.say(f"  symmetry: {s.distinct:,} states explored stand for {s.unreduced:,} ({s.reduction:.2f}x "
                     f"fewer: a symmetry group of order {s.symmetry_group} over the members)")
        if s.partial_order is not None:
            self.say(f"  {partial_order_line(o)}")
        elif o.reduction_unavailable:
            self.say(f"  partial-order reduction: not offered by protocol {o.model.protocol} (the unicast protocols "
                     "offer it); explored unreduced")
        if o.verdict == "incomplete":
            self.say("\n".join(f"  {line}" for line in growth_lines(o, self.time_limit)))
        through = ", ".join(f"{prop} {count:,}" for prop, count in s.liveness_through_cuts.items() if count)
        if through and self.single:
            self.say(f"  liveness assumes the {s.cut:,} cut states recover; states whose only fault-free way to the "
                     f"goal passes one: {through}")

    def footer(self, all_match: bool) -> None:
        self.say("─" * len(self.header))
        bad = [o for o in self.rows if not o.matches]
        wall, cpu = sum(o.seconds for o in self.rows), sum(o.cpu_seconds for o in self.rows)
        models = "1 model" if len(self.rows) == 1 else f"{len(self.rows)} models"
        self.say(f"{models}, {len(self.rows) - len(bad)} as expected, {len(bad)} not; {wall:.1f} s "
                 f"(CPU {cpu:.1f} s). Verdicts hold within each model's bounds (sends, fault budgets, views); 'cut' "
                 "counts states at max_in_flight, checked but not expanded (liveness gives them the benefit of the "
                 "doubt).")
        doubted = sum(any(o.result.stats.liveness_through_cuts.values()) for o in self.rows)
        if doubted:
            self.say(f"Liveness: in {doubted} of these models some states reach a liveness goal only through a cut "
                     "state, whose recovery is assumed, not checked (per model: its own check, or "
                     "liveness_through_cuts in --json).")
        largest = max(self.rows, key=lambda o: o.result.stats.distinct, default=None)
        if largest is not None:
            n = largest.result.stats.distinct
            self.say(f"Fingerprints are 64 bits: the largest model ({n:,} states) has a collision probability of at "
                     f"most {largest.result.stats.collision_probability:.1e}.")
        traces = [o.trace_path for o in self.rows if o.trace_path]
        if traces:
            self.say(f"Counterexamples written to {self.trace_dir}/ (read one: seqcheck show {traces[0]})")
