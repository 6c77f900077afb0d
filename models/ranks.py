"""Rule 5 of ``models/world.py``: which timestamps are in use on each stream, and whether they are
already ranks. Shared by the world and its batched expander (``models/batch.py``)."""

from __future__ import annotations

from collections.abc import Sequence


def streams_in_use(n: int, infos: Sequence[tuple[int, tuple[int, ...]]], in_flight: Sequence[frozenset[int]]
                   ) -> tuple[tuple[int, ...], ...] | None:
    """Rule 5: per stream (issuer * n + holder) the timestamps in use on it, sorted, from each
    member's (counter, last timestamp accepted per peer) and the timestamps in flight per stream;
    None if they are already ranks (each stream's are 1..k, each counter its streams' largest k)."""
    used: list[tuple[int, ...]] = []
    canonical = True
    for issuer in range(n):
        largest = 0
        for holder in range(n):
            values = set(in_flight[issuer * n + holder])
            if holder != issuer:
                values.add(infos[holder][1][issuer])
            values.discard(0)
            ordered = tuple(sorted(values))
            if ordered and ordered[-1] != len(ordered):
                canonical = False
            largest = max(largest, len(ordered))
            used.append(ordered)
        canonical = canonical and infos[issuer][0] == largest
    return None if canonical else tuple(used)
