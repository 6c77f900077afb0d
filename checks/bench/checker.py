"""``seqcheck bench``: the checker's speed and memory on a fixed model, against a baseline.

Each measurement runs in a fresh Python process so that peak resident memory (the only memory
figure the OS reports without instrumenting the allocator) starts from the same floor. Two kinds:

- ``checker``: ``checks.explore.search.explore`` with every property of the model (and its
  symmetry reduction, if the model has one: ``unreduced_states_per_s`` counts the states the
  explored ones stand for, the figure to compare with a search that explores them all);
- ``checker_plain``: the same without symmetry reduction (only when the model has symmetries);
- ``baseline``: a textbook breadth-first search over the same transition system, keeping every
  full state in a Python ``set`` and checking nothing: what one would write first.

Reported: medians over ``repeat`` runs of each (the kinds interleaved: checker, plain, baseline,
then again), by wall clock and by CPU time (``cpu_seconds``, ``cpu_states_per_s``), and the ratios
checker / baseline and plain / checker, computed from CPU time (a busy machine changes wall time).
``bytes_per_state`` is the growth of peak RSS during the exploration divided by distinct states.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections import deque
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from checks.bench import median


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(model_path: Path, mode: str) -> dict[str, Any]:
    """One measurement in this process (call it in a fresh one)."""
    from checks.explore.search import explore
    from models.modelfile import load

    model = load(model_path)
    before = _rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    if mode in ("checker", "checker_plain"):
        result = explore(model.world, max_states=model.max_states, symmetry=mode == "checker")
        states, transitions = result.stats.distinct, result.stats.transitions
        complete, unreduced = result.stats.complete, result.stats.unreduced
    else:
        states, transitions = _baseline_bfs(model.world)
        complete, unreduced = True, states
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    growth = _rss_mb() - before
    return {"states": states, "unreduced_states": unreduced, "transitions": transitions, "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu, 3), "complete": complete, "states_per_s": round(states / seconds),
            "cpu_states_per_s": round(states / max(cpu, 1e-9)), "unreduced_states_per_s": round(unreduced / seconds),
            "cpu_unreduced_states_per_s": round(unreduced / max(cpu, 1e-9)), "peak_rss_mb": round(_rss_mb(), 1),
            "bytes_per_state": round(growth * 1024 * 1024 / max(states, 1), 1),
            "bytes_per_unreduced_state": round(growth * 1024 * 1024 / max(unreduced, 1), 1)}


def _baseline_bfs(system: Any) -> tuple[int, int]:
    seen: set[Hashable] = set(system.init_states())
    queue: deque[Hashable] = deque(seen)
    transitions = 0
    while queue:
        state = queue.popleft()
        if not system.within_bounds(state):
            continue
        for _, after in system.successors(state):
            transitions += 1
            if after not in seen:
                seen.add(after)
                queue.append(after)
    return len(seen), transitions


def _in_fresh_process(model_path: Path, mode: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "checks.bench.checker", str(model_path), mode],
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_bench(model_path: Path, *, repeat: int = 1) -> dict[str, Any]:
    from models.modelfile import load

    symmetric = getattr(load(model_path).world, "symmetry_group_size", 1) > 1
    kinds = ["checker", "checker_plain", "baseline"] if symmetric else ["checker", "baseline"]
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    for _ in range(repeat):  # interleaved: a change in the machine's load falls on every kind alike
        for kind in kinds:
            runs[kind].append(_in_fresh_process(model_path, kind))
    checker, plain, baseline = runs["checker"], runs.get("checker_plain", []), runs["baseline"]

    out: dict[str, Any] = {"bench": "checker", "model": str(model_path), "repeat": repeat,
                           "states": checker[0]["states"], "transitions": checker[0]["transitions"],
                           "complete": checker[0]["complete"]}
    keys = ("seconds", "cpu_seconds", "states_per_s", "cpu_states_per_s", "unreduced_states_per_s",
            "cpu_unreduced_states_per_s", "peak_rss_mb", "bytes_per_state", "bytes_per_unreduced_state")
    plain_keys = ("seconds", "cpu_seconds", "states_per_s", "cpu_states_per_s", "bytes_per_state")
    out["unreduced_states"] = checker[0]["unreduced_states"]
    for key in keys:
        out[key] = median(checker, key)
    out["baseline"] = {key: median(baseline, key) for key in plain_keys}
    out["baseline"]["states"] = baseline[0]["states"]
    # the baseline explores every state: compare it with the states the checker's stand for
    out["speed_ratio_vs_baseline"] = round(out["cpu_unreduced_states_per_s"]
                                           / max(out["baseline"]["cpu_states_per_s"], 1), 2)
    out["memory_ratio_vs_baseline"] = round(out["bytes_per_unreduced_state"]
                                            / max(out["baseline"]["bytes_per_state"], 1), 3)
    if plain:
        out["without_symmetry"] = {key: median(plain, key) for key in plain_keys}
        out["without_symmetry"]["states"] = plain[0]["states"]
        out["symmetry_speedup"] = round(out["without_symmetry"]["cpu_seconds"] / max(out["cpu_seconds"], 1e-9), 2)
    return out


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]), sys.argv[2])))
