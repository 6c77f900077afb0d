"""``seqcheck bench --master URL``: the exhaustive search in this process against the same search on Spark
(``checks/sparkbfs``), alternately, on one model; its liveness properties left out on both sides (the
search on Spark checks none).

One Spark session serves every run (its start is reported apart, wall and CPU). Per kind, the medians of:
wall seconds and CPU seconds; for Spark also its parts: the executors' Python workers (the accumulator),
the executors' JVM (Spark's stage metrics, ``executorCpuTime``), and the driver's process and JVM; and
the shuffle bytes Spark wrote (its stages' ``shuffleWriteBytes``). Derived: ``overhead_cpu_us_per_state``
(Spark's CPU seconds less one process's, per state explored), ``states_per_executor_core_second`` (states
per CPU second of the executors, Python and JVM: what a cluster's cores would have to give), and
``shuffle_bytes_per_state``. The load average around each run is kept: the machine is shared.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from checks.check import SparkRun, check_model
from models.modelfile import load


def stage_totals(spark: Any) -> tuple[int, float, int]:
    """Over every stage Spark's status store keeps: shuffle bytes written, executor CPU seconds (the
    JVM's, ``executorCpuTime``), and the highest stage id."""
    context = getattr(spark.sparkContext, "_jsc", None)  # py4j's handle on the JVM's SparkContext
    if context is None:
        return 0, 0.0, -1
    store = context.sc().statusStore()
    defaults = [getattr(store, f"stageList$default${i}")() for i in range(2, 6)]
    stages = store.stageList(None, *defaults)
    written, cpu, top = 0, 0.0, -1
    for i in range(stages.size()):
        stage = stages.apply(i)
        written += int(stage.shuffleWriteBytes())
        cpu += int(stage.executorCpuTime()) / 1e9
        top = max(top, int(stage.stageId()))
    return written, cpu, top


def _one_process(model_path: Path) -> dict[str, Any]:
    model = load(model_path)
    load_before = os.getloadavg()[0]
    outcome = check_model(model, trace_dir=None, safety_only=True)
    stats = outcome.result.stats
    return {"seconds": outcome.seconds, "cpu_seconds": outcome.cpu_seconds, "states": stats.distinct,
            "transitions": stats.transitions, "levels": stats.levels, "verdict": outcome.verdict,
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def _on_spark(model_path: Path, spark: Any) -> dict[str, Any]:
    model = load(model_path)
    load_before = os.getloadavg()[0]
    shuffled, jvm_cpu, _ = stage_totals(spark)
    outcome = check_model(model, trace_dir=None, safety_only=True, spark=SparkRun(spark))
    shuffled_after, jvm_cpu_after, _ = stage_totals(spark)
    stats, figures = outcome.result.stats, outcome.spark or {}
    return {"seconds": outcome.seconds, "cpu_seconds": outcome.cpu_seconds, "states": stats.distinct,
            "transitions": stats.transitions, "levels": stats.levels, "verdict": outcome.verdict,
            "executor_python_cpu_seconds": figures.get("executor_cpu_seconds", 0.0),
            "executor_jvm_cpu_seconds": jvm_cpu_after - jvm_cpu, "shuffle_bytes": shuffled_after - shuffled,
            "payload_bytes_per_row": figures.get("payload_bytes_per_row"),
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def run_spark_search_bench(model_path: Path, master: str, *, repeat: int = 1) -> dict[str, Any]:
    """``repeat`` runs each, alternately (one process first); medians and what they give per state."""
    from checks.fuzz.spark import session, startup_cpu, stop_quietly

    started, cpu = time.perf_counter(), time.process_time()
    spark, owned = session(master, "seqcheck bench --master")
    startup = {"seconds": round(time.perf_counter() - started, 3),
               "cpu_seconds": round(startup_cpu(spark, owned, cpu), 3)}
    runs: dict[str, list[dict[str, Any]]] = {"one_process": [], "spark": []}
    try:
        for _ in range(repeat):
            runs["one_process"].append(_one_process(model_path))
            runs["spark"].append(_on_spark(model_path, spark))
    finally:
        if owned:
            stop_quietly(spark)
    one, many = _medians(runs["one_process"]), _medians(runs["spark"])
    first, other = runs["one_process"][0], runs["spark"][0]
    states = first["states"]
    executors = many["executor_python_cpu_seconds"] + many["executor_jvm_cpu_seconds"]
    return {"bench": "spark_search", "model": str(model_path), "master": master, "repeat": repeat,
            "cores": os.cpu_count(), "states": states, "transitions": first["transitions"],
            "levels": len(first["levels"]), "same_result": all(first[k] == other[k] for k in
                                                               ("states", "transitions", "levels", "verdict")),
            "spark_startup": startup, "one_process": one, "spark": many,
            "wall_ratio": round(many["seconds"] / max(one["seconds"], 1e-9), 2),
            "cpu_ratio": round(many["cpu_seconds"] / max(one["cpu_seconds"], 1e-9), 2),
            "overhead_cpu_us_per_state": round(1e6 * (many["cpu_seconds"] - one["cpu_seconds"]) / max(states, 1), 1),
            "states_per_executor_core_second": round(states / max(executors, 1e-9), 1),
            "shuffle_bytes_per_state": round(many["shuffle_bytes"] / max(states, 1), 1),
            "spark_seconds_per_level": round(many["seconds"] / max(len(first["levels"]), 1), 3)}


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    numbers = [k for k, v in runs[0].items() if isinstance(v, (int, float)) and k not in ("states", "transitions")]
    out: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 3) for k in numbers}
    out["seconds_each"] = [round(r["seconds"], 3) for r in runs]
    out["load_each"] = [r["load"] for r in runs]
    return out
