"""The engines name what the specs name in the same way: ``impl/`` never imports ``spec/``, so the
variant switches, the timer kinds and UNICAST3's connection states are written twice, and these
tests keep the two copies equal (a spec counterexample runs on the engine with the same flags, and
the harness fires the engine's timers by the spec's kinds)."""

from __future__ import annotations

import dataclasses

import pytest

from impl import unicast2 as impl_u2
from impl import unicast3 as impl_u3
from impl import unicast4 as impl_u4
from impl.unicast2 import tasks as u2_tasks
from impl.unicast3 import tasks as u3_tasks
from impl.unicast3.entries import ConnState
from impl.unicast4 import state as u4_state
from impl.unicast4 import tasks as u4_tasks
from spec import unicast2 as u2
from spec import unicast3 as u3
from spec import unicast4 as u4


@pytest.mark.parametrize(("engine", "spec"), [(impl_u3.Variant, u3.Variant), (impl_u2.Variant, u2.Variant),
                                                (impl_u4.Variant, u4.Variant)])
def test_variant_flags_are_the_specs(engine: type, spec: type) -> None:
    assert [(f.name, f.default) for f in dataclasses.fields(engine)] == [
        (f.name, f.default) for f in dataclasses.fields(spec)]


def test_timer_kinds_are_the_specs() -> None:
    assert u3_tasks.TIMER_NAMES == u3.TIMER_NAMES
    assert (u3_tasks.XMIT, u3_tasks.IDLE_SEND, u3_tasks.IDLE_RECV, u3_tasks.CLOSE_SEND, u3_tasks.CLOSE_RECV,
            u3_tasks.SYNC_EXPIRED) == (u3.XMIT, u3.IDLE_SEND, u3.IDLE_RECV, u3.CLOSE_SEND, u3.CLOSE_RECV,
                                       u3.SYNC_EXPIRED)
    assert u2_tasks.TIMER_NAMES == u2.TIMER_NAMES
    assert (u2_tasks.XMIT, u2_tasks.STABLE, u2_tasks.IDLE_SEND, u2_tasks.IDLE_RECV) == (
        u2.XMIT, u2.STABLE, u2.IDLE_SEND, u2.IDLE_RECV)


def test_connection_states_are_the_specs() -> None:
    assert (ConnState.OPEN, ConnState.CLOSING) == (u3.OPEN, u3.CLOSING)
    assert [s.name for s in ConnState] == list(u3.STATE_NAMES)


def test_unicast4_timer_kinds_and_states_are_the_specs() -> None:
    assert u4_tasks.TIMER_NAMES == u4.TIMER_NAMES
    assert (u4_tasks.XMIT, u4_tasks.IDLE_SEND, u4_tasks.IDLE_RECV, u4_tasks.CLOSE_SEND, u4_tasks.CLOSE_RECV,
            u4_tasks.SYNC_EXPIRED, u4_tasks.SEND, u4_tasks.IDLE_BLOCKED, u4_tasks.CLOSE_BLOCKED) == (
        u4.XMIT, u4.IDLE_SEND, u4.IDLE_RECV, u4.CLOSE_SEND, u4.CLOSE_RECV, u4.SYNC_EXPIRED, u4.SEND,
        u4.IDLE_BLOCKED, u4.CLOSE_BLOCKED)
    assert (u4_state.OPEN, u4_state.CLOSING) == (u4.OPEN, u4.CLOSING)
