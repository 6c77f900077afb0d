"""One level of the breadth-first frontier: the states discovered at one depth, in discovery order.

Two representations behind one interface. ``ListLevel`` keeps the states as they are (any hashable
value). ``PackedLevel`` is for systems whose states are tuples of exactly ``width`` ints that fit
in 32 bits (``checks.explore.system.PackedStates``): it keeps them as one flat ``array('i')``, 4 bytes per
int instead of a tuple object and an int object per slot, and rebuilds the tuples a chunk at a time.
The states' indices are not stored: a level's states are numbered consecutively.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt


class ListLevel:
    def __init__(self) -> None:
        self._states: list[Hashable] = []

    def __len__(self) -> int:
        return len(self._states)

    def extend(self, states: Sequence[Hashable]) -> None:
        self._states.extend(states)

    def chunk(self, start: int, stop: int) -> list[Hashable]:
        return self._states[start:stop]


class PackedLevel:
    def __init__(self, width: int) -> None:
        if width < 1:
            raise ValueError(f"a packed state needs at least one int, not {width}")
        self.width = width
        self._ints = array("i")

    def __len__(self) -> int:
        return len(self._ints) // self.width

    def extend(self, states: Sequence[tuple[int, ...]]) -> None:
        """Append ``states``; each must be a tuple of ``width`` ints in the int32 range
        (``OverflowError`` or ``ValueError`` otherwise)."""
        if states and set(map(len, states)) != {self.width}:
            raise ValueError(f"packed states must be tuples of exactly {self.width} ints")
        before = len(self._ints)
        try:
            self._ints.extend(chain.from_iterable(states))
        except (OverflowError, TypeError):
            del self._ints[before:]
            raise

    def rows(self, start: int, stop: int) -> npt.NDArray[np.int32]:
        """The states ``start .. stop - 1`` as the rows of an array (no tuples built)."""
        ints = self._ints[start * self.width:stop * self.width]
        return np.frombuffer(ints, dtype=np.int32).reshape(len(ints) // self.width, self.width)

    def chunk(self, start: int, stop: int) -> list[tuple[Any, ...]]:
        """The states ``start .. stop - 1`` as tuples of ints."""
        ints = iter(self._ints[start * self.width:stop * self.width])
        return list(zip(*([ints] * self.width)))


Level = ListLevel | PackedLevel


def new_level(width: int | None) -> Level:
    return ListLevel() if width is None else PackedLevel(width)
