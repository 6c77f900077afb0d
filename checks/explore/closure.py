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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from checks.explore.system import Liveness, TransitionSystem

GOAL, BEYOND, BOUND, STUCK = "goal", "beyond", "bound", "stuck"


@dataclass(frozen=True)
class Judgement:
    """How the search decided one property at one state."""

    outcome: str  # GOAL | BEYOND | BOUND (live, rule 1) | STUCK (no fault-free continuation reaches it)
    states: int  # distinct states met when it was decided

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
    """Property name -> its judgement at ``start`` (rules 1 and 2)."""
    goals = _goals(system, props)
    decided: dict[str, Judgement] = {}
    pending = [p.name for p in props]
    expand = progress_successors(system)
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
