"""``seqcheck check --estimate``: how big each model's search will be, without the search.

Each model is searched breadth-first until ``--estimate-states`` states (default
``ESTIMATE_STATES``: a deterministic budget, so the same levels are explored on any machine);
the levels complete within them are projected (``checks/explore/growth.py``; the level cut short is
no level of the projection but a lower bound for the next one, rule 2): new states per level and
the growth factor of each, the next ``PROJECT_LEVELS`` levels at the last factor (new states,
total, CPU time from the start), the depth where ``max_states`` (and ``--time-limit``) would be
passed, the budgets a sample of the deepest level spends, and what to cut in the model's own keys.
A search that fits in the budget says so and gives its verdict; one that finds a violation says so
(``seqcheck check`` writes its trace). Exit code 0, or 1 when a whole search's verdict does not
match the model's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from checks.check import Outcome, check_model
from checks.check_output import (
    budget_lines,
    budgets_json,
    cut_advice,
    final_projection,
    label,
    max_states_budget,
    progress_reporter,
)
from checks.cli_arguments import ESTIMATE_STATES
from checks.explore.growth import count, duration, growth_factors, trend_clause
from models.modelfile import Model

PROJECT_LEVELS = 6  # levels listed ahead


def estimate(loaded: Sequence[Model], args: argparse.Namespace, partial_order: bool | None) -> int:
    """Explore the first levels of every model of ``loaded`` and print their projection
    (``args``: ``seqcheck check``'s options)."""
    budget = args.estimate_states or ESTIMATE_STATES
    worst = 0
    for model in loaded:
        progress = None if args.no_progress else progress_reporter(
            label(model, short=False), model, terminal=sys.stderr.isatty(), json_lines=args.json, alarms=False)
        outcome = check_model(model, trace_dir=None, progress=progress, workers=args.workers,
                              symmetry=not args.no_symmetry, partial_order=partial_order, time_limit=args.time_limit,
                              max_states=min(budget, model.max_states))
        if progress is not None and sys.stderr.isatty() and not args.json:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        if _whole(outcome) and not outcome.matches:
            worst = 1
        if args.json:
            print(json.dumps(estimate_json(outcome, budget, args.time_limit)), flush=True)
        else:
            print("\n".join(estimate_lines(outcome, budget, args.time_limit)), flush=True)
    return worst


def _whole(outcome: Outcome) -> bool:
    """Did the estimate's search decide the model (it fitted in the budget, or found a violation)?"""
    return outcome.result.stats.complete or outcome.verdict.startswith("violation:")


def estimate_lines(outcome: Outcome, budget: int, time_limit: float | None) -> list[str]:
    stats, model = outcome.result.stats, outcome.model
    name = label(model)
    took = f"{outcome.seconds:.1f} s, CPU {outcome.cpu_seconds:.1f} s"
    if stats.complete:
        return [f"{name}: the whole search fits in the estimate's {budget:,} states: {outcome.verdict} (expected "
                f"{model.expect}), {stats.distinct:,} states, depth {stats.depth} ({took})"]
    if outcome.verdict.startswith("violation:"):
        return [f"{name}: {outcome.verdict} found within the estimate's first {stats.distinct:,} states, at depth "
                f"{stats.depth} ({took}); seqcheck check writes its shortest trace"]
    complete = stats.levels[:len(stats.level_cpu)]
    lines = [f"{name}: the first {stats.distinct:,} states ({took}): new states per level "
             + ", ".join(f"{n:,}" for n in complete)
             + (f", then {stats.levels[-1]:,} so far at depth {stats.depth}" if len(stats.levels) > len(complete)
                else "")]
    projection = final_projection(stats, model.max_states, time_limit, PROJECT_LEVELS)
    if projection is None:
        lines.append(f"  {len(complete)} complete levels: a projection needs 3; raise --estimate-states "
                     f"(now {budget:,})")
        return lines
    factors = ", ".join(f"depth {k + 2} x{f:.2f}" for k, f in enumerate(projection.factors))
    lines.append(f"  growth per level: {factors}")
    if projection.levels:
        lines.append(f"  at x{projection.rate:.2f} a level ({projection.cpu_per_state * 1e6:.0f} µs of CPU a new "
                     "state): " + ", ".join(f"depth {lv.depth} {count(lv.new)} new, {count(lv.total)} in all after "
                                            f"{duration(lv.cpu)} of CPU" for lv in projection.levels))
    at, late = projection.max_states_at, projection.time_limit_at
    if at is not None:
        lines.append(f"  {max_states_budget(model)} would be passed at depth {at.depth}, after about "
                     f"{duration(at.cpu)} of CPU: the search would end incomplete")
    elif projection.converges_to is not None:
        lines.append(f"  the levels shrink: at this rate about {count(projection.converges_to)} states in all, "
                     f"within {max_states_budget(model)}")
    else:
        lines.append(f"  {max_states_budget(model)} not passed within {len(projection.ahead)} levels at this rate")
    if projection.trend is not None:
        lines.append(f"  {trend_clause(projection.trend)}")
    if late is not None and time_limit is not None:
        lines.append(f"  --time-limit {time_limit:g} (CPU seconds) would be passed at depth {late.depth}")
    lines += [f"  {line}" for line in budget_lines(stats.budgets[-1:])]
    lines.append(f"  {cut_advice(model)}")
    return lines


def estimate_json(outcome: Outcome, budget: int, time_limit: float | None) -> dict[str, Any]:
    stats, model = outcome.result.stats, outcome.model
    whole = _whole(outcome)
    projection = None if whole else final_projection(stats, model.max_states, time_limit, PROJECT_LEVELS)
    complete = stats.levels[:len(stats.level_cpu)]
    return {"model": str(model.path), "protocol": model.protocol, "estimate": True, "estimate_states": budget,
            "states": stats.distinct, "depth": stats.depth, "levels": stats.levels, "complete_levels": len(complete),
            "growth_factors": growth_factors(complete), "seconds": round(outcome.seconds, 3),
            "cpu_seconds": round(outcome.cpu_seconds, 3), "verdict": outcome.verdict if whole else None,
            "expected": model.expect, "matches": outcome.matches if whole else None,
            "max_states": model.max_states, "max_states_given": model.max_states_given, "time_limit": time_limit,
            "projection": None if projection is None else projection.to_json(),
            "budgets": budgets_json(stats.budgets[-1:]), "to_cut": cut_advice(model)}
