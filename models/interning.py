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
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.values)
            self.values.append(value)
        return found
