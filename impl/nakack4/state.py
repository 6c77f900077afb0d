"""One member's mutable NAKACK4 state, its outputs, and the helpers every handler shares.

This module owns the data (``Member``: one ``Entry`` per window, the own one included; the
AckTable; the counter and the held sends; the become_server_queue; the retransmission records;
LastSeqnoResender's skip flag; the counters and the output queues) and the small operations the
handlers share (emitting a datagram or a multicast, delivering). It decides nothing about *when*.

Windows are ``impl.fixed_window.FixedBuffer``s of ``capacity`` slots. The own window is the send
window: it keeps what it delivered (the loopback copy, ``remove_many(nullify=False)``) until the
AckTable's minimum purges it (non-forced: clamped to its hd). A receive window nulls what it
delivers (low == hd).

Iteration order: wherever the spec walks its per-member tuples by member number, we walk members
in ``address_key`` order (ints by value), so with members 0..n-1 the engine emits its datagrams in
the spec's order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Generic

from impl.common import EngineStats, HeldBytes, P
from impl.fixed_window import FixedBuffer
from impl.nakack2.state import ResendBook
from impl.nakack4.codec import McastMsg, WireMsg, address_key, encode
from impl.nakack4.config import Config
from impl.wire import EncodeError

# The single deliverer of one window (removeAndDeliver's ``adders``), the spec's numbering.
READY, ARMED, STUCK, STRANDED = range(4)


class SendStatus(Enum):
    """What happened to one application multicast (``Nakack4Engine.multicast``'s answer)."""

    SENT = "sent"  # added to the own window and passed down (one datagram per member of the view)
    BLOCKED = "blocked"  # the seqno is taken; the own window is full: held until an ACK purge makes room
    HELD = "held"  # the seqno is taken, the add and send are a second step (send_atomically off)
    DROPPED = "dropped"  # DONT_BLOCK on a full window (variant drop_dont_block), or DISCONNECT: seqno spent
    NO_WINDOW = "no window"  # no own window yet (a joiner before its digest): dropped, no seqno taken


@dataclass(slots=True)
class Stats(EngineStats):
    """Counters; nothing in the protocol reads them (the shared ones are ``EngineStats``')."""

    multicasts: int = 0  # application multicasts that took a seqno
    send_without_window: int = 0  # multicast dropped: no own window
    sends_blocked: int = 0  # multicasts (or held sends) that found the own window full
    sends_resumed: int = 0  # held sends the engine passed down by itself (resume_blocked_sends)
    sends_dropped: int = 0  # held or new sends dropped (DONT_BLOCK variant, DISCONNECT)
    old_or_duplicate: int = 0  # MSG at or below hd, already held or beyond capacity: no delivery
    queued: int = 0  # NAKACK4 messages put in the become_server_queue
    queue_dropped: int = 0  # ... refused by the full queue (the newest) or its byte bound
    acks_sent: int = 0
    acks_ignored: int = 0  # ACKs from non-members, or not above the entry
    ack_purged: int = 0  # own messages purged on the AckTable's minimum
    xmit_reqs_sent: int = 0
    xmit_served: int = 0  # messages resent in answer to XMIT_REQs (one per message, not per copy)
    xmit_req_foreign: int = 0  # XMIT_REQ for another sender's messages with use_mcast_xmit: dropped
    xmit_rsp_foreign: int = 0  # XMIT_RSP not from the original sender it names: dropped
    highest_seqno_sent: int = 0  # HIGHEST_SEQNO multicasts (one per run, not per copy)
    join_rsp_ignored: int = 0
    oversized_control: int = 0  # a JOIN_RSP too large for one datagram: not sent
    resends_throttled: int = 0  # resends not sent: resend_factor or max_resend_bytes (the rest of the answer)


class Entry:
    """One window and what the member keeps beside it per sender (JGroups' Entry)."""

    __slots__ = ("counted", "deliverer", "held_bytes", "pending", "window")

    def __init__(self, config: Config, offset: int) -> None:
        self.window: FixedBuffer[McastMsg] = FixedBuffer(config.capacity, offset, seed_edge=config.variant.seed_edge)
        self.counted = 0  # num_acks_sent: deliveries since the last ACK
        self.pending = False  # send_ack: the retransmit task owes the sender an ACK
        self.deliverer = READY
        self.held_bytes = 0  # stored undelivered, counted against max_held_bytes (impl.common.HeldBytes)


class Member(Generic[P]):
    """The state of one member. Handlers in ``receive``, ``acks``, ``sending``, ``membership`` and
    ``tasks`` mutate it in place."""

    def __init__(self, config: Config, me: P, members: frozenset[P]) -> None:
        self.config = config
        self.variant = config.variant
        self.me = me
        founder = me in members
        self.members: frozenset[P] = members if founder else frozenset()
        self.view: tuple[P, ...] = tuple(sorted(self.members, key=address_key))
        self.seqno = 0  # the counter: the last seqno an application thread took
        self.entries: dict[P, Entry] = {p: Entry(config, 0) for p in self.view} if founder else {}
        self.ack_table: dict[P, int] = {p: 0 for p in self.view} if founder else {}
        self.ack_min = 0
        self.is_server = founder
        self.become_server_pending = False
        self.queue: deque[tuple[P, WireMsg, int]] = deque()  # (src, message, datagram size)
        self.queue_bytes = 0
        self.xmit_last: dict[P, int] = {}  # xmit_task_map (the spec's 0 = absent)
        self.skip_next_resend = False
        self.sending: dict[int, bytes] = {}  # seqno -> payload: sends that took a seqno, not added yet
        self.oob_sending: set[int] = set()  # the seqnos in ``sending`` whose message is OOB
        self.oob_delivered: set[int] = set()  # own OOB seqnos above the own hd delivered (OOB_DELIVERED)
        self.answering_size = 0  # the size of the datagram being handled
        self.answering_now = 0  # ... and when it arrived (the resend budget's interval)
        self.books: dict[P | None, ResendBook] = {}  # resends per requester (None: every non-member)
        self.outbox: list[tuple[P, bytes]] = []
        self.deliveries: list[tuple[P, bytes]] = []
        self.send_events: list[tuple[int, SendStatus]] = []
        self.stats = Stats()
        self.held = HeldBytes(config.max_held_bytes, config.max_receive_bytes)  # the byte limits

    @property
    def own(self) -> Entry | None:
        return self.entries.get(self.me)

    def set_members(self, members: frozenset[P]) -> None:
        self.members = members
        self.view = tuple(sorted(members, key=address_key))

    def digest(self) -> dict[P, tuple[int, int]]:
        """GET_DIGEST: (hd, high) of every window."""
        return {p: (e.window.hd, e.window.high) for p, e in self.entries.items()}

    def drop_entry(self, peer: P) -> None:
        """Forget ``peer``'s window (if any): what it held undelivered is freed."""
        entry = self.entries.pop(peer, None)
        if entry is not None:
            self.held.release(entry)

    def set_entry(self, peer: P, entry: Entry) -> None:
        """``peer``'s window is ``entry`` from now on (the one it replaces, if any, is freed)."""
        self.drop_entry(peer)
        self.entries[peer] = entry

    def sorted_entries(self) -> list[tuple[P, Entry]]:
        return sorted(self.entries.items(), key=lambda e: address_key(e[0]))

    # ------------------------------------------------------------------ outputs

    def emit(self, dst: P, msg: WireMsg) -> bool:
        """Queue ``msg`` for ``dst``; a control message too large for one datagram is not sent
        (counted): False then."""
        try:
            data = encode(msg, self.config.codec_limits, self.config.member_limit)
        except EncodeError:
            self.stats.oversized_control += 1
            return False
        self.outbox.append((dst, data))
        self.stats.datagrams_sent += 1
        return True

    def multicast(self, data: bytes, destinations: Iterable[P]) -> None:
        """Queue the datagram ``data`` once for each of ``destinations``."""
        out = self.outbox
        n = len(out)
        out.extend((dst, data) for dst in destinations)
        self.stats.datagrams_sent += len(out) - n

    def deliver_all(self, src: P, items: list[McastMsg]) -> None:
        self.deliveries += [(src, item.payload) for item in items]
        self.stats.delivered += len(items)
