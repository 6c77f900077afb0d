"""Where a lockstep fuzz step's time goes: ``python -m checks.fuzz.parts [RUNS]`` (one JSON line).

The same runs as ``seqcheck bench --fuzz``'s plain measurement (seeds 0 .. RUNS-1, 100 steps, the
fuzz model), with the harness's parts wrapped in timers for the duration: microseconds per step
and calls per step of each part. Parts nest (``World.successor`` is inside ``Chooser.pick``), and
the timers add overhead of their own, so the parts do not add up to ``us_per_step`` of the same
run; compare parts with each other and across commits, and speeds with ``seqcheck bench --fuzz``.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import models
from checks.conform.differential import Lockstep, Shared
from checks.conform.engines import WorldEngines
from checks.fuzz.coverage import PhaseCounter
from checks.fuzz.fingerprints import StepFingerprints
from checks.fuzz.run import Chooser, FuzzPlan, Runner, Walk
from models.protocols.base import ProtocolAdapter
from models.world import World

MODEL = Path(models.__file__).resolve().parent / "fuzz" / "unicast3-lockstep.toml"
PARTS: tuple[tuple[type, str], ...] = (
    (Chooser, "pick"), (World, "successor"), (World, "candidates"), (World, "handle_stimulus"),
    (ProtocolAdapter, "handle"), (World, "_history_after"), (ProtocolAdapter, "observe"),
    (World, "_net_after"), (StepFingerprints, "__call__"), (Lockstep, "_compare_outputs"),
    (Lockstep, "compare_state"), (WorldEngines, "view"), (Shared, "spec_view"), (WorldEngines, "drive"),
    (Lockstep, "check_always"), (PhaseCounter, "record"), (Walk, "finish"),
)


@contextmanager
def timed(parts: tuple[tuple[type, str], ...], seconds: dict[str, float], calls: dict[str, int]) -> Iterator[None]:
    """Each method of ``parts`` wrapped to add its time and calls, restored on exit."""
    originals = [(cls, name, cls.__dict__[name]) for cls, name in parts]
    for cls, name, method in originals:
        setattr(cls, name, _wrap(method, f"{cls.__name__}.{name}", seconds, calls))
    try:
        yield
    finally:
        for cls, name, method in originals:
            setattr(cls, name, method)


def _wrap(method: Callable[..., Any], label: str, seconds: dict[str, float], calls: dict[str, int]
          ) -> Callable[..., Any]:
    clock = time.perf_counter

    def timed_method(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return method(*args, **kwargs)
        finally:
            seconds[label] += clock() - started
            calls[label] += 1

    return timed_method


def measure(runs: int, model: Path = MODEL) -> dict[str, Any]:
    seconds: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    runner = Runner(FuzzPlan(model.name, model.read_text(), 100), model)
    with timed(PARTS, seconds, calls):
        started = time.perf_counter()
        steps = sum(runner.run(seed).steps for seed in range(runs))
        elapsed = time.perf_counter() - started
    ranked = sorted(seconds, key=lambda label: -seconds[label])
    return {"model": str(model), "runs": runs, "steps": steps, "us_per_step": round(1e6 * elapsed / steps, 1),
            "parts": {label: {"us_per_step": round(1e6 * seconds[label] / steps, 1),
                              "calls_per_step": round(calls[label] / steps, 2)} for label in ranked}}


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)))
