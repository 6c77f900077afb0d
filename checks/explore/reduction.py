"""Partial-order reduction for the breadth-first checker: persistent sets and the provisos that keep
every verdict.

What a system provides (``checks/explore/system.py`` ``PersistentSets``): per state, a *persistent*
subset T(s) of the enabled actions: (D1) for every sequence b1 .. bn of actions not in T(s) that
can run from s, and every t in T(s) enabled after it, t b1 .. bn can run from s too and ends in the
same state; (D2) T(s) contains an action that is no fault and that no such sequence disables (a
*key* action); and the properties are *stable*: an ``Always`` once false stays false, a
``Sometimes`` once true stays true, a ``Liveness`` goal once reached stays reached along actions
that are no fault. The checker takes the first of the state's persistent sets (the system ranks
them) whose successors are all within the bounds and that has a key successor t (its action is no
fault) not yet expanded (t's index, in the order states are expanded, is above s's: new, or found
but still waiting); if none is, s takes all its successors (``PartialOrderCounts`` says why).

Why every verdict is kept (G the full graph, R the reduced one, s in R within bounds):

1. Safety. Let s -a1 .. an-> v in G with v violating a stable ``Always`` (or satisfying a stable
   ``Sometimes``). If s took all its successors, or some ai is in T(s), the first such ai moves to
   the front by D1: s -ai-> s' in R, and the rest reaches v in n - 1 steps. Otherwise take the key
   successor t = k(s) the proviso found: k stays enabled along a1 .. an and commutes with each
   (D1, D2), so t -a1 .. an-> k(v), which violates too (stability), and t has a larger index
   than s. Repeating the second case climbs to ever larger indices, so it ends (finitely many
   states) in the first case. By induction on n, R reaches a violating state from s, so from the
   initial state. Bounds: T(s) is closed under the channels its actions fill and empty (D1 forces
   that: a delivery and a send of the same packet do not commute), so the actions outside it leave
   those channels as they are in s; as s' and t are within the bounds (the proviso), so is every
   state of s' -> v and of t -a1 .. an->, which differ from G's path only on those channels. (A
   successor of T(s) past the bounds would break this: when ai is the last step and v itself is
   cut, s' may be cut and never expanded; hence the proviso.)
2. Liveness (AG EF goal over actions that are no fault; rule 5 of ``search.py`` for cut states).
   No false alarm: if G has a fault-free path from s to a goal state, the argument of 1 (k is no
   fault, and goals are stable along fault-free actions) gives R one; so R judges every state it
   holds as G does. No missed violation: a state from which G has no fault-free path to the goal
   keeps that along fault-free actions (its successors have no more paths), so the argument of 1,
   whose k is no fault, carries a reachable such state of G to one of R.
3. Deadlocks: T(s) is never empty when s has successors (it holds a key action).

What is not kept: breadth-first depths (a violation is found at its depth in R, which may be
deeper than in G), so ``checks/check.py`` shortens a counterexample found with reduction
(``checks/explore/shorten.py``); state counts, which are R's; and symmetry reduction, which is
not combined with this one (the search turns symmetry off).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass
class PartialOrderCounts:
    """How the expanded states took their successors."""

    reduced: int = 0  # a proper persistent subset
    full_cycle: int = 0  # all: the cycle proviso
    full_bound: int = 0  # all: the bound proviso
    full_key: int = 0  # all: the key proviso
    full_none: int = 0  # all: the system found no smaller persistent set


def offers_persistent_sets(system: Any) -> bool:
    return callable(getattr(system, "expand_persistent", None))


def choose(counts: Sequence[int], progress: Sequence[bool], candidates: Sequence[Sequence[Any]],
           found: npt.NDArray[np.int64], first: int, afters: Sequence[Hashable],
           within_bounds: Callable[[Hashable], bool], tally: PartialOrderCounts) -> npt.NDArray[np.bool_]:
    """Which successors the search keeps: per state, the first of its persistent sets that every
    proviso (see the module docstring) accepts, else all. ``found[j]`` is the index of successor j
    if it was already seen, else negative; the states are numbered from ``first``."""
    keep = np.ones(len(afters), dtype=bool)
    start = 0
    for position, count in enumerate(counts):
        if count <= 0:
            continue
        end = start + count
        refusal = ""
        for mask in candidates[position]:
            chosen = start + np.flatnonzero(mask)
            refusal = _refusal(chosen, progress, found[chosen], first + position, afters, within_bounds)
            if not refusal:
                keep[start:end] = False
                keep[chosen] = True
                tally.reduced += 1
                break
        else:
            if refusal:
                setattr(tally, refusal, getattr(tally, refusal) + 1)
            elif count > 1:
                tally.full_none += 1
        start = end
    return keep


def _refusal(chosen: npt.NDArray[np.int64], progress: Sequence[bool], found: npt.NDArray[np.int64], index: int,
             afters: Sequence[Hashable], within_bounds: Callable[[Hashable], bool]) -> str:
    """The proviso that refuses a persistent set (its successors ``chosen``), or "" if none does:
    it must have a key successor (no fault) that is not yet expanded, and every successor within
    the bounds."""
    keyed = [j for j, k in zip(chosen.tolist(), found.tolist()) if progress[j]]
    if not keyed:
        return "full_key"
    later = [j for j, k in zip(chosen.tolist(), found.tolist()) if progress[j] and not 0 <= k <= index]
    if not later:
        return "full_cycle"
    if not all(within_bounds(afters[j]) for j in chosen.tolist()):
        return "full_bound"
    return ""
