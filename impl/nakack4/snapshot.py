"""Abstract views of one member's NAKACK4 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Nakack4Engine.snapshot()``, field for field the spec's ``Node``
(``spec/nakack4_state.py``) with member-indexed tuples turned into (member, value) pairs sorted by
member, default entries left out, and payloads as bytes (``spec_payload(n)`` for the spec's n):

======================  ======================================================================
spec ``Node``           ``EngineView``
======================  ======================================================================
me, members, seqno      the same
windows[p] (Window)     windows: (p, ``impl.nakack2.WindowView``(low, delivered, kept payloads,
                        buffered (seqno, payload) pairs)) for every p with a window
acks_counted            (p, count) for count != 0
ack_pending             the members whose flag is set
ack_table               (p, ack) for p with an entry (the spec's NO_ENTRY = absent)
ack_min, is_server,     the same
become_server_pending
queue ((src, Msg))      queue: (src, codec message) in arrival order
xmit_last               (p, seqno) for p with a record (the spec's 0 = absent)
skip_next_resend        the same
sending                 (seqno, payload) of the held sends, ascending
deliverer               (p, state) for state != READY
======================  ======================================================================

The windows' ring layout, statistics, the send events and the hostile-input limits are
deliberately not part of the view.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from impl.nakack2.snapshot import WindowView
from impl.nakack4.codec import WireMsg

P = TypeVar("P", bound=Hashable)

__all__ = ["EngineView", "WindowView"]


@dataclass(frozen=True, slots=True)
class EngineView(Generic[P]):
    """One member's abstract state (see the module docstring for the mapping to the spec)."""

    me: P
    members: frozenset[P]
    seqno: int
    windows: tuple[tuple[P, WindowView], ...]
    acks_counted: tuple[tuple[P, int], ...]
    ack_pending: frozenset[P]
    ack_table: tuple[tuple[P, int], ...]
    ack_min: int
    is_server: bool
    become_server_pending: bool
    queue: tuple[tuple[P, WireMsg], ...]
    xmit_last: tuple[tuple[P, int], ...]
    skip_next_resend: bool
    sending: tuple[tuple[int, bytes], ...]
    deliverer: tuple[tuple[P, int], ...]
