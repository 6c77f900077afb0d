"""The shape of a fuzz job's coverage table, per kind of world: ``Scheme``.

``checks/fuzz/coverage.py`` holds the point-to-point world's scheme (``UNICAST``) and picks one for a
world (``scheme_for``); ``checks/fuzz/mcast_coverage.py`` holds the multicast world's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Scheme:
    """What the fuzz jobs of one kind of world count: which actions are faults (the columns), the
    protocol phases a fault may meet (the rows), which world actions each kind of ``KINDS`` draws,
    and what each kind stands for there. ``UNICAST`` (this module) for the point-to-point world,
    ``checks.fuzz.mcast_coverage.MULTICAST`` for the multicast world; ``scheme_for`` picks."""

    name: str
    faults: tuple[str, ...]
    fault_docs: dict[str, str]
    phases: tuple[tuple[str, str], ...]  # (name, what it means)
    fault_of: Callable[[Any], str | None]
    phases_met: Callable[[Any, Any], list[str]]  # (world view, fault action) -> phase names, in order
    kind_types: dict[str, tuple[type, ...]]  # the world action types a kind draws (timers split by kind_of)
    kind_docs: dict[str, str]

    @property
    def phase_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.phases)

    @property
    def cells(self) -> tuple[tuple[str, str], ...]:
        """(phase, fault), row-major."""
        return tuple((phase, fault) for phase in self.phase_names for fault in self.faults)

    @property
    def width(self) -> int:
        """The length of a run's ``phase_hits``: the cells, then one total per fault."""
        return len(self.phases) * len(self.faults) + len(self.faults)
