"""Shortening a counterexample found by a partial search with the checker's own breadth-first search.

A swarm task (``checks/explore/swarm.py``) finds a violation at the end of a depth-first path, which
is rarely a shortest one. ``shorten`` tries the checker's BFS (``checks/explore/search.py``'s
``explore``) from states along the path, each search bounded by ``max_states``: from the initial
state first (when that search finds the property violated, its path is a shortest counterexample:
BFS explores by depth), then from the state half way along the path, then three quarters, and so
on. Each BFS that finds a shorter way from its start to a violation replaces the rest of the path.
A search from a later state is smaller (less is left below it), so some search usually fits.

Liveness: a BFS judges liveness only when it completes (``explore`` rule), so from a midpoint only a
complete search of what is reachable from there counts; AG EF is a property of what is reachable
forward, so that judgement is exact. Before that, ``first_stuck`` cuts the path at its first state
from which no fault-free continuation reaches the goal (the checker's trace ends there too).

Protocol-agnostic: the model is seen through ``checks/explore/system.py``; a search from a midpoint
runs on ``StartingAt``, the same system with another initial state.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from checks.explore.search import explore
from checks.explore.swarm import Recovery
from checks.explore.system import Liveness, Property, TransitionSystem

Path = list[tuple[Hashable, Hashable]]  # (action, state after), from the first initial state


class StartingAt:
    """``system`` with ``state`` as its only initial state; everything else (the optional
    capabilities included) is the system's own."""

    def __init__(self, system: TransitionSystem, state: Hashable) -> None:
        self.system, self.state = system, state

    def init_states(self) -> Sequence[Hashable]:
        return [self.state]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.system, name)


@dataclass
class Shortened:
    path: Path
    original: int  # the length of the path given
    searches: int  # breadth-first searches run
    shortest: bool  # the BFS from the initial state found it: no counterexample of the property is shorter


def first_stuck(system: TransitionSystem, path: Path, prop: Liveness, *, limit: int = 200_000) -> Path:
    """``path`` up to its first state from which no fault-free continuation reaches ``prop``'s goal
    (states whose search reaches ``limit`` states count as able to recover)."""
    recovery = Recovery(system, prop, limit, getattr(system, "expand_batch", None) or _generic(system))
    states = [system.init_states()[0]] + [s for _, s in path]
    for index, state in enumerate(states):
        if not recovery.reaches_goal(state):
            return path[:index]
    return path


def _generic(system: TransitionSystem) -> Any:
    def expand(states: Sequence[Hashable]) -> tuple[list[Any], list[int], list[bool]]:
        afters, counts, progress = [], [], []
        for state in states:
            if not system.within_bounds(state):
                counts.append(-1)
                continue
            steps = list(system.successors(state))
            afters += [s for _, s in steps]
            progress += [not system.is_fault(a) for a, _ in steps]
            counts.append(len(steps))
        return afters, counts, progress

    return expand


def shorten(system: TransitionSystem, path: Path, prop: str, kind: str, *, max_states: int) -> Shortened:
    """``path`` (a validated counterexample of ``prop``, of ``kind`` always, liveness or deadlock)
    shortened by bounded BFS from states along it (see the module docstring)."""
    props: list[Property] = [p for p in system.properties if p.name == prop] if kind != "deadlock" else []
    if kind == "liveness" and props and isinstance(props[0], Liveness):
        path = first_stuck(system, path, props[0])
    original, searches = len(path), 0
    start = 0
    while start < len(path):
        origin = system.init_states()[0] if start == 0 else path[start - 1][1]
        result = explore(StartingAt(system, origin), props, stop_at_first=True, max_states=max_states,
                         check_deadlock=kind == "deadlock")
        searches += 1
        found = next((f for f in result.findings if f.prop == prop and f.state_index >= 0), None)
        if found is not None and len(found.path) <= len(path) - start:
            path = path[:start] + found.path
            if start == 0:
                return Shortened(path, original, searches, True)
        start = start + max(1, (len(path) - start) // 2) if start else max(1, len(path) // 2)
    return Shortened(path, original, searches, False)
