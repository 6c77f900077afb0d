"""A failed obligation made concrete: a counterexample-to-induction, validated on the spec, then
searched for among reachable states and drawn as a trace.

1. ``concrete_cti``: the obligation's query again, with a *bounded* pre-state (at most
   ``PACKETS`` packets of each type and ``SLOTS`` held slots, every number in 0..``SMALL``) so that
   z3's model is a finite, readable state; the obligation itself is unbounded.
2. ``validate_cti``: the pre-state is turned into spec nodes and packets
   (``unicast3.abstraction.concretize``), the step is run through ``spec/unicast3.py`` in a world
   built from a model file, and the result must break the invariant while the pre-state satisfies
   every invariant of the conjunction (all evaluated by ``ConcreteOps`` on the same formulas).
3. ``reachable_cti``: a bounded breadth-first search of the model file's world for a reachable
   state where every invariant holds and a step of the same action breaks the same invariant, then
   on from there to a violation of a checked property; the path is a trace ``seqcheck show`` draws.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import z3

from checks.explore.system import Always
from checks.explore.trace import Trace, make_trace, validate
from checks.symbolic.bounded import PACKETS, SLOTS, bounded
from checks.symbolic.crosscheck import CONCRETE, UNICAST3_BINDING, Binding
from checks.symbolic.obligations import COUNTEREXAMPLE, obligations
from checks.symbolic.ops import EMPTY
from checks.symbolic.system import INT, ModelSpec, State
from checks.symbolic.unicast3.abstraction import concretize
from checks.symbolic.unicast3.invariants import Invariant
from checks.symbolic.unicast3.model import UNICAST3
from models.modelfile import load
from models.world import World, WorldAction, WorldView


@dataclass
class ConcreteCti:
    obligation: str
    action: str
    invariant: str
    pre: State
    params: dict[str, Any]
    post: State | None = None  # the spec's post-state (after validate_cti)

    def describe(self) -> list[str]:
        shown = {k: v for k, v in self.pre.items() if v not in (frozenset(), {})}
        return [f"obligation {self.obligation}: counterexample to induction",
                f"  pre-state  {shown}", f"  step       {self.action} {self.params}",
                f"  post-state breaks {self.invariant}: {self.post if self.post is not None else '?'}"]


def _value(model: z3.ModelRef, term: Any, kind: Any) -> Any:
    if kind == INT:
        return model.eval(term, model_completion=True).as_long()
    if kind == "bool":
        return z3.is_true(model.eval(term, model_completion=True))
    raise ValueError(kind)


@dataclass(frozen=True)
class Subject:
    """What a CTI needs of a protocol: its symbolic model, how a symbolic state becomes spec nodes
    and packets, and the cross-check's binding (abstraction, action names) in a given world."""

    model: ModelSpec
    concretize: Callable[[State, Any], WorldView] | None  # None: its CTIs are only searched for (NAKACK4)
    binding: Callable[[World], Binding]


UNICAST3_SUBJECT = Subject(UNICAST3, concretize, lambda world: UNICAST3_BINDING)


def _read_state(model: z3.ModelRef, p: State, spec: ModelSpec) -> State:
    out = State()
    for name, kind in spec.fields.items():
        if isinstance(kind, str):
            out[name] = _value(model, p[name], kind)
        elif kind[0] == "set":
            out[name] = frozenset(
                tuple(_value(model, z3.Const(f"{name}.{i}.{j}", z3.IntSort() if k == INT else z3.BoolSort()), k)
                      for j, k in enumerate(kind[1:]))
                for i in range(PACKETS) if _value(model, z3.Bool(f"{name}.{i}.present"), "bool"))
    slots = {}
    for i in range(SLOTS):
        value = _value(model, z3.Int(f"r_buf.v{i}"), INT)
        key = _value(model, z3.Int(f"r_buf.k{i}"), INT)
        if value != EMPTY and model.eval(z3.Select(p.r_buf, key), model_completion=True).as_long() == value:
            slots[key] = value
    out["r_buf"] = slots
    # Fields of an entry that does not exist mean nothing: the spec has no entry to hold them.
    if not out.s_exists:
        out.update({f: 0 if spec.fields[f] == INT else False for f in spec.sender})
    if not out.r_exists:
        out.update({f: 0 if spec.fields[f] == INT else False for f in spec.receiver if f != "r_buf"}, r_buf={})
    return out


def concrete_cti(invariants: Sequence[Invariant], v: Any, action: str, invariant: str,
                 subject: Subject = UNICAST3_SUBJECT) -> ConcreteCti | None:
    """z3's counterexample to ``action / invariant``, bounded so that it reads as a concrete state."""
    spec = subject.model
    for result in obligations(invariants, v, model=spec, actions=(spec.action(action),),
                              only=lambda a, i: a == action and i == invariant, extra=bounded(spec.fields)):
        if result.result != COUNTEREXAMPLE or result.model is None or result.pre is None:
            return None
        params = {}
        for name, kind in spec.action(action).params:
            if isinstance(kind, str):
                params[name] = _value(result.model, result.params[name], kind)  # type: ignore[index]
            else:
                return None  # a set-valued parameter (XMIT_REQ): not made concrete here
        return ConcreteCti(result.name, action, invariant, _read_state(result.model, result.pre, spec), params)
    return None


def validate_cti(cti: ConcreteCti, invariants: Sequence[Invariant], world: World,
                 subject: Subject = UNICAST3_SUBJECT) -> str | None:
    """Run the CTI's step through the spec in ``world``; None if it is a genuine CTI, else why not."""
    v = world.cfg.variant
    binding = subject.binding(world)
    broken = [inv.name for inv in invariants if inv.state and not inv.state(CONCRETE, cti.pre, v)]
    if broken:
        return f"the pre-state breaks {', '.join(broken)}"
    if subject.concretize is None:
        return f"{subject.model.name}: no concretization of a symbolic state into spec nodes"
    base = world.view(world.init_states()[0])
    view = subject.concretize(cti.pre, base)
    if binding.abstract(view) != cti.pre:
        return "the pre-state does not survive the round trip through spec nodes"
    state = world.adopt(view)
    action = binding.world_action(world, view, cti.action, cti.params)
    if action is None:
        return f"{cti.action} {cti.params} names no packet of the pre-state"
    after = world.successor(state, action)
    cti.post = binding.abstract(world.view(after)) if after is not None else cti.pre
    target = next(inv for inv in invariants if inv.name == cti.invariant)
    if target.state is not None and target.state(CONCRETE, cti.post, v):
        return f"the spec's step keeps {cti.invariant}"
    return None


@dataclass
class Reached:
    states: int  # explored by the search
    path: list[tuple[Hashable, Hashable]]  # from the initial state to the end of the trace
    cti_step: int  # index in path of the step that breaks the invariant
    trace: Trace | None = None


def reachable_cti(model_path: Path, invariants: Sequence[Invariant], action: str, invariant: str,
                  max_states: int = 20_000, subject: Subject = UNICAST3_SUBJECT) -> Reached | None:
    """Bounded BFS of the model's world for a reachable CTI of ``action / invariant`` (see the
    module docstring), extended to the first violation of a checked safety property."""
    model = load(model_path)
    world = model.world
    v = world.cfg.variant
    binding = subject.binding(world)
    abstract = binding.abstract
    target = next(inv for inv in invariants if inv.name == invariant)

    def holds(state: tuple[int, ...]) -> bool:
        pre = abstract(world.view(state))
        return all(inv.state(CONCRETE, pre, v) for inv in invariants if inv.state)

    parents: Parents = {s: None for s in world.init_states()}
    queue = deque(parents)
    while queue and len(parents) < max_states:
        state = queue.popleft()
        good = holds(state)
        for act, after in world.successors(state):
            if after not in parents:
                parents[after] = (state, act)
                queue.append(after)
            if good and binding.action_instance(act)[0] == action and target.state is not None and not target.state(
                    CONCRETE, abstract(world.view(after)), v):
                prefix = _path(parents, state) + [(act, after)]
                suffix = _to_violation(world, after, max_states)
                if suffix is None:
                    continue
                path = prefix + suffix
                trace = replace(make_trace(world, model_path, _violated(world, path[-1][1]), "always", path),
                                origin=f"seqcheck prove: step {len(prefix)} is the first counterexample-to-induction "
                                       f"of {action} / {invariant} a bounded search reached, then the shortest "
                                       f"way on to a violation")
                validate(world, trace)
                return Reached(len(parents), path, len(prefix) - 1, trace)
    return None


Parents = dict[Any, tuple[Any, Hashable] | None]  # state -> (state before, action), None for an initial one


def _path(parents: Parents, state: Hashable) -> list[tuple[Hashable, Hashable]]:
    out = []
    while parents[state] is not None:
        before, act = parents[state]  # type: ignore[misc]
        out.append((act, state))
        state = before
    return out[::-1]


def _violated(world: World, state: Hashable) -> str:
    return next(p.name for p in world.properties if isinstance(p, Always) and not p.holds(state))


def _to_violation(world: World, start: tuple[int, ...], max_states: int) -> list[tuple[Hashable, Hashable]] | None:
    """Shortest path from ``start`` to a state breaking a checked safety property (none on the way)."""
    safety = [p for p in world.properties if isinstance(p, Always)]
    parents: Parents = {start: None}
    queue = deque([start])
    while queue and len(parents) < max_states:
        state = queue.popleft()
        if any(not p.holds(state) for p in safety):
            return _path(parents, state)
        for act, after in world.successors(state):
            if after not in parents:
                parents[after] = (state, act)
                queue.append(after)
    return None


def checker_passes_through(model_path: Path, invariants: Sequence[Invariant], action: str, invariant: str,
                           subject: Subject = UNICAST3_SUBJECT) -> str | None:
    """Does the explicit checker's own counterexample of ``model_path`` take the CTI's step (a
    state satisfying every invariant, then ``action`` breaking ``invariant``)? A sentence saying
    where, or None."""
    found = checker_trace_through(model_path, invariants, action, (invariant,), subject)
    if found is None:
        return None
    trace, step, _ = found
    return (f"the checker's counterexample ({len(trace.actions)} steps, {trace.prop}) takes the CTI's step "
            f"at step {step + 1}: {trace.summary[step]}")


def checker_trace_through(model_path: Path, invariants: Sequence[Invariant], action: str, targets: Sequence[str],
                          subject: Subject = UNICAST3_SUBJECT) -> tuple[Trace, int, str] | None:
    """The explicit checker's own counterexample of ``model_path``, the index of its first step that
    is ``action`` from a state satisfying every invariant to one breaking one of ``targets``, and
    that invariant's name; None if it takes no such step (or the model passes)."""
    from checks.check import check_model

    model = load(model_path)
    outcome = check_model(model, trace_dir=None)
    if outcome.trace is None:
        return None
    world = model.world
    v = world.cfg.variant
    binding = subject.binding(world)
    path = validate(world, outcome.trace)
    states = [world.init_states()[0]] + [s for _, s in path]
    for step, (act, after) in enumerate(path):
        if binding.action_instance(cast(WorldAction, act))[0] != action:
            continue
        pre, post = binding.abstract(world.view(states[step])), binding.abstract(world.view(after))
        if not all(inv.state(CONCRETE, pre, v) for inv in invariants if inv.state):
            continue
        for target in invariants:
            if target.name in targets and target.state is not None and not target.state(CONCRETE, post, v):
                return outcome.trace, step, target.name
    return None
