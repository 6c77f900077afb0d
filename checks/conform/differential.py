"""The engines against the spec, in lockstep: the same world actions drive both, and after every
step the datagrams, the deliveries and the abstract state of the member that acted must agree.

Rules
-----
1. The world of ``models/`` (unreduced: real timestamps, as the engines issue them) chooses the
   actions; the spec's step is the reference and the engines (``checks/conform/engines.py``) follow.
2. What is compared, when. Each step gives an input to one member at most (each engine is its own
   object, the harness calls one of them; a loss calls none), so only that member can change:
   after every step, for the member that acted, the engine emitted exactly the datagrams the spec
   sent (same destinations, same bytes, same order), delivered the same payloads, and
   ``engine.snapshot`` equals the spec member's abstract view. Every member's snapshot is
   compared every ``full_check_every`` steps (1, the default: after every step; 0: only when
   ``check_all`` is called; the fuzzer calls it at the end of every run). A member that got no
   input keeps its snapshot: the harness's clock is constant (``checks/conform/engines.py``), so not even
   the time-dependent part (SEND_FIRST_SEQNO rate limits) moves. The first difference is a
   ``Divergence``.
3. With ``check_properties``, every safety (``Always``) property of the model holds on every state
   the run reaches; a state whose property key (``World.property_key``: nodes and history) equals
   that of the last state checked has the same verdicts and is not re-evaluated.
4. A divergence becomes a trace in the checker's format (actions renumbered to the checker's
   canonical timestamps), so ``seqcheck show`` draws it and ``seqcheck replay`` re-runs it.
5. Random walks are seeded; the seed is part of the result and of the trace.
6. ``Shared`` holds what many runs of one model may share (the unreduced world with its memo
   tables, spec views per node, datagram bytes per packet): caches only, so a run's result does
   not depend on which runs came before it.
7. The spec side's datagrams come from an encoder independent of the engines'
   (``checks/conform/reference_codec.py``, where the binding has one), and every message the spec
   sends is also encoded and decoded with large field values against that reference: a defect
   made symmetrically in the engines' encoder and decoder diverges too (issue 19, item 6).
8. The engines come from an engine factory (``engines_for``): the protocol's own, or one the spec
   cannot tell apart from it, which reaches engine code the shipped models do not: window rows of
   1 to 4 slots with the smallest scan limit (``checks/conform/geometry.py``), every receive window
   shifted near 2**31 or 2**63 (``checks/conform/offsets.py``). The variant a model runs under is
   the model's (``checks/conform/variants.py`` lists them; issue 19, items 4 and 5).
9. Time: the engines' clock stands still and the world fires the spec's timers one by one, unless
   the engine factory is timed (``checks/conform/timed.py``, issue 19, item 1): then its
   ``WorldEngines.timed`` takes every step (``Lockstep.step``): a world timer lets virtual time
   pass to the next deadline, where each engine runs its own ``handle_timer`` once against the
   spec timers enabled at that time, which the following steps take one by one (the path stays
   one world action per step); ``check_all`` finishes such a tick first.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.conform.engines import WorldEngines, describe_datagram
from checks.conform.engines import engines_for as default_engines
from checks.explore.system import Always
from checks.explore.trace import Trace, file_digest
from models.modelfile import Model, load
from models.world import Packet, World


@dataclass(frozen=True)
class Divergence:
    step: int  # 1-based
    action: str
    what: str  # "datagrams of A", "deliveries of B", "state of A", "spec property <name>"
    spec: str
    engine: str

    def __str__(self) -> str:
        return f"step {self.step} ({self.action}): {self.what} differ\n  spec:   {self.spec}\n  engine: {self.engine}"


EngineFactory = Callable[[World], WorldEngines]


class Shared:
    """Rule 6: the unreduced world of ``model`` and the caches of the runs of one engine factory."""

    def __init__(self, model: Model, engines_for: EngineFactory = default_engines) -> None:
        self.model = model
        self.engines_for = engines_for
        self.world = load(model.path, reduce_timestamps=False, variant=model.variant, protocol=model.protocol).world
        self.always = [p for p in self.world.properties if isinstance(p, Always)]
        self.spec_views: dict[int, Any] = {}  # node id -> the engines' view of that spec node
        self.wire: dict[Packet, bytes] = {}  # packet -> its datagram
        self.codec_checked: dict[Packet, str | None] = {}  # packet -> codec_disagreement
        engines = engines_for(self.world)  # the spec side's bytes: independent of the engines' codec if it can be
        self.wire_bytes = engines.reference_bytes or engines.wire_bytes

    def spec_view(self, engines: WorldEngines, state: Any, member: int) -> Any:
        """The engines' view of ``member``'s spec node in ``state`` (a world of ``self.world``)."""
        found = self.spec_views.get(state[member])
        if found is None:
            found = self.spec_views[state[member]] = engines.spec_view(self.world.view(state).nodes[member])
        return found

    def codec_disagreement(self, engines: WorldEngines, packet: Packet) -> str | None:
        if packet in self.codec_checked:
            return self.codec_checked[packet]
        found = self.codec_checked[packet] = engines.codec_disagreement(packet)
        return found

    def datagram(self, packet: Packet) -> bytes:
        found = self.wire.get(packet)
        if found is None:
            found = self.wire[packet] = self.wire_bytes(packet)
        return found


@dataclass
class Lockstep:
    """One run: a world state, the engines standing for it, and the path so far."""

    model: Model
    engines_for: EngineFactory = default_engines
    check_properties: bool = True
    shared: Shared | None = None  # rule 6; None: a fresh one
    full_check_every: int = 1  # rule 2
    world: World = field(init=False)
    state: Any = field(init=False)
    engines: WorldEngines = field(init=False)
    path: list[tuple[Any, Any]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if self.shared is None:
            self.shared = Shared(self.model, self.engines_for)
        assert self.shared.engines_for is self.engines_for, "a Shared serves one engine factory"
        self.world = self.shared.world
        self.state = self.world.init_states()[0]
        self.engines = self.engines_for(self.world)
        self.engines.datagram = self.shared.datagram  # the bytes the spec's packet was compared as
        self.always_checked = self.shared.always
        self._enabled: list[tuple[Any, Any]] = []
        self._enabled_at: Any = None
        self._checked_key: Hashable = None
        self._canonical: list[Any] = []

    @property
    def canonical(self) -> list[Any]:
        """The path's actions as the checker's world names them (``World.canonical_action``),
        computed when asked for."""
        world, done = self.world, len(self._canonical)
        for index in range(done, len(self.path)):
            before = self.path[index - 1][1] if index else self.world.init_states()[0]
            self._canonical.append(world.canonical_action(before, self.path[index][0]))
        return self._canonical

    def enabled(self) -> list[tuple[Any, Any]]:
        """The spec's enabled ``(action, next state)`` pairs here (cached per state)."""
        if self._enabled_at is not self.state:
            self._enabled = list(self.world.successors(self.state)) if self.world.within_bounds(self.state) else []
            self._enabled_at = self.state
        return self._enabled

    def step(self, action: Any, after: Any) -> Divergence | None:
        """Apply ``action`` (with its spec successor ``after``) to both sides and compare (rules 2, 3);
        under a timed engine factory, its clock takes the step (rule 9)."""
        timed = self.engines.timed
        if timed is not None:
            found: Divergence | None = timed.step(self, action, after)
            return found
        return self.take(action, after)

    def take(self, action: Any, after: Any) -> Divergence | None:
        """``step`` with the clock standing still: ``action`` drives the engines as it is."""
        world, before = self.world, self.state
        index = len(self.path) + 1
        member, packets, delivered = world.step_effects(before, action)
        number = world.app_payload(before, action)
        self.path.append((action, after))
        self.state = after
        acted = self.engines.drive(action, number, before)
        assert acted == member
        divergence = None
        if member is not None:
            divergence = self._compare_outputs(member, packets, delivered) or self.compare_state(member)
        if divergence is None and self.full_check_every and index % self.full_check_every == 0:
            divergence = self.check_all()
        if divergence is None and self.check_properties:
            divergence = self.check_always()
        return divergence

    def _compare_outputs(self, member: int, packets: tuple[Packet, ...], delivered: tuple[tuple[int, int], ...]
                         ) -> Divergence | None:
        assert self.shared is not None
        datagram = self.shared.datagram
        for packet in packets:  # rule 7: the codec against the documented layout, with large values
            disagreement = self.shared.codec_disagreement(self.engines, packet)
            if disagreement is not None:
                return self._divergence(f"codec of {type(packet.msg).__name__}", "the documented layout",
                                        disagreement)
        want = [(p.dst, datagram(p)) for p in packets]
        got = self.engines.datagrams(member)
        if got != want:
            return self._divergence(f"datagrams of {self.world.member_name(member)}", _show(want), _show(got))
        want_up = [self.engines.spec_delivery(src, payload) for src, payload in delivered]
        got_up = self.engines.deliveries(member)
        if got_up != want_up:
            return self._divergence(f"deliveries of {self.world.member_name(member)}", repr(want_up), repr(got_up))
        return None

    def compare_state(self, member: int) -> Divergence | None:
        assert self.shared is not None
        spec_view = self.shared.spec_view(self.engines, self.state, member)
        engine_view = self.engines.view(member)
        if spec_view != engine_view:
            return self._divergence(f"state of {self.world.member_name(member)}", repr(spec_view), repr(engine_view))
        return None

    def check_all(self) -> Divergence | None:
        """Every member's abstract state against the spec's, in the current state (rule 2); a timed
        run's tick in progress is finished first (rule 9)."""
        timed = self.engines.timed
        if timed is not None and timed.pending:
            divergence: Divergence | None = timed.flush(self)
            if divergence is not None:
                return divergence
        for member in range(self.world.n):
            divergence = self.compare_state(member)
            if divergence is not None:
                return divergence
        return None

    def check_always(self) -> Divergence | None:
        key = self.world.property_key(self.state)
        if key == self._checked_key:
            return None
        for prop in self.always_checked:
            if not prop.holds(self.state):
                return self._divergence(f"spec property {prop.name}", "holds", "violated")
        self._checked_key = key
        return None

    def _divergence(self, what: str, spec: str, engine: str) -> Divergence:
        text = self.world.format_action(self.path[-1][0]) if self.path else "(initial state)"
        return Divergence(len(self.path), text, what, spec, engine)

    def trace(self, divergence: Divergence, seed: int | None) -> Trace:
        """The run so far as a trace of the checker's (timestamp-renumbered) world (a timed run's
        lines say the time of each step, rule 9)."""
        reduced, timed = self.model.world, self.engines.timed
        texts = [self.world.format_action(a) for a, _ in self.path]
        if timed is not None:
            texts = [timed.label(index, text) for index, text in enumerate(texts)]
        return Trace(str(self.model.path), file_digest(self.model.path), "engine_agrees", "divergence",
                     tuple(reduced.action_to_json(a) for a in self.canonical), seed,
                     (*texts[:-1], f"{texts[-1]}  <- {divergence.what} differ"))


def _show(datagrams: list[tuple[int, bytes]]) -> str:
    return "[" + ", ".join(f"to {dst}: {describe_datagram(data)}" for dst, data in datagrams) + "]"


@dataclass(frozen=True)
class WalkResult:
    seed: int
    steps: int
    divergence: Divergence | None
    trace: Trace | None


def random_walk(model: Model, seed: int, steps: int, *, engines_for: EngineFactory = default_engines,
                check_properties: bool = True, shared: Shared | None = None) -> WalkResult:
    """Drive spec and engines through ``steps`` random enabled actions chosen by ``seed`` (uniformly
    among every enabled action; every member compared after every step)."""
    rng = random.Random(seed)
    run = Lockstep(model, engines_for, check_properties, shared)
    for taken in range(steps):
        enabled = run.enabled()
        if not enabled:
            return WalkResult(seed, taken, None, None)
        action, after = enabled[rng.randrange(len(enabled))]
        divergence = run.step(action, after)
        if divergence is not None:
            return WalkResult(seed, taken + 1, divergence, run.trace(divergence, seed))
    return WalkResult(seed, steps, None, None)


def replay_on_engines(model_path: Path, trace: Trace, *, engines_for: EngineFactory = default_engines,
                      protocol: str | None = None) -> tuple[Lockstep, Divergence | None]:
    """Re-run a checker trace (canonical timestamps) through spec and engines in lockstep
    (``protocol``: which protocol of a side-by-side model file).

    Each recorded action is matched, in the unreduced world, against the enabled actions by its
    canonical form. Returns the run (its final state is the trace's last state) and the first
    divergence, if any (spec properties are not treated as divergences here).
    """
    run = Lockstep(load(model_path, protocol=protocol), engines_for, check_properties=False)
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
