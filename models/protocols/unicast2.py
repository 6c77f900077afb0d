"""UNICAST2's adapter (``spec/unicast2.py``): its properties, variants, settings and timers, the
resource bound of JGRP-1874 (messages resent per SEND_FIRST_SEQNO), and how a receive window may end."""

from __future__ import annotations

from typing import Any, ClassVar

from models.protocols.base import NodeProperty, PairProperty, doc_of
from models.protocols.unicast import EXPIRY, HOOK, LEFT_VIEW, NEWER_FIRST, UnicastAdapter
from models.world_factory import WorldFactory
from spec import unicast2 as u2

_LEGITIMATE = frozenset({HOOK, EXPIRY, LEFT_VIEW, NEWER_FIRST})


class Unicast2Adapter(UnicastAdapter):
    name = "unicast2"
    spec = u2
    node_properties = (
        NodeProperty("window_order", u2.window_order, doc_of(u2.window_order)),
        NodeProperty("conn_id_purity", u2.conn_id_purity, doc_of(u2.conn_id_purity)),
    )
    pair_properties = (
        PairProperty("purge_covered", u2.purge_covered, doc_of(u2.purge_covered)),
        PairProperty("timestamps_issued", u2.timestamps_issued, doc_of(u2.timestamps_issued)),
    )
    step_properties = (
        ("no_spurious_purge", doc_of(u2.purge_is_safe)),
        ("acks_monotone", doc_of(u2.acks_monotone)),
        ("timestamps_increase", "I7 (with fix_timestamps): the SEND_FIRST_SEQNO and STABLE timestamps a "
                                "send entry accepts strictly increase; one not newer changes nothing."),
        ("sync_resend_bounded", "JGRP-1874 (resource): a SEND_FIRST_SEQNO is answered by resending at most "
                                "sync_resend_bound messages, the bound the model states in [config] (0, the "
                                "default, states none)."),
        ("no_spurious_reset", "A receive window ends (is removed or replaced) only by the receiver-removal "
                              "test hook, by the reaper (conn_expiry_timeout), by a view without its sender, "
                              "or by a first DATA of a newer conn_id from its sender (UNICAST2 has no CLOSE). "
                              "Delivery properties hold per window, so a spurious reset followed by a "
                              "redelivery passes them."),
        ("previous_batch_only", "JGRP-1539: an XMIT_REQ asks a sender only for seqnos at or below the highest "
                                "gap the receiver's previous retransmit run recorded for it (a gap first seen on "
                                "this run may be a message still on its way); bandwidth, not delivery."),
    )
    variant_aliases: ClassVar[dict[str, str]] = {
        "UNICAST": "no_conn_ids", "scenario-6": "conn_id_first_only", "JGRP-1563": "no_first_ack",
        "JGRP-1539": "xmit_all_gaps", "JGRP-2573": "stale_xmit_record_asks_all",
        "fix:JGRP-1548": "fix_resend_highest", "fix:JGRP-1873": "fix_timestamps",
        "fix:JGRP-1874": "fix_sync_lowest_only",
    }
    timer_keys: ClassVar[dict[str, bool]] = {"conn_expiry": False}
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {"max_stable_msgs": (5, 1), "sync_resend_bound": (0, 0)}
    timer_text = (
        "retransmit task runs (XMIT_REQs, first-message resend)",
        "stable task runs (STABLE to every sender)",
        "send entry to {peer} idle for conn_expiry_timeout: removed by the reaper",
        "receive entry for {peer} idle for conn_expiry_timeout: final STABLE, removed by the reaper",
    )
    # The reaper discards state, so it counts as a disruption.
    progress_timers = frozenset({u2.XMIT, u2.STABLE})
    removal_timers = frozenset({u2.IDLE_RECV})
    timestamped = (u2.SendFirstSeqno, u2.Stable)
    window_replies = (u2.Ack, u2.SendFirstSeqno, u2.XmitReq, u2.Stable)

    def legitimate_window_ends(self, variant: Any) -> frozenset[str]:
        """no_spurious_reset in UNICAST2 (digest 1.1 (c)): a receive window ends only

        - ``hook``: ``removeReceiveConnection(B)``, the test hook (final STABLE, then removed);
        - ``expiry``: the connection reaper removes a receive entry idle for conn_expiry_timeout,
          after a final STABLE (timer IDLE_RECV);
        - ``left-view``: handleViewChange removes both entries of every non-member at once (the
          receive entry after a final STABLE): UNICAST2 has no CLOSING and no CLOSE message;
        - ``newer-first``: getReceiverEntry replaces an entry whose recv_conn_id differs from a first
          DATA's (the sender reset); only a newer conn_id counts, in the serial order of Java shorts
          (``newer_conn_id``), since a sender's conn_ids only grow (modulo 2^15).

        SEND_FIRST_SEQNO and STABLE travel from the window to its sender and end no window; the
        answer to a SEND_FIRST_SEQNO is a first DATA of the sender's current connection, judged as
        any first DATA (it creates a window where none is, keeps one of its own conn_id, replaces
        an older one). ``no_conn_ids`` (the original UNICAST) has no conn_ids: a window is created
        only when none exists and is never replaced, so the same list holds and ``newer-first``
        never occurs; ``conn_id_first_only`` still puts the conn_id on every first DATA, so it is
        judged alike (its defect, a non-first DATA of a new connection accepted by the old window,
        shows as a spurious purge: scenario-6-conn-id-first-only, not as a reset)."""
        return _LEGITIMATE

    def newer_conn_id(self, new: int, old: int) -> bool:
        """Serial-number order of conn_ids that wrap from MAX_CONN_ID to 0 (RFC 1982 on 15 bits)."""
        return 0 < (new - old) % (u2.MAX_CONN_ID + 1) < (u2.MAX_CONN_ID + 1) // 2

    def observe_sync_answer(self, answered: Any, cfg: Any) -> int:
        bound = cfg.sync_resend_bound
        return self.step_bit("sync_resend_bounded") if 0 < bound < answered.resent else 0

    def describe_send(self, entry: Any) -> str:
        return "" if entry.ack_received else " (first message not yet acknowledged)"

    def describe_recv(self, entry: Any) -> str:
        return f" (STABLE sent {entry.stable_count}x for hr=#{entry.last_highest})" if entry.stable_count else ""


UNICAST2 = Unicast2Adapter()
FACTORY = WorldFactory(UNICAST2)  # registered in models/registry.py
