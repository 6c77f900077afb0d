"""``seqcheck check MODEL --master URL``: the breadth-first search of ``checks/explore/search.py``, level by
level as Spark jobs, driven from here; the executors' side is ``checks/sparkbfs/visit.py``.

Rules
-----
1. Data. Level ``d`` is a Parquet folder ``level-d`` in the search's folder (the checkpoint): one row per
   state first reached at depth ``d`` (one per orbit with symmetry), ``(fp, parent, value, orbit)``: its
   process-independent fingerprint, its parent's, its value as ``checks/explore/portable.py`` ships it,
   and its orbit's size. The visited set is the fingerprints of every level written, Spark data read by
   the executors; this process holds counts and findings only, never a set of states.
2. A level is two jobs: a pass over its states (``visit``: checked, and expanded into successors with
   their fingerprints and parents), and the new level: the successors anti-joined with the visited
   fingerprints and grouped by fingerprint (the smallest parent kept), both in the JVM, partitioned by
   fingerprint, then written. The counts (states, transitions, cut states, new states and the orbits they
   stand for) are those of the one-process search: the same orbits per level (its rule 7), each expanded
   once, from a representative whose successors are those of every member of its orbit renamed.
3. Stopping. A violated ``Always`` property or a deadlock at depth ``d`` stops the search after the pass
   over level ``d``: the depth and property are the one-process search's (it checks a state when it
   reaches it and stops in that level; when several properties first fail at the same depth, it reports
   the first state it met, here the first property in the model's order). ``max_states``: a new level that
   would pass it keeps its states with the smallest fingerprints up to it, is checked but not expanded,
   and the search is incomplete, as ``time_limit`` (CPU seconds of this process, its JVM's in local mode,
   and the executors' Python workers, read at the end of each level) makes it. Witnesses (``Sometimes``)
   as in one process; liveness is not checked here (``checks/check_command.py`` refuses it in one line).
4. Counterexamples are rebuilt here exactly as the one-process search rebuilds them: the parents are
   looked up level by level back to an initial state, which is replayed forward choosing at each step
   the successor whose representative has the recorded fingerprint; ``checks/check.py`` validates the
   trace and writes it.
5. Resumable: after each level, the search's counts and findings go to ``state.json`` in its folder,
   written atomically (a new file renamed over the old) after the level's folder is complete. A driver
   started again with the same ``--checkpoint`` folder, model and options goes on from the last level
   recorded, and ends with the same result. The folder of another model or options is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from checks.explore.portable import Portable
from checks.explore.search import Finding, Result, Stats
from checks.explore.system import Always, Liveness, Property, Sometimes
from checks.sparkbfs.visit import Plan, Summary, row_schema, visit
from models.modelfile import Model

STATE_FILE = "state.json"
VERSION = 2  # of the levels' values (checks/explore/portable.py rule 4): part of every search's key
STATES_PER_PARTITION = 20_000  # shuffle partitions of a new level: at least twice the cores, more for big levels


class CheckpointError(ValueError):
    """A checkpoint folder that is not this search's; the message is one line naming it."""


@dataclass
class Progress:
    """The search's counts and findings after its last complete level: ``state.json`` (rule 5)."""

    key: str
    model: str
    visited: int = -1  # the deepest level whose pass is done
    levels: list[int] = field(default_factory=list)  # new states per level
    unreduced: int = 0
    transitions: int = 0
    cut: int = 0
    violated: dict[str, list[int]] = field(default_factory=dict)  # property -> [depth, fingerprint]
    witnessed: dict[str, list[int]] = field(default_factory=dict)
    deadlock: list[int] | None = None
    expand_next: bool = True  # False: the last level is checked only (a budget stopped the search)
    stopped_by: str = ""
    done: bool = False
    complete: bool = False
    seconds: float = 0.0  # wall seconds of the levels done, over every run of the search
    cpu_seconds: float = 0.0  # their CPU seconds (rule 3's)
    executor_cpu: float = 0.0  # of which the executors' Python workers
    level_cpu: list[float] = field(default_factory=list)  # cumulative CPU seconds at the end of each level
    successor_rows: int = 0  # rows the passes sent to the anti-join (distinct per task)
    payload_bytes: int = 0  # their bytes
    resumed_from: list[int] = field(default_factory=list)  # the level each restart went on from


@dataclass
class SparkFigures:
    """What a search on Spark reports beside ``Stats`` (``seqcheck check --json``: ``"spark"``)."""

    master: str
    cores: int
    checkpoint: str | None
    resumed_from: list[int]
    executor_cpu_seconds: float
    successor_rows: int
    payload_bytes_per_row: float  # of the successors' rows, before Spark compresses them

    def to_json(self) -> dict[str, Any]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


def search_key(plan: Plan, max_states: int) -> str:
    text = json.dumps([VERSION, plan.model_name, plan.model_text, plan.protocol, plan.symmetry,
                       list(plan.properties), max_states])
    return hashlib.sha256(text.encode()).hexdigest()


def spark_explore(model: Model, spark: Any, properties: Sequence[Property], *, max_states: int, symmetry: bool,
                  time_limit: float | None = None, checkpoint: Path | None = None,
                  progress: TextIO | None = None, json_lines: bool = False) -> tuple[Result, SparkFigures]:
    """The search of ``model`` on ``spark`` (rules 1 to 5), checking ``properties`` (no liveness);
    ``checkpoint``: the folder to keep its levels in and resume from (None: a temporary one); a
    line per level on ``progress`` (a JSON object each with ``json_lines``)."""
    if any(isinstance(p, Liveness) for p in properties):
        raise ValueError("the search on Spark checks no liveness property")
    plan = Plan(model.path.name, model.path.read_text(), model.protocol if model.side_by_side else None,
                symmetry, tuple(p.name for p in properties))
    folder = checkpoint if checkpoint is not None else Path(tempfile.mkdtemp(prefix="seqcheck-spark-"))
    try:
        run = _Run(model, spark, plan, folder / search_key(plan, max_states)[:16], max_states, time_limit,
                   progress, properties, json_lines)
        run.levels()
        result = run.result()
    finally:
        if checkpoint is None:
            shutil.rmtree(folder, ignore_errors=True)
    p = run.progress_
    figures = SparkFigures(spark.sparkContext.master, int(spark.sparkContext.defaultParallelism),
                           str(checkpoint) if checkpoint else None, p.resumed_from, p.executor_cpu,
                           p.successor_rows, p.payload_bytes / max(1, p.successor_rows))
    return result, figures


class _Run:
    """One search on Spark: its folder, its plan and its progress."""

    def __init__(self, model: Model, spark: Any, plan: Plan, folder: Path, max_states: int,
                 time_limit: float | None, out: TextIO | None, properties: Sequence[Property],
                 json_lines: bool = False) -> None:
        self.model, self.spark, self.plan, self.folder = model, spark, plan, folder
        self.max_states, self.time_limit, self.out, self.json_lines = max_states, time_limit, out, json_lines
        self.properties = list(properties)
        self.portable = Portable(model.world, symmetry=plan.symmetry)
        self.cpu = spark.sparkContext.accumulator(0.0)
        self.progress_ = self._open(search_key(plan, max_states))

    # -- the folder (rule 5) ------------------------------------------------------------------------
    def level_dir(self, depth: int) -> Path:
        return self.folder / f"level-{depth}"

    def _open(self, key: str) -> Progress:
        saved = self.folder / STATE_FILE
        if saved.exists():
            try:
                found = Progress(**json.loads(saved.read_text()))
            except (ValueError, TypeError) as error:
                raise CheckpointError(f"--checkpoint: {saved}: not a search's state ({error})") from None
            if found.key != key:
                raise CheckpointError(f"--checkpoint: {self.folder} holds the search of another model or options "
                                      f"({found.model}); use another folder")
            if not found.done:
                found.resumed_from.append(found.visited + 1)
                self._say(f"resuming {found.model} at level {found.visited + 1} from {self.folder}",
                          {"resumed_at_level": found.visited + 1, "checkpoint": str(self.folder)})
            return found
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in self.folder.glob("level-*"):  # a start that died before its first state.json
            shutil.rmtree(stale, ignore_errors=True)
        fresh = Progress(key, str(self.model.path))
        self._initial_level(fresh)
        self._save(fresh)
        return fresh

    def _save(self, progress: Progress) -> None:
        target = self.folder / STATE_FILE
        partial_file = target.with_suffix(".json.partial")
        with open(partial_file, "w") as stream:
            json.dump(asdict(progress), stream)
            stream.flush()
            os.fsync(stream.fileno())
        partial_file.replace(target)

    def _say(self, line: str, figures: dict[str, Any]) -> None:
        if self.out is None:
            return
        if self.json_lines:
            print(json.dumps({"model": str(self.model.path), "protocol": self.model.protocol, "spark": figures}),
                  file=self.out, flush=True)
        else:
            print(f"  spark: {line}", file=self.out, flush=True)

    def _initial_level(self, progress: Progress) -> None:
        world = self.model.world
        init = list(dict.fromkeys(world.init_states()))
        reps, _, orbits = self.portable.representatives(init)
        fps = self.portable.fingerprints(init).tolist()
        rows: dict[int, tuple[int, int, bytes, int]] = {}
        for fp, rep, orbit in zip(fps, reps, orbits, strict=True):
            rows.setdefault(fp, (fp, 0, self.portable.wire(rep), orbit))
        self.spark.createDataFrame(list(rows.values()), level_schema()).coalesce(1).write.mode("overwrite") \
            .parquet(str(self.level_dir(0)))
        progress.levels = [len(rows)]
        progress.unreduced = sum(row[3] for row in rows.values())
        progress.level_cpu = [0.0]

    # -- the levels (rules 2 and 3) -----------------------------------------------------------------
    def levels(self) -> None:
        p = self.progress_
        while not p.done:
            depth = p.visited + 1
            wall, cpu = time.perf_counter(), self._cpu_now()
            expanding = p.expand_next
            summary, new = self._level(depth, expanding)
            self._record(p, depth, summary)
            partial_dir = self.folder / f"level-{depth + 1}.partial"
            if p.violated or p.deadlock is not None:
                p.stopped_by, p.done = "violation", True
            elif not expanding:
                p.done = True
            else:
                self._grown(p, depth, self._publish(depth + 1, new, sum(p.levels)))
            shutil.rmtree(partial_dir, ignore_errors=True)
            p.visited = depth
            p.seconds += time.perf_counter() - wall
            p.cpu_seconds += self._cpu_now() - cpu
            if len(p.level_cpu) == len(p.levels) - 1:
                p.level_cpu.append(p.cpu_seconds)
            if self.time_limit is not None and p.cpu_seconds >= self.time_limit and not p.done and p.expand_next:
                p.expand_next, p.stopped_by = False, "time_limit"
            self._save(p)
            self._report(p, depth, summary, time.perf_counter() - wall, expanding)

    def _cpu_now(self) -> float:
        """CPU seconds so far: this process's, its JVM's (in local mode the executors' JVM too) and the
        executors' Python workers' (the accumulator)."""
        from checks.explore.workers import process_cpu

        proc = getattr(getattr(self.spark.sparkContext, "_gateway", None), "proc", None)
        jvm = process_cpu(proc.pid) if proc is not None else 0.0
        return time.process_time() + jvm + float(self.cpu.value)

    def _level(self, depth: int, expanding: bool) -> tuple[Summary, tuple[int, int]]:
        """Rule 2 in one Spark job: the pass over level ``depth`` and, when it expands, its new states
        written to ``level-<depth + 1>.partial``; the tasks' merged summaries, and the new states and
        the orbits they stand for (both observed as the job runs)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        before = float(self.cpu.value)
        frame = self.spark.read.schema(level_schema()).parquet(str(self.level_dir(depth))).select("fp", "value")
        rows = frame.rdd.mapPartitions(partial(visit, self.plan, expanding, self.cpu))
        tasks, level = Observation(), Observation()
        out = self.spark.createDataFrame(rows, row_schema(), verifySchema=False) \
            .observe(tasks, F.collect_list(F.when(F.col("kind") == 0, F.col("value"))).alias("summaries"))
        successors = out.filter(F.col("kind") == 1).select("fp", "parent", "value", "orbit")
        if expanding:
            cores = int(self.spark.sparkContext.defaultParallelism)
            self.spark.conf.set("spark.sql.shuffle.partitions",
                                str(max(2 * cores, self.progress_.levels[depth] // STATES_PER_PARTITION)))
            visited = self.spark.read.schema(level_schema()) \
                .parquet(*(str(self.level_dir(d)) for d in range(depth + 1))).select("fp")
            new = (successors.join(visited, "fp", "left_anti").groupBy("fp")
                   .agg(F.min("parent").alias("parent"), F.min("value").alias("value"), F.min("orbit").alias("orbit"))
                   .observe(level, F.count(F.lit(1)).alias("states"), F.sum("orbit").alias("orbits")))
            new.write.mode("overwrite").parquet(str(self.folder / f"level-{depth + 1}.partial"))
        else:
            successors.write.format("noop").mode("overwrite").save()
        summary = Summary()
        for value in tasks.get["summaries"]:
            summary.merge(pickle.loads(value))  # the summaries this search's own tasks wrote
        self.progress_.executor_cpu += float(self.cpu.value) - before
        counts = level.get if expanding else {}
        return summary, (int(counts.get("states") or 0), int(counts.get("orbits") or 0))

    def _record(self, p: Progress, depth: int, summary: Summary) -> None:
        p.transitions += summary.transitions
        p.cut += summary.cut
        p.successor_rows += summary.successors
        p.payload_bytes += summary.payload_bytes
        for prop in self.properties:  # the model's order (rule 3)
            if prop.name in summary.violated and prop.name not in p.violated:
                p.violated[prop.name] = [depth, summary.violated[prop.name]]
            if prop.name in summary.witnessed and prop.name not in p.witnessed:
                p.witnessed[prop.name] = [depth, summary.witnessed[prop.name]]
        if summary.deadlock is not None and p.deadlock is None:
            p.deadlock = [depth, summary.deadlock]

    def _publish(self, depth: int, new: tuple[int, int], distinct: int) -> tuple[int, int]:
        """Rule 3: ``level-<depth>.partial`` becomes ``level-<depth>``, cut to its ``max_states - distinct``
        smallest fingerprints if it has more states; its states and the orbits they stand for."""
        from pyspark.sql import functions as F

        partial_dir, target = self.folder / f"level-{depth}.partial", self.level_dir(depth)
        room = self.max_states - distinct
        if new[0] > room:
            kept = self.folder / f"level-{depth}.kept"
            self.spark.read.schema(level_schema()).parquet(str(partial_dir)).orderBy("fp").limit(room) \
                .write.mode("overwrite").parquet(str(kept))
            row = self.spark.read.schema(level_schema()).parquet(str(kept)).agg(F.count("*"), F.sum("orbit")).first()
            new = (int(row[0]), int(row[1] or 0))
            shutil.rmtree(partial_dir)
            partial_dir = kept
        shutil.rmtree(target, ignore_errors=True)
        if new[0]:
            partial_dir.rename(target)
        return new

    def _grown(self, p: Progress, depth: int, new: tuple[int, int]) -> None:
        states, orbits = new
        if states == 0:
            p.done = p.complete = True
            return
        p.levels.append(states)
        p.unreduced += orbits
        if sum(p.levels) >= self.max_states:
            p.expand_next, p.stopped_by = False, "max_states"

    def _report(self, p: Progress, depth: int, summary: Summary, seconds: float, expanded: bool) -> None:
        new = p.levels[depth + 1] if len(p.levels) > depth + 1 else 0
        self._say(f"level {depth}: {summary.states:,} states {'expanded' if expanded else 'checked'}"
                  f" ({summary.cut:,} cut), {new:,} new -> {sum(p.levels):,} states; {seconds:.1f} s wall, "
                  f"CPU {summary.cpu_seconds:.1f} s in the executors' Python workers, {p.cpu_seconds:.1f} s "
                  "in all so far",
                  {"level": depth, "expanded": expanded, "states": summary.states, "cut": summary.cut, "new": new,
                   "distinct": sum(p.levels), "seconds": round(seconds, 3),
                   "executor_cpu_seconds": round(summary.cpu_seconds, 3), "cpu_seconds": round(p.cpu_seconds, 3)})

    # -- the result (rules 3 and 4) -----------------------------------------------------------------
    def result(self) -> Result:
        p = self.progress_
        stats = Stats(distinct=sum(p.levels), transitions=p.transitions, depth=len(p.levels) - 1,
                      seconds=p.seconds, cut=p.cut, max_frontier=max(p.levels), complete=p.complete,
                      levels=list(p.levels), symmetry_group=self.portable.group_size, unreduced=p.unreduced,
                      cpu_seconds=p.cpu_seconds, level_cpu=list(p.level_cpu), stopped_by=p.stopped_by)
        findings = []
        for prop in self.properties:
            if isinstance(prop, Always) and prop.name in p.violated:
                depth, fp = p.violated[prop.name]
                findings.append(Finding(prop.name, "always", depth, self._path(depth, fp)))
        if p.deadlock is not None:
            findings.append(Finding("deadlock", "deadlock", p.deadlock[0], self._path(*p.deadlock)))
        for prop in self.properties:
            if isinstance(prop, Sometimes) and prop.name not in p.witnessed and p.complete:
                findings.append(Finding(prop.name, "sometimes", -1))
        init = list(dict.fromkeys(self.model.world.init_states()))
        return Result(self.model.world.name, stats, findings, {k: v[0] for k, v in p.witnessed.items()},
                      init[0] if init else None)

    def _path(self, depth: int, fp: int) -> list[tuple[Hashable, Hashable]]:
        """Rule 4: the parents back to level 0, then the replay forward."""
        from pyspark.sql import functions as F

        chain = [fp]
        for level in range(depth, 0, -1):
            row = self.spark.read.parquet(str(self.level_dir(level))).filter(F.col("fp") == fp) \
                .select("parent").first()
            if row is None:
                raise RuntimeError(f"state {fp:#x} is missing from level {level} of {self.folder}")
            fp = int(row[0])
            chain.append(fp)
        return replay_chain(self.model.world, self.portable, chain[::-1])


def replay_chain(system: Any, portable: Portable, chain: Sequence[int]) -> list[tuple[Hashable, Hashable]]:
    """The path from the initial state whose representative has fingerprint ``chain[0]`` through
    successors whose representatives have the fingerprints of ``chain[1:]``, in order."""
    init = list(dict.fromkeys(system.init_states()))
    starts = [s for s, fp in zip(init, portable.fingerprints(init).tolist(), strict=True) if fp == chain[0]]
    if not starts:
        raise RuntimeError("no initial state has the recorded fingerprint")
    state = starts[0]
    path: list[tuple[Hashable, Hashable]] = []
    for wanted in chain[1:]:
        steps = list(system.successors(state))
        fps = portable.fingerprints([after for _, after in steps]).tolist() if steps else []
        if wanted not in fps:
            raise RuntimeError("the model is nondeterministic: a recorded successor was not regenerated "
                               "(successors() must yield the same actions in the same order every time)")
        action, state = steps[fps.index(wanted)]
        path.append((action, state))
    return path


def level_schema() -> Any:
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    return StructType([StructField("fp", LongType(), False), StructField("parent", LongType(), False),
                       StructField("value", BinaryType(), False), StructField("orbit", IntegerType(), False)])

