"""``ProtocolAdapter.history_timers`` is exact: the world skips the history update of a timer
that changed nothing else unless its kind is listed (``models/world.py`` ``_idle_timer``), so
``observe_timer`` must leave the sync counters alone for every other kind, and the listed kinds
must be ones it records."""

from __future__ import annotations

import pytest

from models.protocols.base import ProtocolAdapter
from models.world_factory import world_adapters

N = 3


@pytest.mark.parametrize("adapter", world_adapters().values(), ids=world_adapters().keys())
def test_observe_timer_touches_the_history_for_listed_kinds_only(adapter: ProtocolAdapter) -> None:
    for kind in range(len(adapter.spec.TIMER_NAMES)):
        for peer in (-1, *range(N)):
            for member in range(N):
                syncs = [1] * (N * N)
                adapter.observe_timer(adapter.spec.Timer(kind, peer), member, N, syncs)
                if kind not in adapter.history_timers:
                    assert syncs == [1] * (N * N), (adapter.name, kind, peer, member)
    for kind in adapter.history_timers:
        syncs = [1] * (N * N)
        adapter.observe_timer(adapter.spec.Timer(kind, 1), 0, N, syncs)
        assert syncs != [1] * (N * N), (adapter.name, kind)
