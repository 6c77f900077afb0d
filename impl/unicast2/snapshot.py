"""Abstract views of one member's UNICAST2 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Unicast2Engine.snapshot()`` and, from a spec ``Node``, by
``checks/conform/unicast2.py``. Two members behave alike iff their views are equal after every step (and
they emitted the same datagrams and deliveries). Ages, byte counters, windows' row layout,
statistics and the hostile-input limits are deliberately not part of the view.

Payloads are bytes on both sides: the spec's payload n is ``impl.common.spec_payload(n)``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

P = TypeVar("P", bound=Hashable)


@dataclass(frozen=True, slots=True)
class SendView:
    """A send entry: like ``spec.unicast2.SendEntry`` with payloads as bytes."""

    conn_id: int
    acked: int  # HA
    unacked: tuple[bytes, ...]  # payloads of acked+1 .. HS
    ack_received: bool
    watermark: tuple[int, int]
    last_ts: int  # 0 = none yet


@dataclass(frozen=True, slots=True)
class RecvView:
    """A receive entry: like ``spec.unicast2.RecvEntry`` with each stored DATA reduced to its
    header (seqno, conn_id, first); the gaps are the seqnos not listed."""

    conn_id: int
    delivered: int
    buffered: tuple[tuple[int, int, bool], ...]
    last_highest: int
    stable_count: int


@dataclass(frozen=True, slots=True)
class EngineView(Generic[P]):
    """One member's abstract state. Per-peer maps are tuples of (peer, value) sorted by peer."""

    members: frozenset[P]
    send: tuple[tuple[P, SendView], ...]
    recv: tuple[tuple[P, RecvView], ...]
    xmit_last: tuple[tuple[P, int], ...]  # only peers with a value (the spec's 0 = absent)
    timestamper: int  # last timestamp issued
    next_conn_id: int  # conn_id of the next send entry
