"""Values as small ints: the interning every world of ``models/`` keeps its states with (a state is
a flat tuple of ids) and that ``models/batch.py`` shares with it."""

from __future__ import annotations

from collections.abc import Hashable
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


def lane_tables(world: Any) -> tuple[Interner, ...] | None:
    """Per int of a world's state, the interner it is an id of (``n`` node ids, then the network,
    environment and history ids: the layout of ``models/world.py`` and ``models/multicast_world.py``);
    None for a system without that layout. ``checks/explore/workers.py`` moves states between
    processes with it (ids are this process's; values are the same everywhere)."""
    tables = [getattr(world, name, None) for name in ("node_table", "net_table", "env_table", "hist_table")]
    n = getattr(world, "n", None)
    if not isinstance(n, int) or not all(isinstance(t, Interner) for t in tables):
        return None
    return (tables[0],) * n + tuple(tables[1:])  # type: ignore[return-value]
