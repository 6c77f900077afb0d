"""Abstract views of one member's NAKACK2 state, comparable between the engine and the spec.

This module owns the *observable* shape of a member's state for the differential harness: an
``EngineView`` built by ``Nakack2Engine.snapshot()``, field for field the spec's ``Node``
(``spec/nakack2_state.py``) with member-indexed tuples turned into (member, value) pairs sorted by
member, absent entries left out, and payloads as bytes (``spec_payload(n)`` for the spec's n):

======================  ======================================================================
spec ``Node``           ``EngineView``
======================  ======================================================================
me, members, seqno      the same
windows[p] (Window)     windows: (p, WindowView(low, delivered, kept payloads, buffered
                        (seqno, payload) pairs)) for every p with a window; the spec's None
                        slots (gaps) are the seqnos missing from ``buffered``
is_server,              the same
become_server_pending
queue ((src, Msg))      queue: (src, codec message) in arrival order
xmit_last               (p, seqno) for p with a record (the spec's 0 = absent)
stable_xmit             (p, hr) for p with a record (the spec's NO_ENTRY = absent)
last_seqno_resent,      the same
num_resends,
skip_next_resend
votes                   the same
merged (Digest)         (p, hd, hr) for p named (the spec's None = absent)
stable_suspended        the same
======================  ======================================================================

Ages, the windows' row layout, statistics, the hostile-input limits and the queue's byte count are
deliberately not part of the view.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from impl.common import payload_number, spec_payload  # noqa: F401  (re-exported)
from impl.nakack2.codec import WireMsg

P = TypeVar("P", bound=Hashable)


@dataclass(frozen=True, slots=True)
class WindowView:
    """One window: like ``spec.nakack2.Window`` with payloads as bytes and gaps left out."""

    low: int  # highest purged seqno
    delivered: int  # hd
    kept: tuple[bytes, ...]  # payloads of low+1 .. hd (only the own window keeps any)
    buffered: tuple[tuple[int, bytes], ...]  # (seqno, payload) stored above hd, ascending

    @property
    def highest_received(self) -> int:
        return self.buffered[-1][0] if self.buffered else self.delivered


@dataclass(frozen=True, slots=True)
class EngineView(Generic[P]):
    """One member's abstract state (see the module docstring for the mapping to the spec)."""

    me: P
    members: frozenset[P]
    seqno: int
    windows: tuple[tuple[P, WindowView], ...]
    is_server: bool
    become_server_pending: bool
    queue: tuple[tuple[P, WireMsg], ...]
    xmit_last: tuple[tuple[P, int], ...]
    stable_xmit: tuple[tuple[P, int], ...]
    last_seqno_resent: int
    num_resends: int
    skip_next_resend: bool
    votes: frozenset[P]
    merged: tuple[tuple[P, int, int], ...]
    stable_suspended: bool
