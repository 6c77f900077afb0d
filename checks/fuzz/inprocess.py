"""Fuzz jobs in this process, without Spark or pyarrow: ``seqcheck fuzz --master none``, and
``--master auto`` (the default) for small jobs.

Rules
-----
1. Which: ``--master none`` runs in this process; ``--master auto`` runs in this process when the
   job asks for at most ``IN_PROCESS_STEPS`` steps (``--runs`` x ``--steps``), else on Spark
   ``local[*]``; with ``--resume`` it goes on the way the job started (its ledger says which).
   Spark's session start (10 to 60 s, most of a small job's wall time) then pays only where its
   cores win it back: a process runs about 11,000 lockstep steps/s, Spark's ``local[2]`` about
   14,500 (``seqcheck bench --fuzz``), so below a few hundred thousand steps one process ends
   first even on a machine with many cores. The command prints which it chose and why.
2. The job is Spark's (``checks/fuzz/spark.py``) without Spark: the same ledger
   (``checks/fuzz/ledger.py``: seed ranges, segments, ``job.json``, ``--resume``), the ranges run
   one after the other by one ``checks.fuzz.run.Runner`` (fresh every ``FRESH_RUNNER_EVERY`` runs,
   as an executor's), each segment's rows written to ``runs/segment=K/part-00000.jsonl`` (one JSON
   object per run, ``COLUMNS``), then its ``_SUCCESS`` marker, then the ledger. A run depends on
   its seed alone, so the rows are those a Spark job writes, seed for seed; only their format
   differs (JSON Lines, not Parquet), and the ledger records it (``JobKey.rows``), so a job is
   resumed only by the kind of master that started it.
3. The aggregates are ``checks.fuzz.spark.aggregate``'s, computed from the files, except the
   distinct states visited: counted exactly (the fingerprints' distinct values), where Spark
   estimates them (``approx_count_distinct``, rsd 1%).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from checks.extras import SPARK_EXTRA, has_spark
from checks.fuzz.coverage import KINDS, UNICAST
from checks.fuzz.curve import curve_from_first_runs, first_runs
from checks.fuzz.ledger import JobKey, Ledger, new_ledger, resumed_ledger
from checks.fuzz.run import FuzzPlan, Runner
from checks.fuzz.spark import FRESH_RUNNER_EVERY, Aggregates, JobResult, seed_ranges

IN_PROCESS_STEPS = 200_000  # rule 1: --master auto runs jobs of at most this many steps in this process
COLUMNS = ("seed", "steps", "end", "verdict", "failing", "fail_step", "detail", *(f"n_{k}" for k in KINDS),
           "fingerprints", "phase_hits")  # ``RunRecord.row``'s order, Spark's ``schema()`` names
ROWS_FILE = "part-00000.jsonl"
PROGRESS_EVERY = 15.0  # seconds between progress lines in a log (a terminal's line is rewritten each range)


def chosen_master(master: str, runs: int, steps: int, resumed: str | None = None) -> tuple[str, str]:
    """Rule 1: (the master the job runs on, ``none`` for this process; why, in words). ``resumed``:
    how the job ``--resume`` goes on with stores its rows (``JobKey.rows``), which ``auto`` follows."""
    asked = runs * steps
    if master == "none":
        return "none", "in this process (--master none)"
    if master != "auto":
        return master, f"Spark (--master {master})"
    if resumed == "jsonl":
        return "none", "in this process (--master auto --resume: the job ran in this process)"
    if resumed == "parquet":
        return "local[*]", "Spark local[*] (--master auto --resume: the job ran on Spark)"
    if asked <= IN_PROCESS_STEPS:
        return "none", (f"in this process (--master auto: {runs:,} runs x {steps:,} steps <= {IN_PROCESS_STEPS:,}; "
                        "Spark local[*] above)")
    if not has_spark():
        return "none", (f"in this process (--master auto: {runs:,} runs x {steps:,} steps > {IN_PROCESS_STEPS:,}, "
                        f"but Spark is not installed: pip install 'seqcheck[{SPARK_EXTRA}]')")
    return "local[*]", (f"Spark local[*] (--master auto: {runs:,} runs x {steps:,} steps > {IN_PROCESS_STEPS:,}; "
                        "--master none runs it in this process)")


def run_job(plan: FuzzPlan, model_path: Path, first_seed: int, runs: int, partitions: int, results: Path,
            progress: TextIO | None, *, resume: bool = False) -> JobResult:
    """Rule 2: ``checks.fuzz.spark.run_job`` in this process (``model_path``: the plan's model file)."""
    key = JobKey.of(plan, first_seed, runs, rows="jsonl")
    ledger = resumed_ledger(results, key) if resume else new_ledger(
        results, key, seed_ranges(first_seed, runs, partitions), 1)
    pending = ledger.to_do()
    line = _Progress(ledger.runs_of(pending), progress) if progress is not None and pending else None
    try:
        _run_segments(plan, model_path, ledger, pending, line)
    finally:  # also on Ctrl-C: a terminal's progress line is cleared before the command's last words
        if line is not None:
            line.finish()
    return JobResult(sum(ledger.seconds.values()), len(ledger.ranges), runs - ledger.runs_of(pending),
                     ledger.total_cpu)


def _run_segments(plan: FuzzPlan, model_path: Path, ledger: Ledger, pending: list[int],
                  line: _Progress | None) -> None:
    """Rule 2: the pending segments, one after the other, each recorded once its rows are on disk."""
    runner: Runner | None = None
    used = 0
    for segment in pending:
        started, cpu = time.perf_counter(), time.process_time()
        folder = ledger.folder(segment)
        folder.mkdir(parents=True)
        with (folder / ROWS_FILE).open("w") as out:
            for lo, hi in ledger.ranges_of(segment):
                for seed in range(lo, hi):
                    if runner is None or used >= FRESH_RUNNER_EVERY:
                        runner, used = None, 0  # the old memo tables go before the new ones grow
                        runner = Runner(plan, model_path)
                    record = runner.run(seed)
                    used += 1
                    out.write(json.dumps(dict(zip(COLUMNS, record.row())), separators=(",", ":")) + "\n")
                    if line is not None:
                        line.add(record.verdict != "pass")
            out.flush()
            os.fsync(out.fileno())
        (folder / "_SUCCESS").touch()
        ledger.finished(segment, time.perf_counter() - started, time.process_time() - cpu)


def rows(results: Path) -> Iterator[dict[str, Any]]:
    """Every row written under ``results`` (every segment's file), in segment order."""
    for path in sorted(results.glob(f"segment=*/{ROWS_FILE}"), key=lambda p: int(p.parent.name.split("=")[1])):
        with path.open() as lines:
            for text in lines:
                yield json.loads(text)


def aggregate(results: Path, per_verdict: int, first_seed: int | None = None, width: int = UNICAST.width
              ) -> Aggregates:
    """Rule 3: ``checks.fuzz.spark.aggregate`` over the files, the distinct states exactly; with
    ``first_seed`` (the job's) also the coverage curve (``checks/fuzz/curve.py``). ``width``: the
    length of the rows' ``phase_hits`` (the coverage scheme's)."""
    totals = Aggregates(0, 0, {}, {}, {}, dict.fromkeys(KINDS, 0), 0, [0] * width)
    failing: list[tuple[str, int, int]] = []
    seen: list[tuple[np.ndarray, np.ndarray]] = []  # (fingerprints, the run index of each)
    for row in rows(results):
        verdict, seed = row["verdict"], row["seed"]
        totals.runs += 1
        totals.steps += row["steps"]
        totals.verdicts[verdict] = totals.verdicts.get(verdict, 0) + 1
        totals.first_seed[verdict] = min(totals.first_seed.get(verdict, seed), seed)
        totals.ends[row["end"]] = totals.ends.get(row["end"], 0) + 1
        for k in KINDS:
            totals.actions[k] += row[f"n_{k}"]
        for i, hits in enumerate(row["phase_hits"]):
            totals.phase_hits[i] += hits
        fps = np.array(row["fingerprints"], dtype=np.int64)
        seen.append((fps, np.full(fps.size, seed - (first_seed or 0), dtype=np.int64)))
        if verdict != "pass":
            failing.append((verdict, row["fail_step"], seed))
        if len(seen) >= 10_000:  # keep the distinct fingerprints only, each with its first run
            seen = [_first_runs(seen)]
    fps, first = _first_runs(seen)
    totals.distinct_states = int(fps.size)
    totals.exact_distinct = True
    if first_seed is not None and totals.runs:
        totals.coverage_curve = curve_from_first_runs(first, totals.runs)
    chosen: dict[str, int] = {}
    for verdict, step, seed in sorted(failing):
        if chosen.get(verdict, 0) < per_verdict:
            chosen[verdict] = chosen.get(verdict, 0) + 1
            totals.to_shrink.append((seed, verdict, step))
    return totals


def _first_runs(seen: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    if not seen:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return first_runs(np.concatenate([f for f, _ in seen]), np.concatenate([i for _, i in seen]))


class _Progress:
    """A status line while the job runs: runs finished, failing runs, rate (rewritten on a
    terminal, a line every ``PROGRESS_EVERY`` seconds in a log)."""

    def __init__(self, runs: int, out: TextIO) -> None:
        self.runs, self.out = runs, out
        self.done = self.failing = 0
        self.tty = out.isatty()
        self.started = self.shown = time.perf_counter()
        self.cpu = time.process_time()

    def add(self, failed: bool) -> None:
        self.done += 1
        self.failing += failed
        now = time.perf_counter()
        if now - self.shown >= (0.5 if self.tty else PROGRESS_EVERY):
            self.shown = now
            elapsed, cpu = now - self.started, time.process_time() - self.cpu
            text = (f"fuzz: {self.done:,}/{self.runs:,} runs in this process, {self.failing:,} failing, "
                    f"{elapsed:,.0f} s (CPU {cpu:,.0f} s), {self.done / max(elapsed, 1e-9):,.0f} runs/s")
            print(f"\r\033[K{text}" if self.tty else text, end="" if self.tty else "\n", file=self.out, flush=True)

    def finish(self) -> None:
        if self.tty:
            print("\r\033[K", end="", file=self.out, flush=True)

