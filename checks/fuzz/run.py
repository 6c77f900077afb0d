"""One fuzz run: a seeded, weighted random schedule through the lockstep harness, and its record.

Property fuzzed: on every schedule the UNICAST3 engines agree with the spec after every step
(datagrams byte for byte, deliveries, abstract state), every safety property of the model holds on
every state, and (unless switched off) the end state can still reach every liveness goal without
further faults.

Rules
-----
1. A run is a pure function of (model file text, seed, steps, weights, swarm, pct): its random
   choices come from ``random.Random`` seeded with the seed (rule 2) and the world enumerates
   actions in a fixed order, so the same seed gives the same record in any process, partition or
   executor (GUIDE C6).
2. The schedule is drawn by action kind, not uniformly among enabled actions (``Chooser``): each
   step draws a kind among the kinds that have candidate actions (``World.candidates``) with
   probability proportional to its weight (``Weights``), then one candidate of that kind
   uniformly. A kind drawn without candidates is struck out and the draw repeated (the same
   distribution, listing candidates only for the kinds drawn); so is a candidate that would
   change nothing (``World.successor`` is None, e.g. a retransmit run with nothing to do).
   Only the drawn actions' next states are computed, never every enabled action's. Deliveries
   dominate; loss and duplication are rarer; view changes, receiver resets and reaping rarer
   still. Budgets (sends, losses, ...) are the model file's; ``checks/fuzz/command.py`` scales them up by
   writing a derived model file (and adds joins and leaves, ``--random-views``).
   Fault kinds of the issue and where they are: loss, duplication and reordering are the
   network's (``models/world.py`` rule 2: any packet in flight may arrive next, be lost or be
   duplicated). A *drop below the protocol* (the transport loses a datagram as it is sent) is
   the kind ``loss`` drawn for that packet at the next step: the engines' outputs were already
   compared when it was emitted, and a packet lost right after its send leaves the world in the
   state a transport drop would (a copy identical to one in flight was never added, rule 2, so
   dropping it is the send step itself), so it has no kind of its own. View changes are the model's
   scripts, joins and leaves random scripts (``checks/fuzz/model.py``); removals are receiver
   resets (the test hook); timers fire at any moment.
   With ``swarm`` (``--swarm``, swarm testing after Groce et al., ISSTA 2012), every run first
   draws its own weights: each kind's weight times a factor from ``SWARM_FACTORS`` (0 leaves the
   kind out of that run; ``deliver`` is never left out), drawn from ``random.Random`` seeded with
   the seed's own text, so the schedule's draws are those of a run without swarm and the run
   is still a function of its seed.
   With ``pct`` (``--pct``, priority scheduling of the network after PCT, Burckhardt et al.,
   ASPLOS 2010): every packet value gets a priority drawn from the run's seed and the packet
   (``random.Random`` seeded with their text, so a retransmitted copy, the same value, keeps it),
   and a delivery or duplication takes the packet of highest priority in flight instead of a
   uniform one; losses stay uniform. A low-priority packet then stays in flight while everything
   else overtakes it, which is how the historical stale-packet bugs interleave (an old first
   message or a flushed ACK arriving after a reset), and which uniform choice makes
   exponentially rare in the number of packets that must overtake it.
3. The harness is ``checks.conform.differential.Lockstep`` (unreduced world, real timestamps), sharing one
   ``checks.conform.differential.Shared`` (world, memo tables) across the runner's runs. Checked after
   every step: the acting member's datagrams, deliveries and abstract state against the spec,
   and every safety property of the model on the state reached; at the end of every run (also a
   cut one): every member's abstract state (``Lockstep.check_all``; members that got no input
   cannot change, ``checks/conform/differential.py`` rule 2).
4. Coverage and liveness are about the reduced world (``models/world.py`` rule 5). Every state
   the run visits is fingerprinted as the reduced state it stands for
   (``checks.fuzz.fingerprints.StepFingerprints`` ranks the timestamps of the harness's state); the end
   state is carried into the reduced world (``World.adopt``) for liveness, and its fingerprint
   there must equal the one computed from the harness's state, else the run is an ``error``.
5. Liveness at the end of a run: the goal holds, or a greedy fault-free continuation reaches it
   (sound), or else ``checks.explore.closure.judge`` decides (as the trace validator will): one
   search for all the properties still open (the verdicts of separate searches), a depth-first probe
   for a goal, then breadth first over every fault-free continuation.
   A search that passes ``LIVENESS_MAX_STATES`` states counts as live (the run's record says so in
   its detail). A run that ended on a cut state gets the benefit of the doubt, as in the checker;
   so does a timed run (``--engines-with timed``) in which a window was removed with a packet of it
   in flight (``checks/conform/timed.py``: past the world's rule 6 liveness may fail in JGroups too).
"""

from __future__ import annotations

import gc
import importlib
import random
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from checks.conform.differential import Divergence, EngineFactory, Lockstep, Shared, default_engines
from checks.explore.closure import BEYOND, BOUND, GOAL, Judgement, judge, progress_successors
from checks.explore.system import Liveness
from checks.fuzz.coverage import KINDS, PhaseCounter, Scheme, kind_of, scheme_for, timer_name
from checks.fuzz.fingerprints import Fingerprints, StepFingerprints
from models.modelfile import Model, load
from models.world import (
    DeliverPacket,
    FireTimer,
    World,
)

SWARM_FACTORS = (0.0, 0.1, 1.0, 10.0)  # rule 2: a swarm run's factor on each kind's weight
SETTLE_ROUNDS = 30  # rounds of the fair fault-free continuation tried before the exhaustive search
SETTLE_STEPS = 2_000  # ... and steps
LIVENESS_MAX_STATES = 200_000  # bound of that search (reaching it counts as live, as in the checker)


@dataclass(frozen=True)
class Weights:
    """Relative weight of each action kind (``checks.fuzz.coverage.KINDS``) when it is enabled."""

    send: float = 4.0
    deliver: float = 10.0
    duplicate: float = 0.5
    loss: float = 1.0
    xmit: float = 3.0
    sync: float = 1.0
    reap: float = 0.3
    view: float = 0.2
    remove: float = 0.2

    @staticmethod
    def parse(text: str) -> Weights:
        """``"deliver=10,loss=2"`` over the defaults; ValueError (one line) on a bad item."""
        values: dict[str, float] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, raw = item.partition("=")
            if not sep or name.strip() not in KINDS:
                raise ValueError(f"expected KIND=WEIGHT items with KIND one of {', '.join(KINDS)}, got {item!r}")
            try:
                weight = float(raw)
            except ValueError:
                raise ValueError(f"{name.strip()}: expected a number >= 0, got {raw!r}") from None
            if not weight >= 0 or weight == float("inf"):
                raise ValueError(f"{name.strip()}: expected a number >= 0, got {raw!r}")
            values[name.strip()] = weight
        return Weights(**values)

    def text(self, kinds: Sequence[str] | None = None) -> str:
        """``kind=weight,...`` of every kind, or of ``kinds`` only (those a model's world has)."""
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in fields(self) if kinds is None or f.name in kinds)

    def swarm(self, seed: int) -> Weights:
        """The weights of run ``seed`` under ``--swarm`` (rule 2)."""
        rng = random.Random(f"seqcheck swarm {seed}")
        factors = {f.name: rng.choice(SWARM_FACTORS) for f in fields(self)}
        factors["deliver"] = factors["deliver"] or 1.0
        return Weights(**{name: getattr(self, name) * factor for name, factor in factors.items()})


assert tuple(f.name for f in fields(Weights)) == KINDS


@dataclass(frozen=True)
class FuzzPlan:
    """Everything a task needs, small and picklable: the model travels as text (rule 1)."""

    model_name: str  # file name of the model (its stem names the world)
    model_text: str
    steps: int
    weights: Weights = Weights()
    liveness: bool = True
    engines: str | None = None  # "module:function" returning an ``EngineFactory`` (tests plant defects)
    swarm: bool = False  # rule 2: every run draws its own weights
    pct: bool = False  # rule 2: deliveries and duplications by packet priority


@dataclass(frozen=True)
class Failure:
    verdict: str  # divergence | violation:<property> | crash | error
    failing: str  # the property, what differed ("datagrams of A"), or the exception type
    step: int  # 1-based step of the failure; for liveness the run's length
    detail: str


@dataclass(frozen=True)
class RunRecord:
    """One row of the results (``checks/fuzz/command.py`` SCHEMA, same order)."""

    seed: int
    steps: int
    end: str  # steps | quiescent | cut | starved | failed
    verdict: str  # pass | divergence | violation:<property> | crash | error
    failing: str | None
    fail_step: int | None
    detail: str | None  # the failure; for a pass, a liveness judgement the bound decided (Walk.note)
    counts: tuple[int, ...]  # per KINDS
    fingerprints: tuple[int, ...]  # distinct canonical states visited (initial included), sorted
    phase_hits: tuple[int, ...]  # PhaseCounter.as_list

    def row(self) -> tuple[Any, ...]:
        head = astuple(self)[:7]
        return (*head, *self.counts, list(self.fingerprints), list(self.phase_hits))


def resolve_engines(spec: str | None) -> EngineFactory:
    """The engines of the model's protocol (``checks.conform.engines.engines_for``), or the factory
    ``spec`` names (``module:function``)."""
    if spec is None:
        return default_engines
    module, _, name = spec.partition(":")
    factory: EngineFactory = getattr(importlib.import_module(module), name)
    return factory


class Chooser:
    """Rule 2 on a world state, drawing from ``rng`` only; candidates are listed for the kinds
    drawn and next states computed for the actions drawn, never for every enabled one."""

    def __init__(self, world: World, weights: Weights, timer_kinds: dict[Any, str] | None = None,
                 scheme: Scheme | None = None) -> None:
        self.world, self.weights = world, weights
        self.scheme = scheme_for(world) if scheme is None else scheme  # the world actions of each kind
        self.weighted = [(k, getattr(weights, k)) for k in KINDS if getattr(weights, k) > 0]
        self._timer_kinds = {} if timer_kinds is None else timer_kinds  # FireTimer -> xmit, sync or reap

    def with_weights(self, weights: Weights) -> Chooser:
        """The same world and memo, other weights (a swarm run's)."""
        return Chooser(self.world, weights, self._timer_kinds, self.scheme)

    def with_priorities(self, seed: int) -> Chooser:
        """This chooser, deliveries and duplications by packet priority drawn from ``seed`` (rule 2)."""
        return PriorityChooser(self.world, self.weights, self._timer_kinds, seed, self.scheme)

    def candidates(self, state: Any, kinds: Sequence[str]) -> dict[str, list[Any]]:
        """Kind -> its candidate actions in ``state`` (``World.candidates``, in its order; fresh lists)."""
        return {kind: self.candidates_of(state, kind) for kind in kinds}

    def candidates_of(self, state: Any, kind: str) -> list[Any]:
        """The candidate actions of ``kind`` in ``state`` (``World.candidates``, in its order; a fresh list)."""
        wanted = self.scheme.kind_types[kind]
        if FireTimer not in wanted:
            return [a for kind_type in wanted for a in self.world.candidates(state, kind_type)]
        kinds = self._timer_kinds
        out = [a for kind_type in wanted if kind_type is not FireTimer for a in self.world.candidates(state, kind_type)]
        for action in self.world.candidates(state, FireTimer):
            found = kinds.get(action)
            if found is None:
                found = kinds[action] = kind_of(action)
            if found == kind:
                out.append(action)
        return out

    def pick(self, rng: random.Random, state: Any) -> tuple[Any, Any] | None:
        """The action drawn and its next state; None when every candidate of a kind of positive
        weight changes nothing (``enabled_any`` then tells quiescent from starved).

        A kind is drawn among the kinds not yet struck out; one without candidates is struck out
        and the draw repeated, which draws among the kinds that have candidates (rule 2) while
        listing the candidates of the kinds drawn only."""
        live = list(self.weighted)
        options: dict[str, list[Any]] = {}
        while live:
            x = rng.random() * sum(w for _, w in live)
            index = len(live) - 1
            for i, (_, weight) in enumerate(live):
                x -= weight
                if x < 0:
                    index = i
                    break
            kind = live[index][0]
            drawn = options.get(kind)
            if drawn is None:
                drawn = options[kind] = self.candidates_of(state, kind)
            if drawn:
                action = drawn.pop(self.choose(rng, kind, drawn))
                after = self.world.successor(state, action)
                if after is not None:
                    return action, after
            if not drawn:
                del live[index]
        return None

    def choose(self, rng: random.Random, kind: str, drawn: list[Any]) -> int:
        """The index of the candidate taken among ``drawn`` (candidates of ``kind``): uniform."""
        return rng.randrange(len(drawn))

    def enabled_any(self, state: Any) -> bool:
        """Some action (of any weight) changes something in ``state``."""
        options = self.candidates(state, KINDS)
        return any(self.world.successor(state, a) is not None for actions in options.values() for a in actions)


class PriorityChooser(Chooser):
    """``Chooser`` with rule 2's packet priorities: a delivery or duplication takes the packet of
    highest priority among the candidates (the draw of the kind stays random)."""

    def __init__(self, world: World, weights: Weights, timer_kinds: dict[Any, str], seed: int,
                 scheme: Scheme | None = None) -> None:
        super().__init__(world, weights, timer_kinds, scheme)
        self.seed = seed
        self.priorities: dict[Any, float] = {}

    def priority(self, packet: Any) -> float:
        found = self.priorities.get(packet)
        if found is None:
            found = self.priorities[packet] = random.Random(f"seqcheck pct {self.seed} {packet!r}").random()
        return found

    def choose(self, rng: random.Random, kind: str, drawn: list[Any]) -> int:
        if kind != "deliver" and kind != "duplicate":
            return rng.randrange(len(drawn))
        return max(range(len(drawn)), key=lambda i: self.priority(drawn[i].packet))


class Runner:
    """Runs of one plan on one model file (loaded once; a fresh lockstep run per seed, sharing the
    unreduced world's memo tables, ``checks.conform.differential.Shared``)."""

    def __init__(self, plan: FuzzPlan, model_path: Path) -> None:
        self.plan = plan
        self.model: Model = load(model_path)
        self.engines_for = resolve_engines(plan.engines)
        self.shared = Shared(self.model, self.engines_for)
        self.chooser = Chooser(self.shared.world, plan.weights)
        self.fingerprint: Fingerprints = StepFingerprints(self.shared.world)  # of the reduced states the runs stand for
        self.reduced_fingerprint: Fingerprints = StepFingerprints(self.model.world)
        self.liveness = [p for p in self.model.world.properties if isinstance(p, Liveness)] if plan.liveness else []

    def run(self, seed: int) -> RunRecord:
        collecting = gc.isenabled()  # a run makes no garbage cycles worth collecting, and the cycle
        gc.disable()  # collector would traverse the memo tables the runs grow again and again:
        try:  # off during the run, and what the run left alive (memo entries, mostly) is frozen out
            walk, end, failure = self.walk(seed)  # of later collections (a quarter of the time, else)
        finally:
            if collecting:
                gc.freeze()
                gc.enable()
        return walk.record(seed, end, failure)

    def walk(self, seed: int) -> tuple[Walk, str, Failure | None]:
        """The run of ``seed``: the walk, how it ended, its failure if any."""
        rng = random.Random(seed)
        walk = Walk(self)
        lock, world = walk.lock, walk.lock.world
        chooser = self.chooser.with_weights(self.plan.weights.swarm(seed)) if self.plan.swarm else self.chooser
        chooser = chooser.with_priorities(seed) if self.plan.pct else chooser
        end, failure = "steps", None
        for index in range(1, self.plan.steps + 1):
            if not world.within_bounds(lock.state):
                end = "cut"
                break
            chosen = chooser.pick(rng, lock.state)
            if chosen is None:
                end = "starved" if chooser.enabled_any(lock.state) else "quiescent"
                break
            failure = walk.step(*chosen, index)
            if failure is not None:
                break
        if failure is None:  # a timed run that removed a window with a packet in flight may not be live
            stale = walk.lock.engines.timed is not None and walk.lock.engines.timed.stale
            failure = walk.finish(liveness=end != "cut" and not stale)
        return walk, "failed" if failure is not None else end, failure

    def replay(self, actions: Sequence[dict[str, Any]], *, liveness: bool = True,
               match: Matcher | None = None) -> tuple[Walk, Failure | None] | None:
        """Re-run canonical actions (a trace's) with every check (liveness at the end only if
        ``liveness``); stops at the first failure. Each action is the enabled one whose canonical
        JSON it is (``exact_action``), and None is returned if there is none; with ``match``, each
        is the enabled one ``match`` names, and an action it names none for is skipped."""
        walk = Walk(self)
        for wanted in actions:
            found = (match or exact_action)(walk.lock, wanted)
            if found is None:
                if match is None:
                    return None
                continue
            failure = walk.step(found[0], found[1], walk.taken + 1)
            if failure is not None:
                return walk, failure
        return walk, walk.finish(liveness=liveness and walk.lock.world.within_bounds(walk.lock.state))


Matcher = Callable[[Lockstep, dict[str, Any]], "tuple[Any, ...] | None"]  # (action, next state, ...) or none


def exact_action(lock: Lockstep, wanted: dict[str, Any]) -> tuple[Any, Any] | None:
    """The enabled ``(action, next state)`` whose canonical JSON is ``wanted``, if any."""
    world, state = lock.world, lock.state
    return next(((a, t) for a, t in lock.enabled()
                 if world.action_to_json(world.canonical_action(state, a)) == wanted), None)


class Walk:
    """One lockstep run with its counters and fingerprints (rule 4)."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.lock = Lockstep(runner.model, runner.engines_for, True, runner.shared, full_check_every=0)
        self.reduced = runner.model.world
        self.counts = dict.fromkeys(KINDS, 0)
        self.phases = PhaseCounter(runner.chooser.scheme)
        self.fingerprints = {runner.fingerprint(self.lock.state)}
        self.note: str | None = None  # a passing run's detail: liveness judged live only at the bound (rule 5)

    @property
    def taken(self) -> int:
        return len(self.lock.path)

    def step(self, action: Any, after: Any, index: int) -> Failure | None:
        lock = self.lock
        timed, start, before = lock.engines.timed is not None, len(lock.path), lock.state
        if not timed:
            self._count(before, action)
        try:
            divergence = lock.step(action, after)
        except Exception as error:  # the engine (or spec) raised: a finding, kept with its seed
            return Failure("crash", type(error).__name__, index, f"step {index}: {error!r}"[:2000])
        if timed:  # the clock takes the steps (a tick's timers, a delivery before a removal), not the draw
            for taken, state in lock.path[start:]:
                self._count(before, taken)
                before = state
        self.fingerprints.add(self.runner.fingerprint(lock.state))
        return None if divergence is None else failure_of(divergence)

    def _count(self, state: Any, action: Any) -> None:
        """``action``, taken in ``state``, in the counts and the fault phases."""
        self.counts[kind_of(action)] += 1
        if self.phases.scheme.fault_of(action) is not None:
            self.phases.record(self.lock.world.view(state), action)

    def finish(self, *, liveness: bool = True) -> Failure | None:
        """The end-of-run checks (rule 3: every member; rule 4: the reduced end state), then rule 5
        on it if ``liveness``."""
        divergence = self.lock.check_all()
        if divergence is not None:
            return failure_of(divergence)
        world = self.reduced
        state = world.adopt(self.lock.world.view(self.lock.state))
        if self.runner.reduced_fingerprint(state) != self.runner.fingerprint(self.lock.state):
            return Failure("error", "fingerprint", self.taken, f"after step {self.taken} the reduced end state's "
                           "fingerprint differs from the one computed from the harness's state")
        if not liveness:
            return None
        judged = judge_liveness(world, state, self.runner.liveness)
        for prop in self.runner.liveness:
            if not judged[prop.name].live:
                return Failure(f"violation:{prop.name}", prop.name, self.taken,
                               f"liveness: after step {self.taken} no fault-free continuation reaches the goal")
        bounded = [name for name, j in judged.items() if j.outcome == BOUND]
        if bounded:
            self.note = (f"liveness: {', '.join(bounded)} counted live unconfirmed: the fault-free continuations of "
                         f"the end state pass {LIVENESS_MAX_STATES:,} states (the bound of the search)")
        return None

    def record(self, seed: int, end: str, failure: Failure | None) -> RunRecord:
        return RunRecord(seed, self.taken, end, "pass" if failure is None else failure.verdict,
                         None if failure is None else failure.failing, None if failure is None else failure.step,
                         self.note if failure is None else failure.detail, tuple(self.counts[k] for k in KINDS),
                         tuple(sorted(self.fingerprints)), tuple(self.phases.as_list()))


def failure_of(divergence: Divergence) -> Failure:
    prefix = "spec property "
    if divergence.what.startswith(prefix):
        name = divergence.what[len(prefix):]
        return Failure(f"violation:{name}", name, divergence.step, f"step {divergence.step} ({divergence.action}): "
                       f"{name} violated")
    return Failure("divergence", divergence.what, divergence.step, str(divergence)[:2000])


def is_live(world: World, state: Any, prop: Liveness) -> bool:
    """The goal of ``prop`` is reachable from ``state`` by fault-free actions (rule 5)."""
    return judge_liveness(world, state, [prop])[prop.name].live


def judge_liveness(world: World, state: Any, props: Sequence[Liveness]) -> dict[str, Judgement]:
    """Rule 5 for each of ``props`` at ``state``: the goal, ``settle``, then one exhaustive search for
    the properties still open."""
    if not world.within_bounds(state):
        return {p.name: Judgement(BEYOND, 1) for p in props}
    done = {p.name: Judgement(GOAL, 1) for p in props if p.goal(state) or settle(world, state, p.goal)}
    open_ = [p for p in props if p.name not in done]
    return done | (judge(world, state, open_, max_states=LIVENESS_MAX_STATES) if open_ else {})


def settle(world: World, state: Any, goal: Any) -> bool:
    """A fair fault-free continuation, in rounds: every packet in flight arrives (and the replies,
    up to a bound), then every enabled sync expiry and every member's retransmit task fire once.
    True if it reaches ``goal`` (or leaves the model's bounds) within the bounds of this function."""
    current, budget = state, SETTLE_STEPS
    successors = progress_successors(world)
    for _ in range(SETTLE_ROUNDS):
        timers = [a for a, _ in successors(current) if isinstance(a, FireTimer)]
        while budget > 0:
            arrival = next((t for a, t in successors(current) if isinstance(a, DeliverPacket)), None)
            if arrival is None:
                break
            current, budget = arrival, budget - 1
            if goal(current) or not world.within_bounds(current):
                return True
        for timer in sorted(timers, key=_settle_rank):
            fired = next((t for a, t in successors(current) if a == timer and isinstance(a, FireTimer)), None)
            if fired is not None:
                current, budget = fired, budget - 1
                if goal(current) or not world.within_bounds(current):
                    return True
        if budget <= 0:
            return False
    return False


def _settle_rank(action: Any) -> int:
    """Sync expiries first (their time has come), then the retransmit tasks."""
    return 0 if timer_name(action.timer) == "sync_expired" else 1
