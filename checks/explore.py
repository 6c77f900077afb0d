"""Exhaustive breadth-first exploration of a ``TransitionSystem``: safety, witnesses, liveness.

Rules
-----
1. Protocol-agnostic: this module sees states, actions and properties through ``checks/system.py``.
2. States are stored as 64-bit fingerprints (Python's ``hash`` of the state, which is stable for
   tuples of ints) in a ``FingerprintSet``, with one parent index per state. Full states live only
   in the BFS frontier. A counterexample is rebuilt by walking the parent indices back to the
   initial state and replaying forward, matching each step by fingerprint (as TLC does).
3. BFS explores by depth, so the first violating state found has a shortest path.
4. A fingerprint collision would merge two states; the report gives the probability bound
   (n^2 / 2^65) next to the verdict.
5. A state outside the model's bounds is checked but not expanded, and counted as *cut*; a verdict
   reached with cut states says so.
"""

from __future__ import annotations

import resource
import time
from array import array
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from checks.fpset import FingerprintSet
from checks.liveness import unrecoverable_states
from checks.system import Always, Liveness, Property, Sometimes, TransitionSystem

CHUNK = 2048  # frontier states expanded between two batch look-ups


@dataclass
class Stats:
    distinct: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    cut: int = 0
    max_frontier: int = 0
    complete: bool = False  # every reachable state within bounds was expanded
    peak_rss_growth_mb: float = 0.0

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        return float(self.distinct) ** 2 / 2.0**65


@dataclass
class Finding:
    """A property that does not hold, with the state that shows it (by discovery index)."""

    prop: str
    kind: str  # always | sometimes | liveness | deadlock
    state_index: int  # -1 for a Sometimes never witnessed
    path: list[tuple[Hashable, Hashable]] = field(default_factory=list)  # (action, state after)


@dataclass
class Result:
    system_name: str
    stats: Stats
    findings: list[Finding]
    witnessed: dict[str, int]  # Sometimes property -> index of a witness state
    initial: Hashable | None = None

    def first(self) -> Finding | None:
        return self.findings[0] if self.findings else None


Progress = Callable[[Stats, int], None]  # (stats so far, frontier size)


class _Search:
    def __init__(self, system: TransitionSystem, properties: Sequence[Property], *,
                 stop_at_first: bool, max_states: int, check_deadlock: bool, progress: Progress | None) -> None:
        self.system = system
        self.always = [p for p in properties if isinstance(p, Always)]
        self.sometimes = [p for p in properties if isinstance(p, Sometimes)]
        self.liveness = [p for p in properties if isinstance(p, Liveness)]
        self.stop_at_first, self.max_states = stop_at_first, max_states
        self.check_deadlock, self.progress = check_deadlock, progress
        self.seen = FingerprintSet()
        self.parents = array("i")
        self.fingerprints = array("q")
        self.stats = Stats()
        self.findings: list[Finding] = []
        self.witnessed: dict[str, int] = {}
        self.violated: set[str] = set()
        # for liveness: edges that a recovery may use, the goal states and the cut states
        self.edges_from, self.edges_to = array("i"), array("i")
        self.goal: dict[str, array[int]] = {p.name: array("i") for p in self.liveness}
        self.cut_states = array("i")

    def _check(self, state: Hashable, index: int) -> None:
        for always in self.always:
            if always.name not in self.violated and not always.holds(state):
                self.violated.add(always.name)
                self.findings.append(Finding(always.name, "always", index))
        for sometimes in self.sometimes:
            if sometimes.name not in self.witnessed and sometimes.holds(state):
                self.witnessed[sometimes.name] = index
        for liveness in self.liveness:
            if liveness.goal(state):
                self.goal[liveness.name].append(index)

    def _stop(self) -> bool:
        return (self.stop_at_first and bool(self.findings)) or self.stats.distinct >= self.max_states

    def run(self) -> list[Hashable]:
        init = list(dict.fromkeys(self.system.init_states()))
        fps = np.array([hash(s) for s in init], dtype=np.int64)
        self.seen.add_new(fps, 0)
        self.parents.extend([-1] * len(init))
        self.fingerprints.extend(fps.tolist())
        self.stats.distinct = len(init)
        for index, state in enumerate(init):
            self._check(state, index)
        frontier = [(s, i) for i, s in enumerate(init)]
        started, last_report = time.perf_counter(), 0.0
        stopped = self._stop()
        leftover = False  # part of a level was never expanded
        while frontier and not stopped:
            next_frontier: list[tuple[Hashable, int]] = []
            for start in range(0, len(frontier), CHUNK):
                self._expand(frontier[start:start + CHUNK], next_frontier)
                now = time.perf_counter()
                self.stats.seconds = now - started
                if self.progress and now - last_report > 0.5:
                    last_report = now
                    self.progress(self.stats, len(frontier) - start + len(next_frontier))
                if self._stop():
                    stopped = True
                    leftover = start + CHUNK < len(frontier)
                    break
            if next_frontier:
                self.stats.depth += 1
            self.stats.max_frontier = max(self.stats.max_frontier, len(next_frontier))
            frontier = next_frontier
        self.stats.seconds = time.perf_counter() - started
        self.stats.complete = not frontier and not leftover
        return init

    def _expand(self, chunk: list[tuple[Hashable, int]], next_frontier: list[tuple[Hashable, int]]) -> None:
        system = self.system
        states: list[Hashable] = []
        hashes: list[int] = []
        parents: list[int] = []
        recovering: list[int] = []  # candidate positions of fault-free edges (liveness only)
        want_edges = bool(self.liveness)
        for state, index in chunk:
            if not system.within_bounds(state):
                self.stats.cut += 1
                self.cut_states.append(index)
                continue
            count = 0
            for action, after in system.successors(state):
                states.append(after)
                hashes.append(hash(after))
                parents.append(index)
                if want_edges and not system.is_fault(action):
                    recovering.append(len(states) - 1)
                count += 1
            if (count == 0 and self.check_deadlock and "deadlock" not in self.violated
                    and not system.accepts_end(state)):
                self.violated.add("deadlock")
                self.findings.append(Finding("deadlock", "deadlock", index))
        self.stats.transitions += len(states)
        if not states:
            return
        fps = np.array(hashes, dtype=np.int64)
        unique, first = np.unique(fps, return_index=True)
        known = self.seen.lookup(unique)
        fresh = np.sort(first[known < 0])
        base = self.stats.distinct
        self.seen.add_new(fps[fresh], base)
        self.fingerprints.extend(fps[fresh].tolist())
        for offset, position in enumerate(fresh.tolist()):
            state = states[position]
            self.parents.append(parents[position])
            next_frontier.append((state, base + offset))
            self._check(state, base + offset)
        self.stats.distinct += len(fresh)
        if want_edges and recovering:
            targets = self.seen.lookup(fps[recovering])
            self.edges_from.extend(parents[p] for p in recovering)
            self.edges_to.extend(targets.tolist())


def explore(system: TransitionSystem, properties: Sequence[Property] | None = None, *,
            stop_at_first: bool = True, max_states: int = 50_000_000, check_deadlock: bool = True,
            progress: Progress | None = None) -> Result:
    """Explore every reachable state breadth-first and check ``properties`` (default: all)."""
    props = list(system.properties if properties is None else properties)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    search = _Search(system, props, stop_at_first=stop_at_first, max_states=max_states,
                     check_deadlock=check_deadlock, progress=progress)
    init = search.run()
    search.stats.peak_rss_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    findings = search.findings
    for prop in search.sometimes:
        if prop.name not in search.witnessed and search.stats.complete:
            findings.append(Finding(prop.name, "sometimes", -1))
    if search.liveness and search.stats.complete and not (findings and stop_at_first):
        findings.extend(_liveness_findings(search))
    result = Result(system.name, search.stats, findings, search.witnessed, init[0] if init else None)
    for finding in findings:
        if finding.state_index >= 0:
            finding.path = rebuild_path(system, search.parents, search.fingerprints, finding.state_index, init)
    return result


def _liveness_findings(search: _Search) -> list[Finding]:
    findings = []
    for prop in search.liveness:
        stuck = unrecoverable_states(search.stats.distinct, search.edges_from, search.edges_to,
                                     search.goal[prop.name], search.cut_states)
        if stuck >= 0:
            findings.append(Finding(prop.name, "liveness", stuck))
    return findings


def rebuild_path(system: TransitionSystem, parents: array[int], fingerprints: array[int], index: int,
                 init: Sequence[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """The path from an initial state to state ``index``: walk the parent indices back, then
    replay forward choosing at each step the successor with the recorded fingerprint."""
    chain = []
    while index >= len(init):
        chain.append(index)
        index = parents[index]
    state = init[index]
    path: list[tuple[Hashable, Hashable]] = []
    for step in reversed(chain):
        for action, after in system.successors(state):
            if hash(after) == fingerprints[step]:
                path.append((action, after))
                state = after
                break
        else:
            raise RuntimeError("the model is nondeterministic: a recorded successor was not regenerated "
                               "(successors() must yield the same actions in the same order every time)")
    return path
