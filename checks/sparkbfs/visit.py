"""The executors' side of the search on Spark: one pass over a level's states (``visit``).

Rules
-----
1. A task gets rows ``(fp, value)`` of one level (``value``: a state's process-independent value as
   ``checks/explore/portable.py`` ships it) and the plan (the model file's text); it rebuilds the model
   once per Python worker and plan (``_SYSTEMS``, as ``checks/swarm_job.py`` and ``checks/fuzz`` do), so
   nothing travels but text, values and fingerprints.
2. Per state it does what the one-process search does when the state is checked and when it is
   expanded (``checks/explore/search.py``): every checked property (once per property key when the
   system has keys), the bound (a cut state is counted and not expanded), and, when the level is
   expanded, its successors (the system's ``expand_batch`` when it offers it), each replaced by its
   orbit's process-independent representative and fingerprinted, and the deadlock check.
3. What it returns is rows of ``ROW_SCHEMA``: one per distinct successor of the task (``kind`` 1: the
   fingerprint, the smallest parent fingerprint among the task's states that reach it, the value, the
   orbit's size), then one summary (``kind`` 0, the pickle of a ``Summary``): what the task's states
   add to the counts and findings. A finding is kept as the smallest fingerprint that shows it, so the
   driver's choice depends on the states alone, not on partitions or task order.
4. ``cpu`` (an accumulator) gets each task's CPU seconds for the progress lines; the counts come from
   the summaries, which a retried task does not count twice.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.explore.portable import PICKLE_PROTOCOL, Portable, fingerprints_of
from checks.explore.system import Always, Liveness, Property, Sometimes

CHUNK = 2048  # states expanded at once


@dataclass(frozen=True)
class Plan:
    """What a task needs besides its rows (rule 1)."""

    model_name: str
    model_text: str
    protocol: str | None  # one protocol of a side-by-side file
    symmetry: bool
    properties: tuple[str, ...]  # the names of the properties checked (the system's, in its order)


@dataclass
class Summary:
    """What a task's states add (rule 3)."""

    states: int = 0
    transitions: int = 0
    cut: int = 0
    violated: dict[str, int] = field(default_factory=dict)  # Always property -> smallest fingerprint
    witnessed: dict[str, int] = field(default_factory=dict)  # Sometimes property -> smallest fingerprint
    deadlock: int | None = None  # smallest fingerprint of a deadlocked state
    successors: int = 0  # distinct successors the task returned
    payload_bytes: int = 0  # bytes of those rows (fingerprints, parents, values, orbits)
    cpu_seconds: float = 0.0

    def merge(self, other: Summary) -> None:
        for name in ("states", "transitions", "cut", "successors", "payload_bytes", "cpu_seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.violated, other.violated), (self.witnessed, other.witnessed)):
            for prop, fp in theirs.items():
                mine[prop] = min(fp, mine.get(prop, fp))
        if other.deadlock is not None:
            self.deadlock = other.deadlock if self.deadlock is None else min(self.deadlock, other.deadlock)


def row_schema() -> Any:
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    return StructType([StructField("kind", IntegerType(), False), StructField("fp", LongType(), False),
                       StructField("parent", LongType(), False), StructField("value", BinaryType(), False),
                       StructField("orbit", IntegerType(), False)])


class _Loaded:
    """A plan's model in this Python worker, with what a pass needs of it."""

    def __init__(self, plan: Plan) -> None:
        from checks.fuzz.spark import model_file_copy  # the fuzz executors' copy, shared
        from models.modelfile import load

        self.model = load(model_file_copy(plan.model_name, plan.model_text), protocol=plan.protocol)
        system = self.system = self.model.world
        self.portable = Portable(system, symmetry=plan.symmetry)
        chosen = [p for p in system.properties if p.name in plan.properties]
        self.checker = Checker(system, chosen)


_SYSTEMS: dict[Plan, _Loaded] = {}


def loaded(plan: Plan) -> _Loaded:
    """Rule 1: this worker's model of ``plan`` (one plan kept: a new one replaces it)."""
    found = _SYSTEMS.get(plan)
    if found is None:
        _SYSTEMS.clear()
        found = _SYSTEMS[plan] = _Loaded(plan)
    return found


class Checker:
    """The properties of ``checks/explore/search.py``'s ``_check``, once per property key if the
    system has them (and every property checked is the system's own)."""

    def __init__(self, system: Any, properties: Sequence[Property]) -> None:
        self.always = [p for p in properties if isinstance(p, Always)]
        self.sometimes = [p for p in properties if isinstance(p, Sometimes)]
        if any(isinstance(p, Liveness) for p in properties):
            raise ValueError("the search on Spark checks no liveness property")
        own = list(getattr(system, "properties", ()))
        key_of = getattr(system, "property_key", None)
        self.key_of = key_of if callable(key_of) and all(any(p is q for q in own) for p in properties) else None
        self.memo: dict[Hashable, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def verdict(self, state: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The ``Always`` properties ``state`` violates and the ``Sometimes`` ones it witnesses."""
        if self.key_of is None:
            return self._judge(state)
        key = self.key_of(state)
        found = self.memo.get(key)
        if found is None:
            if len(self.memo) > 1 << 16:
                self.memo.clear()
            found = self.memo[key] = self._judge(state)
        return found

    def _judge(self, state: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (tuple(p.name for p in self.always if not p.holds(state)),
                tuple(p.name for p in self.sometimes if p.holds(state)))


def expand(system: Any, states: Sequence[Any]) -> tuple[list[Any], list[int]]:
    """The successors of ``states`` and how many each has (-1: cut), as ``BatchExpansion``."""
    batch = getattr(system, "expand_batch", None)
    if callable(batch):
        afters, counts, _ = batch(states)
        return list(afters), list(counts)
    out: list[Any] = []
    counts = []
    for state in states:
        if not system.within_bounds(state):
            counts.append(-1)
            continue
        before = len(out)
        out.extend(after for _, after in system.successors(state))
        counts.append(len(out) - before)
    return out, counts


def visit(plan: Plan, expanding: bool, cpu: Any, rows: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """One task (rules 2 and 3): ``rows`` are ``(fp, value)`` of one level's states."""
    started = time.process_time()
    here = loaded(plan)
    summary = Summary()
    found: dict[int, list[Any]] = {}  # successor fingerprint -> [smallest parent, representative, orbit]
    batch: list[tuple[int, bytes]] = []
    for row in rows:
        batch.append((int(row[0]), bytes(row[1])))
        if len(batch) == CHUNK:
            _visit_chunk(here, batch, expanding, summary, found)
            batch = []
    if batch:
        _visit_chunk(here, batch, expanding, summary, found)
    for fp, (parent, state, orbit) in found.items():
        value = here.portable.wire(state)
        summary.payload_bytes += 20 + len(value)
        yield 1, fp, parent, value, orbit
    summary.successors = len(found)
    summary.cpu_seconds = time.process_time() - started
    cpu.add(summary.cpu_seconds)
    yield 0, 0, 0, pickle.dumps(summary, protocol=PICKLE_PROTOCOL), 0


def _visit_chunk(here: _Loaded, batch: list[tuple[int, bytes]], expanding: bool, summary: Summary,
                 found: dict[int, list[Any]]) -> None:
    system, portable = here.system, here.portable
    fps = [fp for fp, _ in batch]
    states = [portable.unwire(value) for _, value in batch]
    summary.states += len(states)
    for fp, state in zip(fps, states, strict=True):
        failed, held = here.checker.verdict(state)
        for name in failed:
            summary.violated[name] = min(fp, summary.violated.get(name, fp))
        for name in held:
            summary.witnessed[name] = min(fp, summary.witnessed.get(name, fp))
    if not expanding:  # the last level of a search stopped by a budget: checked, not expanded (no cut count)
        return
    afters, counts = expand(system, states)
    for position in (i for i, c in enumerate(counts) if c == 0):
        if not system.accepts_end(states[position]):
            fp = fps[position]
            summary.deadlock = fp if summary.deadlock is None else min(summary.deadlock, fp)
    summary.cut += sum(1 for c in counts if c < 0)
    summary.transitions += sum(c for c in counts if c > 0)
    reps, texts, orbits = portable.representatives(afters)
    parents = np.repeat(np.array(fps, dtype=np.int64), np.maximum(np.array(counts, dtype=np.int64), 0))
    for fp, parent, state, orbit in zip(fingerprints_of(texts).tolist(), parents.tolist(), reps, orbits, strict=True):
        held_now = found.get(fp)
        if held_now is None:
            found[fp] = [parent, state, orbit]
        elif parent < held_now[0]:
            held_now[0] = parent
