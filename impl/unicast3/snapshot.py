"""Abstract views of one member's UNICAST3 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Unicast3Engine.snapshot(now=...)`` and, from a spec ``Node``, by
``view_of_spec_node``. Two members behave alike iff their views are equal after every step (and
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
from spec import unicast3 as spec

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
    sync_sent: frozenset[P]  # peers sent a SEND_FIRST_SEQNO within sync_min_interval
    xmit_last: tuple[tuple[P, int], ...]  # only peers with a value (the spec's 0 = absent)
    timestamper: int  # last timestamp issued
    next_conn_id: int  # conn_id of the next send entry


def view_of_spec_node(node: spec.Node) -> EngineView[int]:
    """The view of a spec member, peers being the spec's member numbers."""
    send = tuple(
        (peer, SendView(e.conn_id, e.state, e.acked, tuple(spec_payload(p) for p in e.unacked),
                        e.watermark, e.last_ts))
        for peer, e in enumerate(node.send)
        if e is not None
    )
    recv = tuple(
        (peer, RecvView(e.conn_id, e.state, e.delivered,
                        tuple(e.delivered + 1 + i for i, m in enumerate(e.buffered) if m is not None),
                        e.ack_pending))
        for peer, e in enumerate(node.recv)
        if e is not None
    )
    xmit_last = tuple((peer, last) for peer, last in enumerate(node.xmit_last) if last != 0)
    return EngineView(node.members, send, recv, node.sync_sent, xmit_last, node.timestamper,
                      node.next_conn_id)
