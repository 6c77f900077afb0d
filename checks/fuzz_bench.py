"""``seqcheck bench --fuzz``: lockstep steps per second, in one process and on Spark.

Four measurements of the same seeds (0 .. runs-1, up to ``STEPS`` steps, default weights), each in
a fresh Python process (like ``checks/bench.py``):

- ``random_walk``: the bare harness, ``checks.differential.random_walk`` (uniform choice, no
  fingerprints, coverage or liveness): what the fuzzer builds on;
- ``plain``: the fuzz runs (``checks.fuzz_run.Runner``) in a loop, without Spark;
- ``local1`` and ``local2``: the same runs as a Spark job on ``local[1]`` and ``local[2]``
  (session start excluded, Parquet write included).

Reported: steps/s of each (median over ``repeat``), and the ratios local1/plain, local2/plain and
local2/local1; ``spark_overhead_local1`` is 1 - local1/plain.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

STEPS = 100


def measure(mode: str, model_path: Path, runs: int) -> dict[str, Any]:
    """One measurement in this process (call it in a fresh one)."""
    if mode == "random_walk":
        from checks.differential import random_walk
        from models.modelfile import load

        model = load(model_path)
        started = time.perf_counter()
        steps = sum(random_walk(model, seed, STEPS).steps for seed in range(runs))
        return _figures(steps, time.perf_counter() - started)
    from checks.fuzz_run import FuzzPlan, Runner

    plan = FuzzPlan(model_path.name, model_path.read_text(), STEPS)
    if mode == "plain":
        runner = Runner(plan, model_path)
        started = time.perf_counter()
        steps = sum(runner.run(seed).steps for seed in range(runs))
        return _figures(steps, time.perf_counter() - started)
    return _spark(mode, plan, runs)


def _spark(master: str, plan: Any, runs: int) -> dict[str, Any]:
    from checks.fuzz_spark import aggregate, run_job, session

    started = time.perf_counter()
    spark, _ = session(master, "seqcheck bench --fuzz")
    startup = time.perf_counter() - started
    try:
        cores = int(spark.sparkContext.defaultParallelism)
        with tempfile.TemporaryDirectory(prefix="seqcheck-bench-") as folder:
            results = Path(folder) / "runs"
            job = run_job(spark, plan, 0, runs, 4 * cores, results, None)
            steps = aggregate(spark, results, 0).steps
    finally:
        spark.stop()
    return {**_figures(steps, job.seconds), "startup_seconds": round(startup, 2), "partitions": job.partitions}


def _figures(steps: int, seconds: float) -> dict[str, Any]:
    return {"steps": steps, "seconds": round(seconds, 3), "steps_per_s": round(steps / seconds, 1)}


def _in_fresh_process(mode: str, model_path: Path, runs: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "checks.fuzz_bench", mode, str(model_path), str(runs)],
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_fuzz_bench(model_path: Path, runs: int, *, repeat: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"bench": "fuzz", "model": str(model_path), "runs": runs, "steps_per_run": STEPS,
                           "repeat": repeat}
    for name, mode in (("random_walk", "random_walk"), ("plain", "plain"), ("local1", "local[1]"),
                       ("local2", "local[2]")):
        results = [_in_fresh_process(mode, model_path, runs) for _ in range(repeat)]
        best = sorted(results, key=lambda r: r["steps_per_s"])[len(results) // 2]
        out[name] = {**best, "steps_per_s": statistics.median(r["steps_per_s"] for r in results)}
    rate = {name: out[name]["steps_per_s"] for name in ("plain", "local1", "local2")}
    out["ratio_local1_vs_plain"] = round(rate["local1"] / rate["plain"], 3)
    out["ratio_local2_vs_plain"] = round(rate["local2"] / rate["plain"], 3)
    out["ratio_local2_vs_local1"] = round(rate["local2"] / rate["local1"], 3)
    out["spark_overhead_local1"] = round(1 - rate["local1"] / rate["plain"], 3)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]))))
