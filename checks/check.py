"""Checking one model: explore it, turn the result into a verdict, validate and save the trace.

A verdict is ``pass`` (every checked property holds on every state within the model's bounds),
``violation:<property>`` (the first property found violated, with a shortest trace),
``incomplete`` (the model's ``max_states`` stopped the search first) or ``interrupted`` (Ctrl-C).
A verdict *matches* when it equals the model's ``expect``, the model's pinned state count (if any)
is the same, and its witness (if any) replays: each step, worded as ``seqcheck show`` words an
action, is enabled in turn, and every checked safety property holds on every state along it.

Trace files are named after the model so that no two models share one: the model file's path
relative to ``models/`` (or to the working directory; for a file elsewhere, its folder's name and
its own: ``display_path``), ``.toml`` replaced by ``.json``, with ``.<protocol>`` before it for a
side-by-side file:
``traces/unicast3/jgrp1873-no-timestamps.json``, ``traces/side-by-side/jgrp1873.unicast2.json``.
"""

from __future__ import annotations

import dataclasses
import resource
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import models
from checks.explore.growth import growth_factors
from checks.explore.search import Progress, Result, explore
from checks.explore.shorten import shorten
from checks.explore.system import Always, ContractError, Liveness, PortableStates, Property, extra_figures, offers
from checks.explore.trace import Trace, make_trace, validate
from checks.explore.workers import explore_with_workers
from models.modelfile import Model, ModelError

MODELS_DIR = Path(models.__file__).resolve().parent
SHORTEN_STATES = 200_000  # each breadth-first search that shortens a counterexample of a reduced search


@dataclass
class Outcome:
    model: Model
    result: Result
    verdict: str
    trace: Trace | None
    trace_path: Path | None
    seconds: float
    witness_error: str | None = None  # why the model's witness does not replay (None: it does, or none)

    shortest: bool = True  # the trace is a shortest counterexample (not proven after a reduced search)
    reduction_unavailable: bool = False  # partial-order reduction asked for, but the model's world offers none
    cpu_seconds: float = 0.0  # CPU time of the check: this process's and its worker processes'
    extra: dict[str, int | float | str] = dataclasses.field(default_factory=dict)  # the system's ExtraFigures
    safety_only: bool = False  # liveness left out (--safety-only): the expectation is that of the rest
    spark: dict[str, Any] | None = None  # the search ran on Spark (checks/sparkbfs): its own figures

    @property
    def expected(self) -> str:
        """The model's expectation, or with liveness left out that of the properties checked: a
        liveness violation expected means none of the others is violated."""
        expect = self.model.expect
        if self.safety_only and expect.startswith("violation:") and expect.removeprefix("violation:") in {
                p.name for p in self.model.world.properties if isinstance(p, Liveness)}:
            return "pass"
        return expect

    @property
    def pinned(self) -> int | None:
        """The model's pinned state count, if it applies: the pin counts the states of the search
        the file asks for (reduced with ``[check] partial_order``), which ``--por`` or ``--no-por``
        may have changed."""
        reduced = self.result.stats.partial_order is not None
        if self.spark is not None and self.result.stats.stopped_by == "violation":
            return None  # the search on Spark stops after the level of the violation, not in it
        return self.model.pinned_states if reduced == self.model.partial_order else None

    @property
    def matches(self) -> bool:
        pinned = self.pinned
        return (self.verdict == self.expected and (pinned is None or pinned == self.result.stats.unreduced)
                and self.witness_error is None)

    @property
    def mismatch_reason(self) -> str:
        if self.verdict != self.expected:
            return f"expected {self.expected}, got {self.verdict}"
        if self.pinned is not None and self.pinned != self.result.stats.unreduced:
            return f"expected {self.model.pinned_states} distinct states, got {self.result.stats.unreduced}"
        return self.witness_error or ""

    def to_json(self) -> dict[str, Any]:
        stats = self.result.stats
        return {
            "model": str(self.model.path), "protocol": self.model.protocol, "expected": self.expected,
            "verdict": self.verdict, "matches": self.matches, "states": stats.distinct,
            "transitions": stats.transitions, "depth": stats.depth, "cut": stats.cut, "complete": stats.complete,
            "seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3),
            "states_per_s": round(stats.states_per_second), "stopped_by": stats.stopped_by or None,
            "max_states": self.model.max_states,
            "growth_factors": growth_factors(stats.levels[:len(stats.level_cpu)]),
            "collision_probability": stats.collision_probability, "levels": stats.levels,
            "symmetry_group": stats.symmetry_group, "unreduced_states": stats.unreduced,
            "liveness_through_cuts": stats.liveness_through_cuts,
            "partial_order": None if stats.partial_order is None else vars(stats.partial_order),
            "trace_shortest": self.shortest if self.trace else None,
            "partial_order_unavailable": self.reduction_unavailable,
            "budgets": [{"depth": depth, "used": {name: {"mean": round(used, 3), "budget": budget}
                                                  for name, (used, budget) in usage.items()}}
                        for depth, usage in stats.budgets],
            "trace_length": len(self.trace.actions) if self.trace else None,
            "trace": str(self.trace_path) if self.trace_path else None,
            "witness_steps": len(self.model.witness), "witness_error": self.witness_error,
            "worker_processes": stats.worker_processes, "extra": self.extra,
            "safety_only": self.safety_only, "spark": self.spark,
        }


def portable_path(path: Path) -> Path:
    """``path`` relative to the checkout when it is inside it (traces then carry over between
    checkouts), else absolute (traces then work from any directory)."""
    root = MODELS_DIR.parent
    resolved = path.resolve()
    try:
        return resolved.relative_to(root)
    except ValueError:
        return resolved


def display_path(path: Path) -> Path:
    """How a model file is named in tables, reports and trace folders: relative to the checkout
    when it is inside it, else to the working directory when it is inside that, else its folder's
    name and its own (never built from an absolute path)."""
    resolved = path.resolve()
    for base in (MODELS_DIR.parent, Path.cwd().resolve()):
        try:
            return resolved.relative_to(base)
        except ValueError:
            continue
    return Path(resolved.parent.name, resolved.name)


def trace_file(model: Model, trace_dir: Path) -> Path:
    """Where the counterexample of ``model`` goes under ``trace_dir`` (see the module docstring)."""
    try:
        relative = model.path.resolve().relative_to(MODELS_DIR)
    except ValueError:
        relative = display_path(model.path)
    protocol = f".{model.protocol}" if model.side_by_side else ""
    return trace_dir / relative.parent / f"{relative.stem}{protocol}.json"


@dataclass(frozen=True)
class SparkRun:
    """Where ``check_model`` searches when not in this process: a Spark session
    (``checks/sparkbfs/search.py``), the folder to keep the levels in and resume from, progress lines."""

    session: Any
    checkpoint: Path | None = None
    progress: TextIO | None = None
    json_lines: bool = False  # progress as JSON objects (``--json``)


def check_model(model: Model, *, trace_dir: Path | None, progress: Progress | None = None,
                symmetry: bool = True, partial_order: bool | None = None, workers: int = 1,
                time_limit: float | None = None, max_states: int | None = None, safety_only: bool = False,
                spark: SparkRun | None = None) -> Outcome:
    """Check ``model``; one state per orbit of interchangeable members unless ``symmetry`` is off
    here or in the model file (the pinned state count is compared with the unreduced count); with
    partial-order reduction if ``partial_order`` says so (None: as the model file says), then the
    counterexample is shortened (``checks/explore/shorten.py``) and the pinned count not compared.
    ``time_limit`` (CPU seconds) and ``max_states`` (None: the model's) stop the search early:
    the verdict is then ``incomplete``, unless a violation was found before. ``safety_only`` leaves the
    liveness properties out; ``spark`` runs the search on Spark (no liveness; unreduced, whatever the model
    file says of partial-order reduction, so that its pinned count, if any, is not compared)."""
    started, cpu = time.perf_counter(), cpu_seconds()
    figures(model)  # a system whose figures are wrong is told so before a long search
    asked = model.partial_order if partial_order is None else partial_order
    if spark is not None:  # the search on Spark is unreduced (symmetry apart): a model file's wish is not honoured
        asked = False
    reduce = asked and callable(getattr(model.world, "enable_partial_order", None))
    if reduce:
        model.world.enable_partial_order()
    bound = model.max_states if max_states is None else max_states
    result, on_spark = _search(model, spark, checked(model, safety_only), max_states=bound, progress=progress,
                               symmetry=symmetry and model.symmetry, partial_order=reduce, workers=workers,
                               time_limit=time_limit)
    finding = result.first()
    trace: Trace | None = None
    trace_path: Path | None = None
    shortest = True
    if finding is not None:
        verdict = f"violation:{finding.prop}"
        if finding.state_index >= 0:
            recorded = str(portable_path(model.path)) + (f"#{model.protocol}" if model.side_by_side else "")
            path, origin = finding.path, ""
            if reduce:
                short = shorten(model.world, path, finding.prop, finding.kind, max_states=SHORTEN_STATES)
                path, shortest = short.path, short.shortest
                origin = ("seqcheck check with partial-order reduction: a counterexample of "
                          f"{len(finding.path)} steps, "
                          + ("a shortest one found by breadth-first search" if shortest else
                             f"shortened to {len(path)} by breadth-first searches from states along it "
                             f"(each bounded by {SHORTEN_STATES:,} states; not proven shortest)"))
            trace = make_trace(model.world, model.path, finding.prop, finding.kind, path, recorded_as=recorded)
            if origin:
                trace = dataclasses.replace(trace, origin=origin)
            validate(model.world, trace)
            if trace_dir is not None:
                trace_path = trace.save(trace_file(model, trace_dir))
    elif result.stats.interrupted:
        verdict = "interrupted"
    elif not result.stats.complete:
        verdict = "incomplete"
    else:
        verdict = "pass"
    error = witness_error(model)
    used = cpu_seconds() - cpu
    if on_spark is not None:  # the executors' and the JVM's CPU are no children's that ended
        used = max(used, result.stats.cpu_seconds)
    return Outcome(model, result, verdict, trace, trace_path, time.perf_counter() - started, error, shortest,
                   asked and not reduce, used, figures(model), safety_only, on_spark)


def _search(model: Model, spark: SparkRun | None, properties: list[Property], *, max_states: int,
            progress: Progress | None, symmetry: bool, partial_order: bool, workers: int,
            time_limit: float | None) -> tuple[Result, dict[str, Any] | None]:
    """The search of ``model``: in this process (with ``workers``), or on Spark with its own figures."""
    if spark is None:
        return searcher(model, workers)(model.world, properties=properties, max_states=max_states, progress=progress,
                                        symmetry=symmetry, partial_order=partial_order, time_limit=time_limit), None
    from checks.sparkbfs.search import spark_explore

    result, figures_on_spark = spark_explore(model, spark.session, properties, max_states=max_states,
                                             symmetry=symmetry, time_limit=time_limit, checkpoint=spark.checkpoint,
                                             progress=spark.progress, json_lines=spark.json_lines)
    return result, figures_on_spark.to_json()


def checked(model: Model, safety_only: bool) -> list[Property]:
    """The properties a check of ``model`` judges: all of them, or without liveness (``safety_only``)."""
    return [p for p in model.world.properties if not (safety_only and isinstance(p, Liveness))]


def figures(model: Model) -> dict[str, int | float | str]:
    """The extra figures of ``model``'s system (``checks.explore.system.ExtraFigures``), checked; a
    mistake is a one-line ``ModelError`` naming the file, the protocol and the system."""
    try:
        return extra_figures(model.world)
    except ContractError as error:
        raise ModelError(f"{model.path}: protocol {model.protocol}: {error}") from None


def cpu_seconds() -> float:
    """CPU seconds of this process and of its ended child processes (the search's workers)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime



def searcher(model: Model, workers: int) -> Callable[..., Result]:
    """``explore``, or with ``workers`` > 1 ``explore`` with the successors computed by that many
    worker processes (``checks/explore/workers.py``: the same result)."""
    if workers < 2:
        return explore
    return partial(explore_with_workers, workers=workers)


def workers_problem(loaded: Sequence[Model], workers: int, *, swarm: bool, por: bool) -> str | None:
    """Why ``--workers`` cannot be used as asked (one line), or None."""
    if workers < 1:
        return f"--workers: expected a whole number >= 1, got {workers}"
    if workers == 1:
        return None
    if swarm:
        return "--workers: not with --swarm (a swarm's parallelism is its tasks: --tasks, --master)"
    if por:
        return "--workers: not with --por (partial-order reduction runs in one process)"
    for model in loaded:
        if not offers(model.world, PortableStates):
            return (f"--workers: {model.path}: protocol {model.protocol}: its system offers no PortableStates "
                    "(checks.explore.system), so its states cannot cross processes; use --workers 1")
    return None


def replay_witness(model: Model) -> list[tuple[Hashable, Hashable]]:
    """The path of ``model``'s witness: each step is the enabled action ``seqcheck show`` words as
    that step. Raises ``WitnessError`` naming the first step that is not enabled, or the first
    checked safety property violated along the way."""
    world = model.world
    state: tuple[int, ...] = world.init_states()[0]
    always = [p for p in world.properties if isinstance(p, Always)]
    path: list[tuple[Hashable, Hashable]] = []
    for number, step in enumerate(model.witness, 1):
        enabled = list(world.successors(state)) if world.within_bounds(state) else []
        found = next(((a, s) for a, s in enabled if world.format_action(a) == step), None)
        if found is None:
            some = "; ".join(world.format_action(a) for a, _ in enabled[:6]) or "nothing"
            raise WitnessError(f"witness step {number} ({step!r}) is not enabled; enabled: {some}")
        path.append(found)
        state = found[1]
        broken = next((p.name for p in always if not p.holds(state)), None)
        if broken is not None:
            raise WitnessError(f"witness step {number} ({step!r}) violates {broken}")
    return path


class WitnessError(Exception):
    """A witness that does not replay; the message is one line."""


def witness_error(model: Model) -> str | None:
    if not model.witness:
        return None
    try:
        replay_witness(model)
    except WitnessError as error:
        return str(error)
    return None
