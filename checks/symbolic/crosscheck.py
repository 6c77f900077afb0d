"""Cross-validation of the symbolic UNICAST3 model against ``spec/unicast3.py`` on explicit states.

A bounded breadth-first search of a shipped two-member model's world (timestamps *not* renumbered,
so they are the spec's real values) visits up to ``max_states`` states. On each state ``w``:

1. concrete -> symbolic: for every world step ``w --a--> w'``, the symbolic relation of ``a``'s
   action holds on (abstract(w), abstract(w')) with ``a``'s parameters, evaluated by
   ``ConcreteOps`` on the very source z3 proves things about;
2. symbolic -> spec: every instance of a symbolic action whose guard holds on abstract(w) (each
   packet in flight, delivered or duplicated; each timer; the removal hook; each view) is enabled
   in the spec (``enabled_timers``, the world's rule 6 gate), and the spec's step (or no step, when
   the handler changes nothing) satisfies the relation too;
3. the symbolic invariants that restate a spec property agree with the spec's own predicate.

Declared differences (not mismatches): timers a model file switches off (``[timers]``) are not
required to be enabled, and budgets (loss, duplicates, removals, sends, view scripts) bound the
world, never the symbolic model.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from checks.symbolic.ops import ConcreteOps
from checks.symbolic.unicast3_abstraction import TIMER_OF_ACTION, abstract, action_instance, world_action
from checks.symbolic.unicast3_model import ACTION_BY_NAME, State
from models.modelfile import load
from models.world import InstallView, World, WorldAction
from spec import unicast3 as u3

CONCRETE = ConcreteOps()


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


def crosscheck(path: Path, max_states: int = 2000,
               agreements: tuple[tuple[str, Callable[[Any], bool], Callable[[State], bool]], ...] = (),
               invariant: Callable[[State], bool] | None = None) -> CrossCheckReport:
    """Run checks 1-3 of the module docstring on up to ``max_states`` states of ``path``'s world.
    ``agreements``: (name, spec predicate of a WorldView, symbolic invariant of a State).
    ``invariant``: a symbolic invariant; the report names every action seen changing a state that
    satisfies it (concrete witnesses that the proofs' hypotheses Inv and T_a are not vacuous)."""
    world = load_world(path)
    variant = world.cfg.variant
    report = CrossCheckReport(str(path))
    seen = set(world.init_states())
    queue = deque(seen)
    while queue and len(report.mismatches) < 5:
        state = queue.popleft()
        report.states += 1
        view = world.view(state)
        pre = abstract(view)
        pre_holds = invariant is not None and invariant(pre)
        for name, spec_holds, symbolic_holds in agreements:
            report.agreements += 1
            if spec_holds(view) != symbolic_holds(pre):
                report.mismatches.append(f"{name}: spec says {spec_holds(view)} on {pre}")
        for action, after in world.successors(state):
            report.steps += 1
            name, params = action_instance(action)
            post = abstract(world.view(after))
            if not ACTION_BY_NAME[name].relation(CONCRETE, pre, post, params, variant):
                report.mismatches.append(f"step {action} ({name} {params}) breaks the symbolic relation: "
                                         f"{pre} -> {post}")
            elif pre_holds and post != pre:
                report.witnessed.add(name)
            if after not in seen and len(seen) < max_states:
                seen.add(after)
                queue.append(after)
        for name, params, instance in _enabled_instances(world, view, pre, variant):
            report.instances += 1
            problem = _spec_agrees(world, state, view, pre, name, params, instance, variant)
            if problem:
                report.mismatches.append(problem)
    report.complete = not queue and len(seen) < max_states
    return report


def _enabled_instances(world: World, view: Any, pre: State, variant: u3.Variant
                       ) -> Iterator[tuple[str, dict[str, Any], WorldAction | None]]:
    """Every symbolic action instance whose guard holds on ``pre`` (parameters from the concrete
    packets; ``lose`` and ``send`` are left out: budgets, not the spec, bound them)."""
    for action in ACTION_BY_NAME.values():
        if action.name in ("lose", "send"):
            continue
        for params in _parameter_choices(action.name, pre):
            if action.guard(CONCRETE, pre, params, variant):
                yield action.name, params, world_action(world, view, action.name, params)


def _parameter_choices(name: str, pre: State) -> Iterator[dict[str, Any]]:
    packets = {"deliver_data": ("n_data", ("seqno", "conn", "first")),
               "deliver_ack": ("n_ack", ("seqno", "conn", "ts")),
               "deliver_sfs": ("n_sfs", ("ts",)), "deliver_close": ("n_close", ("conn",))}
    if name in packets:
        field_name, names = packets[name]
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
        yield {}


def _spec_agrees(world: World, state: tuple[int, ...], view: Any, pre: State, name: str, params: dict[str, Any],
                 action: WorldAction | None, variant: u3.Variant) -> str | None:
    """Check 2 for one enabled symbolic instance; a description of the mismatch, or None."""
    if name == "deliver_xreq" and action is None:
        return None  # a single seqno of a multi-seqno XMIT_REQ: not one spec step (over-approximation)
    if action is None:
        return f"{name} {params} is enabled symbolically but names no packet in flight"
    if name in TIMER_OF_ACTION:
        member, kind = TIMER_OF_ACTION[name]
        node = view.nodes[member]
        timers = {t.kind for t in u3.enabled_timers(world.cfg, node)}
        if kind not in timers:
            switched_off = (kind in (u3.IDLE_SEND, u3.IDLE_RECV) and not world.cfg.conn_expiry) or (
                kind in (u3.CLOSE_SEND, u3.CLOSE_RECV) and not world.cfg.conn_close)
            return None if switched_off else f"{name} is enabled symbolically, not in the spec, on {pre}"
        gate = world.adapter.quiet_connection(member, u3.Timer(kind, 1 - member))
        if gate is not None and not world.quiet(state[world.n], *gate):
            return f"{name} is enabled symbolically, but rule 6 forbids it, on {pre}"
    if name == "remove_recv" and not world.quiet(state[world.n], 0, 1):
        return f"remove_recv is enabled symbolically, but rule 6 forbids it, on {pre}"
    if isinstance(action, InstallView):  # any view, not only the model's script: the spec's handler
        node = u3.on_view(world.cfg, view.nodes[action.member], frozenset(action.members)).node
        nodes = tuple(node if i == action.member else n for i, n in enumerate(view.nodes))
        post = abstract(replace(view, nodes=nodes))
    else:
        after = world.successor(state, action)
        post = pre if after is None else abstract(world.view(after))
    if not ACTION_BY_NAME[name].relation(CONCRETE, pre, post, params, variant):
        return f"the spec's {action} breaks the symbolic relation of {name} {params}: {pre} -> {post}"
    return None
