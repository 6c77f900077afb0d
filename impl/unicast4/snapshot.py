"""Abstract views of one member's UNICAST4 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Unicast4Engine.snapshot(now=...)`` and, from a spec ``Node``, by
``checks/conform/unicast4.py``. Two members behave alike iff their views are equal after every
step (and they emitted the same datagrams and deliveries). Ages, slot layout, statistics and the
hostile-input limits are not part of the view. Payloads are bytes (``impl.common.spec_payload``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

P = TypeVar("P", bound=Hashable)


@dataclass(frozen=True, slots=True)
class SendView:
    """A send entry: like ``spec.unicast4.SendEntry`` with payloads as bytes."""

    conn_id: int
    state: int  # spec.unicast4.OPEN / CLOSING
    acked: int  # HA: the window's low
    unacked: tuple[bytes | None, ...]  # slots acked+1 .. HS (None: not stored)
    watermark: tuple[int, int]
    last_ts: int  # 0 = none yet
    seqno: int  # the last seqno a send took
    blocked: tuple[tuple[int, bytes], ...]  # (seqno, payload) of the blocked sends, ascending
    oob: tuple[int, ...] = ()  # the seqnos taken by OOB sends, stored unacked or blocked, ascending
    # the send entry for oneself (spec decisions 12, 13): DONT_LOOPBACK seqnos (stored or blocked),
    # OOB seqnos a loopback delivered, ascending; the ACK counter
    dont_loopback: tuple[int, ...] = ()
    oob_delivered: tuple[int, ...] = ()
    acks_counted: int = 0


@dataclass(frozen=True, slots=True)
class RecvView:
    """A receive entry: like ``spec.unicast4.RecvEntry`` with the buffer reduced to seqnos."""

    conn_id: int
    state: int
    delivered: int
    buffered: tuple[int, ...]  # seqnos stored above ``delivered``
    ack_pending: bool
    acks_counted: int
    oob: tuple[int, ...] = ()  # the seqnos of ``buffered`` held as OOB placeholders, ascending


@dataclass(frozen=True, slots=True)
class EngineView(Generic[P]):
    """One member's abstract state. Per-peer maps are tuples of (peer, value) sorted by peer."""

    members: frozenset[P]
    send: tuple[tuple[P, SendView], ...]
    recv: tuple[tuple[P, RecvView], ...]
    sync_sent: frozenset[P]
    xmit_last: tuple[tuple[P, int], ...]  # only peers with a value (the spec's 0 = absent)
    timestamper: int
    next_conn_id: int
    # (seqno, conn_id, first, payload, oob) per sender with any
    cache: tuple[tuple[P, tuple[tuple[int, int, bool, bytes, bool], ...]], ...] = ()
