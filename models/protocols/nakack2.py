"""NAKACK2's adapter (``spec/nakack2.py``) for the multicast world (``models/multicast_world.py``):
its stimuli, history, properties, variants, settings, timers and how its actions read, and the
``FACTORY`` ``models/registry.py`` lists.

Properties (``seqcheck list`` prints their definitions):

- per (sender, receiver) channel of ``spec/reliable_fifo``: ``no_duplicate``, ``in_order`` (per-sender
  FIFO at every receiver, per window incarnation; OOB multicasts exempt), ``delivered_was_sent``,
  ``no_self_delivery`` (with ``dont_loopback``, no member delivers its own multicast);
- of one member's state: ``window_order``, ``slots_hold_their_seqnos``, ``seqno_discipline``,
  ``queue_within_bound`` and ``window_bounded`` (the window growth JGRP-2675 makes unbounded, against
  the model file's ``window_bound``);
- of two members: ``purge_covered`` (purge safety: a STABLE never purges past what a member still
  needs);
- of a step: ``no_premature_xmit_req`` (no XMIT_REQ for a copy still young on its way, multicast world
  rule 9: JGRP-1539, JGRP-2678);
- liveness: ``eventually_delivered`` (every member that shares a view with a sender and has a window
  for it delivers everything the sender multicast) and ``window_drains``;
- the witness ``all_delivered_witness``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from checks.explore.system import Always, Liveness, Property, Sometimes
from models.multicast_factory import MulticastFactory
from models.multicast_world import PREMATURE, stopped
from models.protocols.base import doc_of
from models.protocols.multicast import MulticastAdapter, MulticastProperties
from models.state_fields import StateLayout
from models.world import DeliverPacket, DuplicatePacket, FireTimer
from spec import nakack2 as nak
from spec import nakack2_batch
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.multicast_world import MulticastWorld

CHANNEL = (("no_duplicate", fifo.no_duplicate), ("in_order", fifo.in_order),
           ("delivered_was_sent", fifo.delivered_was_sent), ("no_self_delivery", fifo.no_self_delivery))
NODE = (("window_order", nak.window_order), ("slots_hold_their_seqnos", nak.slots_hold_their_seqnos),
        ("seqno_discipline", nak.seqno_discipline))
DOCS = {
    "queue_within_bound": doc_of(nak.queue_within_bound),
    "window_bounded": "With retransmission off, no window for another member holds more than the model's "
                      "window_bound messages above a permanent gap: a missing seqno no copy in flight to that "
                      "member and nothing in its become_server_queue can fill (JGRP-2675: the window then grows "
                      "with every message). A gap a delayed copy will fill is no growth; with retransmission on a "
                      "gap is asked for, and a purged one is purge_covered's concern.",
    "purge_covered": doc_of(nak.purge_covered) + " (A member still to install its merge view is exempt: the "
                     "merge digest, not retransmission, resets its windows; multicast world rule 10.)",
    "no_premature_xmit_req": "No retransmit task run and no STABILITY asks a sender for a message whose original "
                             "copy to the asker is still in flight and was sent since the asker's last round "
                             "(multicast world rule 9; JGRP-1539, JGRP-2678: needless retransmissions). Checked "
                             "with retransmission on; an XMIT_REQ answering a HIGHEST_SEQNO (asking for the "
                             "sender's counter at once, by design) is not checked.",
    "eventually_delivered": "From every reachable state, without further faults, every member that "
                            "shares a view with a sender (each in the other's), has a window for it and has "
                            "not stopped, delivers every message the sender multicast (its own included: "
                            "with dont_loopback its own window's hd passes them undelivered, so the own "
                            "window and STABLE still advance); "
                            "a sender that left or crashed is exempt (NAKACK2 asks only the original sender "
                            "for a retransmission; flushing a departed member's messages is FLUSH's job).",
    "window_drains": "From every reachable state, without further faults, every window of every member "
                     "that has not stopped empties (nothing held above a gap).",
    "all_delivered_witness": "Some reachable state has every budgeted multicast made and delivered "
                             "(guards against a model that cannot do anything).",
}


class Nakack2Adapter(MulticastAdapter):
    name = "nakack2"
    title = "NAKACK2"
    spec = nak
    variant_aliases: ClassVar[dict[str, str]] = {
        "JGRP-2675": "bounded_queue_no_xmit", "JGRP-2678": "stable_xmit_current_hr",
        "JGRP-1539": "xmit_all_gaps", "BoundedList": "queue_drops_oldest",
        "5.1.5-stable-vote-to-self": "stable_vote_to_self", "oob-redelivers": "oob_redelivers",
        "JGRP-2573": "stale_xmit_record_asks_all",
    }
    # [config]: (default, minimum); xmit_interval's sign alone matters (time is abstract), and the
    # switches (boolean_settings) read true/false
    config_keys: ClassVar[dict[str, tuple[int, int]]] = {
        "xmit_interval": (1, 0), "use_mcast_xmit": (1, 0), "resend_last_seqno": (1, 0),
        "resend_last_seqno_max_times": (1, 1), "become_server_queue_size": (50, 0), "dont_loopback": (0, 0),
    }
    boolean_settings = frozenset({"use_mcast_xmit", "resend_last_seqno", "dont_loopback"})
    member_free = frozenset({"seqno", "is_server", "become_server_pending", "last_seqno_resent", "num_resends",
                             "skip_next_resend", "stable_suspended", "dont_loopback"})
    dont_loopback_per_send = True
    batches = True
    batch_spec: ClassVar[Any] = nakack2_batch
    oob_flag = True
    timer_text = ("retransmit task runs (XMIT_REQs for gaps, HIGHEST_SEQNO)",
                  "STABLE's gossip task runs (digest to the coordinator)",
                  "BECOME_SERVER: drains the become_server_queue")
    progress_timers = frozenset({nak.XMIT, nak.STABLE, nak.BECOME_SERVER})
    state_layout = StateLayout(
        per_member=frozenset({"windows", "xmit_last", "stable_xmit", "merged"}),
        member=frozenset({"me", "from", "sender"}), member_set=frozenset({"members", "votes"}),
        seqnos=frozenset({"kept", "buffered", "seqnos"}), parts={"merged": ("hd", "hr")},
        entries={"queue": ("from", "message")}, absent={"stable_xmit": nak.NO_ENTRY})

    # -- the multicast world's hooks (the rest: MulticastAdapter) --------------------------------
    def can_send(self, cfg: Any, node: Any) -> bool:
        """A member with its own window (not a joiner before its JoinRsp) may multicast."""
        return node.windows[node.me] is not None

    def ends_round(self, action: Any) -> bool:
        """Does ``action`` end a round of its member (multicast world rule 9): a run of the
        retransmit task or of STABLE's gossip, or a STABILITY or a vote delivered to it?"""
        if isinstance(action, FireTimer):
            return action.timer.kind in (nak.XMIT, nak.STABLE)
        return isinstance(action, (DeliverPacket, DuplicatePacket)) and action.packet.kind in ("Stability",
                                                                                              "StableVote")

    # -- properties -------------------------------------------------------------------------------
    def all_property_docs(self) -> dict[str, str]:
        docs = {name: doc_of(f) for name, f in CHANNEL}
        docs.update({name: doc_of(f) for name, f in NODE})
        docs.update(DOCS)
        return {k: " ".join(v.split()) for k, v in docs.items()}

    def build_properties(self, world: MulticastWorld, selected: tuple[str, ...], window_bound: int) -> list[Property]:
        world.properties_read_network = "window_bounded" in selected  # it reads the copies in flight
        return Nakack2Properties(world, window_bound).select(selected, self.all_property_docs())

    # -- rendering --------------------------------------------------------------------------------
    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        lines = [f"view [{', '.join(names[m] for m in node.view)}], seqno {node.seqno}"
                 + ("" if node.is_server else ", not a server") + (f", queue {len(node.queue)}" if node.queue else "")]
        for sender, w in enumerate(node.windows):
            if w is not None:
                gaps = ", ".join(f"#{s}" for s in w.missing())
                lines.append(f"window for {names[sender]}: purged to #{w.low}, delivered to #{w.delivered}, "
                             f"received to #{w.highest_received}" + (f", missing {gaps}" if gaps else ""))
        return lines


class Nakack2Properties(MulticastProperties):
    """NAKACK2's properties over a multicast world's states (memoised: ``MulticastProperties``)."""

    def __init__(self, world: MulticastWorld, window_bound: int) -> None:
        super().__init__(world)
        self.window_bound = window_bound

    def within_bound(self, node: Any) -> bool:
        return all(nak.held_undelivered(node, s) <= self.window_bound for s in range(self.n) if s != node.me)

    def window_bounded(self, w: tuple[int, ...]) -> bool:
        """Cheap first (every window within the bound: memoised per node); else the network and the
        queues decide which gaps are permanent."""
        n, nodes, bound = self.n, self.nodes, self.window_bound
        if self.cfg.retransmission or self.per_node("within_bound", self.within_bound)(w):
            return True
        network = self.world.net_table.values[w[n]]
        for r in range(n):
            node = nodes[w[r]]
            for s in range(n):
                window = node.windows[s]
                if s == r or window is None or nak.held_undelivered(node, s) <= bound:
                    continue
                coming = {p.msg.seqno for p in network if p.dst == r and p.src == s and p.kind == "Data"}
                coming |= {m.seqno for src, m in node.queue if src == s and type(m).__name__ == "Data"}
                permanent = [g for g in window.missing() if g not in coming]
                if permanent and sum(m is not None and m.seqno > permanent[0] for m in window.buffered) > bound:
                    return False
        return True

    def purge_covered(self, w: tuple[int, ...]) -> bool:
        """``nak.purge_covered`` for every pair, but a receiver whose merge view is still to come
        (world rule 10): its windows are reset by the merge digest, not by retransmission."""
        nodes, world = self.nodes, self.world
        merges = world.bounds.merges
        env = world.env_table.values[w[self.n + 1]] if merges else None
        return all(nak.purge_covered(nodes[w[s]], nodes[w[r]]) for s, r in world.pairs
                   if env is None or r not in merges or env.view_index[r] >= len(world.bounds.views[r]))

    def drained(self, w: tuple[int, ...]) -> bool:
        """Every running member's windows hold nothing above a gap (a stopped member's are frozen)."""
        env = self.world.env_table.values[w[self.n + 1]]
        return all(nak.held_undelivered(self.nodes[i], s) == 0 for m, i in enumerate(w[:self.n])
                   if not stopped(env, m) for s in range(self.n))

    def select(self, selected: tuple[str, ...], docs: dict[str, str]) -> list[Property]:
        cfg = self.cfg
        checks: dict[str, Property] = {}
        for name, predicate in CHANNEL:
            checks[name] = Always(name, self.channels(name, predicate), docs[name])
        for name, node_predicate in NODE:
            checks[name] = Always(name, self.per_node(name, node_predicate), docs[name])
        checks["queue_within_bound"] = Always("queue_within_bound", self.per_node(
            "queue_within_bound", lambda node: nak.queue_within_bound(cfg, node)), docs["queue_within_bound"])
        checks["window_bounded"] = Always("window_bounded", self.window_bounded, docs["window_bounded"])
        checks["purge_covered"] = Always("purge_covered", self.purge_covered, docs["purge_covered"])
        hist, at = self.hist, self.n + 2
        checks["no_premature_xmit_req"] = Always("no_premature_xmit_req",
                                                 lambda w: not hist[w[at]].step_violations & PREMATURE,
                                                 docs["no_premature_xmit_req"])
        checks["eventually_delivered"] = Liveness("eventually_delivered", self.delivered, docs["eventually_delivered"])
        checks["window_drains"] = Liveness("window_drains", self.drained, docs["window_drains"])
        checks["all_delivered_witness"] = Sometimes("all_delivered_witness", self.witness,
                                                    docs["all_delivered_witness"])
        return [checks[name] for name in docs if name in selected]


NAKACK2 = Nakack2Adapter()
FACTORY = MulticastFactory(NAKACK2)  # registered in models/registry.py
