"""Exhaustive breadth-first exploration of a ``TransitionSystem``: safety, witnesses, liveness.

Rules
-----
1. Protocol-agnostic: this module sees states, actions and properties through
   ``checks/explore/system.py``.
2. States are stored as 64-bit fingerprints (``checks/explore/fingerprint.py``: a real hash of a
   canonical encoding, never Python's ``hash``) in a ``FingerprintSet``, with one parent index per
   state. Full states live only in the BFS frontier. A counterexample is rebuilt by walking the
   parent indices back to the initial state and replaying forward, matching each step by
   fingerprint (as TLC does).
3. BFS explores by depth, so the first violating state found has a shortest path. Ctrl-C
   (``KeyboardInterrupt``) ends the search with what was explored so far (``Stats.interrupted``):
   the safety findings up to then stand, liveness is not judged. While a search runs in the main
   thread, SIGINT also sets a flag that the search reads after every chunk: an interrupt that
   Python swallowed (raised inside a generator's finalizer, "Exception ignored in ...") still stops it.
4. A fingerprint collision would merge two states; the report gives the probability bound
   (n(n - 1) / 2^65) next to the verdict.
5. A state outside the model's bounds is checked but not expanded, and counted as *cut*; a verdict
   reached with cut states says so. Liveness gives a cut state the benefit of the doubt (its
   continuations are unknown); for each liveness property that holds, ``Stats.liveness_through_cuts``
   counts the expanded states that reach its goal only through a cut state (0: the verdict leans on
   no cut state but for the cut states' own futures, which every bounded check leaves open).
6. The optional capabilities of ``checks/explore/system.py`` are used when the system offers them: batch
   expansion (no action objects, fault flags in bulk), packed frontier levels (4 bytes per int of a
   state, ``checks/explore/frontier.py``) and property keys (each property evaluated once per key). Every
   system gets the same pipeline: a chunk of the frontier is expanded into its successor states,
   fingerprinted and looked up in bulk, and the new ones are numbered, checked and queued.
7. Symmetry (``checks/explore/system.py`` ``Symmetric``, on unless ``symmetry=False``): every
   successor is replaced by the representative of its orbit before it is fingerprinted, so one
   state per orbit is explored; the symmetries are automorphisms of the labelled system, so the
   quotient is bisimilar to it and every verdict (safety, deadlock, witnesses, AG EF liveness on
   the fault-free subgraph) and every breadth-first depth is the same (the argument is in
   ``models/symmetry.py``). Counterexamples are rebuilt on the unreduced system: each step takes
   the successor whose representative has the recorded fingerprint. ``Stats.unreduced`` sums
   the orbit sizes: the number of states of the unreduced system, exactly, when the search is
   complete.
8. Memory per state: 12.2 to 13.8 bytes in the fingerprint set (a bucketed cuckoo table:
   constant-time lookups at any size, ``checks/explore/fpset.py``), 4 for the parent index, and for liveness
   4 for its recovery-edge count plus 4 per recovery edge (targets; the sources are implied by the
   counts, as states are expanded in index order). The fingerprint of a state is read back from the
   fingerprint set when a counterexample is rebuilt.
9. Partial-order reduction (``partial_order=True``, a system offering ``PersistentSets``): each
   expanded state keeps only the successors of its persistent set unless a proviso makes it take
   all (``checks/explore/reduction.py``, with the argument that every verdict is kept). Symmetry
   is then off; depths are those of the reduced graph, so a counterexample may not be shortest.
10. Growth (``checks/explore/growth.py``): at the end of every level the search projects the next
   levels at the current rate (``Stats.projection``); the first time the projection passes
   ``max_states`` or ``time_limit`` it records an ``Alarm`` with the budgets a sample of that level
   has used, and reports progress at once. ``time_limit`` (CPU seconds of the search's process and
   its workers, never wall time) stops a search as ``max_states`` does: the search is incomplete
   (``Stats.stopped_by``); it never decides a verdict, and a violation found before stands.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import threading
import time
from array import array
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from checks.explore.fingerprint import Fingerprints, collision_probability, fingerprinter
from checks.explore.fpset import FingerprintSet
from checks.explore.frontier import Level, new_level
from checks.explore.growth import Alarm, Projection, budget_sample, project
from checks.explore.liveness import RecoveryRows
from checks.explore.reduction import PartialOrderCounts, choose, offers_persistent_sets
from checks.explore.system import Always, Liveness, Property, Sometimes, TransitionSystem

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
    interrupted: bool = False  # stopped by Ctrl-C (KeyboardInterrupt): a partial search
    levels: list[int] = field(default_factory=list)  # distinct new states per BFS level (level 0: initial)
    # an incomplete search: per deepest level (depth, {budget: (mean used, budget)}) over a sample of its states
    budgets: list[tuple[int, dict[str, tuple[float, int]]]] = field(default_factory=list)
    symmetry_group: int = 1  # order of the symmetry group used (1: none)
    unreduced: int = 0  # states of the unreduced system the explored ones stand for (sum of orbit sizes)
    # per liveness property that holds: states that reach its goal only through a cut state (rule 5)
    liveness_through_cuts: dict[str, int] = field(default_factory=dict)
    partial_order: PartialOrderCounts | None = None  # rule 9: None when the search did not reduce
    cpu_seconds: float = 0.0  # CPU time of the search: this process's and its worker processes'
    level_cpu: list[float] = field(default_factory=list)  # per complete level of ``levels``: CPU seconds then
    stopped_by: str = ""  # what stopped a search early: max_states | time_limit | violation | interrupted
    projection: Projection | None = None  # rule 10: at the last complete level
    alarm: Alarm | None = None  # rule 10: the first projection that passed a budget
    worker_processes: int = 0  # processes that expanded states besides this one (checks/explore/workers.py)

    @property
    def reduction(self) -> float:
        """How many times fewer states symmetry left to explore."""
        return self.unreduced / self.distinct if self.distinct else 1.0

    @property
    def states_per_second(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else 0.0

    @property
    def collision_probability(self) -> float:
        """The probability that a fingerprint collision merged two of the distinct states."""
        return collision_probability(self.distinct)



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
_Verdict = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # (failed Always, held Sometimes, goals)
_NOTHING: _Verdict = ((), (), ())


class _Search:
    def __init__(self, system: TransitionSystem, properties: Sequence[Property], *,
                 stop_at_first: bool, max_states: int, check_deadlock: bool, progress: Progress | None,
                 symmetry: bool = True, partial_order: bool = False, time_limit: float | None = None) -> None:
        self.system = system
        self.time_limit = time_limit
        self.cpu_started = time.process_time()
        self.always = [p for p in properties if isinstance(p, Always)]
        self.sometimes = [p for p in properties if isinstance(p, Sometimes)]
        self.liveness = [p for p in properties if isinstance(p, Liveness)]
        self.stop_at_first, self.max_states = stop_at_first, max_states
        self.ctrl_c = False  # SIGINT seen during the search (rule 3)
        self.check_deadlock, self.progress = check_deadlock, progress
        self.seen = FingerprintSet()
        self.fingerprints = fingerprinter(system)
        self.parents = array("i")
        self.stats = Stats()
        self.findings: list[Finding] = []
        self.witnessed: dict[str, int] = {}
        self.violated: set[str] = set()
        # for liveness: per expanded state (in index order) how many recovery edges leave it, their
        # targets, the goal states and the cut states
        self.edge_counts, self.edge_targets = array("H"), array("i")  # counts widen to "I" if needed
        self.goal: dict[str, array[int]] = {p.name: array("i") for p in self.liveness}
        self.cut_states = array("i")
        self.expand_batch: Callable[[Sequence[Hashable]], tuple[list[Hashable], list[int], list[bool]]] = \
            getattr(system, "expand_batch", None) or self._expand_generic
        width = getattr(system, "state_width", None)
        self.width = width if isinstance(width, int) else None
        own = list(getattr(system, "properties", ()))
        key_of = getattr(system, "property_key", None)
        self.key_of = key_of if callable(key_of) and all(any(p is q for q in own) for p in properties) else None
        self.verdicts: dict[Hashable, _Verdict] = {}
        self.deepest: list[tuple[int, Level]] = []  # (depth, level) where the search stopped
        canonical = getattr(system, "canonical_batch", None)
        group = getattr(system, "symmetry_group_size", 1) if callable(canonical) else 1
        # representatives: rows of an array for packed states (MemberSymmetry.canonical_batch), tuples otherwise
        self.canonical: Callable[[Sequence[Hashable]], tuple[Any, list[int]]] | None = \
            canonical if symmetry and isinstance(group, int) and group > 1 else None
        if self.canonical is not None and self.width is None:  # rows are for packed states only
            self.canonical = _as_tuples(self.canonical)
        if partial_order:  # rule 9
            if not offers_persistent_sets(system):
                raise ValueError(f"{system.name}: the model offers no persistent sets (partial-order reduction)")
            self.canonical = None
            self.stats.partial_order = PartialOrderCounts()
        self.stats.symmetry_group = group if self.canonical else 1

    def representatives(self, states: Sequence[Hashable]) -> Fingerprints:
        """The fingerprints under which ``states`` are stored: those of their orbits'
        representatives (of the states themselves without symmetry)."""
        if self.canonical is None:
            return self.fingerprints(states)
        return self.fingerprints(self.canonical(states)[0])

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

    def _check_all(self, states: Sequence[Hashable], first: int) -> None:
        """Check ``states``, numbered from ``first``; once per property key if the system has one."""
        key_of = self.key_of
        if key_of is None:
            for offset, state in enumerate(states):
                self._check(state, first + offset)
            return
        verdicts = self.verdicts
        for offset, state in enumerate(states):
            key = key_of(state)
            verdict = verdicts.get(key)
            if verdict is None:
                verdict = verdicts[key] = self._verdict(state)
            if verdict is not _NOTHING:
                self._record(verdict, first + offset)

    def _verdict(self, state: Hashable) -> _Verdict:
        verdict = (tuple(p.name for p in self.always if not p.holds(state)),
                   tuple(p.name for p in self.sometimes if p.holds(state)),
                   tuple(p.name for p in self.liveness if p.goal(state)))
        return _NOTHING if verdict == _NOTHING else verdict

    def _record(self, verdict: _Verdict, index: int) -> None:
        failed, witnessed, goals = verdict
        for name in failed:
            if name not in self.violated:
                self.violated.add(name)
                self.findings.append(Finding(name, "always", index))
        for name in witnessed:
            if name not in self.witnessed:
                self.witnessed[name] = index
        for name in goals:
            self.goal[name].append(index)

    def _stop(self) -> bool:
        stats = self.stats
        if self.stop_at_first and self.findings:
            stats.stopped_by = "violation"
        elif self.ctrl_c:
            stats.stopped_by = "interrupted"
        elif stats.distinct >= self.max_states:
            stats.stopped_by = "max_states"
        elif self.time_limit is not None and stats.cpu_seconds >= self.time_limit:
            stats.stopped_by = "time_limit"
        return bool(stats.stopped_by)

    @contextlib.contextmanager
    def _flagging_ctrl_c(self) -> Iterator[None]:
        """Rule 3: SIGINT raises ``KeyboardInterrupt`` as Python's own handler does, and sets ``ctrl_c``."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_sigint(signum: int, frame: Any) -> None:
            self.ctrl_c = True
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def run(self) -> list[Hashable]:
        init = list(dict.fromkeys(self.system.init_states()))
        if self.canonical is not None:  # one initial state per orbit; the path starts from the state itself
            representatives, orbits = _as_tuples(self.canonical)(init)
            first: dict[Hashable, tuple[Hashable, int]] = {}
            for key, state, orbit in zip(representatives, init, orbits):
                first.setdefault(key, (state, orbit))  # the first initial state of each orbit
            init = [state for state, _ in first.values()]
            self.stats.unreduced = sum(orbit for _, orbit in first.values())
        else:
            self.stats.unreduced = len(init)
        fps = self.representatives(init)
        self.seen.add_new(fps, 0)
        self.parents.extend([-1] * len(init))
        self.stats.distinct = len(init)
        frontier = new_level(self.width)
        frontier.extend(init)
        self._check_all(init, 0)
        started = time.perf_counter()
        self.cpu_started = time.process_time()
        self.stats.levels.append(len(init))
        self.stats.level_cpu.append(0.0)
        try:
            with self._flagging_ctrl_c():
                leftover = self._levels(frontier, 0, started)
        except KeyboardInterrupt:
            self.stats.interrupted, leftover = True, True
        if self.ctrl_c:  # an interrupt swallowed on the way still counts
            self.stats.interrupted, leftover = True, True
        if self.stats.interrupted:
            self.stats.stopped_by = "interrupted"
        self.stats.seconds = time.perf_counter() - started
        self.stats.cpu_seconds = self.cpu()
        self.stats.complete = not leftover
        return init

    def begin_level(self, frontier: Level, first: int) -> None:
        """Called before the chunks of ``frontier`` (its first state numbered ``first``) are expanded,
        in order: a subclass may start expanding them elsewhere (``checks/explore/workers.py``)."""

    def _levels(self, frontier: Level, first: int, started: float) -> bool:
        """Expand level after level from ``frontier`` (its first state numbered ``first``); True if
        the search stopped with states left to expand."""
        last_report = 0.0
        stopped = self._stop()
        leftover = bool(len(frontier)) and stopped
        while len(frontier) and not stopped:
            next_frontier = new_level(self.width)
            next_first = self.stats.distinct
            self.begin_level(frontier, first)
            for start in range(0, len(frontier), CHUNK):
                self._expand(frontier.chunk(start, start + CHUNK), first + start, next_frontier)
                now = time.perf_counter()
                self.stats.seconds = now - started
                self.stats.cpu_seconds = self.cpu()
                if self.progress and now - last_report > 0.5:
                    last_report = now
                    self.progress(self.stats, len(frontier) - start + len(next_frontier))
                if self._stop():
                    stopped = True
                    leftover = start + CHUNK < len(frontier)
                    break
            if len(next_frontier):
                self.stats.depth += 1
                self.stats.levels.append(len(next_frontier))
                if not stopped:  # a level cut short is no complete level of the projection
                    self.stats.level_cpu.append(self.stats.cpu_seconds)
                    self._project(next_frontier)
            self.stats.max_frontier = max(self.stats.max_frontier, len(next_frontier))
            if stopped:
                self.deepest = [(self.stats.depth - (1 if len(next_frontier) else 0), frontier),
                                (self.stats.depth, next_frontier)]
            frontier, first = next_frontier, next_first
        return leftover or bool(len(frontier))

    def _project(self, level: Level) -> None:
        """Rule 10, at the end of a level (``level``, the one just generated)."""
        stats = self.stats
        stats.projection = project(stats.levels, stats.level_cpu, distinct=stats.distinct, cpu=stats.cpu_seconds,
                                   max_states=self.max_states, time_limit=self.time_limit)
        if stats.alarm is None and stats.projection is not None and stats.projection.alarm is not None:
            usage = self._budget_sample(level)
            stats.alarm = Alarm(stats.projection.alarm, stats.projection, stats.cpu_seconds,
                                None if usage is None else (stats.depth, usage))
            if self.progress:
                self.progress(stats, len(level))

    def _budget_sample(self, level: Level, sample: int = 2000) -> dict[str, tuple[float, int]] | None:
        """The mean use of each budget (``BudgetUsage``) over a sample of ``level``'s states; None
        when the system reports none."""
        usage = getattr(self.system, "budget_usage", None)
        if not callable(usage) or not len(level):
            return None
        step = max(1, len(level) // sample)
        return budget_sample(usage, [s for start in range(0, len(level), step) for s in level.chunk(start, start + 1)])

    def budget_report(self) -> None:
        """``Stats.budgets`` for the levels the search stopped in (``BudgetUsage``)."""
        for depth, level in self.deepest:
            usage = self._budget_sample(level)
            if usage is not None:
                self.stats.budgets.append((depth, usage))

    def cpu(self) -> float:
        """CPU seconds of the search so far: this process's since it started, and its helpers'."""
        return time.process_time() - self.cpu_started + self.helpers_cpu()

    def helpers_cpu(self) -> float:
        """CPU seconds of the processes working for this search while they run (a subclass's
        workers); once they have ended ``explore`` counts them from the children's usage."""
        return 0.0

    def _expand_generic(self, chunk: Sequence[Hashable]) -> tuple[list[Hashable], list[int], list[bool]]:
        """``BatchExpansion.expand_batch`` from the ``TransitionSystem`` methods."""
        system = self.system
        afters: list[Hashable] = []
        counts: list[int] = []
        progress: list[bool] = []
        want_edges = bool(self.liveness)
        for state in chunk:
            if not system.within_bounds(state):
                counts.append(-1)
                continue
            before = len(afters)
            for action, after in system.successors(state):
                afters.append(after)
                progress.append(want_edges and not system.is_fault(action))
            counts.append(len(afters) - before)
        return afters, counts, progress

    def _expand_reduced(self, chunk: Sequence[Hashable], first: int
                        ) -> tuple[list[Hashable], list[int], list[bool], Fingerprints]:
        """Rule 9: the successors of ``chunk`` that the persistent sets and provisos keep."""
        assert self.stats.partial_order is not None
        afters, counts, progress, candidates = self.system.expand_persistent(chunk)  # type: ignore[attr-defined]
        fps = self.fingerprints(afters)
        want_edges = bool(self.liveness)
        if not any(candidates):  # every state takes all its successors
            self.stats.partial_order.full_none += sum(1 for c in counts if c > 1)
            return afters, counts, [want_edges and p for p in progress], fps
        keep = choose(counts, progress, candidates, self.seen.lookup(fps), first, afters,
                      self.system.within_bounds, self.stats.partial_order)
        ends = np.cumsum([max(c, 0) for c in counts])
        taken = np.concatenate(([0], np.cumsum(keep)))
        counts = [c if c <= 0 else int(taken[end] - taken[end - c]) for c, end in zip(counts, ends.tolist())]
        chosen = np.flatnonzero(keep).tolist()
        return [afters[j] for j in chosen], counts, [want_edges and progress[j] for j in chosen], fps[keep]

    def _expand(self, chunk: Sequence[Hashable], first: int, next_frontier: Level) -> None:
        """Expand the states ``chunk``, numbered from ``first``; new states go to ``next_frontier``."""
        orbits: list[int] = []
        if self.stats.partial_order is not None:
            afters, counts, progress, fps = self._expand_reduced(chunk, first)
        else:
            afters, counts, progress = self.expand_batch(chunk)
            if self.canonical is not None:
                afters, orbits = self.canonical(afters)
            fps = self.fingerprints(afters)
        per_state = np.array(counts, dtype=np.int64)
        self._cut_and_deadlocks(chunk, per_state, first)
        self.stats.transitions += len(afters)
        np.maximum(per_state, 0, out=per_state)
        unique, first_at, inverse = np.unique(fps, return_index=True, return_inverse=True)
        index_of = self.seen.lookup(unique)
        new = np.flatnonzero(index_of < 0)
        order = np.argsort(first_at[new])
        fresh = first_at[new][order]  # positions in ``afters`` of the new states, in order
        base = self.stats.distinct
        index_of[new[order]] = np.arange(base, base + len(fresh))
        self.seen.add_new(fps[fresh], base)
        owner = np.repeat(np.arange(len(chunk), dtype=np.int32), per_state)  # position of each parent in chunk
        self.parents.frombytes((owner[fresh] + np.int32(first)).astype(np.int32).tobytes())
        if isinstance(afters, np.ndarray):  # representatives as rows (a symmetric system's)
            states: list[Any] = list(map(tuple, afters[fresh].tolist()))
        else:
            states = [afters[p] for p in fresh.tolist()]
        next_frontier.extend(states)
        self.stats.distinct += len(fresh)
        self.stats.unreduced += sum(orbits[p] for p in fresh.tolist()) if orbits else len(fresh)
        self._check_all(states, base)
        if self.liveness:
            recovering = np.flatnonzero(np.array(progress, dtype=bool))
            self._record_edges(np.bincount(owner[recovering], minlength=len(chunk)),
                               index_of[inverse[recovering]])

    def _record_edges(self, per_state: npt.NDArray[np.int64], targets: npt.NDArray[np.int64]) -> None:
        if self.edge_counts.typecode == "H" and len(per_state) and per_state.max() > 0xFFFF:
            self.edge_counts = array("I", self.edge_counts)
        dtype = np.uint16 if self.edge_counts.typecode == "H" else np.uint32
        self.edge_counts.frombytes(per_state.astype(dtype).tobytes())
        self.edge_targets.frombytes(targets.astype(np.int32).tobytes())

    def _cut_and_deadlocks(self, chunk: Sequence[Hashable], per_state: npt.NDArray[np.int64], first: int) -> None:
        for position in np.flatnonzero(per_state <= 0).tolist():
            index = first + position
            if per_state[position] < 0:
                self.stats.cut += 1
                self.cut_states.append(index)
            elif (self.check_deadlock and "deadlock" not in self.violated
                  and not self.system.accepts_end(chunk[position])):
                self.violated.add("deadlock")
                self.findings.append(Finding("deadlock", "deadlock", index))


Search = _Search  # public: ``explore(search_type=...)`` takes a subclass (checks/explore/workers.py)


def explore(system: TransitionSystem, properties: Sequence[Property] | None = None, *,
            stop_at_first: bool = True, max_states: int = 50_000_000, check_deadlock: bool = True,
            progress: Progress | None = None, symmetry: bool = True, partial_order: bool = False,
            search_type: Callable[..., Search] | None = None, time_limit: float | None = None) -> Result:
    """Explore every reachable state breadth-first and check ``properties`` (default: all); one
    state per orbit if the system is ``Symmetric`` and ``symmetry`` is on; with ``partial_order``,
    the successors of persistent sets only (rule 9); stopped, incomplete, after ``time_limit``
    CPU seconds (rule 10)."""
    props = list(system.properties if properties is None else properties)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu_before = time.process_time() + _children_cpu()
    search = (search_type or Search)(system, props, stop_at_first=stop_at_first, max_states=max_states,
                     check_deadlock=check_deadlock, progress=progress, symmetry=symmetry,
                     partial_order=partial_order, time_limit=time_limit)
    init = search.run()
    search.stats.cpu_seconds = time.process_time() + _children_cpu() - cpu_before  # the workers ended with run()
    search.verdicts.clear()
    if not search.stats.complete and not search.stats.interrupted:
        search.budget_report()
    search.stats.peak_rss_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    findings = search.findings
    if search.stats.interrupted:  # a chunk may have been cut short: keep what was fully recorded
        findings[:] = [f for f in findings if f.state_index < len(search.parents)]
        search.stats.distinct = min(search.stats.distinct, len(search.parents))
    if search.liveness and search.stats.complete and not (findings and stop_at_first):
        findings.extend(_liveness_findings(search))  # before a missing witness: a trace says more
    for prop in search.sometimes:
        if prop.name not in search.witnessed and search.stats.complete:
            findings.append(Finding(prop.name, "sometimes", -1))
    result = Result(system.name, search.stats, findings, search.witnessed, init[0] if init else None)
    for finding in findings:
        if finding.state_index >= 0:
            finding.path = rebuild_path(system, search.parents, _StoredFingerprints(search.seen),
                                        finding.state_index, init, search.representatives)
    return result


def _children_cpu() -> float:
    """CPU seconds of this process's ended (waited-for) child processes."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def _as_tuples(canonical: Callable[[Sequence[Hashable]], tuple[Any, list[int]]]
               ) -> Callable[[Sequence[Hashable]], tuple[list[Hashable], list[int]]]:
    """``canonical`` with representatives given as rows of an array turned into tuples."""
    def tuples(states: Sequence[Hashable]) -> tuple[list[Hashable], list[int]]:
        representatives, sizes = canonical(states)
        if isinstance(representatives, np.ndarray):
            return list(map(tuple, representatives.tolist())), sizes
        return list(representatives), sizes

    return tuples


def _liveness_findings(search: _Search) -> list[Finding]:
    count = search.stats.distinct
    graph = RecoveryRows(count, search.edge_counts, search.edge_targets)
    findings = []
    for prop in search.liveness:
        stuck = graph.unrecoverable(search.goal[prop.name], search.cut_states)
        if stuck >= 0:
            findings.append(Finding(prop.name, "liveness", stuck))
        elif len(search.cut_states):
            strict = graph.recoverable(search.goal[prop.name], array("i"))
            strict[np.frombuffer(search.cut_states, dtype=np.int32)] = True  # the boundary itself: not counted
            search.stats.liveness_through_cuts[prop.name] = int(count - np.count_nonzero(strict))
    return findings


class _StoredFingerprints:
    """The fingerprint of each state index, read back from the fingerprint set."""

    def __init__(self, seen: FingerprintSet) -> None:
        self.seen = seen

    def __getitem__(self, index: int) -> int:
        return self.seen.fingerprint_of(index)


def rebuild_path(system: TransitionSystem, parents: array[int], fingerprints: array[int] | _StoredFingerprints,
                 index: int, init: Sequence[Hashable],
                 fingerprint: Callable[[Sequence[Hashable]], Fingerprints] | None = None
                 ) -> list[tuple[Hashable, Hashable]]:
    """The path from an initial state to state ``index``: walk the parent indices back, then
    replay forward choosing at each step the successor with the recorded fingerprint
    (``fingerprint``: the search's, by default ``fingerprinter(system)``)."""
    fingerprint = fingerprint or fingerprinter(system)
    chain = []
    while index >= len(init):
        chain.append(index)
        index = parents[index]
    state = init[index]
    path: list[tuple[Hashable, Hashable]] = []
    for step in reversed(chain):
        wanted = fingerprints[step]
        steps = list(system.successors(state))
        matching = np.flatnonzero(fingerprint([after for _, after in steps]) == wanted)
        if len(matching):
            action, after = steps[int(matching[0])]
            path.append((action, after))
            state = after
        else:
            raise RuntimeError("the model is nondeterministic: a recorded successor was not regenerated "
                               "(successors() must yield the same actions in the same order every time)")
    return path
