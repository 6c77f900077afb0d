"""UNICAST4's adapter (``spec/unicast4.py``): its properties, variants, settings and timers, its OOB
sends and batch input (``spec/unicast4_batch.py``); which expiries are progress (those of an entry
a thread is blocked on: the spec's decision 9); how a receive window may end (UNICAST3's causes,
with conn_ids compared in 16-bit serial order) and a send entry's grace period (CLOSING) begin; the
blocked threads in charts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from models.protocols.base import NodeProperty, PairProperty, doc_of
from models.protocols.unicast import EXPIRY, HOOK, NEWER_FIRST, OWN_CLOSE, UnicastAdapter
from models.world_factory import WorldFactory
from spec import unicast4 as u4
from spec import unicast4_batch as u4_batch

_LEGITIMATE = frozenset({HOOK, EXPIRY, OWN_CLOSE, NEWER_FIRST})
_HALF = (u4.SHORT_MAX + 1) // 2  # conn_ids live in 0 .. 32767 and grow modulo 32768


class Unicast4Adapter(UnicastAdapter):
    name = "unicast4"
    spec = u4
    node_properties = (
        NodeProperty("window_order", u4.window_order, doc_of(u4.window_order)),
        NodeProperty("conn_id_purity", u4.conn_id_purity, doc_of(u4.conn_id_purity)),
        NodeProperty("seqno_discipline", u4.seqno_discipline, doc_of(u4.seqno_discipline)),
    )
    pair_properties = (
        PairProperty("purge_covered", u4.purge_covered, doc_of(u4.purge_covered)),
        PairProperty("timestamps_issued", u4.timestamps_issued, doc_of(u4.timestamps_issued)),
    )
    step_properties = (
        ("no_spurious_purge", doc_of(u4.purge_is_safe)),
        ("acks_monotone", doc_of(u4.acks_monotone)),
        ("timestamps_increase", "I7: the ACK and SEND_FIRST_SEQNO timestamps a send entry accepts strictly "
                                "increase (the first is accepted whatever it is); one not newer changes nothing."),
        ("no_spurious_reset", "A receive window ends (is removed or replaced) only by the receiver-removal test "
                              "hook, by its own expiry (conn_close_timeout of the CLOSING entry), by a CLOSE "
                              "carrying its own conn_id, or by a first DATA of a newer conn_id from its sender "
                              "(newer in 16-bit serial order: conn_ids wrap after 32767). Delivery properties "
                              "hold per window, so a spurious reset followed by a redelivery passes them."),
    )
    config_properties = (("window_within_capacity", doc_of(u4.window_within_capacity)),)
    liveness_goals = (("senders_released", "P8: from every reachable state, without further faults, no application "
                                           "thread stays blocked on a full send window (it adds its message, or a "
                                           "closing connection fails it). The expiry of an entry a thread is "
                                           "blocked on is progress (spec/unicast4.py decision 9)."),)
    variant_aliases: ClassVar[dict[str, str]] = {
        "JGRP-2873": "drop_dont_block", "JGRP-2929": "zero_conn_timeouts", "JGRP-2852": "any_conn_id",
        "oob-redelivers": "oob_redelivers", "dont-loopback-delivered": "dont_loopback_delivered",
    }
    oob_flag: ClassVar[bool] = True
    batches: ClassVar[bool] = True
    self_sends: ClassVar[bool] = True  # decision 12
    dont_loopback_flag: ClassVar[bool] = True  # decision 13
    timer_keys: ClassVar[dict[str, bool]] = {"conn_expiry": True, "conn_close": True, "xmit_per_connection": False}
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {
        "capacity": (u4.DEFAULT_CAPACITY, 1), "ack_threshold": (0, 0), "first_conn_id": (0, 0), "dont_block": (0, 0),
    }
    config_maxima: ClassVar[dict[str, int]] = {"first_conn_id": u4.SHORT_MAX, "dont_block": 1}
    timer_text = (
        "retransmit task runs (pending ACKs, XMIT_REQs, highest-sent resend){for_peer}",
        "send entry to {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
        "receive entry for {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
        "conn_close_timeout expires on the CLOSING send entry to {peer}: CLOSED, removed",
        "conn_close_timeout expires on the CLOSING receive entry for {peer}",
        "sync_min_interval elapses: {peer} may be asked for its first seqno again",
        "the thread blocked with #{seqno} on the send entry to {peer} finds room: adds and sends it",
        "send entry to {peer}, a thread blocked on it, idle for conn_expiry_timeout: OPEN -> CLOSING",
        "conn_close_timeout expires on the CLOSING send entry to {peer}, a thread blocked on it: CLOSED, removed, "
        "its buffer closed",
    )
    # Idle closing and expiry removal discard state: disruptions, except on an entry a thread is
    # blocked on, whose expiry is certain (decision 9).
    progress_timers = frozenset({u4.XMIT, u4.SYNC_EXPIRED, u4.SEND, u4.IDLE_BLOCKED, u4.CLOSE_BLOCKED})
    removal_timers = frozenset({u4.CLOSE_RECV})
    send_removal_timers = frozenset({u4.CLOSE_SEND, u4.CLOSE_BLOCKED})
    closing_state = u4.CLOSING
    idle_send_timers = frozenset({u4.IDLE_SEND, u4.IDLE_BLOCKED})
    timestamped = (u4.Ack, u4.SendFirstSeqno)
    window_replies = (u4.Ack, u4.SendFirstSeqno, u4.XmitReq)

    def make_config(self, members: int, variant: Any, timers: dict[str, bool], settings: dict[str, int]) -> Any:
        return super().make_config(members, variant, timers, {**settings, "dont_block": bool(settings["dont_block"])})

    def legitimate_window_ends(self, variant: Any) -> frozenset[str]:
        """UNICAST3's causes (``models/protocols/unicast3.py``): the hook, expiry of a CLOSING entry,
        a CLOSE of the window's own conn_id, a first DATA of a newer conn_id."""
        return _LEGITIMATE

    def newer_conn_id(self, new: int, old: int) -> bool:
        """16-bit serial order: ``new`` follows ``old`` by less than half the conn_id space."""
        return 0 < (new - old) % (u4.SHORT_MAX + 1) < _HALF

    def config_property_holds(self, name: str, cfg: Any, node: Any) -> bool:
        return u4.window_within_capacity(cfg, node)

    def goal_holds(self, name: str, node: Any) -> bool:
        return u4.no_thread_blocked(node)

    def nothing_unacked(self, node: Any, peer: int) -> bool:
        return u4.nothing_unacked(node, peer)

    def timer_on_one_connection(self, cfg: Any, timer: Any) -> bool:
        return bool(timer.peer >= 0 and timer.kind != u4.CLOSE_RECV)

    def opens_connection(self, node: Any, peer: int) -> bool:
        return node.send[peer] is None

    def batch_input(self, cfg: Any, node: Any, src: int, msgs: tuple[Any, ...]) -> Any:
        return u4_batch.on_batch(cfg, node, src, msgs)

    def batch_mode(self, msg: Any) -> bool | None:
        """DATA are batched, OOB ones apart (decision 11); control messages never."""
        return bool(msg.oob) if type(msg) is u4.Data else None

    def format_action(self, action: Any, name: Callable[[int], str]) -> str:
        timer = getattr(action, "timer", None)
        if timer is not None and timer.kind == u4.SEND:
            text = self.timer_text[u4.SEND].format(peer=name(timer.peer), seqno=timer.seqno)
            return f"{name(action.member)}: {text}"
        return super().format_action(action, name)

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        lines = super().describe_node(node, names)
        for peer, cached in enumerate(node.cache):
            if cached:
                held = ", ".join(f"#{d.seqno} (conn_id={d.conn_id})" for d in sorted(cached))
                lines.append(f"message cache for {names[peer]}: {held}")
        return lines

    def describe_send(self, entry: Any) -> str:
        waiting = ", ".join(f"#{s}" for s, _ in entry.blocked)
        return " " + u4.STATE_NAMES[entry.state] + (f", threads blocked holding {waiting}" if waiting else "")

    def describe_recv(self, entry: Any) -> str:
        return " " + u4.STATE_NAMES[entry.state]


UNICAST4 = Unicast4Adapter()
FACTORY = WorldFactory(UNICAST4)  # registered in models/registry.py
