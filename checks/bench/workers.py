"""``seqcheck bench --workers N``: the checker with one process against ``--workers N``
(``checks/explore/workers.py``), side by side in one run.

Each measurement runs in a fresh Python process (as ``checks/bench/checker.py``'s), the two kinds
alternately (1, N, 1, N, ...) so that a change in what else the machine runs falls on both. Reported
per kind: the median wall seconds and states per second, the CPU seconds of the coordinator and of
its worker processes, and the load average seen around each run (the machine is shared: a speed-up
is only as good as the cores that were free); then ``speedup``, the ratio of the median wall seconds,
``same_result``, whether the two kinds found the same states, transitions, depth and levels,
``cpu_ratio``, the CPU seconds of all processes with N workers over those of one process, and
``speedup_bound_on_idle_cores``, what those CPU seconds allow at most when the cores are idle (one
process's CPU seconds over the larger of N's spread evenly over the cores and the coordinator's):
a bound computed from measurements, not a measurement.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def measure(model_path: Path, workers: int) -> dict[str, Any]:
    """One check of the model's search with ``workers`` processes (1: the one-process search), in
    this process (call it in a fresh one)."""
    from checks.check import searcher
    from models.modelfile import load

    model = load(model_path)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    result = searcher(model, workers)(model.world, max_states=model.max_states, symmetry=model.symmetry)
    seconds = time.perf_counter() - started
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = result.stats
    return {"workers": workers, "seconds": round(seconds, 3), "states": stats.distinct,
            "transitions": stats.transitions, "depth": stats.depth, "levels": stats.levels,
            "complete": stats.complete, "states_per_s": round(stats.distinct / seconds),
            "coordinator_cpu_s": round(mine.ru_utime + mine.ru_stime - cpu.ru_utime - cpu.ru_stime, 2),
            "workers_cpu_s": round(children.ru_utime + children.ru_stime, 2),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}


def _in_fresh_process(model_path: Path, workers: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "checks.bench.workers", str(model_path), str(workers)],
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_workers_bench(model_path: Path, workers: int, *, repeat: int = 1) -> dict[str, Any]:
    """``repeat`` runs each of one process and of ``workers``, alternately; medians and their ratio."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], workers: []}
    for _ in range(repeat):
        for kind in (1, workers):
            runs[kind].append(_in_fresh_process(model_path, kind))

    def summary(kind: int) -> dict[str, Any]:
        mine = runs[kind]
        out: dict[str, Any] = {key: statistics.median(r[key] for r in mine)
                               for key in ("seconds", "states_per_s", "coordinator_cpu_s", "workers_cpu_s")}
        out["seconds_each"] = [r["seconds"] for r in mine]
        out["load_each"] = [[r["load_before"], r["load_after"]] for r in mine]
        return out

    first, other = runs[1][0], runs[workers][0]
    same = all(first[key] == other[key] for key in ("states", "transitions", "depth", "levels", "complete"))
    one, many = summary(1), summary(workers)
    cores = os.cpu_count() or 1
    many_cpu = many["coordinator_cpu_s"] + many["workers_cpu_s"]
    # what the CPU seconds allow on idle cores: the work spread evenly, the coordinator never waiting
    bound = one["coordinator_cpu_s"] / max(many_cpu / min(cores, workers + 1), many["coordinator_cpu_s"], 1e-9)
    return {"bench": "workers", "model": str(model_path), "repeat": repeat, "cores": cores,
            "states": first["states"], "transitions": first["transitions"], "same_result": same,
            "workers_1": one, f"workers_{workers}": many,
            "speedup": round(one["seconds"] / max(many["seconds"], 1e-9), 3),
            "cpu_ratio": round(many_cpu / max(one["coordinator_cpu_s"], 1e-9), 3),
            "speedup_bound_on_idle_cores": round(bound, 3)}


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]), int(sys.argv[2]))))
