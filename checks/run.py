"""Checking one model file: explore it, turn the result into a verdict, validate and save the trace.

A verdict is ``pass`` (every checked property holds on every state within the model's bounds),
``violation:<property>`` (the first property found violated, with a shortest trace) or
``incomplete`` (the model's ``max_states`` stopped the search first). A verdict *matches* when it
equals the model's ``expect`` and, if the model pins a state count, the count is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import models
from checks.explore import Progress, Result, explore
from checks.trace import Trace, make_trace, validate
from models.modelfile import Model


@dataclass
class Outcome:
    model: Model
    result: Result
    verdict: str
    trace: Trace | None
    trace_path: Path | None
    seconds: float

    @property
    def matches(self) -> bool:
        pinned = self.model.pinned_states
        return self.verdict == self.model.expect and (pinned is None or pinned == self.result.stats.distinct)

    @property
    def mismatch_reason(self) -> str:
        if self.verdict != self.model.expect:
            return f"expected {self.model.expect}, got {self.verdict}"
        if self.model.pinned_states is not None and self.model.pinned_states != self.result.stats.distinct:
            return f"expected {self.model.pinned_states} distinct states, got {self.result.stats.distinct}"
        return ""

    def to_json(self) -> dict[str, Any]:
        stats = self.result.stats
        return {
            "model": str(self.model.path), "expected": self.model.expect, "verdict": self.verdict,
            "matches": self.matches, "states": stats.distinct, "transitions": stats.transitions,
            "depth": stats.depth, "cut": stats.cut, "complete": stats.complete,
            "seconds": round(self.seconds, 3), "states_per_s": round(stats.states_per_second),
            "trace_length": len(self.trace.actions) if self.trace else None,
            "trace": str(self.trace_path) if self.trace_path else None,
        }


def portable_path(path: Path) -> Path:
    """``path`` relative to the checkout when it is inside it (traces then carry over between
    checkouts), else absolute (traces then work from any directory)."""
    root = Path(models.__file__).resolve().parent.parent
    resolved = path.resolve()
    try:
        return resolved.relative_to(root)
    except ValueError:
        return resolved


def check_model(model: Model, *, trace_dir: Path | None, progress: Progress | None = None) -> Outcome:
    started = time.perf_counter()
    result = explore(model.world, max_states=model.max_states, progress=progress)
    finding = result.first()
    trace: Trace | None = None
    trace_path: Path | None = None
    if finding is not None:
        verdict = f"violation:{finding.prop}"
        if finding.state_index >= 0:
            trace = make_trace(model.world, model.path, finding.prop, finding.kind, finding.path,
                               recorded_as=portable_path(model.path))
            validate(model.world, trace)
            if trace_dir is not None:
                trace_path = trace.save(trace_dir / f"{model.path.stem}.json")
    elif not result.stats.complete:
        verdict = "incomplete"
    else:
        verdict = "pass"
    return Outcome(model, result, verdict, trace, trace_path, time.perf_counter() - started)
