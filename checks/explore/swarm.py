"""Swarm search, one task: a bounded, randomised depth-first search of a ``TransitionSystem``.

Holzmann's swarm verification: instead of one exhaustive search that does not fit, many small
searches that differ in their seed, in the order in which they try a state's successors and in
their depth bound, each cheap and each seeing another part of the state space; what they visited is
merged afterwards (``checks/swarm_job.py`` runs them as Spark tasks and merges them).

Rules
-----
1. Protocol-agnostic: this module sees the model through ``checks/explore/system.py`` (and its
   optional ``BatchExpansion``, ``PackedStates`` and ``PropertyKey`` capabilities, as the
   breadth-first checker does), plus one optional capability of its own (rule 5).
2. A task depends on its ``TaskSpec`` alone (GUIDE C6): ``task_specs(seed, n, ...)`` derives task
   ``i``'s seed, order and depth bound from the swarm seed and ``i`` (not from ``n``), and no choice
   in the search depends on a clock, a global random source or Python's ``hash()`` (dictionaries
   and sets of states serve membership only; orders come from lists). The same spec gives the same
   states, findings and sample in any process, whatever the process did before.
3. The search: depth-first from the first initial state (traces replay from it); a state is
   expanded when it is within the model's bounds and above the task's depth bound; its successors
   are tried in the task's order: ``permuted`` gives every position in a successor list a rank
   drawn once for the task (a fixed permutation of the order in which the system lists its
   actions, like SPIN's swarm reordering of transitions), ``shuffled`` draws a fresh order at every
   expansion. Visited states are kept exactly (a task's budget bounds them; no fingerprint can
   merge two of them) with the depth they were reached at; a state reached again at a smaller
   depth is searched again (otherwise a depth bound hides what lies below a state first met deep:
   the remedy of SPIN's bounded search).
4. Findings, as the checker's: a safety property (``Always``) false on a visited state; a deadlock
   (no successor, ``accepts_end`` false); a liveness property (AG EF goal over fault-free
   continuations) for which a state's fault-free continuations were searched to the end without
   reaching the goal (``Recovery``; a search that reaches ``recovery_states`` states, or a state
   outside the bounds, gives the benefit of the doubt, as the checker does). Recovery is searched
   from every state without successors, every state at the depth bound and, besides, from the share
   ``liveness_rate`` of the other new states (drawn from the task's generator; by default all: the
   memo makes most searches a few steps long). The task keeps the first path it met to each
   property violated (the actions, as JSON, as traces hold them) and searches on to its budget:
   ``checks/swarm_job.py`` replays, validates and shortens them. Witnesses (``Sometimes``) are not
   judged: a partial search cannot say that none exists.
5. Coverage across processes needs fingerprints that do not depend on the process: a system with
   packed states numbers its values per process (the ints are interned ids), so its states are
   fingerprinted for coverage through ``view(state)`` (a decoding to plain values) when it offers
   one, as canonical text; other systems' states are values already. Each task returns the
   ``sample`` smallest of these (unsigned) fingerprints: merging tasks keeps the smallest ``sample``
   of the union (``merge_samples``), which counts the union exactly while it is smaller than
   ``sample`` and estimates it beyond (``distinct_estimate``: k minimum values, relative error about
   1/sqrt(k)).
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from checks.explore.fingerprint import Canonical, digest64, fingerprinter
from checks.explore.system import Always, Liveness, PortableStates, Property, TransitionSystem, export_state, offers

ORDERS = ("permuted", "shuffled")
Expand = Callable[[Sequence[Hashable]], tuple[list[Any], list[int], list[bool]]]  # BatchExpansion.expand_batch
Sample = npt.NDArray[np.uint64]  # sorted, distinct
_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd constant: (fingerprint ^ salt) * _MIX ranks the successors


@dataclass(frozen=True)
class TaskSpec:
    """One search of the swarm (rule 2)."""

    index: int
    seed: int
    order: str  # one of ORDERS
    depth: int  # states deeper than this are not expanded
    max_states: int  # distinct states the task may visit
    liveness_rate: float  # share of new states whose fault-free continuations are searched


def task_specs(seed: int, tasks: int, *, depth: tuple[int, int], max_states: int,
               liveness_rate: float = 1.0) -> list[TaskSpec]:
    """``tasks`` specs from the swarm ``seed``: task ``i`` draws its own seed, order and depth bound
    from ``(seed, i)`` alone; the bound is log-uniform in ``depth`` (as many tasks below the range's
    geometric mean as above it: shallow searches find shallow violations, deep ones reach far)."""
    specs = []
    for index in range(tasks):
        rng = random.Random(f"seqcheck-swarm:{seed}:{index}")  # str seeds are hashed with SHA-512: stable
        bound = round(math.exp(rng.uniform(math.log(depth[0]), math.log(depth[1]))))
        specs.append(TaskSpec(index, rng.getrandbits(63), rng.choice(ORDERS), min(max(bound, depth[0]), depth[1]),
                              max_states, liveness_rate))
    return specs


@dataclass(frozen=True)
class Found:
    """The first violation a task met: the path's actions (JSON) from the first initial state."""

    prop: str
    kind: str  # always | deadlock | liveness
    actions: tuple[dict[str, Any], ...]


@dataclass
class TaskResult:
    spec: TaskSpec
    states: int = 0  # distinct states visited
    transitions: int = 0  # successors generated
    revisits: int = 0  # states searched again, reached at a smaller depth (rule 3)
    max_depth: int = 0
    cut: int = 0  # states outside the model's bounds (checked, not expanded)
    recovery_searches: int = 0  # liveness: continuations searched (rule 4)
    cpu_seconds: float = 0.0
    seconds: float = 0.0  # wall, beside the CPU seconds
    stopped: str = "exhausted"  # exhausted (the bounded search ended) | budget (max_states)
    found: tuple[Found, ...] = ()  # the first path to each property violated, in the order met
    sample: Sample = field(default_factory=lambda: np.empty(0, dtype=np.uint64))


def portable_fingerprinter(system: Any) -> Callable[[Sequence[Hashable]], npt.NDArray[np.int64]] | None:
    """Rule 5: fingerprints equal in every process for equal states, or None if the system's
    states are packed and it has neither a ``view`` to decode them nor ``PortableStates``."""
    if not isinstance(getattr(system, "state_width", None), int):
        return fingerprinter(system)  # canonical text of the state itself
    view = getattr(system, "view", None)  # the shipped worlds' decoding
    if not callable(view):
        if not offers(system, PortableStates):
            return None
        view = partial(export_state, system)  # the state's process-independent value
    canonical = Canonical()  # kept for the task: a state shares most of its decoded parts with others

    def portable(states: Sequence[Hashable]) -> npt.NDArray[np.int64]:
        return np.fromiter((digest64(canonical(view(s)).encode()) for s in states), dtype=np.int64,
                           count=len(states))

    return portable


def bottom(fingerprints: npt.NDArray[Any], k: int) -> Sample:
    """The ``k`` smallest distinct values of ``fingerprints`` as unsigned 64-bit ints, sorted."""
    values = np.unique(np.asarray(fingerprints).view(np.uint64) if np.asarray(fingerprints).dtype == np.int64
                       else np.asarray(fingerprints, dtype=np.uint64))
    return values[:k]


def merge_samples(a: Sample, b: Sample, k: int) -> Sample:
    """The sample of the union of two tasks' visited states (rule 5)."""
    return np.union1d(a, b)[:k]


def distinct_estimate(sample: Sample, k: int) -> tuple[int, bool]:
    """(distinct states, exact?) from a merged sample of size limit ``k``: exact while the union
    held fewer than ``k``; else the k-minimum-values estimate (k - 1) / (k-th smallest / 2^64)."""
    if len(sample) < k:
        return len(sample), True
    kth = (float(sample[k - 1]) + 1.0) / 2.0**64
    return round((k - 1) / kth), False


class Recovery:
    """Liveness (rule 4): can a fault-free continuation from a state reach a property's goal?

    Depth-first over fault-free successors, at most ``limit`` states a search. States found to
    recover (those on a path that reached the goal or a state already known to recover) are
    remembered, so later searches stop as soon as they meet one."""

    def __init__(self, system: TransitionSystem, prop: Liveness, limit: int, expand: Expand) -> None:
        self.system, self.prop, self.limit, self.expand = system, prop, limit, expand
        self.recovers: set[Hashable] = set()

    def reaches_goal(self, state: Hashable) -> bool:
        """False only if every fault-free continuation from ``state`` was searched (within the
        bounds and the limit) and none reaches the goal."""
        seen = {state}
        path: list[tuple[Hashable, list[Hashable]]] = []  # (state, successors left to try)
        current: Hashable | None = state
        while current is not None or path:
            if current is not None:
                node, current = current, None
                if node in self.recovers or self.prop.goal(node) or not self.system.within_bounds(node):
                    self.recovers.add(node)
                    self.recovers.update(s for s, _ in path)
                    return True
                afters, _, progress = self.expand([node])
                path.append((node, [a for a, ok in zip(afters, progress) if ok and a not in seen][::-1]))
                if len(seen) > self.limit:
                    return True
                continue
            left = path[-1][1]
            if not left:
                path.pop()
                continue
            current = left.pop()
            seen.add(current)
        return False


class _Frame:
    __slots__ = ("children", "state")

    def __init__(self, state: Hashable, children: list[Hashable]) -> None:
        self.state, self.children = state, children


class SwarmSearch:
    """One task's search (rules 3 and 4)."""

    def __init__(self, system: TransitionSystem, spec: TaskSpec, *, sample: int = 1 << 16,
                 properties: Sequence[Property] | None = None, recovery_states: int = 20_000,
                 check_deadlock: bool = True) -> None:
        self.system, self.spec, self.sample_size = system, spec, sample
        props = list(system.properties if properties is None else properties)
        self.always = [p for p in props if isinstance(p, Always)]
        self.check_deadlock = check_deadlock
        self.portable = portable_fingerprinter(system)
        self.expand: Expand = getattr(system, "expand_batch", None) or self._expand_generic
        self.recovery = [Recovery(system, p, recovery_states, self.expand) for p in props if isinstance(p, Liveness)]
        own = list(getattr(system, "properties", ()))
        key_of = getattr(system, "property_key", None)
        self.key_of = key_of if callable(key_of) and all(any(p is q for q in own) for p in self.always) else None
        self.failed: dict[Hashable, tuple[str, ...]] = {}
        self.rng = random.Random(spec.seed)
        self.ranks: list[float] = []  # ``permuted``: the rank of the successor at each position
        self.depth_of: dict[Hashable, int] = {}  # state -> smallest depth reached at
        self.new_states: list[Hashable] = []  # waiting for their portable fingerprints
        self.portables: list[npt.NDArray[np.int64]] = []
        self.result = TaskResult(spec)
        self.findings: dict[str, Found] = {}

    def _expand_generic(self, states: Sequence[Hashable]) -> tuple[list[Any], list[int], list[bool]]:
        afters: list[Hashable] = []
        counts: list[int] = []
        progress: list[bool] = []
        for state in states:
            if not self.system.within_bounds(state):
                counts.append(-1)
                continue
            before = len(afters)
            for action, after in self.system.successors(state):
                afters.append(after)
                progress.append(not self.system.is_fault(action))
            counts.append(len(afters) - before)
        return afters, counts, progress

    # -- checks --------------------------------------------------------------------------------
    def _violated(self, state: Hashable) -> tuple[str, ...]:
        """The ``Always`` properties false on ``state`` (evaluated once per property key)."""
        if self.key_of is None:
            return tuple(p.name for p in self.always if not p.holds(state))
        key = self.key_of(state)
        failed = self.failed.get(key)
        if failed is None:
            failed = self.failed[key] = tuple(p.name for p in self.always if not p.holds(state))
        return failed

    # -- the search ----------------------------------------------------------------------------
    def _order(self, afters: list[Hashable]) -> list[Hashable]:
        """Rule 3: the distinct successors in the task's order, last first (they are popped)."""
        children = list(dict.fromkeys(afters))
        if self.spec.order == "permuted":
            while len(self.ranks) < len(afters):
                self.ranks.append(self.rng.random())
            ranks = self.ranks
            position = {child: i for i, child in reversed(list(enumerate(afters)))}
            children.sort(key=lambda child: ranks[position[child]], reverse=True)
        else:
            self.rng.shuffle(children)
        return children

    def run(self) -> TaskResult:
        started, wall = time.process_time(), time.perf_counter()
        try:
            self._search(self.system.init_states()[0])  # traces replay from the first initial state
        finally:
            self._flush_portables()
            self.result.cpu_seconds = time.process_time() - started
            self.result.seconds = time.perf_counter() - wall
        self.result.found = tuple(self.findings.values())
        if self.portables:
            self.result.sample = bottom(np.concatenate(self.portables), self.sample_size)
        return self.result

    def _visit(self, state: Hashable, depth: int) -> bool | None:
        """Record ``state`` reached at ``depth``: None if it needs no search (reached before at a
        depth no larger), else whether it is new."""
        before = self.depth_of.get(state)
        if before is not None and before <= depth:
            return None
        self.depth_of[state] = depth
        if before is not None:
            self.result.revisits += 1
            return False
        self.result.states += 1
        self.result.max_depth = max(self.result.max_depth, depth)
        if self.portable is not None:
            self.new_states.append(state)
            if len(self.new_states) >= 4096:
                self._flush_portables()
        return True

    def _flush_portables(self) -> None:
        if self.new_states and self.portable is not None:
            self.portables.append(self.portable(self.new_states))
            if sum(len(p) for p in self.portables) > 4 * self.sample_size:  # keep only what may stay
                self.portables = [bottom(np.concatenate(self.portables), self.sample_size).view(np.int64)]
        self.new_states = []

    def _search(self, init: Hashable) -> None:
        self._visit(init, 0)
        path: list[Hashable] = [init]
        first = self._enter(init, 0, True, path)
        stack: list[_Frame] = [first] if first is not None else []
        while stack and self.result.states < self.spec.max_states:
            children = stack[-1].children
            if not children:
                stack.pop()
                path.pop()
                continue
            child = children.pop()
            depth = len(stack)
            new = self._visit(child, depth)
            if new is None:
                continue
            path.append(child)
            entered = self._enter(child, depth, new, path)
            if entered is None:
                path.pop()
            else:
                stack.append(entered)
        if self.result.states >= self.spec.max_states:
            self.result.stopped = "budget"

    def _enter(self, state: Hashable, depth: int, new: bool, path: list[Hashable]) -> _Frame | None:
        """Check and expand a state being searched: its frame, or None when it is a leaf."""
        result = self.result
        if new:
            for prop in self._violated(state):
                self._found(prop, "always", path)
        if not self.system.within_bounds(state):
            result.cut += new
            return None
        bounded = depth >= self.spec.depth
        afters = [] if bounded else self.expand([state])[0]
        if new and not afters and not bounded and self.check_deadlock and not self.system.accepts_end(state):
            self._found("deadlock", "deadlock", path)
        if new and self.recovery and (bounded or not afters or self.rng.random() < self.spec.liveness_rate):
            result.recovery_searches += 1
            for recovery in self.recovery:
                if recovery.prop.name not in self.findings and not recovery.reaches_goal(state):
                    self._found(recovery.prop.name, "liveness", path)
        if not afters:
            return None
        result.transitions += len(afters)
        return _Frame(state, self._order(afters))

    def _found(self, prop: str, kind: str, path: list[Hashable]) -> None:
        """The first path to a violation of ``prop`` this task met."""
        if prop not in self.findings:
            self.findings[prop] = Found(prop, kind, actions_of(self.system, path))


def actions_of(system: TransitionSystem, states: Sequence[Hashable]) -> tuple[dict[str, Any], ...]:
    """The actions (JSON) that lead along ``states`` (the first an initial state): each step is the
    first enabled action whose successor is the next state."""
    actions = []
    for before, after in itertools.pairwise(states):
        action = next((a for a, s in system.successors(before) if s == after), None)
        if action is None:
            raise RuntimeError("the model is nondeterministic: a searched successor was not regenerated")
        actions.append(system.action_to_json(action))
    return tuple(actions)


def run_task(system: TransitionSystem, spec: TaskSpec, **options: Any) -> TaskResult:
    """One task of the swarm on ``system`` (options: those of ``SwarmSearch``)."""
    return SwarmSearch(system, spec, **options).run()
