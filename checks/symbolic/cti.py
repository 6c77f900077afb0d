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
from checks.explore.trace import Trace, TraceError, make_trace, validate
from checks.stopwatch import Stopwatch
from checks.symbolic.bounded import PACKETS, SLOTS, SMALL, bounded
from checks.symbolic.crosscheck import CONCRETE, UNICAST3_BINDING, Binding
from checks.symbolic.obligations import COUNTEREXAMPLE, UNKNOWN, obligations
from checks.symbolic.ops import EMPTY, Z3Ops
from checks.symbolic.system import INT, ModelSpec, State, symbolic_params
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
    view: WorldView | None = None  # the pre-state as spec nodes and packets (after validate_cti)
    world_action: Any = None  # the step as a world action (after validate_cti)
    after: WorldView | None = None  # the spec's post-state as nodes and packets (after validate_cti)
    pinned: tuple[str, ...] = ()  # fields the world fixes (not shown)

    def describe(self) -> list[str]:
        shown = {k: v for k, v in self.pre.items() if v not in (frozenset(), {}) and k not in self.pinned}
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
    and packets, and the cross-check's binding (abstraction, action names) in a given world.
    ``pins(world)``: fields that are constants of the world (a capacity, NAKACK2's views of its
    members), given to z3 as values and left out of the bounded pre-state; ``scope(world)``: a side
    condition naming only the world's members (a concrete state must fit the world's nodes)."""

    model: ModelSpec
    concretize: Callable[[State, Any], WorldView] | None  # None: its CTIs are only searched for
    binding: Callable[[World], Binding]
    pins: Callable[[Any], dict[str, Any]] | None = None
    scope: Callable[[Any], Callable[[Z3Ops, State], Any]] | None = None


UNICAST3_SUBJECT = Subject(UNICAST3, concretize, lambda world: UNICAST3_BINDING)


def _read_state(model: z3.ModelRef, p: State, spec: ModelSpec, pinned: dict[str, Any]) -> State:
    """z3's bounded pre-state as concrete values (``bounded``'s constants: sets of at most PACKETS
    tuples, maps of at most SLOTS entries); ``pinned`` fields as given."""
    out = State()
    for name, kind in spec.fields.items():
        if name in pinned:
            out[name] = pinned[name]
        elif isinstance(kind, str):
            out[name] = _value(model, p[name], kind)
        elif kind[0] == "set":
            out[name] = frozenset(
                tuple(_value(model, z3.Const(f"{name}.{i}.{j}", z3.IntSort() if k == INT else z3.BoolSort()), k)
                      for j, k in enumerate(kind[1:]))
                for i in range(PACKETS) if _value(model, z3.Bool(f"{name}.{i}.present"), "bool"))
        else:
            out[name] = _read_map(model, p[name], name)
    # Fields of an entry that does not exist mean nothing: the spec has no entry to hold them.
    if "s_exists" in out and not out.s_exists:
        out.update({f: 0 if spec.fields[f] == INT else False for f in spec.sender})
    if "r_exists" in out and not out.r_exists:
        out.update({f: 0 if spec.fields[f] == INT else False for f in spec.receiver if f != "r_buf"}, r_buf={})
    return out


def _read_map(model: z3.ModelRef, term: Any, name: str) -> dict[int, int]:
    slots = {}
    for i in range(SLOTS):
        value = _value(model, z3.Int(f"{name}.v{i}"), INT)
        key = _value(model, z3.Int(f"{name}.k{i}"), INT)
        if value != EMPTY and model.eval(z3.Select(term, key), model_completion=True).as_long() == value:
            slots[key] = value
    return slots


def _pinned(fields: dict[str, Any], pinned: dict[str, Any]) -> Callable[[Z3Ops, State], Any]:
    """Side condition: every pinned field equals its value (an int or bool, a set of tuples, a map);
    the rest bounded."""
    rest = bounded({name: kind for name, kind in fields.items() if name not in pinned})

    def condition(o: Z3Ops, p: State) -> Any:
        return z3.And(rest(o, p), *[p[name] == _term(fields[name], value, name) for name, value in pinned.items()])
    return condition


def _term(kind: Any, value: Any, name: str) -> Any:
    """A concrete value of a field (or parameter) of ``kind`` as a z3 term."""
    if isinstance(value, (bool, int)):
        return value
    if kind[0] == "map":
        out = z3.K(z3.IntSort(), z3.IntVal(EMPTY))
        for key, entry in sorted(value.items()):
            out = z3.Store(out, key, entry)
        return out
    keys = [z3.Const(f"{name}.pin{j}", z3.IntSort() if k == INT else z3.BoolSort()) for j, k in enumerate(kind[1:])]
    return z3.Lambda(keys, z3.Or(*[z3.And(*[key == x for key, x in zip(keys, t)]) for t in sorted(value)]))


def _still_a_cti(invariants: Sequence[Invariant], v: Any, spec: ModelSpec, action: str, invariant: str,
                 pre: State, params: dict[str, Any]) -> bool:
    """Is the state and step as read from z3's model still a counterexample (every field and parameter
    pinned to what was read)? Reading a bounded model back can lose what z3 meant (an array's value
    outside the slots read): such a reading is not reported as a CTI."""
    declared = dict(spec.action(action).params)
    terms = symbolic_params(spec.action(action))  # the constants obligations() names the parameters by
    pin_all = _pinned(spec.fields, dict(pre))

    def exact(o: Z3Ops, p: State) -> Any:
        chosen = [terms[name] == _term(kind, params[name], name) for name, kind in declared.items()]
        return z3.And(pin_all(o, p), *chosen)

    results = list(obligations(invariants, v, model=spec, actions=(spec.action(action),),
                               only=lambda a, i: a == action and i == invariant, extra=exact))
    return results[0].result == COUNTEREXAMPLE


def concrete_cti(invariants: Sequence[Invariant], v: Any, action: str, invariant: str,
                 subject: Subject = UNICAST3_SUBJECT, world: Any = None,
                 seeds: Sequence[int] = (0, 1, 2, 3)) -> ConcreteCti | None:
    """z3's counterexample to ``action / invariant``, bounded so that it reads as a concrete state;
    with ``world``, the subject's pins and scope for that world's members and settings. A bounded
    query is usually answered quickly, but its work varies a lot with z3's random seed (for one
    of four seeds, many times the others): each of ``seeds`` is tried in turn, each query within
    its work budget (``checks/symbolic/budget``: z3's rlimit, so the seed that answers is the same
    on any machine)."""
    spec = subject.model
    pinned = subject.pins(world) if subject.pins is not None and world is not None else {}
    side = _pinned(spec.fields, pinned)
    scope = subject.scope(world) if subject.scope is not None and world is not None else None

    def extra(o: Z3Ops, p: State) -> Any:
        return side(o, p) if scope is None else z3.And(side(o, p), scope(o, p))

    undecided = True
    for seed in seeds:
        z3.set_param("smt.random_seed", seed)
        try:
            results = list(obligations(invariants, v, model=spec, actions=(spec.action(action),),
                                       only=lambda a, i: a == action and i == invariant, extra=extra))
        finally:
            z3.set_param("smt.random_seed", 0)
        result = results[0]
        undecided = undecided and result.result == UNKNOWN
        if result.result == COUNTEREXAMPLE and result.model is not None and result.pre is not None:
            params = _read_params(result.model, result.params or {}, spec.action(action).params, world)
            if params is None:
                return None
            pre = _read_state(result.model, result.pre, spec, pinned)
            if _still_a_cti(invariants, v, spec, action, invariant, pre, params):
                return ConcreteCti(result.name, action, invariant, pre, params, pinned=tuple(pinned))
        elif result.result != UNKNOWN:
            return None
    if undecided:
        raise Undecided(f"z3's work budget ran out for all {len(seeds)} seeds")
    return None


class Undecided(Exception):
    """No seed of ``concrete_cti`` decided the bounded query within its work budget: neither a
    counterexample nor its absence is known (reported as ``unknown``, never as a failure)."""


def validated_cti(invariants: Sequence[Invariant], v: Any, action: str, invariant: str, world: Any,
                  subject: Subject = UNICAST3_SUBJECT) -> tuple[str, str, ConcreteCti | None]:
    """``concrete_cti`` then ``validate_cti``: ("validated", its description, the CTI), ("not
    validated", why, None) or ("unknown", why, None) when z3's budget decided nothing."""
    try:
        cti = concrete_cti(invariants, v, action, invariant, subject)
    except Undecided as why:
        return "unknown", str(why), None
    problem = "z3 gave no bounded counterexample" if cti is None else validate_cti(cti, invariants, world, subject)
    if cti is None or problem is not None:
        return "not validated", problem or "", None
    return "validated", " ".join(" ".join(cti.describe()[1:3]).split()), cti


def _read_params(model: z3.ModelRef, terms: dict[str, Any], kinds: Sequence[tuple[str, Any]], world: Any
                 ) -> dict[str, Any] | None:
    """An action's parameters in z3's model; a set of numbers (a view) read on the world's members
    (``validate_cti`` runs the spec on what is read); None for another set-valued one (XMIT_REQ)."""
    params = {}
    for name, kind in kinds:
        term = terms[name]
        if isinstance(kind, str):
            params[name] = _value(model, term, kind)
        elif len(kind) == 2 and kind[1] == INT:
            span = range(getattr(world, "n", SMALL + 3))
            params[name] = frozenset((x,) for x in span if _value(model, z3.Select(term, x), "bool"))
        else:
            return None
    return params


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
        return f"the pre-state does not survive the round trip through spec nodes: {binding.abstract(view)}"
    cti.view = view
    action = binding.world_action(world, view, cti.action, cti.params)
    if action is None:
        return f"{cti.action} {cti.params} names no packet of the pre-state"
    cti.world_action = action
    if hasattr(world, "stimulus_of"):  # the multicast world: the handler itself, any view (not only scripted)
        cti.after = _multicast_step(world, view, action)
    else:
        after = world.successor(world.adopt(view), action)
        cti.after = world.view(after) if after is not None else view
    cti.post = binding.abstract(cti.after)
    target = next(inv for inv in invariants if inv.name == cti.invariant)
    if target.state is not None and target.state(CONCRETE, cti.post, v):
        return f"the spec's step keeps {cti.invariant}"
    return None


def _multicast_step(world: Any, view: WorldView, action: Any) -> WorldView:
    """``view`` after ``action`` in a multicast world: the acting member's handler (the adapter's, as
    the world calls it), its packets sent, a delivered packet consumed. A view or merge need not be
    the member's next scripted one: the handler is the spec's for any view."""
    from dataclasses import replace as replaced

    from models.world import DeliverPacket, Packet

    acting = world.stimulus_of(world.adopt(view), action)
    network = set(view.network)
    if isinstance(action, DeliverPacket):
        network.discard(action.packet)
    if acting is None:
        return replaced(view, network=tuple(sorted(network, key=repr)))
    member, stimulus = acting
    node, effects = world.adapter.handle(world.cfg, view.nodes[member], stimulus)
    network |= {Packet(member, e.dst, type(e.msg).__name__, e.msg) for e in effects if world.adapter.is_send(e)}
    nodes = tuple(node if i == member else n for i, n in enumerate(view.nodes))
    return replaced(view, nodes=nodes, network=tuple(sorted(network, key=repr)))


def replayed_cti(invariants: Sequence[Invariant], v: Any, action: str, invariant: str, subject: Subject,
                 world: Any, drawing: Path) -> tuple[str, float, float, str]:
    """z3's counterexample to ``action / invariant`` under ``v`` made concrete for ``world`` (its
    members and constants), replayed on the spec and, when it replays, drawn (``draw_cti``) into the
    file ``drawing``: (result "validated" or "not validated", wall seconds, CPU seconds, detail)."""
    watch = Stopwatch()
    try:
        cti = concrete_cti(invariants, v, action, invariant, subject, world)
    except Undecided as why:
        return "unknown", *watch.elapsed(), str(why)
    problem = "z3 gave no bounded counterexample" if cti is None else validate_cti(cti, invariants, world, subject)
    if cti is None or problem is not None:
        return "not validated", *watch.elapsed(), problem or ""
    drawing.parent.mkdir(parents=True, exist_ok=True)
    drawing.write_text(draw_cti(world, cti))
    detail = " ".join(" ".join(cti.describe()[1:3]).split()) + f"; drawn in {drawing}"
    return "validated", *watch.elapsed(), detail


def draw_cti(world: Any, cti: ConcreteCti) -> str:
    """A validated CTI (``validate_cti`` filled in its views) as text: every member's pre-state as the
    chart words it, then the message-sequence chart of its one step from there, and what it breaks."""
    from models.chart import chart, member_labels

    assert cti.view is not None and cti.after is not None
    names = member_labels(world)
    lines = [f"{cti.obligation}: a counterexample-to-induction of the symbolic model, replayed on the spec",
             "pre-state (every invariant holds):"]
    for node in cti.view.nodes:
        lines += [f"  {names[node.me]}: {line}" for line in world.adapter.describe_node(node, names)]
    lines += [f"  in flight: m{i} {world.adapter.format_message(p.kind, p.msg)} from {names[p.src]} to {names[p.dst]}"
              for i, p in enumerate(cti.view.network, 1)]
    start, after = world.adopt(cti.view), world.adopt(cti.after)
    drawing = chart(cast(Any, _StartingAt(world, start)), [(cti.world_action, after)],
                    footer=[f"breaks {cti.invariant} (the symbolic invariant, on the spec's post-state)"])
    return "\n".join(lines) + "\n" + drawing


class _StartingAt:
    """``world`` with another initial state (the chart draws from a CTI's pre-state)."""

    def __init__(self, world: Any, start: Any) -> None:
        self._world, self._start = world, start

    def init_states(self) -> list[Any]:
        return [self._start]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world, name)


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
        if not world.within_bounds(state):
            continue  # beyond max_in_flight: the checker expands nothing there, and no trace goes on from it
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
                try:
                    validate(world, trace)
                except TraceError:  # a checked property already broke on the way: no trace to draw from here
                    continue
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
        if not world.within_bounds(state):
            continue
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
