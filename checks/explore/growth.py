"""Where a breadth-first search is heading: the growth factor per level, a projection of the next
levels at the current rate (new states, total, CPU time), when ``max_states`` or a CPU time limit
would be reached, and the alarm raised when that is soon. The search (``checks/explore/search.py``)
projects at the end of every level; ``seqcheck check`` prints it (``checks/check_output.py``), and
``seqcheck check --estimate`` prints it after the first levels only (``checks/estimate.py``).

Rules
-----
1. A projection exists from the third level on (levels 0, 1 and 2 complete): the growth factor of
   level k is ``levels[k] / levels[k - 1]``.
2. The rate projected is the factor of the last complete level. While the next level is being
   generated its new states so far are a lower bound for it: when they already exceed what the
   rate predicts, the rate is raised to match.
3. Time is CPU time (the search's process and its workers), never wall time: a projection, like a
   verdict, does not depend on how busy the machine is. CPU time per new state: the last complete
   level's (the CPU its generation took over its new states), or the whole search's when that level
   took less than ``STEADY_CPU`` seconds.
4. The projected levels go on at the rate until the total passes ``max_states``, a level would hold
   less than one state, or ``FAR`` levels. ``levels`` are the first ``horizon`` of them;
   ``max_states_at`` is the first whose total passes ``max_states`` (the depth where the search would
   stop incomplete), wherever it is. With a rate below 1 the levels shrink and the total tends to a
   limit (``converges_to``).
5. The alarm is raised when, at this rate, the total passes ``max_states`` within ``horizon`` levels,
   or the projected CPU time passes the time limit there. It is a projection, not a verdict: only
   the search's end decides (``incomplete`` when a budget stopped it), and a rate may still fall.
6. The trend: a bounded model's factors fall as its budgets are spent. When the logarithm of the
   factor fell over the last ``TREND_LEVELS`` levels, the trend projection lets it go on falling
   by the mean of those steps (the levels grow ever more slowly, then shrink) and gives the total
   where the levels die out (``Trend.total``), or the depth where it passes ``max_states``. It is
   printed beside the projection at this rate, and decides nothing either.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

HORIZON = 3  # levels projected ahead in a progress line, and for the alarm (rule 5)
FAR = 40  # levels projected at most (rule 4)
STEADY_CPU = 0.5  # a level generated in less CPU time gives no rate of its own (rule 3)
TREND_LEVELS = 3  # rule 6: the last factors whose logarithms give the trend
TREND_DEPTH = 500  # rule 6: levels followed at most


@dataclass(frozen=True)
class Level:
    """One projected level."""

    depth: int
    new: int  # states new at this depth
    total: int  # states found once it is complete
    cpu: float  # CPU seconds since the search started, when it would be complete


@dataclass(frozen=True)
class Projection:
    depth: int  # the deepest complete level
    factors: tuple[float, ...]  # per level from level 2 on: levels[k] / levels[k - 1]
    rate: float  # the factor projected (rule 2)
    cpu_per_state: float  # rule 3
    ahead: tuple[Level, ...]  # rule 4: every projected level
    horizon: int
    max_states: int
    time_limit: float | None  # CPU seconds
    converges_to: int | None = None  # rate < 1: the total the levels tend to
    trend: Trend | None = None  # rule 6

    @property
    def levels(self) -> tuple[Level, ...]:
        """The next ``horizon`` levels."""
        return self.ahead[:self.horizon]

    @property
    def max_states_at(self) -> Level | None:
        """The first projected level whose total passes ``max_states``."""
        return next((level for level in self.ahead if level.total >= self.max_states), None)

    @property
    def time_limit_at(self) -> Level | None:
        """The first projected level that would end after the CPU time limit."""
        if self.time_limit is None:
            return None
        return next((level for level in self.ahead if level.cpu >= self.time_limit), None)

    @property
    def alarm(self) -> str | None:
        """Rule 5: which budget the search is projected to run into soon (``max_states`` or
        ``time_limit``), or None."""
        soon = self.depth + self.horizon
        at, late = self.max_states_at, self.time_limit_at
        if at is not None and at.depth <= soon:
            return "max_states"
        if late is not None and late.depth <= soon:
            return "time_limit"
        return None

    def to_json(self) -> dict[str, object]:
        at, late = self.max_states_at, self.time_limit_at
        return {"depth": self.depth, "factors": [round(f, 3) for f in self.factors], "rate": round(self.rate, 3),
                "cpu_seconds_per_state": self.cpu_per_state,
                "next_levels": [{"depth": level.depth, "new": level.new, "total": level.total,
                                 "cpu_seconds": round(level.cpu, 1)} for level in self.levels],
                "max_states": self.max_states, "max_states_at": None if at is None else
                {"depth": at.depth, "total": at.total, "cpu_seconds": round(at.cpu, 1)},
                "time_limit": self.time_limit, "time_limit_at": None if late is None else
                {"depth": late.depth, "total": late.total},
                "converges_to": self.converges_to, "alarm": self.alarm,
                "trend": None if self.trend is None else self.trend.to_json()}


def growth_factors(levels: Sequence[int]) -> list[float]:
    """The growth factor of each level from level 2 on (rule 1), rounded for a report."""
    return [round(levels[k] / max(levels[k - 1], 1), 3) for k in range(2, len(levels))]


def project(levels: Sequence[int], level_cpu: Sequence[float], *, distinct: int, cpu: float,
            max_states: int, time_limit: float | None = None, horizon: int = HORIZON) -> Projection | None:
    """The projection of a search whose complete levels hold ``levels`` new states each, complete
    at ``level_cpu`` (CPU seconds since the start), which has found ``distinct`` states in ``cpu``
    seconds (those beyond the complete levels are the next level's so far, rule 2). None before the
    third level (rule 1)."""
    if len(levels) < 3 or len(level_cpu) < len(levels):
        return None
    factors = tuple(levels[k] / max(levels[k - 1], 1) for k in range(2, len(levels)))
    rate = factors[-1]
    generating = distinct - sum(levels)  # new states of the next level found so far
    if generating > levels[-1] * rate:
        rate = generating / max(levels[-1], 1)  # rule 2: a lower bound already above the rate
    took = level_cpu[len(levels) - 1] - level_cpu[len(levels) - 2]
    per_state = took / levels[-1] if took >= STEADY_CPU and levels[-1] else cpu / max(distinct, 1)
    projected: list[Level] = []
    new, total, at = float(levels[-1]), sum(levels), level_cpu[len(levels) - 1]
    for ahead in range(1, FAR + 1):
        new *= rate
        if new < 1:
            break
        total += round(new)
        at += new * per_state
        projected.append(Level(len(levels) - 1 + ahead, round(new), total, at))
        if total >= max_states:
            break
    converges = round(sum(levels) + levels[-1] * rate / (1 - rate)) if rate < 1 else None
    return Projection(len(levels) - 1, factors, rate, per_state, tuple(projected), horizon, max_states,
                      time_limit, converges, trend(levels, max_states))


@dataclass(frozen=True)
class Trend:
    """Rule 6: where the levels go if their factor keeps falling as it did."""

    step: float  # the mean change of ln(factor) a level (< 0)
    total: int  # states when the levels die out, or when max_states is passed
    depth: int  # that depth
    passes_max_states: bool

    def to_json(self) -> dict[str, object]:
        return {"log_factor_step": round(self.step, 4), "total": self.total, "depth": self.depth,
                "passes_max_states": self.passes_max_states}


def trend(levels: Sequence[int], max_states: int) -> Trend | None:
    """Rule 6 for complete ``levels`` (None: fewer than ``TREND_LEVELS`` + 1 factors, or a factor
    that did not fall)."""
    factors = [levels[k] / max(levels[k - 1], 1) for k in range(2, len(levels))]
    if len(factors) < TREND_LEVELS + 1 or min(factors[-TREND_LEVELS - 1:]) <= 0:
        return None
    logs = [math.log(f) for f in factors[-TREND_LEVELS - 1:]]
    step = (logs[-1] - logs[0]) / TREND_LEVELS
    if step >= 0:
        return None
    new, total, log_factor = float(levels[-1]), sum(levels), logs[-1]
    for depth in range(len(levels), len(levels) + TREND_DEPTH):
        log_factor += step
        new *= math.exp(log_factor)
        if new < 1:
            return Trend(step, total, depth - 1, False)
        total += round(new)
        if total >= max_states:
            return Trend(step, total, depth, True)
    return Trend(step, total, len(levels) + TREND_DEPTH - 1, total >= max_states)


@dataclass(frozen=True)
class Alarm:
    """Rule 5: a projection that passes ``max_states`` or the CPU time limit (``reason``), raised at
    ``cpu`` seconds, with the mean use of each model budget over a sample of the deepest complete
    level (``budget_sample``)."""

    reason: str  # max_states | time_limit
    projection: Projection
    cpu: float
    budgets: tuple[int, dict[str, tuple[float, int]]] | None  # (depth, {budget: (mean used, budget)})


def budget_sample(usage: Callable[[Any], dict[str, tuple[int, int]]], states: Sequence[Any]
                  ) -> dict[str, tuple[float, int]]:
    """The mean use of each budget (``BudgetUsage.budget_usage``) over ``states``."""
    totals: dict[str, list[int]] = {}
    for state in states:
        for name, (used, budget) in usage(state).items():
            totals.setdefault(name, [0, budget])[0] += used
    return {name: (used / max(len(states), 1), budget) for name, (used, budget) in totals.items()}


def count(n: float) -> str:
    """A state count for people: 950, 12,300, 1.2M, 3.4G."""
    if n >= 1e9:
        return f"{n / 1e9:.1f}G"
    if n >= 1e6:
        return f"{n / 1e6:.1f}M"
    return f"{round(n):,}"


def duration(seconds: float) -> str:
    """A duration for people: 12 s, 4.5 min, 3.2 h, 2.1 days."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def describe(projection: Projection, *, cpu: float) -> str:
    """One clause for a progress line: the factors, the next levels at this rate with the CPU time
    from now (``cpu``: the search's CPU seconds so far), and where the budgets are met."""
    line = "growth per level " + " ".join(f"x{f:.1f}" for f in projection.factors[-4:])
    if projection.levels:
        line += f"; at x{projection.rate:.1f}: " + ", ".join(
            f"depth {lv.depth} {count(lv.total)} in {duration(max(lv.cpu - cpu, 0))} CPU" for lv in projection.levels)
    at = projection.max_states_at
    if at is not None:
        line += (f"; max_states {count(projection.max_states)} passed at depth {at.depth} in "
                 f"{duration(max(at.cpu - cpu, 0))} CPU")
    late = projection.time_limit_at
    if late is not None:
        line += f"; --time-limit {duration(projection.time_limit or 0)} CPU passed at depth {late.depth}"
    if projection.converges_to is not None:
        line += f"; levels shrinking: about {count(projection.converges_to)} states in all"
    elif projection.trend is not None:
        line += f"; {trend_clause(projection.trend)}"
    return line


def trend_clause(found: Trend) -> str:
    """Rule 6 in words."""
    if found.passes_max_states:
        return f"if the growth keeps falling as it did, max_states is still passed, at depth {found.depth}"
    return (f"if the growth keeps falling as it did, about {count(found.total)} states in all "
            f"(the levels die out by depth {found.depth})")
