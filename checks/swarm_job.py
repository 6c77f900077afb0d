"""``seqcheck check MODEL --swarm``: many diversified bounded searches, on Spark or in process.

Past what one machine's exhaustive search completes, a swarm (Holzmann's swarm verification) runs
many small randomised depth-first searches (``checks/explore/swarm.py``), each a Spark task with its
own seed, successor order and depth bound, and merges what they visited and what they found.

Rules
-----
1. Reproducible (GUIDE C6): every task's seed, order and depth bound derive from ``--seed`` (printed
   with every result) and the task's number; a task depends on nothing else (``checks/explore/swarm.py``
   rule 2), so the results do not depend on the master, the executors or the task order.
2. Spark only distributes tasks: the model travels as its file's text inside the plan, and each task
   rebuilds the model from it (a fresh model per task, as ``checks/fuzz`` does; the session is
   ``checks/fuzz/spark.py``'s). ``--master none`` runs the same tasks one after another in this
   process, without Spark (small runs, tests).
3. Nothing is reported that is not validated (GUIDE C3): each property violated comes back as the
   shortest path any task found to it; the driver replays it on the model, validates it as a trace
   (``checks/explore/trace.py``), shortens it with the checker's own BFS
   (``checks/explore/shorten.py``), validates the result again and writes it where ``seqcheck check``
   writes its counterexamples (``checks/check.py``'s ``trace_file``; a second property found goes
   beside it, ``.<property>`` before ``.json``), so ``seqcheck show`` and ``replay`` read it.
4. A swarm proves nothing about what it did not visit. Its verdict is ``no-violation`` or
   ``violation:<property>``, chosen as the checker chooses (``verdict_order``): the safety
   property (or deadlock) of the shortest validated trace, else the first liveness property; it
   *matches* a model expecting ``violation:P`` when some task found P, and a model expecting
   ``pass`` when none found anything.
5. Coverage: the distinct states of all tasks, from their merged fingerprint samples (exact while
   fewer than ``--sample``, else a k-minimum-values estimate), at 1, 2, 4, ... tasks against the CPU
   seconds those tasks took; with ``--exhaustive`` (or a model pinning ``[check] states``) also as a
   share of the checker's exhaustive count, whose CPU seconds are printed beside it.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from checks.check import portable_path, trace_file
from checks.explore.search import explore
from checks.explore.shorten import shorten
from checks.explore.swarm import (
    Found,
    Sample,
    TaskResult,
    TaskSpec,
    distinct_estimate,
    merge_samples,
    run_task,
    task_specs,
)
from checks.explore.system import ReplayError, replay
from checks.explore.trace import Trace, TraceError, make_trace, validate
from checks.extras import require_spark
from models.modelfile import Model, load

NONE = "none"  # --master none: the tasks run in this process, without Spark
MASTER = re.compile(r"none|local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|spark://[^\s/:]+:[0-9]+(,[^\s/:]+:[0-9]+)*")
MAX_SEED = 2**63 - 1


class SwarmUsageError(ValueError):
    """A bad option value; the message is one line naming the option."""


@dataclass(frozen=True)
class SwarmOptions:
    master: str = "local[*]"
    seed: int = 0
    tasks: int = 16
    depth: tuple[int, int] = (10, 60)  # each task's depth bound is drawn from this range
    task_states: int = 100_000  # distinct states one task may visit
    sample: int = 1 << 16  # fingerprints per task sample (rule 5)
    liveness_rate: float = 1.0  # share of new states whose fault-free continuations are searched
    shorten_states: int = 200_000  # states per shortening BFS
    exhaustive: bool = False  # also count the model's states with the checker (rule 5)

    def check(self) -> None:
        for name, value, low in (("--seed", self.seed, 0), ("--tasks", self.tasks, 1),
                                 ("--task-states", self.task_states, 1), ("--sample", self.sample, 2),
                                 ("--shorten-states", self.shorten_states, 1)):
            if value < low:
                raise SwarmUsageError(f"{name}: expected a whole number >= {low}, got {value}")
        if self.seed > MAX_SEED:
            raise SwarmUsageError(f"--seed: expected at most {MAX_SEED}, got {self.seed}")
        if not MASTER.fullmatch(self.master):
            raise SwarmUsageError(f"--master: expected none, local, local[N], local[*] or spark://HOST:PORT, "
                                  f"got {self.master!r}")
        if not 0.0 <= self.liveness_rate <= 1.0:
            raise SwarmUsageError(f"--liveness-rate: expected a number from 0 to 1, got {self.liveness_rate}")


def parse_depth(text: str) -> tuple[int, int]:
    """``--depth LO:HI`` (or ``N`` for one bound), each a whole number >= 1, LO <= HI."""
    parts = text.split(":")
    try:
        low, high = (int(parts[0]), int(parts[-1])) if len(parts) <= 2 else (0, -1)
    except ValueError:
        low, high = 0, -1
    if not 1 <= low <= high:
        raise SwarmUsageError(f"--depth: expected LO:HI with 1 <= LO <= HI (or one bound N), got {text!r}")
    return low, high


# -- the tasks --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SwarmPlan:
    """What a task needs besides its spec (rule 2)."""

    model_name: str
    model_text: str
    protocol: str | None  # one protocol of a side-by-side file
    sample: int


def run_one(plan: SwarmPlan, spec: TaskSpec) -> TaskResult:
    """One task, on a model built afresh from the plan's text."""
    from checks.fuzz.spark import model_file_copy  # the fuzz executors' copy, shared

    model = load(model_file_copy(plan.model_name, plan.model_text), protocol=plan.protocol)
    return run_task(model.world, spec, sample=plan.sample)


@dataclass
class Ran:
    results: list[TaskResult]
    cores: int
    startup_seconds: float
    seconds: float  # wall time of the tasks
    startup_cpu_seconds: float = 0.0  # the Spark session start's: this process's and the JVM's


def run_tasks(plan: SwarmPlan, specs: Sequence[TaskSpec], master: str, spark: Any | None,
              progress: TextIO | None) -> Ran:
    """Every task of ``specs``: on ``spark`` (one Spark task each) or, with ``master`` none, here."""
    started = time.perf_counter()
    if spark is None:
        results = []
        for spec in specs:
            results.append(run_one(plan, spec))
            if progress is not None:
                done = results[-1]
                print(f"  swarm: task {spec.index + 1}/{len(specs)}: {done.states:,} states, {done.stopped}, "
                      f"{done.seconds:.1f} s (CPU {done.cpu_seconds:.1f} s)", file=progress, flush=True)
        return Ran(results, 1, 0.0, time.perf_counter() - started)
    sc = spark.sparkContext
    cpu = sc.accumulator(0.0)
    line = TaskProgress(sc, len(specs), progress, cpu) if progress is not None else None
    if line is not None:
        line.start()
    try:
        results = sc.parallelize(list(specs), len(specs)).map(partial(run_counted, plan, cpu)).collect()
    finally:
        if line is not None:
            line.finish()
    return Ran(sorted(results, key=lambda r: r.spec.index), int(sc.defaultParallelism), 0.0,
               time.perf_counter() - started)


def run_counted(plan: SwarmPlan, cpu: Any, spec: TaskSpec) -> TaskResult:
    """``run_one`` on an executor, adding its CPU seconds to the accumulator ``cpu`` (the progress line's)."""
    result = run_one(plan, spec)
    cpu.add(result.cpu_seconds)
    return result


class TaskProgress(threading.Thread):
    """While Spark runs the tasks: tasks done and running (Spark's status tracker) and the wall
    seconds beside the CPU seconds of the tasks done (an accumulator), rewritten in place every
    half second on a terminal, else a line every 15 seconds."""

    def __init__(self, sc: Any, tasks: int, out: TextIO, cpu: Any) -> None:
        super().__init__(daemon=True)
        self.sc, self.tasks, self.out, self.tty, self.cpu = sc, tasks, out, out.isatty(), cpu
        self.stopped = threading.Event()
        self.started = time.perf_counter()

    def run(self) -> None:
        while not self.stopped.wait(0.5 if self.tty else 15.0):
            tracker = self.sc.statusTracker()
            infos = [i for i in (tracker.getStageInfo(s) for s in tracker.getActiveStageIds()) if i is not None]
            text = (f"swarm: {sum(i.numCompletedTasks for i in infos)}/{self.tasks} tasks done, "
                    f"{sum(i.numActiveTasks for i in infos)} running, {time.perf_counter() - self.started:,.0f} s "
                    f"(CPU {self.cpu.value:,.0f} s in the tasks done)")
            print(f"\r\033[K{text}" if self.tty else text, end="" if self.tty else "\n", file=self.out, flush=True)

    def finish(self) -> None:
        self.stopped.set()
        self.join()
        if self.tty:
            print("\r\033[K", end="", file=self.out, flush=True)


# -- findings ---------------------------------------------------------------------------------------
@dataclass
class SwarmTrace:
    prop: str
    kind: str
    task: int  # the task that found the shortest path to it
    seed: int  # that task's seed
    found_length: int  # the task's path
    trace: Trace | None = None  # validated, shortened
    shortest: bool = False  # the BFS from the initial state found it
    searches: int = 0
    path: Path | None = None
    error: str | None = None  # why the task's path is not a validated trace (a defect: rule 3)

    def to_json(self) -> dict[str, Any]:
        return {"property": self.prop, "kind": self.kind, "task": self.task, "seed": self.seed,
                "found_length": self.found_length, "length": len(self.trace.actions) if self.trace else None,
                "shortest": self.shortest, "bfs_searches": self.searches,
                "path": str(self.path) if self.path else None, "error": self.error}


def best_findings(model: Model, results: Sequence[TaskResult]) -> list[tuple[Found, TaskSpec]]:
    """Per property, the shortest path any task found (then the lowest task number), in the model's
    property order (deadlock last)."""
    best: dict[str, tuple[Found, TaskSpec]] = {}
    for result in results:
        for found in result.found:
            held = best.get(found.prop)
            if held is None or len(found.actions) < len(held[0].actions):
                best[found.prop] = (found, result.spec)
    order = [p.name for p in model.world.properties] + ["deadlock"]
    return sorted(best.values(), key=lambda pair: order.index(pair[0].prop) if pair[0].prop in order else len(order))


def settle(model: Model, found: Found, spec: TaskSpec, options: SwarmOptions) -> SwarmTrace:
    """Rule 3 for one property: replay, validate, shorten, validate."""
    entry = SwarmTrace(found.prop, found.kind, spec.index, spec.seed, len(found.actions))
    world = model.world
    recorded = str(portable_path(model.path)) + (f"#{model.protocol}" if model.side_by_side else "")
    try:
        path = replay(world, found.actions)
        validate(world, make_trace(world, model.path, found.prop, found.kind, path, spec.seed, recorded_as=recorded))
        short = shorten(world, path, found.prop, found.kind, max_states=options.shorten_states)
        trace = make_trace(world, model.path, found.prop, found.kind, short.path,
                           None if short.shortest else spec.seed, recorded_as=recorded)
        validate(world, trace)
    except (ReplayError, TraceError, RuntimeError) as error:
        entry.error = str(error)
        return entry
    entry.trace, entry.shortest, entry.searches = trace, short.shortest, short.searches
    return entry


def verdict_order(entry: SwarmTrace) -> tuple[bool, int, bool]:
    """Rule 4, as the checker decides: a safety or deadlock violation before any liveness one, the
    shortest first (sorted stably from the model's property order, so ties keep that order); among
    liveness violations, the model's property order. Traces that did not validate go last."""
    if entry.trace is None:
        return True, sys.maxsize, True
    liveness = entry.kind == "liveness"
    return liveness, 0 if liveness else len(entry.trace.actions), False


def save_traces(model: Model, traces: Sequence[SwarmTrace], trace_dir: Path) -> None:
    """Rule 3: the verdict's trace where ``seqcheck check`` writes the model's, the others beside it."""
    target = trace_file(model, trace_dir)
    for number, entry in enumerate(t for t in traces if t.trace is not None):
        assert entry.trace is not None
        entry.path = entry.trace.save(target if number == 0 else target.with_name(f"{target.stem}.{entry.prop}.json"))


# -- the report -------------------------------------------------------------------------------------
@dataclass
class SwarmReport:
    model: Model
    options: SwarmOptions
    master: str
    ran: Ran
    traces: list[SwarmTrace]
    curve: list[tuple[int, float, int, bool]]  # (tasks, CPU seconds, distinct states, exact?)
    exhaustive: Exhaustive | None = None  # the checker's count (--exhaustive, or pinned in the model)
    coverage_known: bool = True  # False: the states are packed and the model offers no view

    @property
    def validated(self) -> list[SwarmTrace]:
        """The validated traces, shortest first (``run_swarm`` keeps them in that order)."""
        return [t for t in self.traces if t.trace is not None]

    @property
    def verdict(self) -> str:
        valid = self.validated
        return f"violation:{valid[0].prop}" if valid else "no-violation"

    @property
    def mismatch(self) -> str:
        """Rule 4: empty when the outcome matches the model's expectation."""
        broken = [t for t in self.traces if t.error is not None]
        if broken:
            return f"{broken[0].prop}: the task's path is not a validated trace: {broken[0].error}"
        expect, found = self.model.expect, [f"violation:{t.prop}" for t in self.validated]
        if expect == "pass":
            return f"expected pass, found {', '.join(found)}" if found else ""
        return "" if expect in found else f"expected {expect}, found {', '.join(found) or 'no violation'}"

    @property
    def total(self) -> int | None:
        """The model's distinct-state count, if the checker's count completed."""
        return self.exhaustive.states if self.exhaustive and self.exhaustive.complete else None

    @property
    def distinct(self) -> tuple[int, bool]:
        return (self.curve[-1][2], self.curve[-1][3]) if self.curve else (0, True)

    def to_json(self) -> dict[str, Any]:
        results, o = self.ran.results, self.options
        distinct, exact = self.distinct
        total = self.total
        share = 100.0 * distinct / total if total and self.coverage_known else None
        return {
            "model": str(self.model.path), "protocol": self.model.protocol, "mode": "swarm",
            "expected": self.model.expect, "verdict": self.verdict, "matches": not self.mismatch,
            "mismatch": self.mismatch or None, "seed": o.seed, "master": self.master, "cores": self.ran.cores,
            "tasks": len(results), "depth": list(o.depth), "task_states": o.task_states, "sample": o.sample,
            "states_visited": sum(r.states for r in results), "transitions": sum(r.transitions for r in results),
            "distinct_states": distinct if self.coverage_known else None, "distinct_exact": exact,
            "cpu_seconds": round(sum(r.cpu_seconds for r in results), 3), "seconds": round(self.ran.seconds, 3),
            "startup_seconds": round(self.ran.startup_seconds, 3),
            "startup_cpu_seconds": round(self.ran.startup_cpu_seconds, 3),
            "exhaustive_states": self.exhaustive.states if self.exhaustive else None,
            "exhaustive_complete": self.exhaustive.complete if self.exhaustive else None,
            "exhaustive_cpu_seconds": self.exhaustive.cpu_seconds if self.exhaustive else None,
            "exhaustive_seconds": self.exhaustive.seconds if self.exhaustive else None,
            "coverage_percent": round(share, 2) if share is not None else None,
            "curve": [{"tasks": n, "cpu_seconds": round(cpu, 3), "distinct_states": d, "exact": e,
                       "coverage_percent": round(100.0 * d / total, 2) if total else None}
                      for n, cpu, d, e in self.curve] if self.coverage_known else [],
            "per_task": [{"task": r.spec.index, "seed": r.spec.seed, "order": r.spec.order, "depth": r.spec.depth,
                          "states": r.states, "max_depth": r.max_depth, "stopped": r.stopped,
                          "seconds": round(r.seconds, 3), "cpu_seconds": round(r.cpu_seconds, 3),
                          "found": [f.prop for f in r.found]}
                         for r in results],
            "found": [t.to_json() for t in self.traces],
        }


def coverage_curve(results: Sequence[TaskResult], k: int) -> list[tuple[int, float, int, bool]]:
    """Rule 5: distinct states and CPU seconds of the first 1, 2, 4, ... tasks, and of all."""
    points = []
    merged: Sample | None = None
    cpu = 0.0
    marks = {1 << i for i in range(len(results).bit_length())} | {len(results)}
    for number, result in enumerate(results, 1):
        merged = result.sample[:k] if merged is None else merge_samples(merged, result.sample, k)
        cpu += result.cpu_seconds
        if number in marks:
            distinct, exact = distinct_estimate(merged, k)
            points.append((number, cpu, distinct, exact))
    return points


@dataclass(frozen=True)
class Exhaustive:
    """The checker's count of a model's states, to compare the swarm's coverage with (rule 5)."""

    states: int  # distinct states it reached (with symmetry: of the unreduced system, as the tasks visit)
    complete: bool  # False: it stopped at the model's max_states
    cpu_seconds: float | None  # None: pinned in the model file ([check] states), not measured
    note: str
    seconds: float | None = None  # wall, beside the CPU seconds (None: not measured)


def exhaustive_count(model: Model) -> Exhaustive:
    """The checker's search of ``model`` (no property, up to its ``max_states``) and its CPU seconds
    (beside its wall seconds in the note)."""
    started, wall = time.process_time(), time.perf_counter()
    stats = explore(model.world, [], stop_at_first=False, check_deadlock=False, max_states=model.max_states).stats
    cpu, wall = time.process_time() - started, time.perf_counter() - wall
    states = getattr(stats, "unreduced", 0) or stats.distinct  # under symmetry: the states its orbits stand for
    reduced = f", {stats.distinct:,} explored under symmetry" if states != stats.distinct else ""
    if not stats.complete:
        return Exhaustive(states, False, round(cpu, 3), f"the exhaustive search stopped at max_states: {states:,} "
                          f"states{reduced} to depth {stats.depth} in {wall:.1f} s (CPU {cpu:.1f} s)", round(wall, 3))
    return Exhaustive(states, True, round(cpu, 3),
                      f"{states:,} states (--exhaustive{reduced}, {wall:.1f} s, CPU {cpu:.1f} s)", round(wall, 3))


def run_swarm(model: Model, options: SwarmOptions, *, spark: Any | None, trace_dir: Path | None,
              progress: TextIO | None = None) -> SwarmReport:
    """The swarm on one model (rules 1 to 5); ``spark``: a session, or None for ``--master none``."""
    plan = SwarmPlan(model.path.name, model.path.read_text(), model.protocol if model.side_by_side else None,
                     options.sample)
    specs = task_specs(options.seed, options.tasks, depth=options.depth, max_states=options.task_states,
                       liveness_rate=options.liveness_rate)
    ran = run_tasks(plan, specs, options.master, spark, progress)
    found = best_findings(model, ran.results)
    traces = sorted((settle(model, found_one, spec, options) for found_one, spec in found), key=verdict_order)
    if trace_dir is not None:
        save_traces(model, traces, trace_dir)
    known = any(len(r.sample) for r in ran.results) or not any(r.states for r in ran.results)
    report = SwarmReport(model, options, options.master, ran, traces, coverage_curve(ran.results, options.sample),
                         coverage_known=known)
    if options.exhaustive:
        report.exhaustive = exhaustive_count(model)
    elif model.pinned_states is not None:
        report.exhaustive = Exhaustive(model.pinned_states, True, None,
                                       f"{model.pinned_states:,} states ([check] states; CPU time: see --exhaustive)")
    return report


def report_lines(report: SwarmReport, label: str) -> list[str]:
    """The report for people, one block per model."""
    o, results = report.options, report.ran.results
    orders = {order: sum(r.spec.order == order for r in results) for order in ("permuted", "shuffled")}
    stopped = {why: sum(r.stopped == why for r in results) for why in ("budget", "exhausted")}
    where = "in this process (--master none)" if report.master == NONE else \
        f"on {report.master} ({report.ran.cores} cores)"
    distinct, exact = report.distinct
    cpu = sum(r.cpu_seconds for r in results)
    error = 100 / o.sample**0.5
    how = "exact" if exact else f"estimate from the {o.sample:,} smallest fingerprints, about ±{error:.1f}%"
    lines = [
        f"swarm     {label}: expected {report.model.expect}; seed {o.seed} (--seed {o.seed} repeats it), "
        f"{len(results)} tasks {where}",
        f"tasks     depth bounds {o.depth[0]}..{o.depth[1]}, orders {orders['permuted']} permuted / "
        f"{orders['shuffled']} shuffled, up to {o.task_states:,} states each; {stopped['budget']} ended at that "
        f"budget, {stopped['exhausted']} searched all within their bound; {sum(bool(r.found) for r in results)} "
        "found violations",
        f"states    {sum(r.states for r in results):,} visited by the tasks; "
        + (f"{distinct:,} distinct ({how})" if report.coverage_known
           else "distinct unknown (packed states and no view to fingerprint them across tasks)"),
        f"time      {cpu:,.1f} s CPU in the tasks, {report.ran.seconds:,.1f} s wall"
        + (f", Spark session start {report.ran.startup_seconds:.1f} s (CPU {report.ran.startup_cpu_seconds:.1f} s "
           "with the JVM's)" if report.ran.startup_seconds else ""),
    ]
    if report.exhaustive is not None:
        lines.append(f"checker   {report.exhaustive.note}")
    if report.coverage_known and report.curve:
        total = report.total
        lines.append("coverage  tasks   CPU s   distinct states" + ("   % of exhaustive" if total else ""))
        for n, seconds, d, _ in report.curve:
            share = f"   {100.0 * d / total:>15.1f}" if total else ""
            lines.append(f"          {n:>5} {seconds:>7.2f} {d:>17,}{share}")
    for t in report.traces:
        if t.trace is None:
            lines.append(f"found     violation:{t.prop}: NOT VALIDATED ({t.error})")
            continue
        how_short = "shortest (BFS from the initial state)" if t.shortest else f"{t.searches} BFS tried"
        lines.append(f"found     violation:{t.prop:<28} task {t.task} (seed {t.seed}): {t.found_length} steps -> "
                     f"{len(t.trace.actions)}, {how_short}" + (f"  {t.path}" if t.path else ""))
    verdict = f"MISMATCH: {report.mismatch}" if report.mismatch else "ok"
    lines.append(f"verdict   {report.verdict}  {verdict}  (a swarm is a partial search: no-violation is no proof)")
    return lines


# -- the command ------------------------------------------------------------------------------------
def check_swarm(models: Sequence[Model], options: SwarmOptions, labels: Sequence[str], *, json_out: bool,
                trace_dir: Path, progress: TextIO | None, out: TextIO | None = None) -> int:
    """``seqcheck check --swarm`` on ``models``: 0 when every outcome matches, else 1."""
    import json

    from checks.fuzz.spark import session, startup_cpu

    out = out or sys.stdout
    options.check()
    spark, owned, startup, startup_cpu_seconds = None, False, 0.0, 0.0
    if options.master != NONE:
        require_spark(f"--swarm --master {options.master}", "--master none (the tasks in this process)")
        started, cpu = time.perf_counter(), time.process_time()
        try:
            spark, owned = session(options.master, "seqcheck check --swarm")
        except ValueError as error:
            raise SwarmUsageError(str(error)) from None
        startup, startup_cpu_seconds = time.perf_counter() - started, startup_cpu(spark, owned, cpu)
    all_match = True
    try:
        for model, label in zip(models, labels):
            report = run_swarm(model, options, spark=spark, trace_dir=trace_dir, progress=progress)
            report.ran.startup_seconds, startup = startup, 0.0  # the first model's
            report.ran.startup_cpu_seconds, startup_cpu_seconds = startup_cpu_seconds, 0.0
            all_match = all_match and not report.mismatch
            if json_out:
                print(json.dumps(report.to_json()), file=out, flush=True)
            else:
                print("\n".join(report_lines(report, label)) + "\n", file=out, flush=True)
    finally:
        if owned and spark is not None:
            spark.stop()
    return 0 if all_match else 1
