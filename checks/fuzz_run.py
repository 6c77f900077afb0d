"""One fuzz run: a seeded, weighted random schedule through the lockstep harness, and its record.

Property fuzzed: on every schedule the UNICAST3 engines agree with the spec after every step
(datagrams byte for byte, deliveries, abstract state), every safety property of the model holds on
every state, and (unless switched off) the end state can still reach every liveness goal without
further faults.

Rules
-----
1. A run is a pure function of (model file text, seed, steps, weights): its random choices come
   from ``random.Random(seed)`` alone and the world enumerates actions in a fixed order, so the
   same seed gives the same record in any process, partition or executor (GUIDE C6).
2. The schedule is drawn by action kind, not uniformly among enabled actions: each step picks a
   kind among the kinds enabled with probability proportional to its weight (``Weights``), then
   one action of that kind uniformly. Deliveries dominate; loss and duplication are rarer; view
   changes, receiver resets and reaping rarer still. Budgets (sends, losses, ...) are the model
   file's; ``checks/fuzz.py`` scales them up by writing a derived model file.
3. The harness is ``checks.differential.Lockstep`` (unreduced world, real timestamps). A *shadow*
   state of the reduced world (``models/world.py`` rule 5), derived from the harness's state by
   ``World.adopt``, is what gets fingerprinted and what liveness is judged on.
4. Liveness at the end of a run: the goal holds, or a greedy fault-free continuation reaches it
   (sound), or else the exhaustive search ``checks.trace.can_reach_goal`` decides (as the trace
   validator will). A run that ended on a cut state gets the benefit of the doubt, as in the checker.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

from checks.differential import Divergence, EngineFactory, Lockstep, unicast3_engines
from checks.fuzz_coverage import KINDS, Fingerprints, PhaseCounter, fault_of, kind_of
from checks.system import Liveness
from checks.trace import can_reach_goal
from models.modelfile import Model, load
from models.world import DeliverPacket, FireTimer, World
from spec import unicast3 as u3

SETTLE_ROUNDS = 30  # rounds of the fair fault-free continuation tried before the exhaustive search
SETTLE_STEPS = 2_000  # ... and steps
LIVENESS_MAX_STATES = 200_000  # bound of that search (reaching it counts as live, as in the checker)


@dataclass(frozen=True)
class Weights:
    """Relative weight of each action kind (``checks.fuzz_coverage.KINDS``) when it is enabled."""

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

    def text(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in fields(self))


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


@dataclass(frozen=True)
class Failure:
    verdict: str  # divergence | violation:<property> | crash | error
    failing: str  # the property, what differed ("datagrams of A"), or the exception type
    step: int  # 1-based step of the failure; for liveness the run's length
    detail: str


@dataclass(frozen=True)
class RunRecord:
    """One row of the results (``checks/fuzz.py`` SCHEMA, same order)."""

    seed: int
    steps: int
    end: str  # steps | quiescent | cut | starved | failed
    verdict: str  # pass | divergence | violation:<property> | crash | error
    failing: str | None
    fail_step: int | None
    detail: str | None
    counts: tuple[int, ...]  # per KINDS
    fingerprints: tuple[int, ...]  # distinct canonical states visited (initial included), sorted
    phase_hits: tuple[int, ...]  # PhaseCounter.as_list

    def row(self) -> tuple[Any, ...]:
        head = astuple(self)[:7]
        return (*head, *self.counts, list(self.fingerprints), list(self.phase_hits))


def resolve_engines(spec: str | None) -> EngineFactory:
    if spec is None:
        return unicast3_engines
    module, _, name = spec.partition(":")
    factory: EngineFactory = getattr(importlib.import_module(module), name)
    return factory


def choose(rng: random.Random, enabled: Sequence[tuple[Any, Any]], weights: Weights
           ) -> tuple[Any, Any] | None:
    """Rule 2; None when every enabled kind has weight 0."""
    groups: dict[str, list[int]] = {}
    for index, (action, _) in enumerate(enabled):
        groups.setdefault(kind_of(action), []).append(index)
    kinds = [k for k in KINDS if k in groups and getattr(weights, k) > 0]
    if not kinds:
        return None
    x = rng.random() * sum(getattr(weights, k) for k in kinds)
    picked = kinds[-1]
    for kind in kinds:
        x -= getattr(weights, kind)
        if x < 0:
            picked = kind
            break
    members = groups[picked]
    return enabled[members[rng.randrange(len(members))]]


class Shadow:
    """The reduced world's state for the lockstep run's current state (rule 3): derived from the
    unreduced state by ``World.adopt``, not followed step by step."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.state = world.init_states()[0]

    def follow(self, unreduced: World, state: Any) -> None:
        self.state = self.world.adopt(unreduced.view(state))


class Runner:
    """Runs of one plan on one model file (loaded once; a fresh lockstep run per seed)."""

    def __init__(self, plan: FuzzPlan, model_path: Path) -> None:
        self.plan = plan
        self.model: Model = load(model_path)
        self.engines_for = resolve_engines(plan.engines)
        self.fingerprint = Fingerprints(self.model.world)
        self.liveness = [p for p in self.model.world.properties if isinstance(p, Liveness)] if plan.liveness else []

    def run(self, seed: int) -> RunRecord:
        walk, end, failure = self.walk(seed)
        return walk.record(seed, end, failure)

    def walk(self, seed: int) -> tuple[Walk, str, Failure | None]:
        """The run of ``seed``: the walk, how it ended, its failure if any."""
        rng = random.Random(seed)
        walk = Walk(self)
        end, failure = "steps", None
        for index in range(1, self.plan.steps + 1):
            enabled = walk.lock.enabled()
            if not enabled:
                end = "quiescent" if walk.lock.world.within_bounds(walk.lock.state) else "cut"
                break
            chosen = choose(rng, enabled, self.plan.weights)
            if chosen is None:
                end = "starved"
                break
            failure = walk.step(*chosen, index)
            if failure is not None:
                break
        if failure is None and end != "cut":
            failure = walk.finish()
        return walk, "failed" if failure is not None else end, failure

    def replay(self, actions: Sequence[dict[str, Any]], *, liveness: bool = True
               ) -> tuple[Walk, Failure | None] | None:
        """Re-run canonical actions (a trace's) with every check (liveness at the end only if
        ``liveness``); None if one is not enabled. Stops at the first failure."""
        walk = Walk(self)
        world = walk.lock.world
        for index, wanted in enumerate(actions, 1):
            state = walk.lock.state
            match = next(((a, t) for a, t in walk.lock.enabled()
                          if world.action_to_json(world.canonical_action(state, a)) == wanted), None)
            if match is None:
                return None
            failure = walk.step(*match, index)
            if failure is not None:
                return walk, failure
        return walk, walk.finish() if liveness else None


class Walk:
    """One lockstep run with its shadow, counters and fingerprints."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.lock = Lockstep(runner.model, runner.engines_for, check_properties=True)
        self.shadow = Shadow(runner.model.world)
        self.counts = dict.fromkeys(KINDS, 0)
        self.phases = PhaseCounter()
        self.fingerprints = {runner.fingerprint(self.shadow.state)}

    @property
    def taken(self) -> int:
        return len(self.lock.path)

    def step(self, action: Any, after: Any, index: int) -> Failure | None:
        lock = self.lock
        self.counts[kind_of(action)] += 1
        if fault_of(action) is not None:
            self.phases.record(lock.world.view(lock.state), action)
        try:
            divergence = lock.step(action, after)
        except Exception as error:  # the engine (or spec) raised: a finding, kept with its seed
            return Failure("crash", type(error).__name__, index, f"step {index}: {error!r}"[:2000])
        self.shadow.follow(lock.world, lock.state)
        self.fingerprints.add(self.runner.fingerprint(self.shadow.state))
        return None if divergence is None else failure_of(divergence)

    def finish(self) -> Failure | None:
        """Rule 4 on the end state."""
        world, state = self.shadow.world, self.shadow.state
        for prop in self.runner.liveness:
            if not is_live(world, state, prop):
                return Failure(f"violation:{prop.name}", prop.name, self.taken,
                               f"liveness: after step {self.taken} no fault-free continuation reaches the goal")
        return None

    def record(self, seed: int, end: str, failure: Failure | None) -> RunRecord:
        return RunRecord(seed, self.taken, end, "pass" if failure is None else failure.verdict,
                         None if failure is None else failure.failing, None if failure is None else failure.step,
                         None if failure is None else failure.detail, tuple(self.counts[k] for k in KINDS),
                         tuple(sorted(self.fingerprints)), tuple(self.phases.as_list()))


def failure_of(divergence: Divergence) -> Failure:
    prefix = "spec property "
    if divergence.what.startswith(prefix):
        name = divergence.what[len(prefix):]
        return Failure(f"violation:{name}", name, divergence.step, f"step {divergence.step} ({divergence.action}): "
                       f"{name} violated")
    return Failure("divergence", divergence.what, divergence.step, str(divergence)[:2000])


def is_live(world: World, state: Any, prop: Liveness) -> bool:
    """The goal of ``prop`` is reachable from ``state`` by fault-free actions (rule 4)."""
    if prop.goal(state) or not world.within_bounds(state):
        return True
    return settle(world, state, prop.goal) or can_reach_goal(world, state, prop.goal, max_states=LIVENESS_MAX_STATES)


def settle(world: World, state: Any, goal: Any) -> bool:
    """A fair fault-free continuation, in rounds: every packet in flight arrives (and the replies,
    up to a bound), then every enabled sync expiry and every member's retransmit task fire once.
    True if it reaches ``goal`` (or leaves the model's bounds) within the bounds of this function."""
    current, budget = state, SETTLE_STEPS
    for _ in range(SETTLE_ROUNDS):
        timers = [a for a, _ in world.successors(current) if isinstance(a, FireTimer) and not world.is_fault(a)]
        while budget > 0:
            arrival = next((t for a, t in world.successors(current) if isinstance(a, DeliverPacket)), None)
            if arrival is None:
                break
            current, budget = arrival, budget - 1
            if goal(current) or not world.within_bounds(current):
                return True
        for timer in sorted(timers, key=_settle_rank):
            fired = next((t for a, t in world.successors(current) if a == timer and isinstance(a, FireTimer)), None)
            if fired is not None:
                current, budget = fired, budget - 1
                if goal(current) or not world.within_bounds(current):
                    return True
        if budget <= 0:
            return False
    return False


def _settle_rank(action: Any) -> int:
    """Sync expiries first (their time has come), then the retransmit tasks."""
    return 0 if action.timer.kind == u3.SYNC_EXPIRED else 1
