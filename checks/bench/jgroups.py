"""``seqcheck bench --jgroups VERSION``: the JGroups lockstep's speed beside the engine lockstep's.

Three measurements of the same work (the model's seeds 0 .. runs-1, up to ``STEPS`` steps each,
uniform random walks), in this process, interleaved ``repeat`` times so that a change of the
machine's load hits each alike; the harness JVM is warmed up by one pass first (excluded):

- ``engines``: the spec against the production engines (``checks/conform/differential.random_walk``,
  properties not checked, as the JGroups lockstep does not check them);
- ``jgroups``: the spec against JGroups' classes (``checks/jgroups/lockstep.random_walk``);
- ``harness``: the harness alone, an application send and its delivery between two members, as
  round trips: what the pipe and the JVM cost per command, whatever the spec does.

Reported (one JSON line): steps/s by wall time and per CPU-second (the JGroups figure counts the
JVM's CPU time too), medians over ``repeat``, and the ratio jgroups/engines of each.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from checks.conform.differential import random_walk as engine_walk
from checks.jgroups.harness import Harness
from checks.jgroups.locate import Release
from checks.jgroups.lockstep import random_walk as jgroups_walk
from models.modelfile import load

STEPS = 150


def _engines(model: Any, runs: int) -> tuple[int, float, float]:
    steps, wall, cpu = 0, time.perf_counter(), time.process_time()
    for seed in range(runs):
        steps += engine_walk(model, seed, STEPS, check_properties=False).steps
    return steps, time.perf_counter() - wall, time.process_time() - cpu


def _jgroups(model: Any, harness: Harness, runs: int) -> tuple[int, float, float]:
    steps, wall, cpu, jvm = 0, time.perf_counter(), time.process_time(), harness.cpu_seconds()
    for seed in range(runs):
        steps += jgroups_walk(model, harness, seed, STEPS).steps
    return steps, time.perf_counter() - wall, time.process_time() - cpu + harness.cpu_seconds() - jvm


def _harness(harness: Harness, rounds: int) -> tuple[int, float, float]:
    harness.command("reset", protocol="unicast3", members=2, views=[[0, 1], [0, 1]])
    wall, cpu, jvm = time.perf_counter(), time.process_time(), harness.cpu_seconds()
    for n in range(rounds):
        sent = harness.command("send", m=0, dst=1, payload=f"{n:016x}")["packets"]
        harness.command("deliver", id=sent[0]["id"])
    return 2 * rounds, time.perf_counter() - wall, time.process_time() - cpu + harness.cpu_seconds() - jvm


def run_jgroups_bench(release: Release, model_path: Path, runs: int, repeat: int) -> dict[str, Any]:
    model = load(model_path)
    samples: dict[str, list[tuple[int, float, float]]] = {"engines": [], "jgroups": [], "harness": []}
    with Harness(release) as harness:
        _jgroups(model, harness, min(runs, 20))  # warm-up: class loading, the JIT
        for _ in range(repeat):
            samples["engines"].append(_engines(model, runs))
            samples["jgroups"].append(_jgroups(model, harness, runs))
            samples["harness"].append(_harness(harness, 2_000))
        version = harness.version
    out: dict[str, Any] = {"bench": "jgroups", "release": version, "model": str(model_path), "runs": runs,
                           "max_steps": STEPS, "repeat": repeat}
    for name, rows in samples.items():
        out[name] = {"steps": rows[0][0],
                     "steps_per_s": round(statistics.median(s / w for s, w, _ in rows), 1),
                     "steps_per_cpu_s": round(statistics.median(s / c for s, _, c in rows if c > 0), 1),
                     "seconds": [round(w, 3) for _, w, _ in rows], "cpu_seconds": [round(c, 3) for _, _, c in rows]}
        if name == "harness":
            out[name]["unit"] = "harness commands (send or deliver), not lockstep steps"
    for key in ("steps_per_s", "steps_per_cpu_s"):
        out[f"jgroups_over_engines_{key}"] = round(out["jgroups"][key] / out["engines"][key], 3)
    return out
