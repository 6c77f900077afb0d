"""NAKACK4 engine configuration: one frozen ``Config`` with JGroups' defaults and its validation.

This module owns every tunable number of the engine and the rules that make a set of numbers
valid; nothing else in ``impl/nakack4`` has a default. Durations are integer milliseconds, the
unit of the engine's ``now``.

Three groups of fields:

- JGroups' NAKACK4 properties (jgroups-fixed-windows.md section 2) with JGroups' defaults, and the
  application's message flags (DONT_BLOCK, DONT_LOOPBACK) as the spec's settings.
- ``variant``: the spec's defect switches (same names as ``spec.nakack4.Variant``).
- The engine's own choices: ``resume_blocked_sends`` (the engine passes a blocked send down itself
  once the window has room; the lockstep harness turns it off and fires the spec's SEND timer),
  and limits against hostile or broken peers (not in JGroups), each far above what a well-behaved
  group needs, so below them the engine behaves exactly like the spec.

``Config()`` is valid; ``Config(field=bad)`` raises ``ValueError`` naming the field and what was
expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from impl.common import reject_field as _reject
from impl.common import require_field as _require
from impl.common import require_ints
from impl.wire import DEFAULT_LIMITS, CodecLimits


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects; all off is NAKACK4 as JGroups ships it late
    2026. The same names as ``spec.nakack4.Variant`` (kept equal by a test)."""

    seed_edge: bool = False  # the seed's window edge: full when s - low >= capacity
    lock_after_seqno: bool = False  # before 370770ab9: send_atomically took the lock after seqno++
    ack_from_non_members: bool = False  # before JGRP-2904: an ACK from a non-member re-creates its entry
    highest_seqno_no_ack: bool = False  # before JGRP-2874: HIGHEST_SEQNO neither acks nor loops back
    view_change_no_purge: bool = False  # before JGRP-2853/2854: a view change does not purge
    drop_dont_block: bool = False  # before JGRP-2873: a DONT_BLOCK send on a full window is dropped
    deliverer_stuck: bool = False  # before JGRP-3034: an exception building a batch leaves adders set
    no_dont_loopback_self_ack: bool = False  # before JGRP-2829: DONT_LOOPBACK multicasts never self-acked
    fix_deliver_stranded: bool = False  # not in JGroups: HIGHEST_SEQNO delivers what a failed batch stranded


SLOT_BYTES = 8  # one slot of a FixedBuffer: a reference in a Python list

_FLAGS = ("send_atomically", "dont_block", "dont_loopback", "deliver_exceptions", "use_mcast_xmit",
          "resume_blocked_sends")


@dataclass(frozen=True, slots=True)
class Config:
    """Everything an engine is told before it starts (durations in ms)."""

    # --- JGroups NAKACK4 properties -------------------------------------------------------------
    capacity: int = 16384
    """Slots of every window (FixedBuffer): a sender blocks, a receiver drops, beyond it."""
    ack_threshold: int = 0
    """Deliveries per sender after which an ACK goes at once; <= 0 reads as capacity // 4."""
    xmit_interval: int = 1000
    """Period of the retransmit task (pending ACKs, XMIT_REQs, HIGHEST_SEQNO); > 0."""
    send_atomically: bool = False
    """seqno++, add and send under the window's lock (else two steps: copies may leave out of order)."""
    use_mcast_xmit: bool = True
    """Answer an XMIT_REQ by re-multicasting the original (else an XMIT_RSP to the requester)."""
    become_server_queue_size: int = 50
    """The become_server_queue's ring; <= 0 reads as 50 (a full ring drops the newest)."""
    max_xmit_req_size: int = 8192
    """How many seqnos above the highest deliverable one a retransmit run scans per window for gaps
    (JGroups' max_xmit_req_size bounds an XMIT_REQ; the spec asks for every gap: the same while a
    window's gaps lie within this many seqnos)."""

    # --- the application's message flags --------------------------------------------------------
    dont_block: bool = False
    """Every multicast is flagged DONT_BLOCK (JGRP-2873)."""
    dont_loopback: bool = False
    """Every multicast is flagged DONT_LOOPBACK: no own copy comes back (JGRP-2829)."""
    deliver_exceptions: bool = False
    """The spec's fault injection (JGRP-3034): ``inject_delivery_fault`` is allowed."""

    # --- behaviour switches ---------------------------------------------------------------------
    variant: Variant = field(default_factory=Variant)
    codec_limits: CodecLimits = DEFAULT_LIMITS
    resume_blocked_sends: bool = True
    """The engine passes a held send down by itself as soon as the own window has room (in seqno
    order, within the same call): a blocked application thread's wake-up. False: only
    ``fire_timer(SEND, seqno)`` does it (the lockstep harness: the spec's SEND timer)."""

    # --- limits against hostile input (not in JGroups) ------------------------------------------
    max_members: int = 4096
    """Most members a view or a digest may name (see also ``max_window_bytes``)."""
    max_window_bytes: int = 128 << 20
    """Most bytes of window slots one view or digest may make the engine allocate: every window is
    a FixedBuffer of ``capacity`` slots of 8 bytes each, allocated when the window is created, so a
    view, digest or JOIN_RSP naming more than ``max_window_bytes // (8 * capacity)`` members is
    refused like one naming more than ``max_members`` (``member_limit``: 1,024 members at the
    default capacity). The windows an engine holds are those of its view plus, between a digest and
    the view that follows it, the digest's: at most twice this."""
    max_held_bytes: int = 64 << 20
    """Most bytes one receive window holds undelivered (messages stored above a gap, or while its
    deliverer is busy, each counted as its payload plus ``impl.common.HELD_OVERHEAD``): a message
    that would pass it is dropped like a loss (``held_bytes_full``) and comes again by
    retransmission once the gap is filled. JGroups bounds only the slots: a member that never sends
    seqno 1 makes every receiver keep up to ``capacity`` x 65,000 bytes of its messages (1 GB)."""
    max_receive_bytes: int = 256 << 20
    """Most bytes all receive windows hold undelivered together (as ``max_held_bytes``)."""
    max_pending_sends: int = 1 << 16
    """Most sends held at once (blocked on the full window, or between seqno and add); one more
    ``multicast`` raises ``SendWindowFull`` (the spec's sender_threads bounds it in the models)."""
    max_xmit_served: int = 8192
    """Most messages served for one XMIT_REQ (the rest is ignored and counted)."""
    max_queue_bytes: int = 64 << 20
    """Most bytes the become_server_queue holds: a datagram that would pass it is dropped."""
    resend_factor: int = 64
    """Amplification bound (``impl.common.ResendBudget``): one datagram from a peer makes the
    engine resend at most max(resend_factor x its size, one maximal datagram) bytes, counting every
    copy of a re-multicast; 0 = no limit (JGroups, and the lockstep harness)."""
    max_resend_bytes: int = 1 << 20
    """Most bytes resent in answer to one peer's datagrams within one ``xmit_interval``."""

    def __post_init__(self) -> None:
        require_ints(self, ["capacity", "ack_threshold", "xmit_interval", "become_server_queue_size",
                            "max_xmit_req_size", "max_members", "resend_factor", "max_resend_bytes",
                            "max_pending_sends", "max_xmit_served", "max_queue_bytes", "max_window_bytes",
                            "max_held_bytes", "max_receive_bytes"])
        for name in _FLAGS:
            if type(getattr(self, name)) is not bool:
                _reject(name, "a bool", getattr(self, name))
        if not isinstance(self.variant, Variant):
            _reject("variant", "an impl.nakack4.Variant", self.variant)
        if not isinstance(self.codec_limits, CodecLimits):
            _reject("codec_limits", "an impl.wire.CodecLimits", self.codec_limits)
        limit = min(self.codec_limits.max_xmit_seqnos, self.codec_limits.max_xmit_span)
        _require(self, "max_xmit_req_size", 1 <= self.max_xmit_req_size <= limit,
                 f"in 1..{limit} (one XMIT_REQ must fit codec_limits' max_xmit_seqnos and max_xmit_span)")
        _require(self, "capacity", self.capacity >= 1, ">= 1")
        # An XMIT_REQ: 2 header + an address (<= 257) + 19 count/lowest/length bytes + the bitset.
        need = 2 + 257 + 19 + (self.max_xmit_req_size + 7) // 8
        if self.codec_limits.max_datagram < need:
            _reject("codec_limits", f"max_datagram >= {need} (an XMIT_REQ of max_xmit_req_size"
                    f"={self.max_xmit_req_size} seqnos must fit one datagram)", self.codec_limits)
        _require(self, "xmit_interval", self.xmit_interval > 0, "> 0")
        for name in ("max_members", "max_pending_sends", "max_xmit_served", "max_queue_bytes", "max_held_bytes",
                     "max_receive_bytes"):
            _require(self, name, getattr(self, name) >= 1, ">= 1")
        _require(self, "max_window_bytes", self.max_window_bytes >= SLOT_BYTES * self.capacity,
                 f">= {SLOT_BYTES} x capacity (room for one window of capacity={self.capacity})")
        _require(self, "resend_factor", self.resend_factor >= 0, ">= 0 (0 disables the bound)")
        _require(self, "max_resend_bytes", self.max_resend_bytes >= self.codec_limits.max_datagram,
                 ">= codec_limits.max_datagram (a message of any size must fit one interval's budget)")

    @property
    def threshold(self) -> int:
        """The ack threshold as JGroups reads it (capacity // 4 when ack_threshold <= 0)."""
        return self.ack_threshold if self.ack_threshold > 0 else self.capacity // 4

    @property
    def member_limit(self) -> int:
        """Most members a view or digest may name: ``max_members``, and no more windows than
        ``max_window_bytes`` holds."""
        return min(self.max_members, self.max_window_bytes // (SLOT_BYTES * self.capacity))

    @property
    def queue_bound(self) -> int:
        return self.become_server_queue_size if self.become_server_queue_size > 0 else 50

    @property
    def atomic(self) -> bool:
        """Do seqno++, add and send happen in one step (send_atomically, without the pre-fix lock)?"""
        return self.send_atomically and not self.variant.lock_after_seqno

    @property
    def drops_when_full(self) -> bool:
        """Variant drop_dont_block with DONT_BLOCK sends: a full window drops instead of blocking."""
        return self.dont_block and self.variant.drop_dont_block
