"""NAKACK4's adapter (``spec/nakack4.py``) for the multicast world (``models/multicast_world.py``,
the same world as NAKACK2's): its stimuli, history, properties, variants, settings, timers and how
its actions read, and the ``FACTORY`` ``models/registry.py`` lists.

Properties (``seqcheck list`` prints their definitions):

- per (sender, receiver) channel of ``spec/reliable_fifo``: ``no_duplicate``, ``in_order``,
  ``delivered_was_sent``, ``no_self_delivery`` (with ``dont_loopback``, no member delivers its own
  multicast);
- of one member's state: ``window_order``, ``slots_hold_their_seqnos``, ``seqno_discipline``,
  ``window_within_capacity`` (high - low <= capacity), ``blocks_only_when_full`` (the block
  edge), ``ack_table_members`` (JGRP-2904), ``ack_min_is_min``, ``deliverer_released`` (JGRP-3034),
  ``queue_within_bound``;
- of two members: ``purge_covered`` (purge safety) and ``acks_truthful``;
- of a step: ``no_spurious_xmit_req`` (no retransmit run asks for a message that was never lost:
  its original still young on its way, or not sent yet; multicast world rule 9; JGRP-2780);
- liveness: ``eventually_delivered`` and ``senders_released`` (P8: no application thread stays
  blocked);
- witnesses: ``all_delivered_witness`` and ``window_filled_witness`` (some own window holds exactly
  ``capacity`` unacknowledged messages: the block edge).

A failed witness is reported before any liveness property is computed (checks/explore/search.py),
so a model whose point is a liveness violation excludes the witnesses its bug makes unreachable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from checks.explore.system import Always, Liveness, Property, Sometimes
from models.multicast_factory import MulticastFactory
from models.multicast_world import PREMATURE
from models.protocols.base import doc_of
from models.protocols.multicast import MulticastAdapter, MulticastProperties
from models.state_fields import StateLayout
from models.world import FireTimer
from spec import nakack4 as nak
from spec import nakack4_batch
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.multicast_world import MulticastWorld

CHANNEL = (("no_duplicate", fifo.no_duplicate), ("in_order", fifo.in_order),
           ("delivered_was_sent", fifo.delivered_was_sent), ("no_self_delivery", fifo.no_self_delivery))
NODE = (("window_order", nak.window_order), ("slots_hold_their_seqnos", nak.slots_hold_their_seqnos),
        ("seqno_discipline", nak.seqno_discipline), ("ack_table_members", nak.ack_table_members),
        ("ack_min_is_min", nak.ack_min_is_min), ("deliverer_released", nak.deliverer_released))
PAIR = (("purge_covered", nak.purge_covered), ("acks_truthful", nak.acks_truthful))
DOCS = {
    "window_within_capacity": doc_of(nak.window_within_capacity),
    "blocks_only_when_full": doc_of(nak.blocks_only_when_full),
    "queue_within_bound": doc_of(nak.queue_within_bound),
    "no_spurious_xmit_req": "No retransmit task run asks a sender for a message that was never lost: one whose "
                            "original copy to the asker is still in flight and was sent since the asker's last run "
                            "(multicast world rule 9), or one an application thread of the sender took the seqno "
                            "of and has not passed down yet (JGRP-2780: concurrent senders out of seqno order).",
    "eventually_delivered": "From every reachable state, without further faults, every member that shares a view "
                            "with a sender (each in the other's), has a window for it and has not stopped, delivers "
                            "every message the sender's threads took a seqno for (its own included); a sender that "
                            "left or crashed is exempt.",
    "senders_released": "P8: from every reachable state, without further faults, no application thread of a running "
                        "member stays inside send (blocked on a full window, or holding a seqno it has not added).",
    "all_delivered_witness": "Some reachable state has every budgeted multicast made and delivered (guards against "
                             "a model that cannot do anything).",
    "window_filled_witness": "Some reachable state has a member's own window holding exactly capacity messages "
                             "(high - low == capacity): the window's edge lets a sender fill it.",
}


class Nakack4Adapter(MulticastAdapter):
    name = "nakack4"
    title = "NAKACK4"
    spec = nak
    variant_aliases: ClassVar[dict[str, str]] = {
        "seed-edge": "seed_edge", "send-atomically-lock-after-seqno": "lock_after_seqno",
        "JGRP-2904": "ack_from_non_members", "JGRP-2874": "highest_seqno_no_ack", "JGRP-2853": "view_change_no_purge",
        "JGRP-2873": "drop_dont_block", "JGRP-2829": "no_dont_loopback_self_ack",
        "JGRP-3034": "deliverer_stuck", "fix:deliver-stranded": "fix_deliver_stranded",
    }
    # [config]: (default, minimum); the switches (boolean_settings) read true/false
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {
        "capacity": (16384, 1), "ack_threshold": (0, 0), "send_atomically": (0, 0), "sender_threads": (1, 1),
        "dont_block": (0, 0), "dont_loopback": (0, 0), "deliver_exceptions": (0, 0), "use_mcast_xmit": (1, 0),
        "become_server_queue_size": (50, 0),
    }
    boolean_settings = frozenset({"send_atomically", "dont_block", "dont_loopback", "deliver_exceptions",
                                  "use_mcast_xmit"})
    oob_flag = True
    member_free = frozenset({"seqno", "ack_min", "is_server", "become_server_pending", "skip_next_resend",
                             "sending", "oob_sending", "oob_delivered"})
    coordinator_matters = False  # no STABLE; the join's coordinator is the model's [[joins]] entry
    timer_text = ("retransmit task runs (ACKs, XMIT_REQs for gaps, HIGHEST_SEQNO)",
                  "BECOME_SERVER: drains the become_server_queue",
                  "the application thread holding #{peer} adds it and passes it down",
                  "the deliverer of {peer}'s messages will throw building its next batch (a fault)")
    progress_timers = frozenset({nak.XMIT, nak.BECOME_SERVER, nak.SEND})
    batches = True
    batch_spec: ClassVar[Any] = nakack4_batch
    batch_kinds: ClassVar[dict[str, tuple[str, bool]]] = {**MulticastAdapter.batch_kinds, "Ack": ("ucast", True)}
    state_layout = StateLayout(
        per_member=frozenset({"windows", "acks_counted", "ack_pending", "ack_table", "xmit_last", "deliverer"}),
        member=frozenset({"me", "from", "sender"}), member_set=frozenset({"members"}),
        seqnos=frozenset({"kept", "buffered", "seqnos"}), entries={"queue": ("from", "message"),
                                                                   "sending": ("seqno", "payload")},
        enums={"deliverer": ("READY", "ARMED", "STUCK", "STRANDED")}, absent={"ack_table": nak.NO_ENTRY})

    # -- the multicast world's hooks (the rest: MulticastAdapter) --------------------------------
    def can_send(self, cfg: Any, node: Any) -> bool:
        """May an application thread enter send (own window, fewer than sender_threads inside)?"""
        return nak.can_send(cfg, node)

    def unsent(self, node: Any, seqno: int) -> bool:
        """Does an application thread of ``node`` hold ``seqno`` without having passed it down?"""
        return any(s == seqno for s, _ in node.sending)

    def ends_round(self, action: Any) -> bool:
        """A run of the retransmit task ends a round of its member (multicast world rule 9)."""
        return isinstance(action, FireTimer) and action.timer.kind == nak.XMIT

    def sends_originals(self, action: Any) -> bool:
        """Application multicasts and application threads passing their message down send originals."""
        return type(action).__name__ == "AppMcast" or (isinstance(action, FireTimer) and action.timer.kind == nak.SEND)

    # -- properties -------------------------------------------------------------------------------
    def all_property_docs(self) -> dict[str, str]:
        docs = {name: doc_of(f) for name, f in CHANNEL}
        docs.update({name: doc_of(f) for name, f in NODE})
        docs["window_within_capacity"] = DOCS["window_within_capacity"]
        docs["blocks_only_when_full"] = DOCS["blocks_only_when_full"]
        docs["queue_within_bound"] = DOCS["queue_within_bound"]
        docs.update({name: doc_of(f) for name, f in PAIR})
        docs.update({k: v for k, v in DOCS.items() if k not in docs})
        return {k: " ".join(v.split()) for k, v in docs.items()}

    def build_properties(self, world: MulticastWorld, selected: tuple[str, ...], window_bound: int) -> list[Property]:
        return Nakack4Properties(world).select(selected, self.all_property_docs())

    # -- rendering --------------------------------------------------------------------------------
    def timer_line(self, timer: Any, name: Callable[[int], str]) -> str:
        peer = name(timer.peer) if timer.kind == nak.DELIVER_FAULT else timer.peer
        return self.timer_text[timer.kind].format(peer=peer)

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        acks = ", ".join(f"{names[m]} {a}" for m, a in enumerate(node.ack_table) if a != nak.NO_ENTRY)
        waiting = ", ".join(f"#{s}" for s, _ in node.sending)
        view = ", ".join(names[m] for m in node.view)
        lines = [f"view [{view}], seqno {node.seqno}, acks [{acks}] min {node.ack_min}"
                 + (f", threads holding {waiting}" if waiting else "") + ("" if node.is_server else ", not a server")
                 + (f", queue {len(node.queue)}" if node.queue else "")]
        for sender, w in enumerate(node.windows):
            if w is not None:
                gaps = ", ".join(f"#{s}" for s in w.missing())
                lines.append(f"window for {names[sender]}: purged to #{w.low}, delivered to #{w.delivered}, "
                             f"high #{w.high}" + (f", missing {gaps}" if gaps else "")
                             + (", ACK pending" if node.ack_pending[sender] else ""))
        return lines


class Nakack4Properties(MulticastProperties):
    """NAKACK4's properties over a multicast world's states (memoised: ``MulticastProperties``)."""

    def per_pair(self, name: str, predicate: Callable[[Any, Any], bool]) -> Callable[[tuple[int, ...]], bool]:
        nodes, pairs, cached = self.nodes, self.world.pairs, self._cached

        def holds(w: tuple[int, ...]) -> bool:
            return all(cached((name, w[s], w[r]), lambda: predicate(nodes[w[s]], nodes[w[r]]))  # noqa: B023
                       for s, r in pairs)

        return holds

    def released(self, w: tuple[int, ...]) -> bool:
        return not any(node.sending for node in self.running(w))

    def filled(self, w: tuple[int, ...]) -> bool:
        capacity = self.cfg.capacity
        return any(own is not None and own.high - own.low == capacity
                   for own in (self.nodes[i].windows[m] for m, i in enumerate(w[:self.n])))

    def select(self, selected: tuple[str, ...], docs: dict[str, str]) -> list[Property]:
        cfg = self.cfg
        checks: dict[str, Property] = {}
        for name, predicate in CHANNEL:
            checks[name] = Always(name, self.channels(name, predicate), docs[name])
        for name, node_predicate in NODE:
            checks[name] = Always(name, self.per_node(name, node_predicate), docs[name])
        checks["window_within_capacity"] = Always("window_within_capacity", self.per_node(
            "window_within_capacity", lambda node: nak.window_within_capacity(cfg, node)),
            docs["window_within_capacity"])
        checks["blocks_only_when_full"] = Always("blocks_only_when_full", self.per_node(
            "blocks_only_when_full", lambda node: nak.blocks_only_when_full(cfg, node)), docs["blocks_only_when_full"])
        checks["queue_within_bound"] = Always("queue_within_bound", self.per_node(
            "queue_within_bound", lambda node: nak.queue_within_bound(cfg, node)), docs["queue_within_bound"])
        for name, pair_predicate in PAIR:
            checks[name] = Always(name, self.per_pair(name, pair_predicate), docs[name])
        hist, at = self.hist, self.n + 2
        checks["no_spurious_xmit_req"] = Always("no_spurious_xmit_req",
                                                lambda w: not hist[w[at]].step_violations & PREMATURE,
                                                docs["no_spurious_xmit_req"])
        checks["eventually_delivered"] = Liveness("eventually_delivered", self.delivered, docs["eventually_delivered"])
        checks["senders_released"] = Liveness("senders_released", self.released, docs["senders_released"])
        checks["all_delivered_witness"] = Sometimes("all_delivered_witness", self.witness,
                                                    docs["all_delivered_witness"])
        checks["window_filled_witness"] = Sometimes("window_filled_witness", self.filled,
                                                    docs["window_filled_witness"])
        return [checks[name] for name in docs if name in selected]


NAKACK4 = Nakack4Adapter()
FACTORY = MulticastFactory(NAKACK4)  # registered in models/registry.py
