"""UNICAST2 engine configuration: one frozen ``Config`` with JGroups' defaults and its validation.

This module owns every tunable number of the engine and the rules that make a set of numbers
valid; nothing else in ``impl/unicast2`` has a default. All durations are integer milliseconds,
the same unit as the engine's ``now``.

Two groups of fields:

- JGroups' UNICAST2 properties (digest 1.1 (d)), with JGroups' defaults, except
  ``max_retransmit_time`` (0 = off here, as the spec leaves the AgeOutCache out) and
  ``max_xmit_req_size`` (JGroups' UNICAST2 asks for every gap; ours must fit one datagram).
  ``xmit_table_resize_factor`` / ``xmit_table_max_compaction_time`` do not exist because
  ``impl.window.Table`` frees rows as it goes; ``max_msg_batch_size`` does not, because the engine
  receives single messages, never batches.
- Limits against hostile or broken peers (not in JGroups): far above what a well-behaved peer
  needs, so the engine behaves exactly like ``spec/unicast2.py`` below them, except
  ``sync_min_interval`` and ``resend_factor``, which honest traffic reaches (the lockstep harness
  sets both to 0).

``Config()`` is valid; ``Config(field=bad)`` raises ``ValueError("Config.<field>: expected ...,
got ...")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from impl.common import reject_field, require_field, require_ints
from impl.wire import DEFAULT_LIMITS, CodecLimits


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches: defects from before UNICAST2's last release, and fixes it never shipped. The same
    names as ``spec.unicast2.Variant`` (kept equal by a test), so that a spec counterexample runs
    on the engine with the same flags."""

    no_conn_ids: bool = False  # seed Motivation: the original UNICAST, no connection identity
    conn_id_first_only: bool = False  # seed #6: conn_id on the first DATA only
    no_first_ack: bool = False  # JGRP-1563: a lone lost first message is never recovered
    xmit_all_gaps: bool = False  # before JGRP-1539: every retransmit run asks for every gap
    stale_xmit_record_asks_all: bool = False  # JGRP-2573: a record below hd filters nothing
    fix_resend_highest: bool = False  # JGRP-1548's fix (UNICAST3): resend HS while stalled
    fix_timestamps: bool = False  # JGRP-1873's fix (UNICAST3, JGRP-1875): timestamps
    fix_sync_lowest_only: bool = False  # JGRP-1874's fix (seed rule 4): resend the lowest only



@dataclass(frozen=True, slots=True)
class Config:
    """Everything a UNICAST2 engine is told before it starts (durations in ms)."""

    # --- JGroups UNICAST2 properties ------------------------------------------------------------
    xmit_interval: int = 1_000
    """Period of the retransmit task (XMIT_REQs for gaps, first-message resend; > 0)."""
    stable_interval: int = 60_000
    """Period of the stable task (STABLE to every sender; > 0)."""
    max_bytes: int = 10_000_000
    """A receive window that has received this many payload bytes since its last byte-triggered
    STABLE sends one at once (JGroups' max_bytes); 0 disables it. The spec leaves it out (its
    decision 7): the lockstep harness sets 0."""
    max_stable_msgs: int = 5
    """STABLEs the stable task sends for one unchanged highest-received seqno (>= 1)."""
    conn_expiry_timeout: int = 0
    """The connection reaper runs this often and removes entries idle this long; 0 disables it."""
    max_retransmit_time: int = 0
    """AgeOutCache: both connections to a non-member are removed this long after the send entry
    was opened, unless the peer joined the view. 0 disables it (JGroups: 60000)."""
    max_xmit_req_size: int = 8_192
    """How many seqnos above the highest delivered one a retransmit run scans for gaps."""
    xmit_table_num_rows: int = 100
    """Initial rows of each window (``Table(initial_rows=...)``)."""
    xmit_table_msgs_per_row: int = 2_000
    """Slots per window row, rounded up to a power of two by ``Table``."""

    # --- behaviour switches ---------------------------------------------------------------------
    variant: Variant = field(default_factory=Variant)
    """Historical defects and unshipped fixes (shared with the spec); all off is JGroups' UNICAST2."""
    codec_limits: CodecLimits = DEFAULT_LIMITS
    """Datagram limits for both directions (decoding peers' datagrams and encoding ours)."""

    # --- limits against hostile input (not in JGroups) ------------------------------------------
    max_receive_span: int = 1 << 20
    """Largest ``seqno - low`` a receive window stores: a DATA further ahead is dropped (and
    counted) instead of allocating rows up to it."""
    max_send_window: int = 1 << 20
    """Most unacknowledged messages per destination; ``send`` beyond it raises ``SendWindowFull``."""
    max_xmit_served: int = 8_192
    """Most messages resent for one XMIT_REQ, SEND_FIRST_SEQNO or STABLE (the rest is counted)."""
    max_receive_entries: int = 4_096
    """Most receive entries: a first DATA from yet another sender is dropped (and counted)."""
    sync_min_interval: int = 2_000
    """At most one SEND_FIRST_SEQNO per peer within this interval (ms); 0 = UNICAST2 as shipped,
    one for every DATA that finds no window (the spec's behaviour, which the lockstep harness
    uses). Not in UNICAST2: without it, once a receive table is full two honest engines amplify
    each other's SEND_FIRST_SEQNOs and whole-range answers (JGRP-1874) round after round."""
    sync_retries: int = 3
    """With ``sync_min_interval`` > 0: how often a SEND_FIRST_SEQNO left unanswered (no new window
    from the peer) is sent again, one every sync_min_interval, before the engine waits for the
    peer's next DATA; a DATA without a window that the rate limit holds back is remembered and sent
    this way, never lost (>= 1). Not in UNICAST2, which asks once per DATA: a lost answer to the
    last DATA sent stalls it until the sender sends again (with the rate limit, one lost answer
    stalled a burst for good)."""
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
    from a peer (XMIT_REQ, SEND_FIRST_SEQNO or STABLE) makes the engine resend at most the larger of
    this many times its size in bytes and one maximal datagram (``codec_limits``' max_datagram,
    which one message may take anyway); the rest of the answer is dropped and counted
    (``resends_throttled``), and the peer's next request asks for it again. 0 = no limit, as in
    JGroups, which answers every request in full (as did this engine, JGRP-1874: a 12-byte
    SEND_FIRST_SEQNO made it resend a whole window of 8,000 messages of 1,000 bytes, 673,979 times
    its size; a 6-byte STABLE 1,347,958 times); the lockstep harness uses 0, like the spec. Honest
    recovery slows where a request is small for what it asks: a lost tail comes back only through
    STABLE, 64 KiB a stable_interval (500 lost last messages of 1,000 bytes: 480 s instead of 60)."""
    max_resend_bytes: int = 1 << 20
    """Most bytes resent to one peer in answer to its datagrams within one ``xmit_interval`` (when
    ``resend_factor`` > 0): bounds a flood of small requests. At least ``codec_limits``'
    max_datagram, so a message of any size can go in every interval."""

    def __post_init__(self) -> None:
        require_ints(self, [f.name for f in fields(self) if f.name not in ("variant", "codec_limits")])
        for name in ("xmit_interval", "stable_interval"):
            require_field(self, name, getattr(self, name) > 0, "> 0")
        for name in ("max_bytes", "conn_expiry_timeout", "max_retransmit_time", "receive_evict_idle",
                     "sync_min_interval", "resend_factor"):
            require_field(self, name, getattr(self, name) >= 0, ">= 0 (0 disables it)")
        for name in ("max_stable_msgs", "xmit_table_num_rows", "xmit_table_msgs_per_row", "max_receive_span",
                     "max_send_window", "max_xmit_served", "max_receive_entries", "max_window_bytes",
                     "max_receive_bytes", "sync_retries"):
            require_field(self, name, getattr(self, name) >= 1, ">= 1")
        if not isinstance(self.variant, Variant):
            reject_field("variant", "an impl.unicast2.Variant", self.variant)
        if not isinstance(self.codec_limits, CodecLimits):
            reject_field("codec_limits", "an impl.wire.CodecLimits", self.codec_limits)
        limit = min(self.codec_limits.max_xmit_seqnos, self.codec_limits.max_xmit_span)
        require_field(self, "max_xmit_req_size", 1 <= self.max_xmit_req_size <= limit,
                      f"in 1..{limit} (one XMIT_REQ must fit codec_limits' max_xmit_seqnos and max_xmit_span)")
        # Our largest control datagram is an XMIT_REQ: 2 header + 19 count/lowest/length bytes
        # + the bitset; it must fit, or the receiver could never ask for a retransmission.
        require_field(self, "max_xmit_scan", self.max_xmit_scan >= self.max_xmit_req_size, ">= max_xmit_req_size")
        need = 21 + (self.max_xmit_req_size + 7) // 8
        if self.codec_limits.max_datagram < need:
            reject_field("codec_limits", f"max_datagram >= {need} (an XMIT_REQ of max_xmit_req_size"
                         f"={self.max_xmit_req_size} seqnos must fit one datagram)", self.codec_limits)
        require_field(self, "max_resend_bytes", self.max_resend_bytes >= self.codec_limits.max_datagram,
                      ">= codec_limits.max_datagram (a message of any size must fit one interval's budget)")
