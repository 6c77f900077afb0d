"""Values as small ints: the interning every world of ``models/`` keeps its states with (a state is
a flat tuple of ids) and that ``models/batch.py`` shares with it."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any


class Interner:
    """Values <-> small ints, ids assigned in first-seen order (deterministic); ``first`` are
    given ids 0, 1, ... up front."""

    def __init__(self, *first: Hashable) -> None:
        self.ids: dict[Hashable, int] = {}
        self.values: list[Any] = []
        for value in first:
            self(value)

    def __call__(self, value: Hashable) -> int:
        found = self.ids.setdefault(value, len(self.values))  # hashed once: a new value's hash walks all of it
        if found == len(self.values):
            self.values.append(value)
        return found


class InternedWorldStates:
    """``PortableStates`` (``checks/explore/system.py``) of a world whose state is ``n`` node ids, then
    a network, an environment and a history id (``models/world.py``, ``models/multicast_world.py``):
    four id spaces, one per interner; the values (node states, tuples of packets, environments,
    histories) are immutable, picklable and mean the same in every process."""

    n: int
    node_table: Interner
    net_table: Interner
    env_table: Interner
    hist_table: Interner

    def portable_layout(self) -> tuple[int, ...]:
        return (0,) * self.n + (1, 2, 3)

    def interner(self, space: int) -> Interner:
        return (self.node_table, self.net_table, self.env_table, self.hist_table)[space]

    def known_ids(self, space: int) -> int:
        return len(self.interner(space).values)

    def export_values(self, space: int, ids: Sequence[int]) -> list[Hashable]:
        values = self.interner(space).values
        return [values[i] for i in ids]

    def import_values(self, space: int, values: Sequence[Hashable]) -> list[int]:
        return list(map(self.interner(space), values))

    def extra_figures(self) -> dict[str, int]:
        """``ExtraFigures``: the distinct values this process's interners hold (with ``--workers``,
        those the coordinator imported: the workers' own are not counted)."""
        return {"node_states": len(self.node_table.values), "networks": len(self.net_table.values),
                "environments": len(self.env_table.values), "histories": len(self.hist_table.values)}
