"""UNICAST3 engine configuration: one frozen ``Config`` with JGroups' defaults and its validation.

This module owns every tunable number of the engine and the rules that make a set of numbers
valid; nothing else in ``impl/unicast3`` has a default. All durations are integer milliseconds,
the same unit as the engine's ``now`` (JGroups' properties are in ms too).

Two groups of fields:

- JGroups' UNICAST3 properties (digest 1.2 (d)), with JGroups' defaults. Where the engine departs
  from JGroups the field's comment says how (``ack_threshold``, ``max_retransmit_time``,
  ``max_xmit_req_size``; ``xmit_table_resize_factor`` and ``xmit_table_max_compaction_time`` do
  not exist because ``impl.window.Table`` frees rows as it goes instead of compacting).
- Limits against hostile or broken peers (not in JGroups): they bound the memory and work one
  datagram, or a flood of them, can cost. Each is far above what a well-behaved peer needs, so the
  engine behaves exactly like ``spec/unicast3.py`` below them, except ``resend_factor``, which an
  honest receiver's request for a large lost burst reaches (its recovery then takes more runs).

``Config()`` is valid; ``Config(field=bad)`` raises ``ValueError`` naming the field and what was
expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from impl.common import reject_field as _reject
from impl.common import require_field as _require
from impl.common import require_ints
from impl.unicast3.cache import CACHE_OVERHEAD, QUEUE_OVERHEAD
from impl.unicast3.codec import DEFAULT_LIMITS, CodecLimits


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical behaviour; all off is UNICAST3 as JGroups ships it. The
    same names as ``spec.unicast3.Variant`` (kept equal by a test), so that a spec counterexample
    runs on the engine with the same flags."""

    no_timestamps: bool = False  # JGRP-1873: ACK / SEND_FIRST_SEQNO carry no timestamp
    no_hs_resend: bool = False  # JGRP-1548: a lost last message is never resent
    remove_on_view_change: bool = False  # JGRP-1586: entries removed at once, unacked lost
    ack_only_new: bool = False  # JGRP-1578: duplicates are not re-acknowledged
    no_sync_rate_limit: bool = False  # JGRP-1874: one SEND_FIRST_SEQNO per non-first message, none remembered
    no_message_cache: bool = False  # JGRP-2327: DATA without a usable receive entry is dropped (3.x)
    remove_without_ack_flush: bool = False  # 3.4.x: removeReceiveConnection leaves pending ACKs unsent
    close_to_non_members: bool = False  # 3.4.x: a send entry's removal sends CLOSE to a non-member too
    stale_xmit_record_asks_all: bool = False  # JGRP-2573 (3.6 to 5.1): a record below hd filters nothing
    oob_redelivers: bool = False  # a defect, no release's: the in-order drain delivers an OOB message again
    self_as_peer: bool = False  # 3.4.x: a DATA to self goes through a receive entry and is ACKed (spec decision 26)
    oob_keeps_message: bool = False  # 3.4.x: an OOB DATA's slot holds the message itself, not a placeholder



@dataclass(frozen=True, slots=True)
class Config:
    """Everything an engine is told before it starts (durations in ms)."""

    # --- JGroups UNICAST3 properties ------------------------------------------------------------
    xmit_interval: int = 500
    """Period of the retransmit task (> 0; JGroups silently resets <= 0 to 500, we reject it)."""
    conn_expiry_timeout: int = 120_000
    """Idle time after which an OPEN entry becomes CLOSING; 0 disables idle closing."""
    conn_close_timeout: int = 240_000
    """Time in CLOSING after which an entry is removed (sender sends CLOSE); 0 disables removal."""
    max_retransmit_time: int = 0
    """AgeOutCache: a connection opened to a non-member is closed (CLOSING) after this long unless
    the peer joins the view. 0 disables it. JGroups' default is 60000; ours is 0 because the spec
    leaves the AgeOutCache out (its decision 24), and a lockstep comparison needs it off."""
    sync_min_interval: int = 2_000
    """At most one SEND_FIRST_SEQNO per peer within this interval (JGRP-1874); 0 = no limit."""
    ack_threshold: int = 100
    """A batch (``received_batch``) holding at least this many DATA of the receive entry's connection
    is acknowledged at once; a smaller one, and every single DATA, leaves its ACK to the retransmit
    task (spec decisions 2 and 25). An immediate ACK per single message (JGroups' ack_threshold <= 1)
    is not supported and rejected."""
    max_xmit_req_size: int = 8_192
    """How many seqnos above the highest deliverable one a retransmit run scans for gaps: bounds
    one XMIT_REQ (JGroups derives ~511600 from the bundler size; ours must fit one datagram under
    ``codec_limits``)."""
    xmit_table_num_rows: int = 100
    """Initial rows of each window (``Table(initial_rows=...)``)."""
    xmit_table_msgs_per_row: int = 1_024
    """Slots per window row, rounded up to a power of two by ``Table``."""

    # --- behaviour switches ---------------------------------------------------------------------
    variant: Variant = field(default_factory=Variant)
    """Historical defects to bring back (shared with the spec); all off is JGroups' UNICAST3."""
    codec_limits: CodecLimits = DEFAULT_LIMITS
    """Datagram limits for both directions (decoding peers' datagrams and encoding ours)."""

    # --- limits against hostile input (not in JGroups) ------------------------------------------
    max_receive_span: int = 1 << 20
    """Largest ``seqno - low`` a receive window stores: a DATA further ahead is dropped (and
    counted) instead of allocating rows up to it. Applies from the message after the first."""
    max_send_window: int = 1 << 20
    """Most unacknowledged messages per destination; ``send`` beyond it raises ``SendWindowFull``
    (back-pressure for the application; JGroups' UNICAST3 is unbounded)."""
    max_xmit_served: int = 8_192
    """Most messages resent for one XMIT_REQ (the rest of the request is ignored and counted)."""
    max_receive_entries: int = 4_096
    """Most receive entries, and most peers remembered in last_sync_sent: a first DATA from yet
    another sender, or a SEND_FIRST_SEQNO to yet another peer, is dropped (and counted)."""
    max_xmit_scan: int = 1 << 18
    """Most seqnos the retransmit task scans for gaps in one run over all receive windows (round
    robin; the first window of a run is always scanned): bounds the work of a run whatever the
    windows hold (4096 windows with a gap of max_xmit_req_size each would otherwise be 33 million
    slots a run). At least ``max_xmit_req_size``. Not in JGroups, which scans every window."""
    receive_evict_idle: int = 60_000
    """Lock-out guard: when the receive table is full (``max_receive_entries``), a first DATA from
    a new sender evicts the receive entry that has gone longest without progress (a delivery beyond
    the DATA that created its window), if that is this long (ms), as ``remove_receive_connection``
    removes it (the evicted sender resynchronises on its next DATA; what the window delivered is
    remembered, so it is never delivered twice); 0 never evicts. Duplicates and window replacements
    are no progress, so an honest peer gets in within this time however busy an attacker keeps its
    entries, unless they all deliver new messages (``impl.common.evict_stalest``). Not in JGroups,
    whose table is unbounded (60000 mirrors its AgeOutCache default)."""
    max_window_bytes: int = 64 << 20
    """Most bytes one receive window holds undelivered (messages stored above a gap, each counted
    as its payload plus ``impl.common.HELD_OVERHEAD``): a DATA that would pass it is dropped (and
    counted in ``held_bytes_full``) like a loss, and comes again once the gap is filled. JGroups
    bounds nothing here: one seqno held back makes a receiver store everything after it."""
    max_receive_bytes: int = 256 << 20
    """Most bytes all receive windows of the engine hold undelivered together (as above)."""
    resend_factor: int = 64
    """Amplification bound (with ``max_resend_bytes``; ``impl.common.ResendBudget``): one datagram
    from a peer (XMIT_REQ or SEND_FIRST_SEQNO) makes the engine resend at most the larger of this
    many times its size in bytes and one maximal datagram (``codec_limits``' max_datagram, which one
    message may take anyway); the rest of the answer is dropped and counted (``resends_throttled``),
    and the peer's next request asks for it again. 0 = no limit, as in JGroups, which answers every
    request in full (as did this engine: a 1,034-byte XMIT_REQ for 8,000 stored messages of 1,000
    bytes made it resend 7,822 times its size); the lockstep harness uses 0, like the spec. Honest
    recovery slows only where a request is small for what it asks: a lost burst of 2,000 messages of
    1,000 bytes took 33 retransmit runs to recover instead of 2 (200 messages: 5)."""
    max_resend_bytes: int = 1 << 20
    """Most bytes resent to one peer in answer to its datagrams within one ``xmit_interval`` (when
    ``resend_factor`` > 0): bounds a flood of small requests. At least ``codec_limits``'
    max_datagram, so a message of any size can go in every interval."""
    min_window_replace_interval: int = 0
    """Conn-id churn guard: a first DATA with a new conn_id replaces a receive window only if that
    window is at least this old (ms). 0 (default) = JGroups: replace at once."""
    max_cached_messages: int = 8_192
    """Most DATA in the message cache (JGRP-2327), over all senders: a non-first DATA without a usable
    receive entry beyond it is dropped (and counted in ``cache_full``), as the 3.x releases drop every
    one; the SEND_FIRST_SEQNO and the retransmissions still bring it. JGroups' cache is unbounded."""
    max_cache_bytes: int = 16 << 20
    """Most bytes in the message cache, over all senders, each DATA counted as its payload plus
    ``impl.unicast3.cache.CACHE_OVERHEAD``, each sender with DATA cached as ``QUEUE_OVERHEAD``
    (as above). At least ``codec_limits``' max_payload plus both, so a DATA of any size may be cached."""
    cache_evict_idle: int = 60_000
    """A full message cache first evicts the DATA of senders that have added none for this long (ms),
    idlest first (``cache_evicted``), so DATA of senders that never came back do not fill it for
    good; 0 never evicts. Not in JGroups."""

    def __post_init__(self) -> None:
        require_ints(self, [f.name for f in fields(self) if f.name not in ("variant", "codec_limits")])
        _require(self, "xmit_interval", self.xmit_interval > 0, "> 0")
        for name in ("conn_expiry_timeout", "conn_close_timeout", "max_retransmit_time",
                     "sync_min_interval", "resend_factor", "min_window_replace_interval", "receive_evict_idle",
                     "cache_evict_idle"):
            _require(self, name, getattr(self, name) >= 0, ">= 0 (0 disables it)")
        _require(self, "ack_threshold", self.ack_threshold > 1,
                 "> 1 (immediate ACKs are not supported for single messages: the retransmit task acks those)")
        for name in ("xmit_table_num_rows", "xmit_table_msgs_per_row", "max_receive_span",
                     "max_send_window", "max_xmit_served", "max_receive_entries", "max_window_bytes",
                     "max_receive_bytes", "max_cached_messages"):
            _require(self, name, getattr(self, name) >= 1, ">= 1")
        if not isinstance(self.variant, Variant):
            _reject("variant", "an impl.unicast3.Variant", self.variant)
        if not isinstance(self.codec_limits, CodecLimits):
            _reject("codec_limits", "an impl.unicast3.codec.CodecLimits", self.codec_limits)
        limit = min(self.codec_limits.max_xmit_seqnos, self.codec_limits.max_xmit_span)
        _require(self, "max_xmit_req_size", 1 <= self.max_xmit_req_size <= limit,
                 f"in 1..{limit} (one XMIT_REQ must fit codec_limits' max_xmit_seqnos and"
                 " max_xmit_span)")
        # Our largest control datagram is an XMIT_REQ: 2 header + 19 count/lowest/length bytes
        # + the bitset; it must fit, or the receiver could never ask for a retransmission.
        _require(self, "max_xmit_scan", self.max_xmit_scan >= self.max_xmit_req_size, ">= max_xmit_req_size")
        need = 21 + (self.max_xmit_req_size + 7) // 8
        if self.codec_limits.max_datagram < need:
            _reject("codec_limits", f"max_datagram >= {need} (an XMIT_REQ of max_xmit_req_size"
                    f"={self.max_xmit_req_size} seqnos must fit one datagram)", self.codec_limits)
        _require(self, "max_resend_bytes", self.max_resend_bytes >= self.codec_limits.max_datagram,
                 ">= codec_limits.max_datagram (a message of any size must fit one interval's budget)")
        least = self.codec_limits.max_payload + CACHE_OVERHEAD + QUEUE_OVERHEAD
        _require(self, "max_cache_bytes", self.max_cache_bytes >= least,
                 f">= {least} (codec_limits.max_payload + CACHE_OVERHEAD + QUEUE_OVERHEAD: a DATA of any size"
                 " must fit)")
