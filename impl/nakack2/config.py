"""NAKACK2 engine configuration: one frozen ``Config`` with JGroups' defaults and its validation.

This module owns every tunable number of the engine and the rules that make a set of numbers
valid; nothing else in ``impl/nakack2`` has a default. Durations are integer milliseconds, the
unit of the engine's ``now``.

Three groups of fields:

- JGroups' NAKACK2 properties (digest 1.4 (d)) with JGroups' defaults, and STABLE's gossip period
  (``stable_interval``: JGroups' desired_avg_gossip, which STABLE randomises around; we run the
  round at a fixed period). ``xmit_interval <= 0`` is the no-retransmission mode of seed 004
  (digest 1.5), which the engine supports as the spec does.
- ``variant``: the spec's defect switches (same names as ``spec.nakack2.Variant``).
- Limits against hostile or broken peers (not in JGroups), in counts and in bytes: each is far
  above what a well-behaved group needs, so below them the engine behaves exactly like the spec.

``Config()`` is valid; ``Config(field=bad)`` raises ``ValueError`` naming the field and what was
expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from impl.common import reject_field as _reject
from impl.common import require_field as _require
from impl.common import require_ints
from impl.wire import DEFAULT_LIMITS, CodecLimits


@dataclass(frozen=True, slots=True)
class Variant:
    """Switches that bring back historical defects; all off is NAKACK2 as JGroups shipped it with
    JGRP-2675's fix. The same names as ``spec.nakack2.Variant`` (kept equal by a test)."""

    bounded_queue_no_xmit: bool = False  # JGRP-2675: the queue stays bounded with xmit_interval <= 0
    queue_drops_oldest: bool = False  # before JGRP-2675: a full queue evicts its oldest message
    stable_xmit_current_hr: bool = False  # before JGRP-2678: STABLE asks for the current digest's hr
    xmit_all_gaps: bool = False  # before JGRP-1539: every run requests every gap it sees
    stable_vote_to_self: bool = False  # before 5.1.6: STABLE's vote and STABILITY copy to self are packets
    stale_xmit_record_asks_all: bool = False  # JGRP-2573 (3.6-5.1): a record below hd filters nothing
    oob_redelivers: bool = False  # a defect (spec decision 17): the removal delivers an OOB message again


@dataclass(frozen=True, slots=True)
class Config:
    """Everything an engine is told before it starts (durations in ms)."""

    # --- JGroups NAKACK2 properties -------------------------------------------------------------
    xmit_interval: int = 1000
    """Period of the retransmit task; <= 0 turns retransmission off (seed 004: no retransmit task,
    no HIGHEST_SEQNO, STABLE asks for nothing, the become_server_queue unbounded)."""
    use_mcast_xmit: bool = True
    """Answer an XMIT_REQ by re-multicasting the original (else an XMIT_RSP to the requester)."""
    resend_last_seqno: bool = True
    """Announce the counter (HIGHEST_SEQNO) from the retransmit task (JGRP-1904)."""
    resend_last_seqno_max_times: int = 1
    """HIGHEST_SEQNOs per unchanged counter value."""
    become_server_queue_size: int = 50
    """Capacity of the become_server_queue with retransmission on; <= 0 reads as 10, as JGroups."""
    dont_loopback: bool = False
    """The application flags every multicast DONT_LOOPBACK (spec decision 15): no copy to this
    member, its own hd passes the message at the send (Table.add's remove filter), and a
    re-multicast of it skips this member too. A transient flag: nothing of it goes on the wire."""
    discard_delivered_msgs: bool = True
    """Receivers drop delivered messages of other senders at once. Only true is supported (JGroups
    deprecated the property and always discards, JGRP-2985; the spec models only that)."""
    max_xmit_req_size: int = 1024
    """How many seqnos above the highest deliverable one a retransmit run scans per window."""
    xmit_table_num_rows: int = 100
    """Initial rows of each window (``impl.window.Table``)."""
    xmit_table_msgs_per_row: int = 1024
    """Slots per window row (rounded up to a power of two by ``Table``)."""

    # --- STABLE ---------------------------------------------------------------------------------
    stable_interval: int = 20_000
    """Period of STABLE's gossip round at this member (JGroups' desired_avg_gossip); > 0."""

    # --- behaviour switches ---------------------------------------------------------------------
    variant: Variant = field(default_factory=Variant)
    codec_limits: CodecLimits = DEFAULT_LIMITS

    # --- limits against hostile input (not in JGroups) ------------------------------------------
    max_members: int = 4096
    """Most members a view or a digest may name (decoding and ``install_view``)."""
    max_receive_span: int = 1 << 20
    """Largest ``seqno - low`` a window stores: a message further ahead is dropped (counted)."""
    max_window_bytes: int = 64 << 20
    """Most bytes one receive window holds undelivered (``impl.common.HeldBytes``)."""
    max_receive_bytes: int = 256 << 20
    """Most bytes all receive windows hold undelivered together."""
    max_queue_bytes: int = 64 << 20
    """Most bytes the become_server_queue holds (also when unbounded in count): a datagram that
    would pass it is dropped like a full queue's (``queue_bytes_full``)."""
    max_send_window: int = 1 << 20
    """Most own messages kept unpurged (STABLE not done); ``multicast`` beyond it raises
    ``SendWindowFull`` (back-pressure; JGroups' own window is unbounded)."""
    max_send_bytes: int = 256 << 20
    """Most payload bytes of own messages kept unpurged; ``multicast`` beyond it raises
    ``SendWindowFull`` (a member that never votes stalls STABLE and so every purge)."""
    max_xmit_served: int = 8192
    """Most messages served for one XMIT_REQ (the rest is ignored and counted)."""
    resend_factor: int = 64
    """Amplification bound (``impl.common.ResendBudget``): one datagram from a peer makes the
    engine resend at most max(resend_factor x its size, one maximal datagram) bytes, counting every
    copy of a re-multicast; 0 = no limit (JGroups, and the lockstep harness)."""
    max_resend_bytes: int = 1 << 20
    """Most bytes resent in answer to one peer's datagrams within one ``xmit_interval`` (1000 ms when
    xmit_interval <= 0)."""
    max_xmit_scan: int = 1 << 18
    """Most seqnos the retransmit task scans for gaps in one run over all windows (round robin)."""

    def __post_init__(self) -> None:
        flags = ("use_mcast_xmit", "resend_last_seqno", "discard_delivered_msgs", "dont_loopback")
        require_ints(self, [f.name for f in fields(self) if f.name not in ("variant", "codec_limits", *flags)])
        for name in flags:
            if type(getattr(self, name)) is not bool:
                _reject(name, "a bool", getattr(self, name))
        _require(self, "discard_delivered_msgs", self.discard_delivered_msgs,
                 "True (JGroups always discards since JGRP-2985; false is not supported)")
        _require(self, "resend_last_seqno_max_times", self.resend_last_seqno_max_times >= 1, ">= 1")
        _require(self, "stable_interval", self.stable_interval > 0, "> 0")
        for name in ("xmit_table_num_rows", "xmit_table_msgs_per_row", "max_members", "max_receive_span",
                     "max_window_bytes", "max_receive_bytes", "max_queue_bytes", "max_send_window", "max_send_bytes",
                     "max_xmit_served"):
            _require(self, name, getattr(self, name) >= 1, ">= 1")
        _require(self, "resend_factor", self.resend_factor >= 0, ">= 0 (0 disables the bound)")
        if not isinstance(self.variant, Variant):
            _reject("variant", "an impl.nakack2.Variant", self.variant)
        if not isinstance(self.codec_limits, CodecLimits):
            _reject("codec_limits", "an impl.wire.CodecLimits", self.codec_limits)
        limit = min(self.codec_limits.max_xmit_seqnos, self.codec_limits.max_xmit_span)
        _require(self, "max_xmit_req_size", 1 <= self.max_xmit_req_size <= limit,
                 f"in 1..{limit} (one XMIT_REQ must fit codec_limits' max_xmit_seqnos and max_xmit_span)")
        _require(self, "max_xmit_scan", self.max_xmit_scan >= self.max_xmit_req_size, ">= max_xmit_req_size")
        # An XMIT_REQ: 2 header + an address (<= 257) + 19 count/lowest/length bytes + the bitset.
        need = 2 + 257 + 19 + (self.max_xmit_req_size + 7) // 8
        if self.codec_limits.max_datagram < need:
            _reject("codec_limits", f"max_datagram >= {need} (an XMIT_REQ of max_xmit_req_size"
                    f"={self.max_xmit_req_size} seqnos must fit one datagram)", self.codec_limits)
        _require(self, "max_resend_bytes", self.max_resend_bytes >= self.codec_limits.max_datagram,
                 ">= codec_limits.max_datagram (a message of any size must fit one interval's budget)")

    @property
    def retransmission(self) -> bool:
        """Retransmission on (xmit_interval > 0)?"""
        return self.xmit_interval > 0

    def queue_bound(self) -> int | None:
        """The become_server_queue's capacity in messages, None if unbounded (retransmission off,
        seed 004, unless the JGRP-2675 variant keeps it bounded)."""
        if not self.retransmission and not self.variant.bounded_queue_no_xmit:
            return None
        return self.become_server_queue_size if self.become_server_queue_size > 0 else 10
