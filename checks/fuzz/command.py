"""``seqcheck fuzz MODEL``: random fault schedules, engine against spec, in this process or on Spark.

Property fuzzed: on every schedule the UNICAST3 engines agree with the spec after every step,
every safety property of the model holds, and the end state can still reach every liveness goal
without further faults (``checks/fuzz/run.py``). Every failure carries its seed.

Rules
-----
1. The schedules are seeded random walks over the model's world (GUIDE C6): run ``i`` of
   ``--runs N --seed S`` is seed ``S+i``; its result depends only on the model file's text, the
   seed, ``--steps`` and ``--weights``, never on ``--partitions``, the executors or on whether the
   job was stopped and resumed (``--resume``, ``checks/fuzz/ledger.py``).
2. Spark (``checks/fuzz/spark.py``) only distributes seed ranges and aggregates; every failure is
   re-run here from its seed, shrunk, validated and saved as a trace (``checks/fuzz/shrink.py``)
   that ``seqcheck show`` and ``seqcheck replay`` read.
3. Budgets: the model file's, multiplied by ``--budget-scale`` through a derived model file
   written to ``--out`` (``checks/fuzz/model.py``); traces found under scaled budgets name it.
   ``--random-views K`` adds joins and leaves (random views per member) the same way, and
   ``--variant FLAG,...`` runs the model under those variant flags (issue 19, item 4).
   ``--engines-with NAME`` runs the engines under one of ``ENGINE_SETTINGS`` (tiny window rows,
   receive windows near 2**31 or 2**63; issue 19, item 5; or ``timed``: virtual time passes and
   each engine runs its own timers, ``checks/conform/timed.py``, item 1), by name from that fixed table.
4. Exit status: 0 when the outcome matches the model's ``expect`` (``pass``: no failing run;
   ``violation:P``: some run violates P, and none diverges, crashes or errs), 1 otherwise
   (also when a failure does not reproduce locally, or when the results hold another number of runs
   than asked for), 2 for a usage error (one line).
5. One job per ``--out`` at a time: a job holds an exclusive lock on ``--out/.lock`` while it runs,
   and a second job on the same folder is refused (exit 2) instead of mixing its rows in.
6. Where: ``--master none`` in this process (no Spark, no pyarrow), ``auto`` (the default) in this
   process up to ``checks.fuzz.inprocess.IN_PROCESS_STEPS`` steps asked for and on ``local[*]``
   above, or the Spark master named; the report says which and why. Same seeds, same rows,
   aggregates (except the distinct-state count: exact in this process, estimated by Spark),
   shrunk traces and exit status either way. A ``spark://`` master that no TCP connection
   reaches within ``checks.fuzz.spark.CONNECT_TIMEOUT`` is a usage error before Spark starts.
7. Ctrl-C: one line on stderr (the runs recorded of those asked for, and the ledger that
   ``--resume`` goes on from), exit 130; Spark's JVM and its Python workers write to
   ``--out/spark.log``, never to the terminal, so no Java or py4j trace shows.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from checks.check import portable_path
from checks.conform.engines import NoEngine, binding
from checks.extras import require_spark
from checks.fuzz import inprocess
from checks.fuzz.coverage import KINDS, UNICAST, coverage_table, phase_legend, scheme_for, world_kinds
from checks.fuzz.inprocess import chosen_master
from checks.fuzz.ledger import LEDGER, JobKey, ResumeError, recorded_rows, resumed_ledger
from checks.fuzz.model import write_scaled_model
from checks.fuzz.run import FuzzPlan, Weights, resolve_engines
from checks.fuzz.shrink import Shrunk, shrink_failures
from checks.fuzz.spark import (
    SPARK_LOG,
    Aggregates,
    JobResult,
    aggregate,
    run_job,
    session,
    startup_cpu,
    stop_quietly,
    unreachable,
)
from models.modelfile import Model, load, split_reference
from models.multicast_world import MulticastWorld

MASTER = re.compile(r"none|auto|local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|spark://[^\s/:]+:[0-9]+(,[^\s/:]+:[0-9]+)*")
MAX_SEED = 2**63 - 1  # the largest seed a run may have (Spark's LongType)
MAX_STEPS = 100_000  # steps per schedule at most: a run keeps its whole path (for shrinking), 1,000x the default
RUNS_PER_PARTITION = 2_000  # default partitioning: at least 2 per core, at most this many runs each
ENGINE_SETTINGS = {  # --engines-with: engine factories the spec cannot tell apart from the default ones
    "rows-of-1": "checks.conform.geometry:one_slot_rows",
    "rows-of-2": "checks.conform.geometry:two_slot_rows",
    "seqnos-near-2^31": "checks.conform.offsets:near_2_31",
    "seqnos-near-2^63": "checks.conform.offsets:near_2_63",
    "timed": "checks.conform.timed:timed",  # a clock: each engine runs its own timers (issue 19, item 1)
    "timed-coprime": "checks.conform.timed:timed_coprime",
    "timed-short-close": "checks.conform.timed:timed_short_close",
}


class FuzzUsageError(ValueError):
    """A bad option value; the message is one line naming the option."""


@dataclass(frozen=True)
class FuzzOptions:
    model: Path
    runs: int = 1000
    steps: int = 100
    master: str = "auto"  # none: this process; auto: this process for small jobs (checks/fuzz/inprocess.py)
    seed: int = 0
    out: Path = Path("fuzz-out")
    partitions: int | None = None  # None: max(2 per core, runs / RUNS_PER_PARTITION)
    budget_scale: int = 1
    weights: Weights = field(default_factory=Weights)
    random_views: int = 0  # joins and leaves: random views per member (checks/fuzz/model.py)
    liveness: bool = True
    shrink: int = 3  # failing runs re-run, shrunk and saved per verdict
    engines: str | None = None  # test hook: "module:function" returning an EngineFactory
    exhaustive: bool = False  # also count the model's states with the checker, to compare coverage
    swarm: bool = False  # every run draws its own weights (checks/fuzz/run.py rule 2)
    pct: bool = False  # deliveries by packet priority (checks/fuzz/run.py rule 2)
    resume: bool = False  # go on with the job in ``out`` (checks/fuzz/ledger.py rule 4)
    report: Path | None = None  # also write an HTML report here (checks/view/fuzz_report.py)
    variant: tuple[str, ...] | None = None  # flags (names or aliases) replacing the model's (rule 3)

    def check(self) -> None:
        for name, value, low in (("--runs", self.runs, 1), ("--steps", self.steps, 1), ("--seed", self.seed, 0),
                                 ("--budget-scale", self.budget_scale, 1), ("--shrink", self.shrink, 0),
                                 ("--random-views", self.random_views, 0),
                                 ("--partitions", 1 if self.partitions is None else self.partitions, 1)):
            if value < low:
                raise FuzzUsageError(f"{name}: expected a whole number >= {low}, got {value}")
        if self.steps > MAX_STEPS:
            raise FuzzUsageError(f"--steps: expected a whole number <= {MAX_STEPS:,} (steps per schedule), got "
                                 f"{self.steps if self.steps < 10**12 else f'{self.steps:.3g}'}")
        if not any(getattr(self.weights, kind) > 0 for kind in KINDS):
            raise FuzzUsageError(f"--weights: expected at least one kind with a weight > 0, got {self.weights.text()}")
        if self.seed + self.runs > MAX_SEED:  # seeds are Spark longs (signed 64 bits)
            raise FuzzUsageError(f"--seed: expected --seed + --runs <= {MAX_SEED}, got {self.seed} + {self.runs}")
        if not MASTER.fullmatch(self.master):
            raise FuzzUsageError(f"--master: expected auto, none, local, local[N], local[*] or spark://HOST:PORT, "
                                 f"got {self.master!r}")
        if self.out.exists() and not self.out.is_dir():
            raise FuzzUsageError(f"--out: {self.out} exists and is not a folder")
        if self.report is not None and self.report.exists() and not self.report.is_dir():
            raise FuzzUsageError(f"--report: {self.report} exists and is not a folder")
        if self.resume and not (self.out / LEDGER).exists():
            raise FuzzUsageError(f"--resume: {self.out} holds no fuzz job ({LEDGER} not found)")


@dataclass
class FuzzReport:
    options: FuzzOptions
    model: Model  # the model fuzzed (the derived file under a budget scale)
    cores: int
    partitions: int
    startup_seconds: float
    job_seconds: float
    totals: Aggregates
    shrunk: list[Shrunk | str] = field(default_factory=list)  # a string: a failure that did not reproduce
    explored: tuple[int | None, str] | None = None  # (states, text) from --exhaustive
    resumed_runs: int = 0  # runs an earlier invocation had done (--resume)
    master: str = ""  # where the job ran: none (this process) or a Spark master (rule 6)
    chosen: str = ""  # why, in words
    cpu_seconds: float | None = None  # the runs' CPU time (None: a resumed job's older segments lack it)
    startup_cpu_seconds: float = 0.0  # the session start's: this process's and the JVM's

    @property
    def cpu_text(self) -> str:
        """The CPU seconds beside the wall seconds, for people."""
        if self.cpu_seconds is None:
            return "CPU not recorded (segments from an older version)"
        rate = self.totals.steps / max(self.cpu_seconds, 1e-9)
        return f"CPU {self.cpu_seconds:,.1f} s in the runs, {rate:,.0f} steps/CPU-s"

    @property
    def ran_on(self) -> str:
        return self.master or self.options.master

    @property
    def failing(self) -> dict[str, int]:
        return {v: n for v, n in sorted(self.totals.verdicts.items()) if v != "pass"}

    @property
    def exhaustive_states(self) -> tuple[int | None, str]:
        if self.explored is not None:
            return self.explored
        if self.options.budget_scale != 1 or self.options.random_views or self.options.variant is not None:
            return None, "unknown (derived model: the pinned count is for the model's own; see --exhaustive)"
        pinned = self.model.pinned_states
        if pinned is not None:
            return pinned, f"{pinned:,} ([check] states)"
        return None, "unknown (the model pins no [check] states; see --exhaustive)"

    @property
    def mismatch(self) -> str:
        """Rule 4: empty when the outcome matches the model's expectation."""
        failing = self.failing
        bad = [s for s in self.shrunk if isinstance(s, str)]
        if bad:
            return f"{len(bad)} failure(s) did not reproduce locally"
        if self.totals.runs != self.options.runs:
            return (f"{self.options.out / 'runs'} holds {self.totals.runs:,} runs, not the {self.options.runs:,} "
                    "asked for: rows are missing or foreign")
        expect = self.model.expect
        if expect == "pass":
            return f"expected pass, got {', '.join(failing)}" if failing else ""
        broken = [v for v in failing if not v.startswith("violation:")]
        if broken:
            return f"expected {expect}, got {', '.join(broken)}"
        if expect not in failing:
            found = ", ".join(failing) or "no failure"
            return f"expected {expect}, not found in {self.totals.runs:,} runs ({found})"
        return ""

    def to_json(self) -> dict[str, Any]:
        states, _ = self.exhaustive_states
        return {"model": str(self.model.path), "expected": self.model.expect, "matches": not self.mismatch,
                "mismatch": self.mismatch or None, "runs": self.totals.runs, "steps": self.totals.steps,
                "seconds": round(self.job_seconds, 3), "startup_seconds": round(self.startup_seconds, 3),
                "startup_cpu_seconds": round(self.startup_cpu_seconds, 3),
                "runs_per_s": round(self.totals.runs / self.job_seconds, 1),
                "steps_per_s": round(self.totals.steps / self.job_seconds, 1),
                "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 3),
                "steps_per_cpu_s": (None if self.cpu_seconds is None
                                    else round(self.totals.steps / max(self.cpu_seconds, 1e-9), 1)),
                "master": self.ran_on,
                "master_asked": self.options.master, "master_chosen": self.chosen,
                "cores": self.cores, "partitions": self.partitions, "budget_scale": self.options.budget_scale,
                "random_views": self.options.random_views, "variant": list(self.model.variant),
                "engines": self.options.engines,
                "weights": asdict(self.options.weights), "swarm": self.options.swarm, "pct": self.options.pct,
                "verdicts": self.totals.verdicts,
                "first_failing_seed": {v: s for v, s in self.totals.first_seed.items() if v != "pass"},
                "ends": self.totals.ends, "actions": self.totals.actions,
                "distinct_states_approx": self.totals.distinct_states,
                "distinct_states_exact": self.totals.exact_distinct, "exhaustive_states": states,
                "phase_hits": self.totals.phase_hits, "resumed_runs": self.resumed_runs,
                "coverage_curve": [list(point) for point in self.totals.coverage_curve],
                "traces": [{"seed": s.seed, "verdict": s.verdict, "length": len(s.trace.actions),
                            "original_length": s.original_length, "path": str(s.path)}
                           for s in self.shrunk if isinstance(s, Shrunk)],
                "not_reproduced": [s for s in self.shrunk if isinstance(s, str)],
                "results": str(self.options.out / "runs")}


def run_fuzz(options: FuzzOptions, *, progress: TextIO | None = None) -> FuzzReport:
    """Rules 1 to 3; the job runs in this process or on Spark (rule 6; an active session on the
    master is reused)."""
    options.check()
    file, protocol = split_reference(str(options.model))
    loaded = load(file, protocol=protocol)
    check_variant(options.variant, loaded)
    if options.engines is not None:
        try:  # an engine factory refuses a model it cannot run in one line (checks/conform/offsets.py)
            resolve_engines(options.engines)(loaded.world)
        except ValueError as error:
            raise FuzzUsageError(f"{options.model}: {error}") from None
    if options.engines is None:
        try:
            binding(loaded.protocol)
        except NoEngine as error:
            raise FuzzUsageError(f"{options.model}: {error}") from None
    if options.engines is not None:  # a factory that refuses this model says so in one line, before any run
        try:
            resolve_engines(options.engines)(loaded.world)
        except ValueError as error:
            raise FuzzUsageError(f"{options.model}: {' '.join(str(error).split())}") from None
    if options.random_views and isinstance(loaded.world, MulticastWorld):
        raise FuzzUsageError(f"--random-views: {options.model} runs in the multicast world, whose views come with "
                             "joins and leaves; script them in the model file")
    master, why = chosen_master(options.master, options.runs, options.steps,
                                recorded_rows(options.out) if options.resume else None)
    if master != "none":
        require_spark(f"--master {master}", "--master none (this process)")
    if master.startswith("spark://"):
        problem = unreachable(master)
        if problem:
            raise FuzzUsageError(f"--master: {problem}")
    try:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / ".lock").touch()
    except OSError as error:
        raise FuzzUsageError(f"--out: cannot write in {options.out}: {error.strerror or error}") from None
    with _locked(options.out):
        return _run_locked(options, file, protocol, progress, master, why)


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Rule 5: one job at a time per ``--out`` (an exclusive lock on ``out/.lock``, released when
    the job ends, however it ends)."""
    with (out / ".lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FuzzUsageError(f"--out: {out} is in use by another fuzz job; give each job its own folder") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass
class _Job:
    cores: int
    startup: float
    job: JobResult
    totals: Aggregates
    startup_cpu: float = 0.0


def check_variant(variant: tuple[str, ...] | None, model: Model) -> None:
    """``--variant``: every flag a name or alias of the model's protocol (one line otherwise)."""
    if variant is None:
        return
    adapter = model.world.adapter
    known = set(adapter.variant_names()) | set(adapter.variant_aliases)
    for flag in variant:
        if flag not in known:
            raise FuzzUsageError(f"--variant: expected flags of {model.protocol} ({', '.join(sorted(known))}), "
                                 f"got {flag!r}")


def parse_variant(text: str | None) -> tuple[str, ...] | None:
    """``--variant``'s value: comma-separated flags; ``none`` (or nothing) for the protocol as shipped."""
    if text is None:
        return None
    flags = tuple(flag.strip() for flag in text.split(",") if flag.strip())
    return () if flags in ((), ("none",)) else flags


def _run_locked(options: FuzzOptions, file: str, protocol: str | None, progress: TextIO | None,
                master: str, why: str) -> FuzzReport:
    model_path = write_scaled_model(Path(file), options.budget_scale, options.out, options.random_views, protocol,
                                    options.variant)
    model = load(model_path)
    plan = FuzzPlan(model_path.name, model_path.read_text(), options.steps, options.weights, options.liveness,
                    options.engines, options.swarm, options.pct)
    if options.resume:
        try:
            resumed_ledger(options.out / "runs", JobKey.of(plan, options.seed, options.runs,
                                                          rows="jsonl" if master == "none" else "parquet"))
        except ResumeError as error:
            raise FuzzUsageError(str(error)) from None
    width = scheme_for(model.world).width  # of the rows' phase_hits
    done = (_in_process(options, plan, model_path, progress, width) if master == "none"
            else _on_spark(options, master, plan, progress, width))
    shrunk = shrink_failures(plan, model_path, done.totals.to_shrink, options.out / "traces")
    report = FuzzReport(options, model, done.cores, done.job.partitions, done.startup, done.job.seconds, done.totals,
                        shrunk, count_states(model) if options.exhaustive else None, done.job.resumed_runs,
                        master, why, done.job.cpu_seconds, done.startup_cpu)
    (options.out / "summary.json").write_text(json.dumps(report.to_json(), indent=1) + "\n")
    if options.report is not None:
        from checks.view.fuzz_report import write_fuzz_report

        write_fuzz_report(options.report, report)
    return report


def _in_process(options: FuzzOptions, plan: FuzzPlan, model_path: Path, progress: TextIO | None,
                width: int) -> _Job:
    """Rule 6: the job in this process (``checks/fuzz/inprocess.py``)."""
    partitions = options.partitions or max(2, math.ceil(options.runs / RUNS_PER_PARTITION))
    results = options.out / "runs"
    job = inprocess.run_job(plan, model_path, options.seed, options.runs, partitions, results, progress,
                            resume=options.resume)
    return _Job(1, 0.0, job, inprocess.aggregate(results, options.shrink, options.seed, width))


def _on_spark(options: FuzzOptions, master: str, plan: FuzzPlan, progress: TextIO | None, width: int) -> _Job:
    started, cpu = time.perf_counter(), time.process_time()
    log = options.out / SPARK_LOG
    try:
        spark, owned = session(master, f"seqcheck fuzz {plan.model_name}", log=log)
    except ValueError as error:
        raise FuzzUsageError(str(error)) from None
    except Exception as error:  # the JVM's refusal (py4j's error: a Java trace): one line, the trace logged
        raise FuzzUsageError(f"--master: Spark did not start on {master}: {_first_line(error, log)}") from None
    startup, startup_cpu_seconds = time.perf_counter() - started, startup_cpu(spark, owned, cpu)
    try:
        cores = int(spark.sparkContext.defaultParallelism)
        partitions = options.partitions or max(2 * cores, math.ceil(options.runs / RUNS_PER_PARTITION))
        results = options.out / "runs"
        job = run_job(spark, plan, options.seed, options.runs, partitions, results, progress, resume=options.resume)
        totals = aggregate(spark, results, options.shrink, options.seed if options.report is not None else None, width)
    finally:
        if owned:
            stop_quietly(spark)
    return _Job(cores, startup, job, totals, startup_cpu_seconds)


def _first_line(error: Exception, log: Path) -> str:
    """The Java exception's line of ``error`` (else its first line), the whole text appended to ``log``."""
    text = str(error)
    with contextlib.suppress(OSError), log.open("a") as out:
        out.write(f"{type(error).__name__}: {text}\n")
    lines = [line.strip(" :") for line in text.splitlines() if line.strip(" :")]
    found = next((line for line in lines if line.startswith("java.") or line.startswith("org.")), None)
    return f"{(found or (lines[0] if lines else type(error).__name__))[:300]} (details: {log})"


def count_states(model: Model) -> tuple[int | None, str]:
    """The checker's distinct-state count of ``model`` (every state, no property), if it completes
    within the model's ``max_states``."""
    from checks.explore.search import explore

    stats = explore(model.world, [], stop_at_first=False, check_deadlock=False, max_states=model.max_states).stats
    if not stats.complete:
        return None, f"unknown (--exhaustive stopped at max_states, {stats.distinct:,} states)"
    return stats.distinct, f"{stats.distinct:,} (--exhaustive, {stats.seconds:.1f} s, CPU {stats.cpu_seconds:.1f} s)"


# -- the report for people ------------------------------------------------------------------------
def report_lines(report: FuzzReport) -> list[str]:
    o, t = report.options, report.totals
    rate = report.job_seconds or 1e-9
    ends = ", ".join(f"{n:,} {_END_TEXT.get(e, e)}" for e, n in sorted(t.ends.items()))
    lines = [
        f"model     {_short(report.model.path)} (budgets x{o.budget_scale}"
        + (f", {o.random_views} random views per member" if o.random_views else "")
        + (f", variant {','.join(report.model.variant) or 'as shipped'}" if o.variant is not None else "")
        + (f", engines {o.engines}" if o.engines is not None else "")
        + f"), expected {report.model.expect}",
        f"schedule  seeds {o.seed}..{o.seed + o.runs - 1}, up to {o.steps} steps, "
        f"weights {o.weights.text(world_kinds(report.model.world))}"
        + (" (x a factor per kind and run: --swarm)" if o.swarm else "")
        + ("; deliveries by packet priority (--pct)" if o.pct else "")
        + ("; liveness judged at the end of each run" if o.liveness else "; liveness not checked"),
        _master_line(report),
        "",
        f"{'runs':<9} {t.runs:>12,}",
        f"{'steps':<9} {t.steps:>12,}   (runs ended: {ends})",
        f"{'seconds':<9} {report.job_seconds:>12,.1f}   (wall; {report.cpu_text}; "
        + ("the job in this process" if report.ran_on == "none" else "the Spark job, session start excluded")
        + (f"; {report.resumed_runs:,} runs done before --resume, their seconds included)" if report.resumed_runs
           else ")"),
        f"{'runs/s':<9} {t.runs / rate:>12,.1f}",
        f"{'steps/s':<9} {t.steps / rate:>12,.0f}",
        f"{'failures':<9} {sum(report.failing.values()):>12,}"
        + "".join(f"\n  {v:<40} {n:>8,} run{'s' if n != 1 else ''}, first at seed {t.first_seed[v]}"
                  for v, n in report.failing.items()),
        f"{'states':<9} {t.distinct_states:>12,}   distinct canonical states visited ("
        + ("counted exactly" if t.exact_distinct else "approx_count_distinct, rsd 1%")
        + f"); exhaustive count: {report.exhaustive_states[1]}{_share(report)}",
        f"{'actions':<9} " + ", ".join(f"{k} {t.actions[k]:,}" for k in KINDS),
    ]
    if t.ends.get("quiescent", 0) > t.runs // 10:
        lines.append(f"note: {t.ends['quiescent']:,} runs went quiescent before {o.steps} steps (budgets used "
                     "up); --budget-scale makes longer schedules")
    scheme = scheme_for(report.model.world)
    where = "connection" if scheme is UNICAST else "member"
    lines += ["", f"faults met in protocol phases ({where} state just before the fault; · = never):",
              *coverage_table(t.phase_hits, scheme), *phase_legend(scheme)]
    lines += _failure_lines(report)
    verdict = f"MISMATCH: {report.mismatch}" if report.mismatch else f"as expected ({report.model.expect})"
    stored = "JSON Lines" if report.ran_on == "none" else "Parquet"
    lines += ["", f"outcome   {verdict}", f"results   {o.out / 'runs'} ({stored}, one row per run); "
              f"{o.out / 'summary.json'}"]
    return lines


def _master_line(report: FuzzReport) -> str:
    if report.ran_on == "none":
        return f"master    none: {report.chosen or 'in this process'}, {report.partitions} seed ranges"
    line = (f"spark     {report.ran_on} ({report.cores} cores), {report.partitions} partitions, "
            f"session start {report.startup_seconds:.1f} s (CPU {report.startup_cpu_seconds:.1f} s with the JVM's)")
    return line + (f"; {report.chosen}" if report.options.master == "auto" else "")


def _share(report: FuzzReport) -> str:
    states = report.exhaustive_states[0]
    return f", about {100 * report.totals.distinct_states / states:.0f}% of it" if states else ""


_END_TEXT = {"steps": "at the step limit", "quiescent": "quiescent", "cut": "at max_in_flight",
             "starved": "with only zero-weight actions", "failed": "failing"}


def _failure_lines(report: FuzzReport) -> list[str]:
    if not report.shrunk:
        return []
    lines = ["", "failures re-run from their seed, shrunk, validated and saved:"]
    for item in report.shrunk:
        if isinstance(item, str):
            lines.append(f"  NOT REPRODUCED: {item}")
        else:
            lines.append(f"  {item.verdict:<36} seed {item.seed:<8} {item.original_length:>4} -> "
                         f"{len(item.trace.actions):>3} steps  {item.path}")
    first = next((s for s in report.shrunk if isinstance(s, Shrunk)), None)
    if first is not None:
        named = next((name for name, spec in ENGINE_SETTINGS.items() if spec == report.options.engines), None)
        engines = "" if named is None else f" --engines-with {named}"
        lines.append(f"  read one: seqcheck show {first.path}; "
                     f"run it on the engine: seqcheck replay {first.path}{engines}")
    return lines


def _short(path: Path) -> str:
    return str(portable_path(path))


# -- the command ----------------------------------------------------------------------------------
def command(args: Any, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``seqcheck fuzz`` with the parsed ``args`` of ``checks/cli.py`` (output: stdout, progress: stderr)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        weights = Weights.parse(args.weights)
    except ValueError as error:
        raise FuzzUsageError(f"--weights: {error}") from None
    engines = None if args.engines_with is None else ENGINE_SETTINGS.get(args.engines_with)
    if args.engines_with is not None and engines is None:
        raise FuzzUsageError(f"--engines-with: expected one of {', '.join(ENGINE_SETTINGS)}, got {args.engines_with!r}")
    options = FuzzOptions(args.model, args.runs, args.steps, args.master, args.seed, args.out, args.partitions,
                          args.budget_scale, weights, args.random_views, not args.no_liveness, args.shrink, engines,
                          args.exhaustive, args.swarm, args.pct, args.resume, args.report,
                          parse_variant(args.variant))
    try:
        report = run_fuzz(options, progress=None if args.no_progress else err)
    except KeyboardInterrupt:
        print(f"seqcheck fuzz: {interrupted(options)}", file=err, flush=True)
        return 130
    if args.json:
        print(json.dumps(report.to_json()), file=out)
    else:
        print("\n".join(report_lines(report)), file=out)
        if options.report is not None:
            print(f"report    {options.report / 'index.html'} (open it in a browser)", file=out)
    return 1 if report.mismatch else 0


def interrupted(options: FuzzOptions) -> str:
    """Rule 7: what a job stopped by Ctrl-C had done, and where its ledger is, in one line."""
    ledger = options.out / LEDGER
    try:
        data = json.loads(ledger.read_text())
        ranges, segments = data["ranges"], data["segments"]
        done = sum(hi - lo for k in data["seconds"] for lo, hi in ranges[slice(*segments[int(k)])])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return f"interrupted before any run was recorded ({options.out})"
    return (f"interrupted: {done:,} of {options.runs:,} runs recorded in {ledger}; "
            "the same command with --resume runs the rest")


def add_arguments(parser: Any) -> None:
    """The options of ``seqcheck fuzz`` (``checks/cli.py`` adds the subcommand)."""
    parser.add_argument("model", type=Path, help="a model file (e.g. models/fuzz/unicast3-lockstep.toml), or "
                        "FILE#PROTOCOL for one protocol of a side-by-side file")
    parser.add_argument("--runs", type=int, default=1000, metavar="N", help="schedules to run (default 1000)")
    parser.add_argument("--steps", type=int, default=100, metavar="M",
                        help=f"steps per schedule at most (default 100, at most {MAX_STEPS:,})")
    parser.add_argument("--master", default="auto", metavar="URL",
                        help="none (this process, no Spark), local[N], local[*] or spark://HOST:PORT; auto (the "
                             f"default): this process for jobs of at most {inprocess.IN_PROCESS_STEPS:,} steps "
                             "(--runs x --steps), else local[*]")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="first seed; run i uses seed S+i (default 0)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"), metavar="DIR",
                        help="results (Parquet), traces and summary.json go here (default ./fuzz-out)")
    parser.add_argument("--partitions", type=int, default=None, metavar="P",
                        help=f"Spark tasks, or seed ranges in this process (default: 2 per core, at least one "
                             f"per {RUNS_PER_PARTITION} runs)")
    parser.add_argument("--budget-scale", type=int, default=1, metavar="K",
                        help="multiply sends, loss/duplicate/removal budgets and max_in_flight by K and repeat "
                             "view scripts K times (default 1: the model's own budgets)")
    parser.add_argument("--random-views", type=int, default=0, metavar="K",
                        help="joins and leaves: give every member K more views drawn at random over the members "
                             "(then a heal), in a derived model file (default 0; raise --weights view=... to "
                             "install more of them per schedule)")
    parser.add_argument("--variant", default=None, metavar="FLAG,...",
                        help="run the model under these variant flags instead of its own (names or aliases, as "
                             "seqcheck list shows them, e.g. fix:JGRP-1873; none: as shipped), in a derived model "
                             "file; a flag that brings a defect back may violate the model's expectation")
    parser.add_argument("--engines-with", default=None, metavar="NAME",
                        help="run the engines with window rows of 1 or 2 slots, or with every receive window's "
                             "seqnos near 2^31 or 2^63, which the spec cannot tell apart, or timed* (a clock "
                             "passes and each engine runs its own timers against the spec's due ones, under three "
                             "timings): "
                             f"{', '.join(ENGINE_SETTINGS)}")
    parser.add_argument("--weights", default="", metavar="KIND=W,...",
                        help=f"relative weights of action kinds ({', '.join(KINDS)}); default {Weights().text()}")
    parser.add_argument("--shrink", type=int, default=3, metavar="N",
                        help="failing runs re-run, shrunk and saved as traces per verdict (default 3)")
    parser.add_argument("--exhaustive", action="store_true",
                        help="also count the model's states with the checker (up to its max_states), to compare "
                             "the states the runs visited with")
    parser.add_argument("--swarm", action="store_true",
                        help="swarm testing: every run multiplies each kind's weight by 0, 0.1, 1 or 10, drawn "
                             "from its seed (deliveries are never left out)")
    parser.add_argument("--pct", action="store_true",
                        help="deliveries and duplications take the packet of highest priority, priorities drawn "
                             "per run and packet (a packet held back while others overtake it)")
    parser.add_argument("--resume", action="store_true",
                        help="go on with the stopped job in --out (same model and options): run only the "
                             "segments of seeds it had not finished")
    parser.add_argument("--report", type=Path, default=None, metavar="DIR",
                        help="also write DIR/index.html: coverage against schedules, the fault x phase heat map "
                             "and every failure's shrunk trace in the viewer (DIR/traces/*.html)")
    parser.add_argument("--no-liveness", action="store_true", help="do not judge liveness at the end of runs")
    parser.add_argument("--no-progress", action="store_true", help="no progress line while the job runs")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
