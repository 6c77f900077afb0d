"""The transition-system interface: the only thing the checker knows about a model, and the contract a
protocol outside the tree (a plug-in, ``models/registry.py``) is written against.

Rules:
1. The checker (``checks/explore/search.py``, ``checks/explore/liveness.py``) imports this module and nothing from
   ``spec/`` or ``models/``. Anything protocol-specific reaches it through a ``TransitionSystem``.
2. States are opaque, hashable, immutable values. Two states are the same state iff they are ``==``.
3. ``successors`` is deterministic: the same state yields the same actions in the same order in every
   run, so a trace of actions replays to the same states (stateright's rule, ``path.rs``).
4. Properties are named predicates. A property is one claim; compound claims are split so a violation
   points at one clause.
5. Everything beyond ``TransitionSystem`` is an optional capability, a ``Protocol`` below that the checker
   finds by its members (``offers``) and that must agree exactly with the ``TransitionSystem`` methods:
   a capability makes a search faster, smaller or possible in more ways (``PortableStates``: across
   processes, ``--workers``), never different.
6. A search stops at ``max_states`` distinct states (a model file's ``[check] max_states``; default
   ``DEFAULT_MAX_STATES``, 5,000,000) and reports ``incomplete``: a bounded check says it is bounded.

Property kinds:
- ``Always(name, holds)``: a safety invariant, checked on every reachable state (initial ones included).
- ``Sometimes(name, holds)``: a witness that some reachable state satisfies ``holds``; guards against a
  vacuous model. Reported as violated when no reachable state satisfies it.
- ``Liveness(name, goal)``: "from every reachable state, some continuation made only of non-fault
  actions reaches a state satisfying ``goal``" (AG EF goal on the fault-free subgraph). A violation
  is a state from which recovery is impossible even if the network stops misbehaving; the
  counterexample is the shortest path to the first such state. States whose successors were cut by
  the model's bounds are treated as able to recover (so the verdict is never a false alarm, and the
  report says how many states were cut).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast, runtime_checkable

State = TypeVar("State", bound=Hashable)
Action = TypeVar("Action", bound=Hashable)
DEFAULT_MAX_STATES = 5_000_000  # rule 6: the search's bound when a model file sets no [check] max_states


@dataclass(frozen=True, slots=True)
class Always:
    """Safety: ``holds(state)`` on every reachable state."""

    name: str
    holds: Callable[[Any], bool]
    doc: str = ""

    @property
    def kind(self) -> str:
        return "always"


@dataclass(frozen=True, slots=True)
class Sometimes:
    """Witness: ``holds(state)`` on at least one reachable state."""

    name: str
    holds: Callable[[Any], bool]
    doc: str = ""

    @property
    def kind(self) -> str:
        return "sometimes"


@dataclass(frozen=True, slots=True)
class Liveness:
    """From every reachable state a fault-free continuation reaches ``goal``."""

    name: str
    goal: Callable[[Any], bool]
    doc: str = ""

    @property
    def kind(self) -> str:
        return "liveness"


Property = Always | Sometimes | Liveness


# Optional capabilities. A system may offer any of these for speed and memory; the checker finds
# them by name and falls back to the ``TransitionSystem`` methods. Each must agree exactly with them.


class BatchExpansion(Protocol):
    def expand_batch(self, states: Sequence[Any]) -> tuple[list[Any], list[int], list[bool]]:
        """The successors of many states at once, without their actions: ``(after, counts,
        progress)`` where ``after`` concatenates, state by state, the next states that
        ``successors`` yields, in its order; ``counts[i]`` is how many belong to ``states[i]``, or
        -1 if ``states[i]`` is not ``within_bounds`` (nothing expanded); ``progress[j]`` is
        ``not is_fault(action)`` for the action leading to ``after[j]``."""
        ...


class ProgressSuccessors(Protocol):
    def progress_successors(self, state: Any) -> Iterable[tuple[Any, Any]]:
        """The pairs of ``successors`` whose action is no fault (``not is_fault(action)``), in its order,
        computed without the faults' next states (liveness judges the fault-free continuations,
        ``checks/explore/closure.py``)."""
        ...


class PackedStates(Protocol):
    """Every state is a tuple of exactly ``state_width`` ints in ``0 .. 2**31 - 1``, so the checker
    may keep states as packed 32-bit ints (4 bytes per int) and rebuild the tuples when needed."""

    state_width: int


class PropertyKey(Protocol):
    def property_key(self, state: Any) -> Hashable:
        """A part of ``state`` that decides every one of ``properties``: two states with equal keys
        satisfy the same properties, so the checker evaluates them once per key."""
        ...


class Symmetric(Protocol):
    """A system with symmetries (automorphisms of its labelled transition system: they preserve
    initial states, transitions, fault flags, bounds and every property). The checker explores one
    state per orbit and counts the states the orbits stand for."""

    symmetry_group_size: int  # the group's order, the identity included (1: no symmetry)

    def canonical_batch(self, states: Sequence[Any]) -> tuple[list[Any], list[int]]:
        """Per state, the representative of its orbit (the same for every state of the orbit)
        and the orbit's size."""
        ...


@runtime_checkable
class SymmetryImages(Protocol):
    """``Symmetric`` with the images themselves, for a search across processes, where a representative
    chosen by this process's ids means nothing (``checks/explore/portable.py`` takes the image whose
    process-independent value encodes smallest). Must agree exactly with ``canonical_batch``: the
    distinct images of a state are its orbit, and their number the orbit's size."""

    symmetry_group_size: int

    def symmetry_images(self, states: Sequence[Any]) -> Sequence[Sequence[Any]]:
        """Per element of the symmetry group (the identity first, ``symmetry_group_size`` in all), the
        images of ``states`` (a non-empty batch), in their order: tuples or rows of an int array."""
        ...


class PersistentSets(Protocol):
    """Partial-order reduction (``checks/explore/reduction.py`` states what the checker needs and
    why it is sound): per state, subsets of its enabled actions that are *persistent*: no sequence
    of actions outside one, from the state, can include an action that does not commute with one in
    it, and none of them can disable an action of it that is no fault (one of which it contains).
    A system offering this promises, besides: every ``Always`` property once false stays false on
    every successor, every ``Sometimes`` property once true stays true, and every ``Liveness``
    goal once true stays true along actions that are no fault."""

    def enable_partial_order(self) -> None:
        """Called once before a reduced search (``--por``, ``[check] partial_order``): the system makes
        ready what the promises above need."""
        ...

    def expand_persistent(self, states: Sequence[Any]) -> tuple[list[Any], list[int], list[bool], list[list[Any]]]:
        """``BatchExpansion.expand_batch`` (its ``progress`` flags computed whatever is checked)
        and, per state, its persistent sets other than all its successors, as boolean masks over
        its successors, the most preferred first (none: all successors are the only one)."""
        ...


class BudgetUsage(Protocol):
    def budget_usage(self, state: Any) -> dict[str, tuple[int, int]]:
        """How much of each of the model's budgets ``state`` has used: name -> (used, budget), in
        a fixed order. An incomplete search reports their means in its deepest levels, so the user
        sees which budgets the growth is spending."""
        ...


@runtime_checkable
class PortableStates(Protocol):
    """States that can cross processes: what ``--workers`` needs (``checks/explore/workers.py``); a
    system without it is checked in one process (``--workers 2`` is refused in one line).

    Every state is a tuple of ``len(portable_layout())`` ints in ``0 .. 2**31 - 1`` (they cross as 32-bit
    ints). Int ``i`` of a state is either the same number in every process (``portable_layout()[i]`` is
    None: a counter, a flag, a sequence number) or an id in the system's *id space* ``portable_layout()[i]``
    (0, 1, ...): a small int this process gave to a value (a node's state, the packets in flight) in
    first-seen order, which means nothing in another process. A space's ids are
    ``0 .. known_ids(space) - 1``. A state's process-independent value is the tuple of its ints, each id
    replaced by its value (``export_state``); ``import_state`` turns that back into this process's state.
    Workers are forked from the checking process (each starts with a copy of the system and its ids) and
    then exchange only the values of ids the other side has not seen."""

    def portable_layout(self) -> Sequence[int | None]:
        """Per int of a state, its id space, or None for an int that means the same in every process."""
        ...

    def known_ids(self, space: int) -> int:
        """How many ids ``space`` has given so far (they are ``0 .. known_ids(space) - 1``)."""
        ...

    def export_values(self, space: int, ids: Sequence[int]) -> list[Hashable]:
        """The values of ``ids`` of ``space``: picklable, process-independent (equal values in every
        process for the same meaning)."""
        ...

    def import_values(self, space: int, values: Sequence[Hashable]) -> list[int]:
        """This process's ids of ``values`` in ``space``, giving new ids, in order, to values not seen
        before (as the system does when it meets them itself: its tables and memos are its own)."""
        ...


@runtime_checkable
class ExtraFigures(Protocol):
    def extra_figures(self) -> Mapping[str, int | float | str]:
        """The system's own figures for its row of ``seqcheck check --json`` (under ``"extra"``), read
        after the search (and once before it, so that a mistake is found before a long search): at
        most ``MAX_EXTRA_FIGURES`` names of at most ``MAX_EXTRA_TEXT`` characters, each a whole
        number, a finite float or a string of at most ``MAX_EXTRA_TEXT`` characters."""
        ...


class TransitionSystem(Protocol):
    """What a model must provide to be checked, replayed and rendered: what a protocol's model factory
    (``models.registry.ModelFactory``, found by name among the built-in protocols and the entry points
    of the group ``seqcheck.protocols``) returns in its ``Built.system``. ``seqcheck check`` explores
    it breadth-first up to ``max_states`` distinct states (rule 6); ``seqcheck show`` words its
    actions with ``format_action``, and a trace records them with ``action_to_json``."""

    @property
    def name(self) -> str: ...

    @property
    def properties(self) -> Sequence[Property]: ...

    def init_states(self) -> Sequence[Any]:
        """The initial states, in a fixed order."""
        ...

    def successors(self, state: Any) -> Iterable[tuple[Any, Any]]:
        """Every enabled ``(action, next_state)`` pair, in a fixed order. No-op actions are left out."""
        ...

    def within_bounds(self, state: Any) -> bool:
        """False for a state past the model's bounds: it is counted, checked, but not expanded."""
        ...

    def accepts_end(self, state: Any) -> bool:
        """True if ``state`` may legitimately have no successors (else it is a deadlock)."""
        ...

    def is_fault(self, action: Any) -> bool:
        """True for actions a liveness continuation may not use (loss, duplication, view changes...)."""
        ...

    def action_to_json(self, action: Any) -> dict[str, Any]:
        """A JSON-able description of ``action``; equal actions give equal descriptions."""
        ...

    def format_action(self, action: Any) -> str:
        """One line for people."""
        ...


def replay(system: TransitionSystem, actions: Sequence[dict[str, Any]], initial: int | None = None
           ) -> list[tuple[Hashable, Hashable]]:
    """Re-run recorded actions; returns ``[(action, state_after)]``.

    The run starts from initial state number ``initial``, or, when None, from the first initial
    state (in ``init_states`` order) from which every action replays: a counterexample records its
    actions only, and the checker may have reached the violation from any initial state. Each
    recorded action is matched against the actions enabled in the current state by its JSON
    description, so a trace replays from the actions alone. Raises ``ReplayError`` naming the step
    whose action is not enabled (the model changed, or the model is nondeterministic), as met from
    the first initial state tried.
    """
    starts = system.init_states()
    first_error: ReplayError | None = None
    for start in (range(len(starts)) if initial is None else [initial]):
        try:
            return _replay_from(system, starts[start], actions)
        except ReplayError as error:
            first_error = first_error or error
    raise first_error or ReplayError("the model has no initial state")


def _replay_from(system: TransitionSystem, state: Any, actions: Sequence[dict[str, Any]]
                 ) -> list[tuple[Hashable, Hashable]]:
    path: list[tuple[Hashable, Hashable]] = []
    for index, wanted in enumerate(actions):
        for action, after in system.successors(state):
            if system.action_to_json(action) == wanted:
                path.append((action, after))
                state = after
                break
        else:
            raise ReplayError(f"step {index + 1}: action {wanted} is not enabled in the replayed state")
    return path


class ReplayError(Exception):
    """A recorded trace does not replay on the model."""


MAX_EXTRA_FIGURES = 64
MAX_EXTRA_TEXT = 200


class ContractError(Exception):
    """A system that breaks this module's contract; the message is one line naming the system."""


def offers(system: Any, capability: type) -> bool:
    """True if ``system`` has every member of the capability ``capability`` (rule 5)."""
    return isinstance(system, capability)


def export_state(system: PortableStates, state: Any) -> tuple[Hashable, ...]:
    """The process-independent value of ``state`` (``PortableStates``)."""
    layout = system.portable_layout()
    return tuple(number if space is None else system.export_values(space, [number])[0]
                 for number, space in zip(state, layout, strict=True))


def import_state(system: PortableStates, value: Sequence[Hashable]) -> tuple[int, ...]:
    """This process's state whose process-independent value is ``value`` (``export_state``'s inverse)."""
    layout = system.portable_layout()
    return tuple(cast(int, part) if space is None else system.import_values(space, [part])[0]
                 for part, space in zip(value, layout, strict=True))


def extra_figures(system: Any) -> dict[str, int | float | str]:
    """``system.extra_figures()`` checked (``ExtraFigures``); {} for a system without it. Raises
    ``ContractError`` naming the system and the first figure that is not what it should be."""
    if not offers(system, ExtraFigures):
        return {}
    name = getattr(system, "name", type(system).__name__)

    def wrong(what: str) -> ContractError:
        return ContractError(f"system {name!r}: extra_figures(): expected a dict of at most {MAX_EXTRA_FIGURES} "
                             f"names (strings of 1 to {MAX_EXTRA_TEXT} characters) -> a whole number, a finite "
                             f"float or a string of at most {MAX_EXTRA_TEXT} characters; {what}")

    figures = system.extra_figures()
    if not isinstance(figures, Mapping):
        raise wrong(f"got {type(figures).__name__}")
    if len(figures) > MAX_EXTRA_FIGURES:
        raise wrong(f"got {len(figures)} figures")
    out: dict[str, int | float | str] = {}
    for key, value in figures.items():
        if not isinstance(key, str) or not 0 < len(key) <= MAX_EXTRA_TEXT:
            raise wrong(f"got the name {str(key)[:40]!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
                isinstance(value, float) and not math.isfinite(value)) or (
                isinstance(value, str) and len(value) > MAX_EXTRA_TEXT):
            raise wrong(f"got {key!r}: {str(value)[:40]!r} ({type(value).__name__})")
        out[key] = value
    return out
