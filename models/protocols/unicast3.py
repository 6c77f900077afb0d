"""UNICAST3's adapter (``spec/unicast3.py``): its properties, variants, settings and timers, and
the sync rate limit (JGRP-1874) kept in the world's history."""

from __future__ import annotations

from typing import Any, ClassVar

from models.protocols.base import NodeProperty, PairProperty, doc_of
from models.protocols.unicast import UnicastAdapter
from models.world_factory import WorldFactory
from spec import unicast3 as u3


class Unicast3Adapter(UnicastAdapter):
    name = "unicast3"
    spec = u3
    node_properties = (
        NodeProperty("window_order", u3.window_order, doc_of(u3.window_order)),
        NodeProperty("conn_id_purity", u3.conn_id_purity, doc_of(u3.conn_id_purity)),
    )
    pair_properties = (
        PairProperty("purge_covered", u3.purge_covered, doc_of(u3.purge_covered)),
        PairProperty("timestamps_issued", u3.timestamps_issued, doc_of(u3.timestamps_issued)),
    )
    step_properties = (
        ("no_spurious_purge", doc_of(u3.purge_is_safe)),
        ("acks_monotone", doc_of(u3.acks_monotone)),
        ("timestamps_increase", "I7: the ACK and SEND_FIRST_SEQNO timestamps a send entry accepts strictly "
                                "increase (the first is accepted whatever it is); one not newer changes nothing."),
        ("sync_rate_limited", "JGRP-1874: at most one SEND_FIRST_SEQNO from a receiver to a sender "
                              "per sync_min_interval."),
    )
    variant_aliases: ClassVar[dict[str, str]] = {
        "JGRP-1873": "no_timestamps", "JGRP-1548": "no_hs_resend", "JGRP-1586": "remove_on_view_change",
        "JGRP-1578": "ack_only_new", "JGRP-1874": "no_sync_rate_limit",
    }
    timer_keys: ClassVar[dict[str, bool]] = {"conn_expiry": False, "conn_close": True}
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {}
    timer_text = (
        "retransmit task runs (pending ACKs, XMIT_REQs, highest-sent resend)",
        "send entry to {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
        "receive entry for {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
        "conn_close_timeout expires on the CLOSING send entry to {peer}",
        "conn_close_timeout expires on the CLOSING receive entry for {peer}",
        "sync_min_interval elapses: {peer} may be asked for its first seqno again",
    )
    # Idle closing and expiry removal discard state, so they count as disruptions.
    progress_timers = frozenset({u3.XMIT, u3.SYNC_EXPIRED})
    removal_timers = frozenset({u3.CLOSE_RECV})
    send_removal_timers = frozenset({u3.CLOSE_SEND})  # conn_close_timeout = 2 x MSL, like CLOSE_RECV
    history_timers = frozenset({u3.SYNC_EXPIRED})  # observe_timer resets the sync counter
    timestamped = (u3.Ack, u3.SendFirstSeqno)
    window_replies = (u3.Ack, u3.SendFirstSeqno, u3.XmitReq)

    def observe_timer(self, timer: Any, member: int, n: int, syncs: list[int]) -> None:
        if timer.kind == u3.SYNC_EXPIRED:
            syncs[timer.peer * n + member] = 0

    def observe_sync_request(self, syncs: list[int], pair: int) -> int:
        syncs[pair] += 1  # requests since the requester's last SYNC_EXPIRED for that sender
        return self.step_bit("sync_rate_limited") if syncs[pair] > 1 else 0

    def describe_send(self, entry: Any) -> str:
        return " " + u3.STATE_NAMES[entry.state]

    def describe_recv(self, entry: Any) -> str:
        return " " + u3.STATE_NAMES[entry.state]


UNICAST3 = Unicast3Adapter()
FACTORY = WorldFactory(UNICAST3)  # registered in models/registry.py
