"""The engines against the spec, in lockstep: the same world actions drive both, and after every
step the datagrams, the deliveries and the abstract state of every member must agree.

Rules
-----
1. The world of ``models/`` (unreduced: real timestamps, as the engines issue them) chooses the
   actions; the spec's step is the reference and the engines (``checks/engines.py``) follow.
2. After each step, for the member that acted: the engine emitted exactly the datagrams the spec
   sent (same destinations, same bytes, same order) and delivered the same payloads; for every
   member: ``engine.snapshot`` equals the spec member's abstract view. The first difference is a
   ``Divergence``.
3. A divergence becomes a trace in the checker's format (actions renumbered to the checker's
   canonical timestamps), so ``seqcheck show`` draws it and ``seqcheck replay`` re-runs it.
4. Random walks are seeded; the seed is part of the result and of the trace.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.engines import Unicast3Engines, wire_bytes
from checks.system import Always
from checks.trace import Trace, file_digest
from models.modelfile import Model, load
from models.world import AppSend, World


@dataclass(frozen=True)
class Divergence:
    step: int  # 1-based
    action: str
    what: str  # "datagrams of A", "deliveries of B", "state of A", "spec property <name>"
    spec: str
    engine: str

    def __str__(self) -> str:
        return f"step {self.step} ({self.action}): {self.what} differ\n  spec:   {self.spec}\n  engine: {self.engine}"


EngineFactory = Callable[[World], Unicast3Engines]


def unicast3_engines(world: World) -> Unicast3Engines:
    return Unicast3Engines(world.cfg, world.n, world.initial_views)


@dataclass
class Lockstep:
    """One run: a world state, the engines standing for it, and the path so far."""

    model: Model
    engines_for: EngineFactory = unicast3_engines
    check_properties: bool = True
    world: World = field(init=False)
    state: Any = field(init=False)
    engines: Unicast3Engines = field(init=False)
    path: list[tuple[Any, Any]] = field(init=False, default_factory=list)
    canonical: list[Any] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.world = load(self.model.path, reduce_timestamps=False).world
        self.state = self.world.init_states()[0]
        self.engines = self.engines_for(self.world)
        self._always = [p for p in self.world.properties if isinstance(p, Always)]
        self._enabled: list[tuple[Any, Any]] = []
        self._enabled_at: Any = None

    def enabled(self) -> list[tuple[Any, Any]]:
        """The spec's enabled ``(action, next state)`` pairs here (cached per state)."""
        if self._enabled_at is not self.state:
            self._enabled = list(self.world.successors(self.state)) if self.world.within_bounds(self.state) else []
            self._enabled_at = self.state
        return self._enabled

    def step(self, action: Any, after: Any) -> Divergence | None:
        """Apply ``action`` (with its spec successor ``after``) to both sides and compare."""
        world, before = self.world, self.state
        index = len(self.path) + 1
        text = world.format_action(action)
        member, packets, delivered = world.step_effects(before, action)
        number = world.view(before).channel(action.src, action.dst).sent + 1 if isinstance(action, AppSend) else 0
        self.canonical.append(world.canonical_action(before, action))
        self.path.append((action, after))
        self.state = after
        acted = self.engines.drive(action, number)
        assert acted == member
        if member is not None:
            want = [(p.dst, wire_bytes(p)) for p in packets]
            got = self.engines.datagrams(member)
            if got != want:
                return Divergence(index, text, f"datagrams of {world.member_name(member)}", _show(want), _show(got))
            want_up = [self.engines.spec_delivery(src, payload) for src, payload in delivered]
            got_up = self.engines.deliveries(member)
            if got_up != want_up:
                return Divergence(index, text, f"deliveries of {world.member_name(member)}", repr(want_up),
                                  repr(got_up))
        nodes = world.view(after).nodes
        for m, node in enumerate(nodes):
            spec_view, engine_view = self.engines.spec_view(node), self.engines.view(m)
            if spec_view != engine_view:
                return Divergence(index, text, f"state of {world.member_name(m)}", repr(spec_view), repr(engine_view))
        if self.check_properties:
            for prop in self._always:
                if not prop.holds(after):
                    return Divergence(index, text, f"spec property {prop.name}", "holds", "violated")
        return None

    def trace(self, divergence: Divergence, seed: int | None) -> Trace:
        """The run so far as a trace of the checker's (timestamp-renumbered) world."""
        reduced = self.model.world
        return Trace(str(self.model.path), file_digest(self.model.path), "engine_agrees", "divergence",
                     tuple(reduced.action_to_json(a) for a in self.canonical), seed,
                     tuple(self.world.format_action(a) for a, _ in self.path[:-1])
                     + (f"{self.world.format_action(self.path[-1][0])}  <- {divergence.what} differ",))


def _show(datagrams: list[tuple[int, bytes]]) -> str:
    from impl.codec import decode

    return "[" + ", ".join(f"to {dst}: {decode(data)}" for dst, data in datagrams) + "]"


@dataclass(frozen=True)
class WalkResult:
    seed: int
    steps: int
    divergence: Divergence | None
    trace: Trace | None


def random_walk(model: Model, seed: int, steps: int, *, engines_for: EngineFactory = unicast3_engines,
                check_properties: bool = True) -> WalkResult:
    """Drive spec and engines through ``steps`` random enabled actions chosen by ``seed``."""
    rng = random.Random(seed)
    run = Lockstep(model, engines_for, check_properties)
    for taken in range(steps):
        enabled = run.enabled()
        if not enabled:
            return WalkResult(seed, taken, None, None)
        action, after = enabled[rng.randrange(len(enabled))]
        divergence = run.step(action, after)
        if divergence is not None:
            return WalkResult(seed, taken + 1, divergence, run.trace(divergence, seed))
    return WalkResult(seed, steps, None, None)


def replay_on_engines(model_path: Path, trace: Trace, *, engines_for: EngineFactory = unicast3_engines
                      ) -> tuple[Lockstep, Divergence | None]:
    """Re-run a checker trace (canonical timestamps) through spec and engines in lockstep.

    Each recorded action is matched, in the unreduced world, against the enabled actions by its
    canonical form. Returns the run (its final state is the trace's last state) and the first
    divergence, if any (spec properties are not treated as divergences here).
    """
    run = Lockstep(load(model_path), engines_for, check_properties=False)
    world = run.world
    for index, wanted in enumerate(trace.actions, 1):
        for action, after in world.successors(run.state):
            if world.action_to_json(world.canonical_action(run.state, action)) == wanted:
                divergence = run.step(action, after)
                if divergence is not None:
                    return run, divergence
                break
        else:
            raise ValueError(f"step {index}: action {wanted} is not enabled on the unreduced world")
    return run, None
