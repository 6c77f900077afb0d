"""UNICAST4 engine configuration: one frozen ``Config`` with JGroups' defaults and its validation.

This module owns every tunable number of the engine and the rules that make a set of numbers
valid; nothing else in ``impl/unicast4`` has a default. Durations are integer milliseconds, the
unit of the engine's ``now``.

Two groups of fields: JGroups' UNICAST4/ReliableUnicast properties with JGroups' defaults (master,
late 2026: JGRP-2929 made both connection timeouts 10 s; 5.4.12.Final had 120 s and 240 s), and
limits against hostile or broken peers (not in JGroups), each far above what an honest peer needs,
so that the engine behaves exactly like ``spec/unicast4.py`` below them, and each with a test that
an honest peer losing any one datagram still gets everything (tests/impl/unicast4/test_u4_hostile.py).

``Config()`` is valid; ``Config(field=bad)`` raises ``ValueError`` naming the field and what was
expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from impl.common import reject_field as _reject
from impl.common import require_field as _require
from impl.common import require_ints
from impl.unicast3.codec import DEFAULT_LIMITS, CodecLimits
from impl.wire import MAX_CONN_ID


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects; all off is UNICAST4 as JGroups ships it. The
    same names as ``spec.unicast4.Variant`` (kept equal by a test)."""

    drop_dont_block: bool = False  # JGRP-2873 (5.4.5): a DONT_BLOCK send on a full window is dropped
    zero_conn_timeouts: bool = False  # JGRP-2929: conn_expiry_timeout and conn_close_timeout read as 0
    any_conn_id: bool = False  # before JGRP-2852: any different conn_id replaces (UNICAST3's rule)
    oob_redelivers: bool = False  # a defect: an OOB DATA is held as itself and the drain delivers it again
    dont_loopback_delivered: bool = False  # a defect: the drain of the window to self delivers a DONT_LOOPBACK message


_FLAGS = ("dont_block", "resume_blocked_sends")


@dataclass(frozen=True, slots=True)
class Config:
    """Everything an engine is told before it starts (durations in ms)."""

    # --- JGroups UNICAST4 / ReliableUnicast properties ------------------------------------------
    capacity: int = 2048
    """Slots of every send and receive window (FixedBuffer): a sender blocks, a receiver drops, beyond it."""
    ack_threshold: int = 0
    """Counted ACKs (each DATA counts 1 when added and each delivered batch its size): an ACK goes at
    once when the count reaches it, else the retransmit task sends it; <= 0 reads as capacity // 4."""
    xmit_interval: int = 500
    """Period of the retransmit task (> 0; JGroups resets <= 0 to 500, we reject it)."""
    conn_expiry_timeout: int = 10_000
    """Idle time after which an OPEN entry becomes CLOSING; 0 disables it (JGRP-2929 warns)."""
    conn_close_timeout: int = 10_000
    """Time in CLOSING after which an entry is removed (CLOSED: its blocked sends fail); 0 disables it."""
    sync_min_interval: int = 2_000
    """At most one SEND_FIRST_SEQNO per peer within this interval; 0 = no limit."""
    max_xmit_req_size: int = 8_192
    """How many seqnos above the highest deliverable one a retransmit run scans per window for gaps."""
    max_retransmit_time: int = 0
    """AgeOutCache: a connection opened to a non-member is closed (CLOSING) after this long unless
    the peer joins the view; 0 disables it. JGroups' default is 60000; ours is 0 because the spec
    leaves the AgeOutCache out (as UNICAST3's does, its decision 24) and a lockstep comparison needs
    it off."""
    first_conn_id: int = 0
    """The conn_id of the first send entry (JGroups' last_conn_id starts at 0); conn_ids wrap after 32767."""

    # --- the application's message flags --------------------------------------------------------
    dont_block: bool = False
    """Every send is flagged DONT_BLOCK (as shipped it blocks anyway: JGRP-2873's fix)."""

    # --- behaviour switches ---------------------------------------------------------------------
    variant: Variant = field(default_factory=Variant)
    codec_limits: CodecLimits = DEFAULT_LIMITS
    resume_blocked_sends: bool = True
    """The engine adds and sends a blocked send by itself as soon as its window has room (in seqno
    order, within the same call): a blocked application thread's wake-up. False: only
    ``fire_timer(SEND, peer, seqno)`` does it (the lockstep harness: the spec's SEND timer)."""

    # --- limits against hostile input (not in JGroups) ------------------------------------------
    max_receive_entries: int = 4_096
    """Most receive entries, and most peers in last_sync_sent: a first DATA from yet another sender
    is dropped (and counted) unless an entry idle for ``receive_evict_idle`` can be evicted."""
    receive_evict_idle: int = 5_000
    """Lock-out guard for a full receive table: evict the entry longest without progress (a delivery
    beyond its creating DATA) if that long; 0 never. Below ``conn_expiry_timeout``: a sender kept out
    for conn_expiry_timeout + conn_close_timeout discards what it has not had acknowledged (JGRP-2929's
    10 s defaults), so the guard must let an honest peer in first (UNICAST2/UNICAST3 keep 60 s)."""
    max_window_bytes: int = 64 << 20
    """Most bytes one receive window holds undelivered (payload + ``impl.common.HELD_OVERHEAD`` each):
    a DATA that would pass it is dropped like a loss and comes again once the gap is filled."""
    max_receive_bytes: int = 256 << 20
    """Most bytes all receive windows hold undelivered together (as above)."""
    max_xmit_served: int = 8_192
    """Most messages resent for one XMIT_REQ (the rest is ignored and counted)."""
    max_cached_messages: int = 4_096
    """Most DATA the message cache holds (all senders): one more is not cached, dropped like a loss."""
    max_cache_bytes: int = 16 << 20
    """Most bytes the message cache holds (payload + ``impl.common.HELD_OVERHEAD`` each)."""
    max_blocked_sends: int = 1 << 16
    """Most sends blocked at once (all destinations): one more raises ``SendWindowFull``."""
    max_blocked_bytes: int = 64 << 20
    """Most payload bytes of blocked sends held at once: one more raises ``SendWindowFull``."""
    resend_factor: int = 64
    """Amplification bound (``impl.common.ResendBudget``); 0 = no limit (JGroups, the lockstep harness)."""
    max_resend_bytes: int = 1 << 20
    """Most bytes resent to one peer in answer to its datagrams within one ``xmit_interval``."""

    def __post_init__(self) -> None:
        require_ints(self, [f.name for f in fields(self)
                            if f.name not in ("variant", "codec_limits") + _FLAGS])
        for name in _FLAGS:
            if type(getattr(self, name)) is not bool:
                _reject(name, "a bool", getattr(self, name))
        _require(self, "capacity", self.capacity >= 1, ">= 1")
        _require(self, "xmit_interval", self.xmit_interval > 0, "> 0")
        for name in ("conn_expiry_timeout", "conn_close_timeout", "sync_min_interval", "resend_factor",
                     "receive_evict_idle", "max_retransmit_time"):
            _require(self, name, getattr(self, name) >= 0, ">= 0 (0 disables it)")
        _require(self, "first_conn_id", 0 <= self.first_conn_id <= MAX_CONN_ID, f"in 0..{MAX_CONN_ID}")
        for name in ("max_receive_entries", "max_window_bytes", "max_receive_bytes", "max_xmit_served",
                     "max_blocked_sends", "max_blocked_bytes", "max_cached_messages", "max_cache_bytes"):
            _require(self, name, getattr(self, name) >= 1, ">= 1")
        if not isinstance(self.variant, Variant):
            _reject("variant", "an impl.unicast4.Variant", self.variant)
        if not isinstance(self.codec_limits, CodecLimits):
            _reject("codec_limits", "an impl.unicast3.codec.CodecLimits", self.codec_limits)
        limit = min(self.codec_limits.max_xmit_seqnos, self.codec_limits.max_xmit_span)
        _require(self, "max_xmit_req_size", 1 <= self.max_xmit_req_size <= limit,
                 f"in 1..{limit} (one XMIT_REQ must fit codec_limits' max_xmit_seqnos and max_xmit_span)")
        need = 21 + (self.max_xmit_req_size + 7) // 8
        if self.codec_limits.max_datagram < need:
            _reject("codec_limits", f"max_datagram >= {need} (an XMIT_REQ of max_xmit_req_size"
                    f"={self.max_xmit_req_size} seqnos must fit one datagram)", self.codec_limits)
        _require(self, "max_resend_bytes", self.max_resend_bytes >= self.codec_limits.max_datagram,
                 ">= codec_limits.max_datagram (a message of any size must fit one interval's budget)")

    @property
    def threshold(self) -> int:
        """The ack threshold as UNICAST4.init reads it (capacity // 4 when ack_threshold <= 0)."""
        return self.ack_threshold if self.ack_threshold > 0 else self.capacity // 4

    @property
    def expiry(self) -> int:
        """conn_expiry_timeout in force (0 under variant zero_conn_timeouts)."""
        return 0 if self.variant.zero_conn_timeouts else self.conn_expiry_timeout

    @property
    def closing(self) -> int:
        """conn_close_timeout in force (0 under variant zero_conn_timeouts)."""
        return 0 if self.variant.zero_conn_timeouts else self.conn_close_timeout

    @property
    def drops_when_full(self) -> bool:
        """Variant drop_dont_block with DONT_BLOCK sends: a full window drops instead of blocking."""
        return self.dont_block and self.variant.drop_dont_block
