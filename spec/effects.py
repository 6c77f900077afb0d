"""Effects of a unicast protocol's handlers: what a member asks the world to do, or lets it see.

Every unicast spec (``spec/unicast2.py``, ``spec/unicast3.py``) returns these from its handlers, so
``models/`` reads them the same way whatever the protocol: a ``Send`` becomes a packet in flight,
the other effects are *observations* for the properties and the charts. Observations never
influence the protocol.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Send(NamedTuple):
    """Put ``msg`` (one of the protocol's message types) on the wire to ``dst``."""

    dst: int
    msg: Any


class Deliver(NamedTuple):
    """Pass ``payload`` from ``src`` up to the application."""

    src: int
    payload: int


class WindowCreated(NamedTuple):
    """A receive window for ``src`` was created (a new incarnation) below seqno ``offset + 1``."""

    src: int
    conn_id: int
    offset: int


class WindowRemoved(NamedTuple):
    """The receive window for ``src`` was removed (its incarnation ended)."""

    src: int


class Purged(NamedTuple):
    """The send window to ``dst`` (connection ``conn_id``) dropped every seqno <= ``upto``."""

    dst: int
    conn_id: int
    upto: int


class SyncRequested(NamedTuple):
    """A SEND_FIRST_SEQNO was sent to ``dst``."""

    dst: int


class SyncAnswered(NamedTuple):
    """A SEND_FIRST_SEQNO from ``dst`` was answered by resending ``resent`` messages."""

    dst: int
    resent: int


class Discarded(NamedTuple):
    """A send entry to ``dst`` was removed with ``payloads`` still unacknowledged.

    ``flushed`` is true when the protocol kept retransmitting them for the grace period it
    promises (UNICAST3: CLOSING until conn_close_timeout, digest P11), the one case in which it
    promises nothing more about those messages.
    """

    dst: int
    payloads: tuple[int, ...]
    flushed: bool


Effect = Send | Deliver | WindowCreated | WindowRemoved | Purged | SyncRequested | SyncAnswered | Discarded
