"""Per-peer connection entries and their life-cycle table (errors and counters re-exported).

This module owns the finite control of UNICAST3 connections (digest 1.2 (e)) as data:
``TRANSITIONS[(role, state)][event]`` is the next state, ``None`` meaning "removed" (UNICAST3's
CLOSED, which the engine never stores, exactly like the spec). An event missing from the table is
illegal in that state. ``Entry.fire`` is the only code that changes an entry's state, and it
resets the entry's age on every *change* (JGroups' ``update()`` on state changes); activity
(``touch``) resets the age without a change.

The errors and the two wrap-around counters the wire format needs (``Timestamper``,
``ts_newer``, ``next_conn_id``) are ``impl/common.py``'s, shared with UNICAST2; they are
re-exported here under their old names.
"""

from __future__ import annotations

import enum

from impl.common import (  # noqa: F401  (re-exported: impl.unicast3.entries names them)
    TS_MODULUS,
    LocalProtocolError,
    ProtocolError,
    SendWindowFull,
    Timestamper,
    next_conn_id,
    ts_newer,
)
from impl.unicast3.codec import DataMsg
from impl.window import Table


class ConnState(enum.IntEnum):
    """Stored connection states; the values equal ``spec.unicast3.OPEN`` / ``CLOSING`` (a test keeps
    them so)."""

    OPEN = 0
    CLOSING = 1


class Role(enum.Enum):
    SEND = "send"
    RECV = "recv"


class Event(enum.Enum):
    """What can happen to an entry; which ones apply to which role is in ``TRANSITIONS``."""

    ACTIVITY = "activity"  # application send (SEND) / DATA on this connection (RECV)
    VIEW_MEMBER = "view_member"  # a view containing the peer
    VIEW_LEFT = "view_left"  # a view without the peer
    IDLE = "idle"  # age >= conn_expiry_timeout while OPEN
    CLOSE_CONNECTION = "close_connection"  # closeConnection(): AgeOutCache or the API call
    EXPIRED = "expired"  # age >= conn_close_timeout while CLOSING
    CLOSE_MSG = "close_msg"  # CLOSE(conn_id) from the sender (RECV only)
    REMOVE = "remove"  # removeReceiveConnection / remove_on_view_change variant


OPEN, CLOSING = ConnState.OPEN, ConnState.CLOSING
_COMMON: dict[ConnState, dict[Event, ConnState | None]] = {
    OPEN: {
        Event.ACTIVITY: OPEN,
        Event.VIEW_MEMBER: OPEN,
        Event.VIEW_LEFT: CLOSING,
        Event.IDLE: CLOSING,
        Event.CLOSE_CONNECTION: CLOSING,
        Event.REMOVE: None,
    },
    CLOSING: {
        Event.ACTIVITY: OPEN,
        Event.VIEW_MEMBER: OPEN,
        Event.VIEW_LEFT: CLOSING,
        Event.CLOSE_CONNECTION: CLOSING,
        Event.EXPIRED: None,
        Event.REMOVE: None,
    },
}
TRANSITIONS: dict[tuple[Role, ConnState], dict[Event, ConnState | None]] = {
    (Role.SEND, OPEN): dict(_COMMON[OPEN]),
    (Role.SEND, CLOSING): dict(_COMMON[CLOSING]),
    (Role.RECV, OPEN): {**_COMMON[OPEN], Event.CLOSE_MSG: None},
    (Role.RECV, CLOSING): {**_COMMON[CLOSING], Event.CLOSE_MSG: None},
}
# ``Entry.touch`` skips the table lookup for an OPEN entry, which relies on this:
assert all(TRANSITIONS[(role, OPEN)][Event.ACTIVITY] is OPEN for role in Role)


class Entry:
    """What send and receive entries share: conn_id, state and age (``touched``, ms)."""

    __slots__ = ("conn_id", "state", "touched")
    ROLE: Role

    def __init__(self, conn_id: int, *, now: int) -> None:
        self.conn_id = conn_id
        self.state = OPEN
        self.touched = now

    def fire(self, event: Event, *, now: int) -> bool:
        """Apply ``event``; True if the entry is now removed. Illegal events raise."""
        try:
            new = TRANSITIONS[(self.ROLE, self.state)][event]
        except KeyError:
            raise LocalProtocolError(
                f"no transition for a {self.ROLE.value} entry (conn_id {self.conn_id}) in state"
                f" {self.state.name} on {event.name}"
            ) from None
        if new is None:
            return True
        if new is not self.state:
            self.state = new
            self.touched = now  # every state change resets the age
        return False

    def touch(self, *, now: int) -> None:
        """Activity on the connection: JGroups' ``update()`` (ACTIVITY fires too, for reopening)."""
        if self.state is not OPEN:  # ACTIVITY leaves an OPEN entry as it is (asserted above)
            self.fire(Event.ACTIVITY, now=now)
        self.touched = now

    def age(self, *, now: int) -> int:
        return now - self.touched


class SendEntry(Entry):
    """SenderEntry: messages to one peer. HA = ``window.hd`` (forced purge), HS = ``window.hr``."""

    __slots__ = ("dont_loopback", "last_ts", "oob", "resend_since", "resend_spent", "watermark", "window")
    ROLE = Role.SEND

    def __init__(self, conn_id: int, window: Table[bytes], *, now: int) -> None:
        super().__init__(conn_id, now=now)
        self.window = window  # offset 0: seqno s holds the payload of the s-th message
        self.watermark = (0, 0)  # (HA, HS) as read by the previous retransmit run
        self.last_ts = 0  # newest accepted ACK / SEND_FIRST_SEQNO timestamp; 0 = none yet
        self.resend_since, self.resend_spent = now, 0  # max_resend_bytes: this interval's start and bytes
        self.oob: set[int] = set()  # the unacked seqnos sent OOB (their resends carry the flag too)
        self.dont_loopback: set[int] = set()  # the entry for oneself: its DONT_LOOPBACK seqnos (spec decision 27)

    @property
    def acked(self) -> int:
        return self.window.hd

    @property
    def highest_sent(self) -> int:
        return self.window.hr


class RecvEntry(Entry):
    """ReceiverEntry: messages from one peer, window created just below the first seqno seen."""

    __slots__ = ("ack_pending", "created", "held_bytes", "stale_since", "window")
    ROLE = Role.RECV

    def __init__(self, conn_id: int, window: Table[DataMsg], *, now: int) -> None:
        super().__init__(conn_id, now=now)
        self.window = window  # items are the DATA messages as received (for the snapshot)
        self.ack_pending = False
        self.created = now
        self.held_bytes = 0  # counted against max_window_bytes (impl.common.HeldBytes)
        self.stale_since = now  # no delivery beyond the creating DATA since (receive_evict_idle)

    @property
    def delivered(self) -> int:
        return self.window.hd
