"""``seqcheck conform``: many seeded schedules of a model, each run by the spec and by JGroups in
lockstep (``lockstep.py``), in this process or on Spark; every divergence reported with whether the
table of known differences explains it (``explained.py``).

Rules
-----
1. A schedule depends on its seed alone: ``random_walk`` with seed ``first + i`` (the first seed is
   printed), so a divergence replays from its trace file or its seed, on any master.
2. One harness JVM per process (``Conformer``), reset between schedules; on Spark each Python
   worker keeps its own, so the JVM's start is paid once per worker, not per schedule.
3. A schedule ends at its step budget, when no action is enabled, or at its first divergence. An
   explained divergence ends it too (the two sides no longer stand for each other) and is counted;
   an unexplained one is kept with its trace (the checker's trace format: ``seqcheck show`` draws
   it, ``seqcheck replay TRACE --jgroups VERSION`` runs it again on JGroups).
4. Time: wall seconds and CPU seconds of the Python side and of the JVM, side by side;
   ``steps_per_cpu_second`` divides by the sum of both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.jgroups.explained import explain
from checks.jgroups.harness import Harness
from checks.jgroups.locate import release
from checks.jgroups.lockstep import random_walk
from models.modelfile import Model, load

MAX_KEPT = 20  # divergences kept per model and kind (explained or not) with their traces (counts cover all)


@dataclass(frozen=True)
class ConformPlan:
    model_path: str  # as the user named it (traces name it so)
    model_text: str  # travels to Spark executors
    protocol: str | None  # one protocol of a side-by-side file
    version: str  # the release, as --jgroups named it
    steps: int
    flags: tuple[str, ...] | None = None  # the spec's variant flags; None: the release's (bindings)


@dataclass
class RangeResult:
    schedules: int = 0
    steps: int = 0
    python_cpu: float = 0.0
    jvm_cpu: float = 0.0
    explained: dict[str, int] = field(default_factory=dict)  # difference name -> schedules it ended
    divergences: list[dict[str, Any]] = field(default_factory=list)  # with traces, explained ones flagged
    unexplained: int = 0
    jgroups: str = ""
    flags: tuple[str, ...] = ()

    def add(self, other: RangeResult) -> None:
        self.schedules += other.schedules
        self.steps += other.steps
        self.python_cpu += other.python_cpu
        self.jvm_cpu += other.jvm_cpu
        for name, count in other.explained.items():
            self.explained[name] = self.explained.get(name, 0) + count
        for explained in (False, True):
            room = MAX_KEPT - sum(1 for d in self.divergences if d["explained"] == explained)
            self.divergences.extend([d for d in other.divergences if d["explained"] == explained][:max(0, room)])
        self.unexplained += other.unexplained
        self.jgroups = self.jgroups or other.jgroups
        self.flags = self.flags or other.flags


class Conformer:
    """Rule 2: this process's harness and model for one plan."""

    def __init__(self, plan: ConformPlan, model_file: Path) -> None:
        self.plan = plan
        self.model: Model = load(model_file, protocol=plan.protocol)
        self.harness = Harness(release(plan.version))

    def run(self, seeds: tuple[int, int]) -> RangeResult:
        return walks(self.model, self.harness, seeds, self.plan.steps, self.plan.flags, self.plan.model_path)

    def close(self) -> None:
        self.harness.close()


def walks(model: Model, harness: Harness, seeds: tuple[int, int], steps: int,
          flags: tuple[str, ...] | None = None, model_path: str = "") -> RangeResult:
    """Rules 1 and 3: the schedules of seeds ``seeds[0] .. seeds[1]-1`` on ``harness``, counted, each
    divergence explained or kept (``model_path``: the model as the traces name it)."""
    out = RangeResult(jgroups=harness.version)
    cpu0, jvm0 = time.process_time(), harness.cpu_seconds()
    for seed in range(*seeds):
        result = random_walk(model, harness, seed, steps, flags=flags)
        out.schedules += 1
        out.steps += result.steps
        out.flags = result.run.flags
        if result.divergence is None:
            continue
        difference = explain(result.divergence, result.run)
        if difference is not None:
            out.explained[difference.name] = out.explained.get(difference.name, 0) + 1
        else:
            out.unexplained += 1
        kept = sum(1 for d in out.divergences if d["explained"] == (difference is not None))
        if kept < MAX_KEPT:
            trace = result.run.trace(result.divergence, seed).to_json()
            trace["model"] = model_path
            d = result.divergence
            out.divergences.append({"seed": seed, "step": d.step, "action": d.action, "what": d.what,
                                    "spec": d.spec, "jgroups": d.jgroups, "explained": difference is not None,
                                    "reason": None if difference is None else
                                    f"{difference.name}: {difference.reason}", "trace": trace})
    out.python_cpu = time.process_time() - cpu0
    out.jvm_cpu = harness.cpu_seconds() - jvm0
    return out


_CONFORMERS: dict[ConformPlan, Conformer] = {}


def run_range(plan: ConformPlan, seeds: tuple[int, int]) -> RangeResult:
    """One task: the schedules of seeds ``seeds[0] .. seeds[1]-1`` (this process's conformer)."""
    from checks.fuzz.spark import model_file_copy  # the executors' copy of the model text

    conformer = _CONFORMERS.get(plan)
    if conformer is None:
        for old in _CONFORMERS.values():
            old.close()
        _CONFORMERS.clear()
        name = Path(plan.model_path).name
        conformer = _CONFORMERS[plan] = Conformer(plan, model_file_copy(name, plan.model_text))
    return conformer.run(seeds)


def close_all() -> None:
    for conformer in _CONFORMERS.values():
        conformer.close()
    _CONFORMERS.clear()


def report(model: Model, plan: ConformPlan, result: RangeResult, first_seed: int, wall: float,
           master: str) -> dict[str, Any]:
    """One model's JSON report (rule 4)."""
    cpu = result.python_cpu + result.jvm_cpu
    return {"model": plan.model_path, "protocol": model.protocol, "jgroups": result.jgroups,
            "spec_flags": list(result.flags), "master": master, "first_seed": first_seed,
            "schedules": result.schedules, "steps": result.steps, "max_steps": plan.steps,
            "seconds": round(wall, 3), "cpu_seconds": round(cpu, 3), "python_cpu_seconds": round(result.python_cpu, 3),
            "jvm_cpu_seconds": round(result.jvm_cpu, 3),
            "steps_per_second": round(result.steps / wall, 1) if wall else None,
            "steps_per_cpu_second": round(result.steps / cpu, 1) if cpu else None,
            "explained": dict(sorted(result.explained.items())), "unexplained": result.unexplained,
            "divergences": result.divergences}
