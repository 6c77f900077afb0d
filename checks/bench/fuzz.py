"""``seqcheck bench --fuzz``: lockstep steps per second, in one process and on Spark.

Four measurements of the same work (seeds 0 .. runs-1, up to ``STEPS`` steps, default weights,
the fuzz model), each in a fresh Python process (like ``checks/bench/checker.py``), in this order,
``repeat`` times round-robin (so that a change of the machine's load hits every kind alike):

- ``plain``: the fuzz runs (``checks.fuzz.run.Runner``, one runner, as a Spark task uses it) in a
  loop, without Spark: the single-process harness (as ``seqcheck fuzz --master none`` runs);
- ``plain_whole``: the same, each state fingerprinted whole (``checks.fuzz.fingerprints.Fingerprints``,
  the definition the runs computed before ``StepFingerprints``; same fingerprints, same rows);
- ``local1`` and ``local2``: the same runs as a Spark job on ``local[1]`` and ``local[2]``, one seed
  range per core (``checks/fuzz/spark.py`` rule 5), rows written to Parquet. The session start is
  excluded; the Python workers' start, the model load, the rows' trip to the JVM and the Parquet
  write are included. ``--no-spark`` (``spark=False``) leaves these two out.

Reported (one JSON line): steps/s of each (median over ``repeat``; the plain ones also per second
of the process's CPU time, ``cpu_seconds`` and ``cpu_steps_per_s``, which a shared machine's load disturbs
less; the Spark ones per CPU second of the executors' Python workers, the runs' accumulator), the
ratios plain/plain_whole (what incremental fingerprints gain; by wall and by CPU time),
local1/plain, local2/plain and local2/local1, ``spark_overhead_local1`` = 1 - local1/plain, and
the machine's load average before each measurement (the machine may be shared: read the ratios
with it).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

STEPS = 100
MODES = (("plain", "plain"), ("plain_whole", "plain_whole"), ("local1", "local[1]"), ("local2", "local[2]"))


def measure(mode: str, model_path: Path, runs: int) -> dict[str, Any]:
    """One measurement in this process (call it in a fresh one)."""
    from checks.fuzz.fingerprints import Fingerprints
    from checks.fuzz.run import FuzzPlan, Runner

    plan = FuzzPlan(model_path.name, model_path.read_text(), STEPS)
    if mode in ("plain", "plain_whole"):
        started, cpu = time.perf_counter(), time.process_time()
        runner = Runner(plan, model_path)
        if mode == "plain_whole":
            runner.fingerprint = Fingerprints(runner.shared.world)
            runner.reduced_fingerprint = Fingerprints(runner.model.world)
        steps = sum(runner.run(seed).steps for seed in range(runs))
        return _figures(steps, time.perf_counter() - started, time.process_time() - cpu)
    return _spark(mode, plan, runs)


def _spark(master: str, plan: Any, runs: int) -> dict[str, Any]:
    from checks.fuzz.spark import aggregate, run_job, session

    started = time.perf_counter()
    spark, _ = session(master, "seqcheck bench --fuzz")
    startup = time.perf_counter() - started
    try:
        cores = int(spark.sparkContext.defaultParallelism)
        with tempfile.TemporaryDirectory(prefix="seqcheck-bench-") as folder:
            results = Path(folder) / "runs"
            job = run_job(spark, plan, 0, runs, cores, results, None)
            steps = aggregate(spark, results, 0).steps
    finally:
        spark.stop()
    return {**_figures(steps, job.seconds, job.cpu_seconds), "startup_seconds": round(startup, 2),
            "partitions": job.partitions}


def _figures(steps: int, seconds: float, cpu: float | None) -> dict[str, Any]:
    """Wall and CPU figures side by side (``cpu``: None when the job did not record it)."""
    return {"steps": steps, "seconds": round(seconds, 3), "steps_per_s": round(steps / seconds, 1),
            "cpu_seconds": None if cpu is None else round(cpu, 3),
            "cpu_steps_per_s": None if cpu is None else round(steps / max(cpu, 1e-9), 1)}


def _in_fresh_process(mode: str, model_path: Path, runs: int) -> dict[str, Any]:
    load = round(os.getloadavg()[0], 2)
    done = subprocess.run([sys.executable, "-m", "checks.bench.fuzz", mode, str(model_path), str(runs)],
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {**result, "load_before": load}


def run_fuzz_bench(model_path: Path, runs: int, *, repeat: int = 1, spark: bool = True) -> dict[str, Any]:
    """The measurements of the module's header; without ``spark``, the in-process ones only."""
    modes = MODES if spark else MODES[:2]
    out: dict[str, Any] = {"bench": "fuzz", "model": str(model_path), "runs": runs, "steps_per_run": STEPS,
                           "repeat": repeat, "cpus": os.cpu_count(), "spark": spark}
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in modes}
    for _ in range(repeat):
        for name, mode in modes:
            results[name].append(_in_fresh_process(mode, model_path, runs))
    for name, _ in modes:
        ranked = sorted(results[name], key=lambda r: r["steps_per_s"])
        out[name] = {**ranked[len(ranked) // 2], "steps_per_s": statistics.median(r["steps_per_s"] for r in ranked),
                     "all_steps_per_s": [r["steps_per_s"] for r in results[name]],
                     "load_before": [r["load_before"] for r in results[name]]}
    rate = {name: out[name]["steps_per_s"] for name, _ in modes}
    out["ratio_plain_vs_plain_whole"] = round(rate["plain"] / rate["plain_whole"], 3)
    cpu = {name: statistics.median(r["cpu_steps_per_s"] for r in results[name]) for name in ("plain", "plain_whole")}
    out["ratio_plain_vs_plain_whole_cpu"] = round(cpu["plain"] / cpu["plain_whole"], 3)
    if not spark:
        return out
    out["ratio_local1_vs_plain"] = round(rate["local1"] / rate["plain"], 3)
    out["ratio_local2_vs_plain"] = round(rate["local2"] / rate["plain"], 3)
    out["ratio_local2_vs_local1"] = round(rate["local2"] / rate["local1"], 3)
    out["spark_overhead_local1"] = round(1 - rate["local1"] / rate["plain"], 3)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]))))
