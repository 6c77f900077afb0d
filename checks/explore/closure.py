"""The fault-free continuations of one state: which liveness goals they reach. One search, shared by
the fuzz's end-of-run judgement (``checks/fuzz/run.py``) and the trace validator (``checks/explore/trace.py``).

Rules
-----
1. The question of every liveness property (``checks.explore.system.Liveness``) at one state: does
   some path of actions that are no fault (``is_fault``) reach a state where the goal holds? A
   state beyond the model's bounds on the way counts as reaching it (its continuations are
   unknown; the checker gives it the same benefit of the doubt), and so does a search that meets
   more than ``max_states`` distinct states (``BOUND``): the bound is the only way the answer can be
   wrong, always towards "live", and whoever reports a verdict says when it was hit.
2. Breadth-first, one search for all the properties asked about: the states are met in the same
   order as a search for any one of them alone, and a property is decided at the same state
   (its first goal state, the first state beyond the bounds, the state whose successors pass
   ``max_states``) with the same count of states met, so every verdict is the one separate searches
   give; the search stops once every property is decided.
3. Only the fault-free successors are computed when the system offers ``progress_successors``
   (``checks.explore.system.ProgressSuccessors``: the pairs of ``successors`` whose action is no fault; the
   multicast world does, and skips the faults' next states, a third of the work); else the faults are
   filtered out of ``successors``. Goals are evaluated once per ``property_key`` when the system has
   one and the properties are its own.
4. Likely recoveries first: before the breadth-first search, a depth-first probe follows the first
   fault-free successor of each state (in the worlds: deliver what is in flight, then the timers,
   views and joins) for at most ``PROBE_STATES`` states. The verdict does not depend on the order
   of the search: a goal (or a state beyond the bounds) the probe meets is reachable, so the
   breadth-first search would answer "live" too (at that state, or earlier at the bound or beyond
   the bounds); a probe that meets every state and no goal decides as the breadth-first search
   would after meeting the same states; otherwise the breadth-first search decides alone. The
   probe finds a goal that lies deep in a large closure at once (an eventually_delivered trace of
   the old multicast rule 7, shown under the new one: a goal after 308 states, where breadth first
   passed 2,000,000 states without it), and costs about a tenth of a second when no goal is reachable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from checks.explore.system import Liveness, TransitionSystem

GOAL, BEYOND, BOUND, STUCK = "goal", "beyond", "bound", "stuck"
PROBE_STATES = 2_000  # rule 4: states the depth-first probe may meet before the breadth-first search


@dataclass(frozen=True)
class Judgement:
    """How the search decided one property at one state."""

    outcome: str  # GOAL | BEYOND | BOUND (live, rule 1) | STUCK (no fault-free continuation reaches it)
    states: int  # distinct states met when it was decided (by the probe or the breadth-first search, rule 4)

    @property
    def live(self) -> bool:
        return self.outcome != STUCK


def progress_successors(system: TransitionSystem) -> Callable[[Any], Iterable[tuple[Any, Any]]]:
    """The (action, next state) pairs of ``system.successors`` whose action is no fault, in its order (rule 3)."""
    own = getattr(system, "progress_successors", None)
    if callable(own):
        return own

    def filtered(state: Any) -> Iterator[tuple[Any, Any]]:
        return ((a, t) for a, t in system.successors(state) if not system.is_fault(a))

    return filtered


def judge(system: TransitionSystem, start: Hashable, props: Sequence[Liveness], *,
          max_states: int) -> dict[str, Judgement]:
    """Property name -> its judgement at ``start`` (rules 1 to 4)."""
    goals = _goals(system, props)
    expand = progress_successors(system)
    decided = _probe(system, start, [p.name for p in props], goals, expand, max_states)
    pending = [p.name for p in props if p.name not in decided]
    if not pending:
        return decided
    seen = {start}
    frontier = [start]
    while frontier:
        next_frontier = []
        for state in frontier:
            if not system.within_bounds(state):
                return _decide(decided, pending, BEYOND, len(seen))
            reached = goals(state)
            if reached:
                _decide(decided, [name for name in pending if name in reached], GOAL, len(seen))
                pending = [name for name in pending if name not in reached]
                if not pending:
                    return decided
            for _, after in expand(state):
                if after not in seen:
                    seen.add(after)
                    next_frontier.append(after)
            if len(seen) > max_states:
                return _decide(decided, pending, BOUND, len(seen))
        frontier = next_frontier
    return _decide(decided, pending, STUCK, len(seen))


def _probe(system: TransitionSystem, start: Hashable, names: Sequence[str], goals: Callable[[Any], frozenset[str]],
           expand: Callable[[Any], Iterable[tuple[Any, Any]]], max_states: int) -> dict[str, Judgement]:
    """Rule 4: depth first, the first fault-free successor first, up to ``PROBE_STATES`` states; the
    properties whose goal it meets (all of them at a state beyond the bounds), or all of them if it
    met every state (``STUCK``, or ``BOUND`` past ``max_states``), with how many states it met."""
    decided: dict[str, Judgement] = {}
    pending = list(names)
    seen = {start}
    stack = [start]
    while stack and len(seen) <= PROBE_STATES:
        state = stack.pop()
        if not system.within_bounds(state):
            return _decide(decided, pending, BEYOND, len(seen))
        reached = goals(state)
        if reached:
            _decide(decided, [name for name in pending if name in reached], GOAL, len(seen))
            pending = [name for name in pending if name not in reached]
            if not pending:
                return decided
        fresh = [after for _, after in expand(state) if after not in seen]
        seen.update(fresh)
        stack.extend(reversed(fresh))
    if not stack:  # it met every state the breadth-first search would: no goal among them
        return _decide(decided, pending, STUCK if len(seen) <= max_states else BOUND, len(seen))
    return decided


def _decide(decided: dict[str, Judgement], names: Iterable[str], outcome: str, states: int) -> dict[str, Judgement]:
    for name in names:
        decided[name] = Judgement(outcome, states)
    return decided


def _goals(system: TransitionSystem, props: Sequence[Liveness]) -> Callable[[Any], frozenset[str]]:
    """State -> the names of the properties whose goal holds there; memoised per property key (rule 3)."""
    def holding(state: Any) -> frozenset[str]:
        return frozenset(p.name for p in props if p.goal(state))

    key_of = getattr(system, "property_key", None)
    own = list(getattr(system, "properties", ()))
    if not callable(key_of) or not all(any(p is q for q in own) for p in props):
        return holding
    memo: dict[Hashable, frozenset[str]] = {}

    def keyed(state: Any) -> frozenset[str]:
        key = key_of(state)
        found = memo.get(key)
        if found is None:
            found = memo[key] = holding(state)
        return found

    return keyed
