"""Abstract views of one member's UNICAST3 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Unicast3Engine.snapshot(now=...)`` and, from a spec ``Node``, by
``checks/conform/unicast3.py``. Two members behave alike iff their views are equal after every step (and
they emitted the same datagrams and deliveries). Ages, windows' row layout, statistics and the
hostile-input limits are deliberately not part of the view.

Payload mapping: the spec's payloads are ints (the n-th message to a peer is payload n); the
engine carries bytes. Tests and the harness send ``spec_payload(n)`` (n as 8 bytes, big-endian)
and read deliveries back with ``payload_number`` (both in ``impl/common.py``, re-exported).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from impl.common import payload_number, spec_payload  # noqa: F401  (re-exported)

P = TypeVar("P", bound=Hashable)


@dataclass(frozen=True, slots=True)
class SendView:
    """A send entry: like ``spec.unicast3.SendEntry`` with payloads as bytes."""

    conn_id: int
    state: int  # spec.unicast3.OPEN / CLOSING
    acked: int  # HA
    unacked: tuple[bytes, ...]  # payloads of acked+1 .. HS
    watermark: tuple[int, int]
    last_ts: int  # 0 = none yet
    oob: tuple[int, ...] = ()  # the unacked seqnos sent OOB, ascending
    dont_loopback: tuple[int, ...] = ()  # the entry for oneself: its DONT_LOOPBACK seqnos, ascending


@dataclass(frozen=True, slots=True)
class RecvView:
    """A receive entry: like ``spec.unicast3.RecvEntry`` with the buffer reduced to seqnos."""

    conn_id: int
    state: int
    delivered: int
    buffered: tuple[int, ...]  # seqnos stored above ``delivered`` (the gaps are the others)
    ack_pending: bool


@dataclass(frozen=True, slots=True)
class EngineView(Generic[P]):
    """One member's abstract state. Per-peer maps are tuples of (peer, value) sorted by peer."""

    members: frozenset[P]
    send: tuple[tuple[P, SendView], ...]
    recv: tuple[tuple[P, RecvView], ...]
    cache: tuple[tuple[P, frozenset[tuple[int, int, bytes]]], ...]  # (seqno, conn_id, payload) per sender with any
    sync_sent: frozenset[P]  # peers sent a SEND_FIRST_SEQNO within sync_min_interval
    xmit_last: tuple[tuple[P, int], ...]  # only peers with a value (the spec's 0 = absent)
    timestamper: int  # last timestamp issued
    next_conn_id: int  # conn_id of the next send entry
