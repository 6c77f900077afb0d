"""``checks/fuzz/parts.py``: every part is timed on the runs' steps and every method is restored."""

from __future__ import annotations

from checks.fuzz.parts import MODEL, PARTS, measure
from checks.fuzz.run import FuzzPlan, Runner


def test_parts_are_timed_and_the_methods_restored() -> None:
    before = [cls.__dict__[name] for cls, name in PARTS]
    result = measure(3)
    assert [cls.__dict__[name] for cls, name in PARTS] == before
    runner = Runner(FuzzPlan(MODEL.name, MODEL.read_text(), 100), MODEL)
    assert result["steps"] == sum(runner.run(seed).steps for seed in range(3))
    parts = result["parts"]
    assert 1.0 <= parts["Chooser.pick"]["calls_per_step"] <= 1.05  # once per step, once more if quiescent
    assert parts["World.successor"]["us_per_step"] <= parts["Chooser.pick"]["us_per_step"]
    assert {f"{cls.__name__}.{name}" for cls, name in PARTS} - set(parts) <= {"Walk.finish", "PhaseCounter.record"}
