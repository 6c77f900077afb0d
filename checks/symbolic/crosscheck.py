"""Cross-validation of a symbolic model against its spec (``spec/unicast3.py``, ``spec/unicast2.py``)
on explicit states; a ``Binding`` says how one model maps onto its spec and world.

A bounded breadth-first search of a shipped two-member model's world (timestamps *not* renumbered,
so they are the spec's real values) visits up to ``max_states`` states, and seeded random walks
(fuzzing, as ``checks/fuzz`` does on the engines) go deeper. On each state ``w``:

1. concrete -> symbolic: for every world step ``w --a--> w'``, the symbolic relation of ``a``'s
   action holds on (abstract(w), abstract(w')) with ``a``'s parameters, evaluated by
   ``ConcreteOps`` on the very source z3 proves things about;
2. symbolic -> spec: every instance of a symbolic action whose guard holds on abstract(w) (each
   packet in flight, delivered or duplicated; each timer; the removal hook; each view) is enabled
   in the spec (``enabled_timers``, the world's rule 6 gate), and the spec's step (or no step, when
   the handler changes nothing) satisfies the relation too;
3. the symbolic invariants that restate a spec property agree with the spec's own predicate.

Declared differences (not mismatches): timers a model file switches off (``[timers]``) are not
required to be enabled; budgets (loss, duplicates, removals, sends, view scripts) bound the
world, never the symbolic model; an XMIT_REQ delivery symbolically enabled for one seqno of a
request that names several is not a single spec step (the symbolic action over-approximates).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checks.symbolic.ops import ConcreteOps
from checks.symbolic.system import Action, State
from checks.symbolic.unicast3 import abstraction as u3_abstraction
from checks.symbolic.unicast3.model import ACTION_BY_NAME
from models.modelfile import load
from models.world import InstallView, Packet, World, WorldAction
from spec import unicast3 as u3

CONCRETE = ConcreteOps()


@dataclass(frozen=True)
class Binding:
    """How one symbolic model maps onto its spec and world (the abstraction module's functions)."""

    actions: dict[str, Action]  # by name (a live dict: tests swap an action to plant a drift)
    abstract: Callable[[Any], State]
    action_instance: Callable[[WorldAction], tuple[str, dict[str, Any]]]
    world_action: Callable[[World, Any, str, dict[str, Any]], WorldAction | None]
    spec: Any  # the spec module: enabled_timers, on_view, Timer
    timer_of_action: dict[str, tuple[int, int]]  # action -> (member, timer kind)
    packet_params: dict[str, tuple[str, tuple[str, ...]]]  # delivery action -> (network field, parameters)
    switched_off: Callable[[Any, int], bool]  # is this timer kind disabled by the model's [timers]?
    fixed_params: dict[str, dict[str, Any]] = field(default_factory=dict)  # parameters the world's config fixes
    # check 2 for a model whose world is not ``models/world.py``'s (NAKACK4): (world, state, view,
    # abstract state, variant) -> (instances checked, mismatches); None: the point-to-point check
    enabled_check: Callable[[Any, tuple[int, ...], Any, State, Any], tuple[int, list[str]]] | None = None


UNICAST3_BINDING = Binding(
    ACTION_BY_NAME, u3_abstraction.abstract, u3_abstraction.action_instance, u3_abstraction.world_action, u3,
    u3_abstraction.TIMER_OF_ACTION,
    {"deliver_data": ("n_data", ("seqno", "conn", "first")), "deliver_ack": ("n_ack", ("seqno", "conn", "ts")),
     "deliver_sfs": ("n_sfs", ("ts",)), "deliver_close": ("n_close", ("conn",))},
    lambda cfg, kind: (kind in (u3.IDLE_SEND, u3.IDLE_RECV) and not cfg.conn_expiry) or (
        kind in (u3.CLOSE_SEND, u3.CLOSE_RECV) and not cfg.conn_close))


@dataclass
class CrossCheckReport:
    model: str
    states: int = 0
    steps: int = 0
    instances: int = 0
    agreements: int = 0
    complete: bool = False  # the whole reachable set fit in max_states
    mismatches: list[str] = field(default_factory=list)
    witnessed: set[str] = field(default_factory=set)  # actions seen changing a state where ``invariant`` holds


def load_world(path: Path) -> World:
    """The model file's world with real timestamps (rule 5's renumbering off)."""
    world = load(path, reduce_timestamps=False).world
    if not isinstance(world, World):
        raise ValueError(f"{path}: not a point-to-point world")
    return world


Agreement = tuple[str, Callable[[Any], bool], Callable[[State], bool]]


def crosscheck(path: Path, max_states: int = 2000, agreements: tuple[Agreement, ...] = (),
               invariant: Callable[[State], bool] | None = None, binding: Binding = UNICAST3_BINDING,
               world: World | None = None, walks: int = 0, depth: int = 40, seed: int = 0) -> CrossCheckReport:
    """Run checks 1-3 of the module docstring on up to ``max_states`` states of ``path``'s world
    (breadth first), then on every state of ``walks`` random walks of up to ``depth`` steps from
    the initial state (each step a uniformly chosen successor; ``random.Random(seed)``: the same
    seed, the same walks), which reach deeper than the breadth-first bound.
    ``agreements``: (name, spec predicate of a WorldView, symbolic invariant of a State).
    ``invariant``: a symbolic invariant; the report names every action seen changing a state that
    satisfies it (concrete witnesses that the proofs' hypotheses Inv and T_a are not vacuous)."""
    world = load_world(path) if world is None else world  # ``world``: path's world, e.g. with another variant
    report = CrossCheckReport(str(path))
    seen = set(world.init_states())
    queue = deque(seen)
    while queue and len(report.mismatches) < 5:
        state = queue.popleft()
        for after in _check_state(world, binding, state, report, agreements, invariant):
            if after not in seen and len(seen) < max_states:
                seen.add(after)
                queue.append(after)
    report.complete = not queue and len(seen) < max_states
    rng = random.Random(seed)
    for _ in range(walks):
        state = world.init_states()[0]
        for _ in range(depth):
            successors = _check_state(world, binding, state, report, agreements, invariant)
            if not successors or len(report.mismatches) >= 5:
                break
            state = rng.choice(successors)
    return report


def _check_state(world: World, binding: Binding, state: tuple[int, ...], report: CrossCheckReport,
                 agreements: tuple[Agreement, ...], invariant: Callable[[State], bool] | None
                 ) -> list[tuple[int, ...]]:
    """Checks 1-3 on one state, recorded in ``report``; its successors."""
    variant = world.cfg.variant
    report.states += 1
    view = world.view(state)
    pre = binding.abstract(view)
    pre_holds = invariant is not None and invariant(pre)
    for name, spec_holds, symbolic_holds in agreements:
        report.agreements += 1
        if spec_holds(view) != symbolic_holds(pre):
            report.mismatches.append(f"{name}: spec says {spec_holds(view)} on {pre}")
    successors = []
    for action, after in world.successors(state):
        report.steps += 1
        name, params = binding.action_instance(action)
        post = binding.abstract(world.view(after))
        if not binding.actions[name].relation(CONCRETE, pre, post, params, variant):
            report.mismatches.append(f"step {action} ({name} {params}) breaks the symbolic relation: {pre} -> {post}")
        elif pre_holds and post != pre:
            report.witnessed.add(name)
        successors.append(after)
    if binding.enabled_check is not None:
        checked, problems = binding.enabled_check(world, state, view, pre, variant)
        report.instances += checked
        report.mismatches.extend(problems)
        return successors
    for name, params, instance in _enabled_instances(binding, world, view, pre, variant):
        report.instances += 1
        problem = _spec_agrees(binding, world, state, view, pre, name, params, instance, variant)
        if problem:
            report.mismatches.append(problem)
    return successors


def _enabled_instances(binding: Binding, world: World, view: Any, pre: State, variant: Any
                       ) -> Iterator[tuple[str, dict[str, Any], WorldAction | None]]:
    """Every symbolic action instance whose guard holds on ``pre`` (parameters from the concrete
    packets; ``lose`` and ``send`` are left out: budgets, not the spec, bound them)."""
    for action in binding.actions.values():
        if action.name in ("lose", "send"):
            continue
        for params in _parameter_choices(binding, action.name, pre):
            if action.guard(CONCRETE, pre, params, variant):
                yield action.name, params, binding.world_action(world, view, action.name, params)


def _parameter_choices(binding: Binding, name: str, pre: State) -> Iterator[dict[str, Any]]:
    if name in binding.packet_params:
        field_name, names = binding.packet_params[name]
        for key in sorted(pre[field_name]):
            for keep in (False, True):
                yield {**dict(zip(names, key)), "keep": keep}
    elif name == "deliver_xreq":
        for keep in (False, True):
            for seqno in sorted(pre.n_xreq):
                yield {"R": frozenset({seqno}), "keep": keep}
    elif name in ("view_a", "view_b"):
        yield {"member": True}
        yield {"member": False}
    else:
        yield dict(binding.fixed_params.get(name, {}))


def _spec_agrees(binding: Binding, world: World, state: tuple[int, ...], view: Any, pre: State, name: str,
                 params: dict[str, Any], action: WorldAction | None, variant: Any) -> str | None:
    """Check 2 for one enabled symbolic instance; a description of the mismatch, or None."""
    if name == "deliver_xreq" and action is None:
        return None  # a single seqno of a multi-seqno XMIT_REQ: not one spec step (over-approximation)
    if action is None:
        return f"{name} {params} is enabled symbolically but names no packet in flight"
    spec = binding.spec
    if name in binding.timer_of_action:
        member, kind = binding.timer_of_action[name]
        timers = {t.kind for t in spec.enabled_timers(world.cfg, view.nodes[member])}
        if kind not in timers:
            return None if binding.switched_off(world.cfg, kind) else (
                f"{name} is enabled symbolically, not in the spec, on {pre}")
        gate = world.adapter.quiet_connection(member, spec.Timer(kind, 1 - member))
        if gate is not None and not world.quiet(state[world.n], *gate):
            return f"{name} is enabled symbolically, but rule 6 forbids it, on {pre}"
    if name == "remove_recv" and not world.quiet(state[world.n], 0, 1):
        return f"remove_recv is enabled symbolically, but rule 6 forbids it, on {pre}"
    if isinstance(action, InstallView):  # any view, not only the model's script: the spec's handler
        step = spec.on_view(world.cfg, view.nodes[action.member], frozenset(action.members))
        nodes = tuple(step.node if i == action.member else n for i, n in enumerate(view.nodes))
        sent = {Packet(action.member, e.dst, type(e.msg).__name__, e.msg) for e in step.effects
                if world.adapter.is_send(e)}
        post = binding.abstract(replace(view, nodes=nodes, network=tuple(sorted(set(view.network) | sent))))
    else:
        after = world.successor(state, action)
        post = pre if after is None else binding.abstract(world.view(after))
    if not binding.actions[name].relation(CONCRETE, pre, post, params, variant):
        return f"the spec's {action} breaks the symbolic relation of {name} {params}: {pre} -> {post}"
    return None


CROSSCHECK_WALKS, CROSSCHECK_DEPTH = 40, 60  # the random walks ``seqcheck prove`` adds to each cross-check


def crosscheck_detail(report: CrossCheckReport, seed: int) -> str:
    if report.mismatches:
        return report.mismatches[0][:300]
    scope = "every reachable one" if report.complete else "bounded BFS"
    return (f"{report.states} states checked ({scope} and random walks, seed {seed}), {report.steps} steps, "
            f"{report.instances} enabled instances")
