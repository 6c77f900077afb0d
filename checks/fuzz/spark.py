"""The Spark side of ``seqcheck fuzz``: the session, the job that runs seed ranges, progress, aggregates.

Rules
-----
1. Spark distributes seed ranges only: the driver cuts ``seed .. seed+runs-1`` into ranges, one per
   partition, and each task runs ``checks.fuzz.run.Runner`` on its range. A run depends on its
   seed alone (``checks/fuzz/run.py`` rule 1), so the rows do not depend on the partitioning or
   on which executor ran them.
2. The model travels as text inside the plan; each executor process writes it once to a private
   temporary file. Executors need the project importable (true for ``local[...]`` and for workers
   on this machine; the driver also ships the packages as a zip to any other master).
3. One row per run goes to Parquet (``SCHEMA``): a plain tuple per run, sent to the JVM in
   pickled batches, a segment of ranges per Spark job, each segment in its own folder
   (``checks/fuzz/ledger.py``: what a stopped job had finished, for ``--resume``). Every
   figure the command prints is computed from the Parquet files afterwards by Spark, in the
   executors (sums, counts, the approximate distinct count); the driver collects only those
   aggregates and the few failing runs to shrink.
4. Loopback only for local work: with a ``local[...]`` master or a ``spark://`` master on a
   loopback address, the driver binds to 127.0.0.1.
5. Per-task overhead is kept small: tasks take big seed ranges (``checks/fuzz/command.py`` partitions),
   and an executor's Python worker keeps one ``Runner`` (model loaded, memo tables warm) across
   the tasks it runs, replaced every ``FRESH_RUNNER_EVERY`` runs to bound its memory. A run does not
   depend on the runner's history (``checks/fuzz/run.py`` rule 1), so neither do the rows.
6. Quiet and fast to fail: a ``spark://`` master is first reached by a TCP connection
   (``CONNECT_TIMEOUT``; ``unreachable``), so a wrong address is one line before Spark starts;
   the JVM that ``session`` launches, and the Python workers it starts, write their stdout and
   stderr to a log file (``--out/spark.log``), so that neither Spark's warnings nor its traces on
   Ctrl-C reach the terminal; py4j's own log is silenced, ``stop_quietly`` ends a session whatever
   state an interrupt left it in, and the progress line stops at the first error it meets.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import itertools
import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from checks.extras import require_spark
from checks.fuzz.coverage import KINDS, UNICAST
from checks.fuzz.curve import curve_from_buckets, points_for
from checks.fuzz.ledger import JobKey, new_ledger, resumed_ledger
from checks.fuzz.run import FuzzPlan, Runner

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
PACKAGES = ("spec", "impl", "models", "checks")
FRESH_RUNNER_EVERY = 500  # runs; a run does not depend on what its runner did before (fuzz_run rule 1)
CONNECT_TIMEOUT = 3.0  # seconds a TCP connection to a spark:// master may take (rule 6)
SPARK_LOG = "spark.log"  # in --out: the JVM's and the Python workers' stdout and stderr (rule 6)


def schema() -> Any:
    from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

    return StructType([
        StructField("seed", LongType(), False),
        StructField("steps", IntegerType(), False),
        StructField("end", StringType(), False),  # steps | quiescent | cut | starved | failed
        StructField("verdict", StringType(), False),  # pass | divergence | violation:<prop> | crash | error
        StructField("failing", StringType(), True),  # property, what differed, or exception type
        StructField("fail_step", IntegerType(), True),
        StructField("detail", StringType(), True),
        *(StructField(f"n_{kind}", IntegerType(), False) for kind in KINDS),
        StructField("fingerprints", ArrayType(LongType(), False), False),  # distinct canonical states
        StructField("phase_hits", ArrayType(IntegerType(), False), False),  # scheme cells, then fault totals
    ])


# -- executors ------------------------------------------------------------------------------------
_MODEL_FILES: dict[str, Path] = {}


def model_file_copy(name: str, text: str) -> Path:
    """Rule 2: this process's copy of a model file shipped to executors as its name and text
    (written once per process and text, removed at exit); the swarm's tasks use it too."""
    key = hashlib.sha256(text.encode()).hexdigest()
    path = _MODEL_FILES.get(key)
    if path is None or not path.exists():
        folder = Path(tempfile.mkdtemp(prefix="seqcheck-model-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / name
        path.write_text(text)
        _MODEL_FILES[key] = path
    return path


class _Runners:
    """Rule 5: this process's runner for one plan, fresh every ``FRESH_RUNNER_EVERY`` runs."""

    def __init__(self) -> None:
        self.plan: FuzzPlan | None = None
        self.runner: Runner | None = None
        self.runs = 0

    def get(self, plan: FuzzPlan) -> Runner:
        if self.runner is None or self.runs >= FRESH_RUNNER_EVERY or self.plan != plan:
            self.runner = None  # the old runner's memo tables go before the new ones grow
            self.plan, self.runner, self.runs = plan, Runner(plan, model_file_copy(plan.model_name, plan.model_text)), 0
        self.runs += 1
        return self.runner


_RUNNERS = _Runners()


def run_range(plan: FuzzPlan, runs_done: Any, failing: Any, seeds: tuple[int, int],
              cpu: Any = None) -> Iterator[tuple[Any, ...]]:
    """One task: the rows of seeds ``seeds[0] .. seeds[1]-1`` (``cpu``: an accumulator of the runs'
    CPU seconds in this worker)."""
    for seed in range(*seeds):
        started = time.process_time()
        record = _RUNNERS.get(plan).run(seed)
        if cpu is not None:
            cpu.add(time.process_time() - started)
        runs_done.add(1)
        if record.verdict != "pass":
            failing.add(1)
        yield record.row()


def seed_ranges(first: int, runs: int, partitions: int) -> list[tuple[int, int]]:
    """``runs`` seeds from ``first`` in ``partitions`` contiguous ranges of near-equal size."""
    parts = max(1, min(partitions, runs))
    bounds = [first + runs * i // parts for i in range(parts + 1)]
    return [(lo, hi) for lo, hi in itertools.pairwise(bounds) if hi > lo]


# -- the driver -----------------------------------------------------------------------------------
def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def is_loopback(master: str) -> bool:
    return is_local(master) or any(master.startswith(f"spark://{host}:") for host in LOOPBACK)


def unreachable(master: str, timeout: float = CONNECT_TIMEOUT) -> str:
    """Rule 6: why no host of the ``spark://`` master ``master`` takes a TCP connection within
    ``timeout`` seconds (one line), or "" when one does."""
    problems = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
                return ""
        except (OSError, ValueError) as error:
            reason = "no answer" if isinstance(error, TimeoutError) else (
                getattr(error, "strerror", None) or str(error))
            problems.append(f"{address}: {reason}")
    return f"cannot reach the Spark master {master} ({'; '.join(problems)} within {timeout:g} s)"


@contextlib.contextmanager
def _output_to(log: Path | None) -> Iterator[None]:
    """Rule 6: file descriptors 1 and 2 point to ``log`` (appended) for the duration, so that a
    process started meanwhile (the JVM) writes there for good; restored afterwards."""
    if log is None:
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    target = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, target):
            os.close(fd)


class _NotPy4j(logging.Filter):
    """Drops py4j's records: it logs a traceback through the root logger when an interrupt
    breaks a call into the JVM (rule 6)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname and not record.name.startswith("py4j")


def _silence_py4j() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _NotPy4j) for f in root.filters):
        root.addFilter(_NotPy4j())
    logging.getLogger("py4j").setLevel(logging.CRITICAL)


def stop_quietly(spark: Any) -> None:
    """Rule 6: stop ``spark``; after an interrupt the gateway may be half gone, and nothing of that is shown."""
    with contextlib.suppress(Exception):
        spark.stop()


def session(master: str, app_name: str, *, log: Path | None = None) -> tuple[Any, bool]:
    """A SparkSession on ``master``: the active one if this process has one on that master (not
    to be stopped by the caller: False), else a new one (True), whose JVM writes its output to
    ``log`` if given (rule 6). ValueError if another master is active; ``MissingExtra`` (one line
    naming the ``spark`` extra) if pyspark is not installed."""
    require_spark(f"--master {master}")
    from pyspark.sql import SparkSession

    _silence_py4j()
    active = SparkSession.getActiveSession()
    if active is not None:
        running = active.sparkContext.master
        if running != master:
            raise ValueError(f"--master: this process already runs Spark on {running}, not {master}")
        return active, False
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_quiet_log4j()}"))
    if is_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false"))
    with _output_to(log):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not is_local(master):
        spark.sparkContext.addPyFile(str(_code_zip()))
    return spark, True


def startup_cpu(spark: Any, owned: bool, cpu_before: float) -> float:
    """The CPU seconds a session's start took, beside its wall seconds: this process's since
    ``cpu_before`` (``time.process_time``) and, for a session this process started (``owned``),
    its JVM's so far (the driver's gateway, a child process, read from ``/proc``)."""
    from checks.explore.workers import process_cpu

    proc = getattr(getattr(spark.sparkContext, "_gateway", None), "proc", None)
    jvm = process_cpu(proc.pid) if owned and proc is not None else 0.0
    return time.process_time() - cpu_before + jvm


def _quiet_log4j() -> Path:
    """Spark's own log while it starts: warnings but not Hadoop's (no native library); the root level
    stays WARN, the shell's default, so that Spark does not announce a change of level. After the
    start ``session`` sets ERROR."""
    path = Path(tempfile.gettempdir()) / "seqcheck-log4j2-quiet.properties"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}")
        partial.write_text("rootLogger.level = warn\nrootLogger.appenderRef.stderr.ref = console\n"
                        "logger.hadoop.name = org.apache.hadoop\nlogger.hadoop.level = error\n"
                        "appender.console.type = Console\nappender.console.name = console\n"
                        "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
                        "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n")
        partial.replace(path)  # atomic: a concurrent JVM never reads half a file
    return path


def _code_zip() -> Path:
    """Rule 2: the project's packages as a zip for executors on other machines."""
    root = Path(__file__).resolve().parents[2]  # the checkout: checks/fuzz/spark.py
    target = Path(tempfile.mkdtemp(prefix="seqcheck-code-")) / "seqcheck.zip"
    atexit.register(shutil.rmtree, target.parent, True)
    with zipfile.ZipFile(target, "w") as archive:
        for package in PACKAGES:
            for path in sorted((root / package).rglob("*")):
                if path.suffix in (".py", ".toml", ".java"):  # .java: the JGroups harness (seqcheck conform)
                    archive.write(path, path.relative_to(root))
    return target


@dataclass
class JobResult:
    seconds: float  # every segment's, also those of earlier invocations (--resume)
    partitions: int
    resumed_runs: int = 0  # runs already done by an earlier invocation
    cpu_seconds: float | None = None  # the runs' CPU (executors' Python workers); None: not recorded


def run_job(spark: Any, plan: FuzzPlan, first_seed: int, runs: int, partitions: int, results: Path,
            progress: TextIO | None, *, resume: bool = False) -> JobResult:
    """Rules 1 and 3: run the seeds and write one Parquet row per run under ``results``, a
    segment at a time (``checks/fuzz/ledger.py``; ``resume``: only the segments not done)."""
    sc = spark.sparkContext
    key = JobKey.of(plan, first_seed, runs)
    cores = int(sc.defaultParallelism)
    ledger = (resumed_ledger(results, key) if resume
              else new_ledger(results, key, seed_ranges(first_seed, runs, partitions), cores))
    pending = ledger.to_do()
    runs_done, failing = sc.accumulator(0), sc.accumulator(0)
    tasks = sum(len(ledger.ranges_of(k)) for k in pending)
    line = (_Progress(sc, ledger.runs_of(pending), tasks, runs_done, failing, progress)
            if progress is not None and pending else None)
    if line is not None:
        line.start()
    try:
        for segment in pending:
            ranges = ledger.ranges_of(segment)
            started, cpu = time.perf_counter(), sc.accumulator(0.0)
            if line is not None:
                line.cpu = cpu
            rdd = sc.parallelize(ranges, len(ranges)).flatMap(partial(run_range, plan, runs_done, failing, cpu=cpu))
            spark.createDataFrame(rdd, schema()).write.parquet(str(ledger.folder(segment)))
            ledger.finished(segment, time.perf_counter() - started, cpu.value)
            if line is not None:
                line.tasks_before += len(ranges)
                line.cpu_before += cpu.value
    finally:
        if line is not None:
            line.finish()
    return JobResult(sum(ledger.seconds.values()), len(ledger.ranges), runs - ledger.runs_of(pending),
                     ledger.total_cpu)


class _Progress(threading.Thread):
    """A status line while the job runs: runs finished (accumulators, per finished task), tasks
    finished and running (the status tracker), failing runs, rate. On a terminal it rewrites one
    line every half second; otherwise it prints a line every 15 seconds."""

    def __init__(self, sc: Any, runs: int, tasks: int, runs_done: Any, failing: Any, out: TextIO) -> None:
        super().__init__(daemon=True)
        self.sc, self.runs, self.tasks, self.out = sc, runs, tasks, out
        self.runs_done, self.failing = runs_done, failing
        self.tasks_before = 0  # tasks of the segments finished (the status tracker shows the running one's)
        self.cpu_before, self.cpu = 0.0, None  # CPU of the segments finished; the running one's accumulator
        self.tty = out.isatty()
        self.stopped = threading.Event()
        self.started = time.perf_counter()

    def run(self) -> None:
        while not self.stopped.wait(0.5 if self.tty else 15.0):
            try:
                text = self._line()
            except Exception:  # the session is going (an interrupt): rule 6, nothing to show
                return
            self._show(text)

    def _line(self) -> str:
        tracker = self.sc.statusTracker()
        infos = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
        done = self.tasks_before + sum(i.numCompletedTasks for i in infos if i is not None)
        running = sum(i.numActiveTasks for i in infos if i is not None)
        elapsed = time.perf_counter() - self.started
        runs = self.runs_done.value
        cpu = self.cpu_before + (self.cpu.value if self.cpu is not None else 0.0)
        return (f"fuzz: {runs:,}/{self.runs:,} runs, {done}/{self.tasks} tasks done, {running} running, "
                f"{self.failing.value:,} failing, {elapsed:,.0f} s (CPU {cpu:,.0f} s in the tasks done), "
                f"{runs / max(elapsed, 1e-9):,.0f} runs/s")

    def _show(self, text: str) -> None:
        if self.tty:
            print(f"\r\033[K{text}", end="", file=self.out, flush=True)
        else:
            print(text, file=self.out, flush=True)

    def finish(self) -> None:
        self.stopped.set()
        self.join()
        if self.tty:
            print("\r\033[K", end="", file=self.out, flush=True)


# -- aggregates -----------------------------------------------------------------------------------
@dataclass
class Aggregates:
    runs: int
    steps: int
    verdicts: dict[str, int]  # verdict -> runs
    first_seed: dict[str, int]  # verdict -> lowest failing seed
    ends: dict[str, int]
    actions: dict[str, int]  # kind -> count
    distinct_states: int  # approx_count_distinct of the fingerprints
    phase_hits: list[int]
    to_shrink: list[tuple[int, str, int | None]] = field(default_factory=list)  # (seed, verdict, fail_step)
    exact_distinct: bool = False  # distinct_states counted exactly (in process), not estimated
    coverage_curve: list[tuple[int, int]] = field(default_factory=list)  # (runs, distinct states): curve.py


def aggregate(spark: Any, results: Path, per_verdict: int, first_seed: int | None = None,
              width: int = UNICAST.width) -> Aggregates:
    """Rule 3 in three Spark queries; ``to_shrink`` holds up to ``per_verdict`` failing runs per
    verdict, shortest first (then lowest seed). With ``first_seed`` (the job's), a fourth query draws
    the coverage curve (``checks/fuzz/curve.py``). ``width``: the length of the rows' ``phase_hits``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    df = spark.read.parquet(str(results))
    sums = [F.sum("steps").alias("steps"), *(F.sum(f"n_{k}").alias(k) for k in KINDS),
            *(F.sum(F.col("phase_hits")[i]).alias(f"hit{i}") for i in range(width))]
    groups = df.groupBy("verdict", "end").agg(F.count(F.lit(1)).alias("runs"), F.min("seed").alias("first"),
                                              *sums).collect()
    totals = Aggregates(0, 0, {}, {}, {}, dict.fromkeys(KINDS, 0), 0, [0] * width)
    for g in groups:
        verdict, runs = str(g["verdict"]), int(g["runs"])
        totals.runs += runs
        totals.steps += int(g["steps"])
        totals.verdicts[verdict] = totals.verdicts.get(verdict, 0) + runs
        totals.first_seed[verdict] = min(totals.first_seed.get(verdict, int(g["first"])), int(g["first"]))
        totals.ends[str(g["end"])] = totals.ends.get(str(g["end"]), 0) + runs
        for k in KINDS:
            totals.actions[k] += int(g[k])
        for i in range(width):
            totals.phase_hits[i] += int(g[f"hit{i}"])
    distinct = df.select(F.explode("fingerprints").alias("fp")).agg(
        F.approx_count_distinct("fp", rsd=0.01).alias("n")).first()
    totals.distinct_states = int(distinct["n"] or 0) if distinct is not None else 0
    if per_verdict > 0 and totals.runs > totals.verdicts.get("pass", 0):
        order = Window.partitionBy("verdict").orderBy("fail_step", "seed")
        chosen = (df.filter(F.col("verdict") != "pass").select("seed", "verdict", "fail_step")
                  .withColumn("rank", F.row_number().over(order)).filter(F.col("rank") <= per_verdict)
                  .orderBy("verdict", "rank").collect())
        totals.to_shrink = [(int(r["seed"]), str(r["verdict"]), r["fail_step"]) for r in chosen]
    if first_seed is not None and totals.runs:
        totals.coverage_curve = _curve(df, first_seed, totals.runs)
    return totals


def _curve(df: Any, first_seed: int, runs: int) -> list[tuple[int, int]]:
    """``curve.py``'s buckets in one query: each fingerprint's first run, grouped by bucket."""
    from pyspark.sql import functions as F

    points = points_for(runs)
    firsts = (df.select("seed", F.explode("fingerprints").alias("fp")).groupBy("fp")
              .agg(F.min("seed").alias("first")))
    bucket = F.expr(f"(first - {int(first_seed)}) * {int(points)} div {int(runs)}")  # integer division, exact
    counts = {int(r["b"]): int(r["n"]) for r in firsts.groupBy(bucket.alias("b")).agg(
        F.count(F.lit(1)).alias("n")).collect()}
    return curve_from_buckets([counts.get(b, 0) for b in range(points)], runs)
