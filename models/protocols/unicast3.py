"""UNICAST3's adapter (``spec/unicast3.py``): its properties, variants, settings and timers, the
sync rate limit (JGRP-1874) kept in the world's history, how a receive window may end and a send
entry's grace period (CLOSING) begin, and the conn_ids a member holds (its message cache's too)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

from models.protocols.base import NodeProperty, PairProperty, doc_of
from models.protocols.unicast import EXPIRY, HOOK, LEFT_VIEW, NEWER_FIRST, OWN_CLOSE, UnicastAdapter
from models.world_factory import WorldFactory
from spec import unicast3 as u3
from spec import unicast3_batch as u3_batch

_LEGITIMATE = frozenset({HOOK, EXPIRY, OWN_CLOSE, NEWER_FIRST})


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
        ("no_spurious_reset", "A receive window ends (is removed or replaced) only by the receiver-removal "
                              "test hook, by its own expiry (conn_close_timeout of the CLOSING entry), by a "
                              "CLOSE carrying its own conn_id, or by a first DATA of a newer conn_id from its "
                              "sender (with remove_on_view_change, JGRP-1586, also by a view without the "
                              "sender). Delivery properties hold per window, so a spurious reset followed by "
                              "a redelivery passes them."),
        ("previous_batch_only", "JGRP-1539: an XMIT_REQ asks a sender only for seqnos at or below the highest "
                                "gap the receiver's previous retransmit run recorded for it (a gap first seen on "
                                "this run may be a message still on its way); bandwidth, not delivery."),
    )
    variant_aliases: ClassVar[dict[str, str]] = {
        "JGRP-1873": "no_timestamps", "JGRP-1548": "no_hs_resend", "JGRP-1586": "remove_on_view_change",
        "JGRP-1578": "ack_only_new", "JGRP-1874": "no_sync_rate_limit", "JGRP-2327": "no_message_cache",
        # JGroups 3.4.x (before JGRP-1875's redesign), as the lockstep with JGroups 3.4.8 showed
        "3.4.x-remove-without-ack-flush": "remove_without_ack_flush",
        "3.4.x-close-to-non-members": "close_to_non_members", "JGRP-2573": "stale_xmit_record_asks_all",
        "oob-redelivers": "oob_redelivers", "3.4.x-self-as-peer": "self_as_peer",
        "3.4.x-oob-keeps-message": "oob_keeps_message",
    }
    timer_keys: ClassVar[dict[str, bool]] = {"conn_expiry": False, "conn_close": True,
                                             "xmit_per_connection": False}
    oob_flag: ClassVar[bool] = True
    batches: ClassVar[bool] = True
    self_sends: ClassVar[bool] = True
    dont_loopback_flag: ClassVar[bool] = True  # decision 27
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {"ack_threshold": (100, 2)}
    timer_text = (
        "retransmit task runs (pending ACKs, XMIT_REQs, highest-sent resend){for_peer}",
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
    closing_state = u3.CLOSING  # conn_close_timeout's grace period (History.grace)
    idle_send_timers = frozenset({u3.IDLE_SEND})
    timestamped = (u3.Ack, u3.SendFirstSeqno)
    window_replies = (u3.Ack, u3.SendFirstSeqno, u3.XmitReq)

    def legitimate_window_ends(self, variant: Any) -> frozenset[str]:
        """no_spurious_reset in UNICAST3 (digest 1.2 (e)): a receive window ends only

        - ``hook``: ``removeReceiveConnection(B)``, JGroups' test hook (UNICAST_ConnectionTests), the
          world's receiver-removal fault: ACKs flushed (sendPendingAcks), entry removed;
        - ``expiry``: the retransmit task removes a CLOSING receive entry whose age reached
          conn_close_timeout, pending ACKs flushed first (timer CLOSE_RECV; on an OPEN entry it is
          ``early-expiry``, spurious: JGroups removes only non-OPEN entries);
        - ``close``: handleClose removes ``recv_table[B]`` only if its conn_id equals the CLOSE's
          (the sender's CLOSE when conn_close_timeout removed its CLOSING send entry);
        - ``newer-first``: getReceiverEntry replaces an entry whose conn_id differs from a first
          DATA's: the sender reset its connection (a new SenderEntry, a new conn_id). JGroups takes
          any different conn_id; the property takes only a newer one, since a sender's conn_ids only
          grow, so an old connection's first DATA (possible with stale_packets, or when JGRP-1586's
          variant removes a connection at once) is a spurious reset;
        - ``left-view``, only with ``remove_on_view_change``: JGRP-1586's pre-fix behaviour (a view
          change removes both entries of a peer that left; shipped UNICAST3 only marks them CLOSING).

        The answer to a SEND_FIRST_SEQNO is a first DATA of the current connection, judged as any
        first DATA. Anything else (a CLOSE of another conn_id, a view change as shipped, a send, an
        ACK) ends a window spuriously."""
        if variant.remove_on_view_change:
            return _LEGITIMATE | {LEFT_VIEW}
        return _LEGITIMATE

    def timer_on_one_connection(self, cfg: Any, timer: Any) -> bool:
        # the retransmit task run for one connection touches that one; conn_close_timeout on a
        # receive entry runs removeReceiveConnection, which flushes every pending ACK
        return bool(timer.peer >= 0 and timer.kind != u3.CLOSE_RECV)

    def view_peers(self, cfg: Any, member: int, old: frozenset[int], new: frozenset[int]) -> frozenset[int] | None:
        """on_view makes the entries of peers outside ``new`` CLOSING (or removes them: JGRP-1586's
        variant) and drops their xmit record; it reopens the CLOSING entries of members, which are
        those of peers outside ``old`` (traffic reopens an entry, and a view without the peer made
        it CLOSING) unless conn_expiry idles entries out. ``members`` is read only by CLOSE_SEND,
        about its own peer. So with conn_expiry off it touches the peers not in both views."""
        if cfg.conn_expiry:
            return None
        return frozenset(p for p in range(cfg.members) if p != member and not (p in old and p in new))

    def view_widens(self, cfg: Any) -> bool:
        """A view without a peer makes its receive entry CLOSING, and conn_close_timeout on it
        runs removeReceiveConnection, which flushes every pending ACK."""
        return bool(cfg.conn_close)

    def wide_timers_possible(self, cfg: Any, node: Any) -> bool:
        """The retransmit task for every connection at once, or conn_close_timeout on a CLOSING
        receive entry (an entry becomes CLOSING by a view change, or by idling with conn_expiry)."""
        if not cfg.xmit_per_connection:
            return True
        return bool(cfg.conn_close and (cfg.conn_expiry or any(r is not None and r.state == u3.CLOSING
                                                                   for r in node.recv)))

    def batch_input(self, cfg: Any, node: Any, src: int, msgs: tuple[Any, ...]) -> Any:
        return u3_batch.on_batch(cfg, node, src, msgs)

    def batch_mode(self, msg: Any) -> bool | None:
        """DATA are batched, OOB ones apart (decision 25); control messages never."""
        return bool(msg.oob) if type(msg) is u3.Data else None

    def opens_connection(self, node: Any, peer: int) -> bool:
        return node.send[peer] is None  # on_send: a new SendEntry takes next_conn_id

    # -- conn_id ranking (models/conn_ranks.py) ---------------------------------------------------
    ranks_conn_ids = True

    def node_conn_ids(self, node: Any) -> tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """The receive side per sender: the window's conn_id, those of the DATA it buffers
        (conn_id_purity may be broken) and those of the DATA in the message cache."""
        recv = tuple(tuple(({e.conn_id} | {m.conn_id for m in e.buffered if m is not None} if e is not None
                            else set()) | {m.conn_id for m in cached})
                     for e, cached in zip(node.recv, node.cache))
        return node.next_conn_id, tuple(-1 if e is None else e.conn_id for e in node.send), recv

    def packet_conn_id(self, msg: Any) -> tuple[bool, int] | None:
        kind = type(msg)
        if kind is u3.Data or kind is u3.Close:
            return True, msg.conn_id
        if kind is u3.Ack:
            return False, msg.conn_id
        return None

    def rename_conn_ids(self, node: Any, maps: tuple[dict[int, int], ...]) -> Any:
        n, me = len(node.send), node.me
        send = tuple(e if e is None else replace(e, conn_id=maps[me * n + peer][e.conn_id])
                     for peer, e in enumerate(node.send))
        recv = []
        for peer, entry in enumerate(node.recv):
            if entry is not None:
                rank = maps[peer * n + me]
                buffered = tuple(m if m is None else m._replace(conn_id=rank[m.conn_id]) for m in entry.buffered)
                entry = replace(entry, conn_id=rank[entry.conn_id], buffered=buffered)
            recv.append(entry)
        cache = tuple(frozenset(m._replace(conn_id=maps[peer * n + me][m.conn_id]) for m in cached)
                      for peer, cached in enumerate(node.cache))
        order = tuple(tuple(m._replace(conn_id=maps[peer * n + me][m.conn_id]) for m in oob)
                      for peer, oob in enumerate(node.cache_order))
        counter = max(len(maps[me * n + peer]) for peer in range(n))
        return replace(node, send=send, recv=tuple(recv), cache=cache, cache_order=order, next_conn_id=counter)

    def rename_packet_conn_id(self, msg: Any, rank: dict[int, int]) -> Any:
        return msg._replace(conn_id=rank[msg.conn_id])

    def observe_timer(self, timer: Any, member: int, n: int, syncs: list[int]) -> None:
        if timer.kind == u3.SYNC_EXPIRED:
            syncs[timer.peer * n + member] = 0

    def observe_sync_request(self, syncs: list[int], pair: int) -> int:
        syncs[pair] = min(syncs[pair] + 1, 2)  # requests since the requester's last SYNC_EXPIRED: 0, 1, more
        return self.step_bit("sync_rate_limited") if syncs[pair] > 1 else 0

    def describe_send(self, entry: Any) -> str:
        return " " + u3.STATE_NAMES[entry.state]

    def describe_recv(self, entry: Any) -> str:
        return " " + u3.STATE_NAMES[entry.state]

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        """The connections, then the DATA each sender has in the message cache (decision 7)."""
        lines = [line for line in super().describe_node(node, names) if line != "no connections"]
        for peer, cached in enumerate(node.cache):
            if cached:
                held = ", ".join(f"#{m.seqno} (conn_id={m.conn_id})" for m in sorted(cached))
                lines.append(f"message cache for {names[peer]}: {held}, awaiting a receive entry of their connection")
        return lines or ["no connections"]


UNICAST3 = Unicast3Adapter()
FACTORY = WorldFactory(UNICAST3)  # registered in models/registry.py
