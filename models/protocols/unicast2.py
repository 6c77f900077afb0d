"""UNICAST2's adapter (``spec/unicast2.py``): its properties, variants, settings and timers, and
the resource bound of JGRP-1874 (messages resent per SEND_FIRST_SEQNO)."""

from __future__ import annotations

from typing import Any, ClassVar

from models.protocols.base import NodeProperty, PairProperty, doc_of
from models.protocols.unicast import UnicastAdapter
from models.world_factory import WorldFactory
from spec import unicast2 as u2


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
    )
    variant_aliases: ClassVar[dict[str, str]] = {
        "UNICAST": "no_conn_ids", "scenario-6": "conn_id_first_only", "JGRP-1563": "no_first_ack",
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

    def observe_sync_answer(self, answered: Any, cfg: Any) -> int:
        bound = cfg.sync_resend_bound
        return self.step_bit("sync_resend_bounded") if 0 < bound < answered.resent else 0

    def describe_send(self, entry: Any) -> str:
        return "" if entry.ack_received else " (first message not yet acknowledged)"

    def describe_recv(self, entry: Any) -> str:
        return f" (STABLE sent {entry.stable_count}x for hr=#{entry.last_highest})" if entry.stable_count else ""


UNICAST2 = Unicast2Adapter()
FACTORY = WorldFactory(UNICAST2)  # registered in models/registry.py
