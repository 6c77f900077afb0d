"""What the unicast protocols (UNICAST2, UNICAST3) declare alike to the world.

Their specs have per-peer ``send`` and ``recv`` entries with a ``conn_id``, ``acked``, ``unacked``,
``delivered`` and ``buffered``; a receive window sends back (``window_replies``) to its sender;
some messages carry a timestamp ``ts`` that a send entry remembers as ``last_ts``; the spec states
``purge_is_safe`` and ``acks_monotone``. From these this adapter derives the step properties
``no_spurious_purge``, ``acks_monotone``, ``timestamps_increase`` and ``no_spurious_reset``, rule 6's
connection gates and rule 5's timestamp renumbering (``models/world.py``), the grace periods that
excuse a discard (``History.grace``), and the end-of-chart summary.
``models/protocols/unicast3.py`` and ``unicast2.py`` add what differs.

Window endings (``no_spurious_reset``). ``no_duplicate`` and ``in_order`` hold per receive-window
incarnation, so a window torn down for no good reason (a stale or foreign CLOSE, an old first DATA)
followed by a redelivery passes them. Every step in which a receive window ends (removed, or
replaced by a window of another conn_id) is observed as ``WindowEnded`` with its cause, read from
the stimulus alone: ``hook`` (the receiver-removal test hook for that peer), ``expiry`` /
``early-expiry`` (a timer of ``removal_timers`` for that peer, on a window in ``closing_state`` /
not, where the protocol has one), ``close`` / ``stale-close`` (a CLOSE from that peer with the
window's own conn_id / another), ``newer-first`` / ``older-first`` (a first DATA from that peer whose
conn_id is newer / not newer than the window's: ``newer_conn_id``), ``left-view`` (a view without
that peer), ``other``. Each protocol lists the causes it allows (``legitimate_window_ends``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from models.protocols.base import ProtocolAdapter
from models.state_fields import StateLayout

HOOK, EXPIRY, EARLY_EXPIRY, OWN_CLOSE, STALE_CLOSE = "hook", "expiry", "early-expiry", "close", "stale-close"
NEWER_FIRST, OLDER_FIRST, LEFT_VIEW, OTHER = "newer-first", "older-first", "left-view", "other"


class WindowEnded(NamedTuple):
    """Observation: the member's receive window for ``src`` (connection ``conn_id``) ended in this
    step, removed or replaced, by ``cause`` (one of the causes above)."""

    src: int
    conn_id: int
    cause: str


class GraceChanged(NamedTuple):
    """Observation: the member's send entry to ``dst`` entered a grace period whose end excuses a
    discard (``excusable``), or entered one that does not, or left it (both: not ``excusable``).
    ``ProtocolAdapter.observe`` keeps it as the pair's bit of ``History.grace``."""

    dst: int
    excusable: bool


def _timer_for(stimulus: Hashable, kinds: frozenset[int], peer: int) -> bool:
    """Is ``stimulus`` the firing of a timer of one of ``kinds`` for ``peer``?"""
    return (isinstance(stimulus, tuple) and stimulus[0] == "timer" and stimulus[1].kind in kinds
            and stimulus[1].peer == peer)


def _view_of(stimulus: Hashable) -> frozenset[int] | None:
    """The members of the view ``stimulus`` installs, None if it installs none."""
    if isinstance(stimulus, tuple) and not hasattr(stimulus, "msg") and stimulus[0] == "view":
        return frozenset(stimulus[1])
    return None


class UnicastAdapter(ProtocolAdapter):
    """A unicast spec in the point-to-point world. Subclasses set the class attributes."""

    removal_timers: frozenset[int]  # timer kinds that remove the receive window of their peer
    send_removal_timers: frozenset[int] = frozenset()  # ... the send entry to their peer (conn_close_timeout)
    closing_state: int | None = None  # a send entry's state during its grace period (UNICAST3's CLOSING)
    idle_send_timers: frozenset[int] = frozenset()  # timer kinds that start it by idleness
    timestamped: tuple[type[Any], ...]  # message types carrying a timestamp ``ts``
    window_replies: tuple[type[Any], ...]  # message types a receive window sends back to its sender
    state_layout = StateLayout(
        per_member=frozenset({"send", "recv", "cache", "cache_order", "xmit_last"}), member=frozenset({"me"}),
        member_set=frozenset({"members", "sync_sent"}),
        seqnos=frozenset({"unacked", "oob", "buffered", "cache", "cache_order"}),
        parts={"watermark": ("highest_acked", "highest_sent")}, entries={"blocked": ("seqno", "payload")},
        enums={"state": ("OPEN", "CLOSING")})

    # -- connections (models/world.py rule 6) -------------------------------------------------
    def receivers(self, node: Any) -> list[int]:
        return [peer for peer, entry in enumerate(node.recv) if entry is not None]

    def quiet_connection(self, member: int, timer: Any) -> tuple[int, int] | None:
        if timer.kind in self.removal_timers:
            return int(timer.peer), member
        if timer.kind in self.send_removal_timers:
            return member, int(timer.peer)
        return None

    def receive_window_of(self, packet: Any) -> tuple[int, int] | None:
        """A DATA belongs to its destination's window for its source; what a window sends back to
        its sender (ACK, SEND_FIRST_SEQNO, XMIT_REQ, STABLE) to its source's window for its destination."""
        if isinstance(packet.msg, self.spec.Data):
            return packet.src, packet.dst
        if isinstance(packet.msg, self.window_replies):
            return packet.dst, packet.src
        return None

    # -- symmetry -------------------------------------------------------------------------------
    def permute_node(self, node: Any, perm: tuple[int, ...]) -> Any:
        """Members appear as the node's own ``me``, its view, its per-peer tuples (UNICAST3's
        message cache among them) and (UNICAST3) the peers it recently asked for a first seqno;
        entries and messages name none. Nothing in
        the handlers depends on the numbering of members beyond iterating peers in index order,
        which only orders packets on the wire (a set) and observations of distinct pairs."""
        def moved(per_peer: tuple[Any, ...]) -> tuple[Any, ...]:
            out: list[Any] = [None] * len(per_peer)
            for peer, value in enumerate(per_peer):
                out[perm[peer]] = value
            return tuple(out)

        changes: dict[str, Any] = {"me": perm[node.me], "members": frozenset(perm[m] for m in node.members),
                                   "send": moved(node.send), "recv": moved(node.recv),
                                   "xmit_last": moved(node.xmit_last)}
        if hasattr(node, "sync_sent"):
            changes["sync_sent"] = frozenset(perm[m] for m in node.sync_sent)
        if hasattr(node, "cache"):  # UNICAST3's message cache, per sender
            changes["cache"] = moved(node.cache)
        if getattr(node, "cache_order", ()):  # ... and its OOB DATA's arrival order
            changes["cache_order"] = moved(node.cache_order)
        return replace(node, **changes)

    # -- window endings and grace periods ---------------------------------------------------------
    def legitimate_window_ends(self, variant: Any) -> frozenset[str]:
        """The causes by which a receive window may end under ``variant`` (the spec's or the
        engine's ``Variant``: they have the same flags) (``no_spurious_reset``)."""
        raise NotImplementedError

    def newer_conn_id(self, new: int, old: int) -> bool:
        """Is ``new`` a conn_id the sender chose after ``old``? (A sender's conn_ids only grow.)"""
        return new > old

    def window_end_cause(self, window: Any, after: Any, peer: int, stimulus: Hashable) -> str:
        """Why the receive ``window`` for ``peer`` ended in a step by ``stimulus`` (``after``: the
        window for ``peer`` after it, None if none)."""
        msg: Any = getattr(stimulus, "msg", None)
        what: tuple[Any, ...] = ("other",)
        if msg is not None:
            close = getattr(self.spec, "Close", None)
            if close is not None and isinstance(msg, close):
                what = ("close", stimulus.src, msg.conn_id)  # type: ignore[attr-defined]
            elif isinstance(msg, self.spec.Data):
                what = ("data", stimulus.src, msg.conn_id, msg.first)  # type: ignore[attr-defined]
        elif isinstance(stimulus, tuple) and stimulus[0] == "batch":  # the batch's first DATA that made `after`
            made = [m for m in stimulus[2] if m.first and after is not None and m.conn_id == after.conn_id]
            what = ("data", stimulus[1], made[0].conn_id, True) if made else ("other",)
        elif isinstance(stimulus, tuple) and stimulus[0] in ("remove", "view"):
            what = stimulus
        elif isinstance(stimulus, tuple) and stimulus[0] == "timer":
            what = ("timer", stimulus[1].kind, stimulus[1].peer)
        return self.classify_end(window.conn_id, None if after is None else after.conn_id, peer, what,
                                 getattr(window, "state", None))

    def classify_end(self, conn_id: int, after: int | None, peer: int | str, what: tuple[Any, ...],
                     state: int | None = None) -> str:
        """The cause of the end of a receive window for ``peer`` on ``conn_id`` (in ``state``;
        ``after``: the conn_id of the window for ``peer`` after the step, None if none) by the input ``what``:
        ``("close", sender, conn_id)``, ``("data", sender, conn_id, first)``, ``("remove", peer)``,
        ``("timer", kind, peer)``, ``("view", members)`` or anything else. Shared by the world and
        the engine scripts (``checks/conform/script.py``), which name members differently."""
        kind = what[0]
        if kind == "close" and what[1] == peer:
            return OWN_CLOSE if what[2] == conn_id else STALE_CLOSE
        if kind == "data" and what[1] == peer and what[3] and after == what[2]:
            return NEWER_FIRST if self.newer_conn_id(what[2], conn_id) else OLDER_FIRST
        if kind == "remove" and what[1] == peer:
            return HOOK
        if kind == "timer" and what[1] in self.removal_timers and what[2] == peer:
            return EXPIRY if self.closing_state is None or state == self.closing_state else EARLY_EXPIRY
        if kind == "view" and peer not in what[1]:
            return LEFT_VIEW
        return OTHER

    def _window_ends(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                     ) -> list[tuple[str, Any]]:
        """A ``WindowEnded`` for every receive window removed, replaced or re-created in this step."""
        created = {e.src for e in effects if type(e).__name__ == "WindowCreated"}
        out: list[tuple[str, Any]] = []
        for peer, (window, after) in enumerate(zip(old.recv, new.recv)):
            if window is not None and (after is None or after.conn_id != window.conn_id or peer in created):
                out.append(("WindowEnded", WindowEnded(peer, window.conn_id,
                                                       self.window_end_cause(window, after, peer, stimulus))))
        return out

    def _grace_changes(self, old: Any, new: Any, stimulus: Hashable) -> list[tuple[str, Any]]:
        """``GraceChanged`` for every send entry that became or stopped being ``closing_state``, or
        stayed so while a view containing its peer was installed. A grace period excuses a discard
        at its end only when it began by a view without the peer or by idleness (``idle_send_timers``),
        and the peer has been in no view since (digest P11: messages to a peer *removed from the
        view* are retransmitted for conn_close_timeout, then discarded)."""
        closing = self.closing_state
        if closing is None:
            return []
        view = _view_of(stimulus)
        out: list[tuple[str, Any]] = []
        for peer, (before, after) in enumerate(zip(old.send, new.send)):
            was = before is not None and before.state == closing
            now = after is not None and after.state == closing
            if now and not was:
                left = view is not None and peer not in view
                idle = _timer_for(stimulus, self.idle_send_timers, peer)
                out.append(("GraceChanged", GraceChanged(peer, left or idle)))
            elif was and (not now or (view is not None and peer in view)):
                out.append(("GraceChanged", GraceChanged(peer, False)))
        return out

    # -- observations ---------------------------------------------------------------------------
    def step_observations(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                          ) -> tuple[tuple[str, Any], ...]:
        """Timestamp order (``_timestamp_order``), window endings, grace periods and the previous batch."""
        changes = self._window_ends(old, new, stimulus, effects) + self._grace_changes(old, new, stimulus)
        return self._timestamp_order(old, new, stimulus, effects) + tuple(changes) + self._beyond_batch(old, effects)

    def _beyond_batch(self, old: Any, effects: tuple[Any, ...]) -> tuple[tuple[str, Any], ...]:
        """JGRP-1539's previous batch: an XMIT_REQ to a sender asks only for seqnos at or below the
        highest gap the previous retransmit run recorded for it (``xmit_last``; 0: none recorded, so
        nothing may be asked). A gap first seen on this run may be a message still on its way."""
        for effect in effects:
            msg = getattr(effect, "msg", None)
            if self.is_send(effect) and isinstance(msg, self.spec.XmitReq) and msg.seqnos:
                record = old.xmit_last[effect.dst]
                if record == 0 or max(msg.seqnos) > record:
                    return (("BeyondPreviousBatch", effect.dst),)
        return ()

    def _timestamp_order(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                         ) -> tuple[tuple[str, Any], ...]:
        """I7, in the same timestamp numbering (before rule 5 renumbers): a send entry's accepted
        timestamps strictly increase, and a message whose timestamp is not newer than the last
        accepted one changes nothing and sends nothing."""
        msg: Any = getattr(stimulus, "msg", None)
        if not isinstance(msg, self.timestamped) or not msg.ts:
            return ()
        peer = stimulus.src  # type: ignore[attr-defined]
        before, after = old.send[peer], new.send[peer]
        if before is None or before.last_ts == 0:
            return ()
        if msg.ts <= before.last_ts:
            ignored = new == old and not any(self.is_send(e) for e in effects)
            return (("TimestampOrder", ignored),)
        if after is not None and after.conn_id == before.conn_id and after.last_ts != before.last_ts:
            return (("TimestampOrder", after.last_ts > before.last_ts),)
        return ()

    def observe_effect(self, kind: str, value: Any, member: int, nodes: tuple[Any, ...], syncs: list[int],
                       n: int, cfg: Any) -> int:
        if kind == "Purged" and not self.spec.purge_is_safe(nodes[value.dst], member, value):
            return self.step_bit("no_spurious_purge")
        if kind == "SyncRequested":
            return self.observe_sync_request(syncs, value.dst * n + member)
        if kind == "SyncAnswered":
            return self.observe_sync_answer(value, cfg)
        if kind == "TimestampOrder" and not value:
            return self.step_bit("timestamps_increase")
        if kind == "WindowEnded" and value.cause not in self.legitimate_window_ends(cfg.variant):
            return self.step_bit("no_spurious_reset")
        if kind == "BeyondPreviousBatch":
            return self.step_bit("previous_batch_only")
        return 0

    def step_checks(self, old: Any, new: Any) -> int:
        return 0 if self.spec.acks_monotone(old, new) else self.step_bit("acks_monotone")

    def observe_sync_request(self, syncs: list[int], pair: int) -> int:
        """A SEND_FIRST_SEQNO on ``pair`` (index sender * n + requester): update ``syncs`` if the
        protocol rate-limits them, and return the violation bits."""
        return 0

    def observe_sync_answer(self, answered: Any, cfg: Any) -> int:
        """Violation bits for a SEND_FIRST_SEQNO answered by resending ``answered.resent`` messages."""
        return 0

    def observe_reads(self, member: int, observed: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
        return (member,) + tuple(value.dst for kind, value in observed if kind == "Purged")

    # -- rendering ------------------------------------------------------------------------------
    def describe_send(self, entry: Any) -> str:
        """What a send entry holds besides its conn_id and windows (e.g. its state)."""
        return ""

    def describe_recv(self, entry: Any) -> str:
        return ""

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        """One line per connection of ``node``, for the end of a chart."""
        lines = []
        for peer, entry in enumerate(node.send):
            if entry is not None:
                unacked = ", ".join(f"#{entry.acked + 1 + i}" for i in range(len(entry.unacked))) or "none"
                lines.append(f"send to {names[peer]}: conn_id={entry.conn_id}{self.describe_send(entry)}, "
                             f"acked (purged) up to #{entry.acked}, unacked {unacked}, last_ts={entry.last_ts}")
        for peer, rentry in enumerate(node.recv):
            if rentry is not None:
                missing = ", ".join(f"#{s}" for s in rentry.missing()) or "none"
                held = ", ".join(f"#{m.seqno}" for m in rentry.buffered if m is not None) or "none"
                lines.append(f"receive from {names[peer]}: conn_id={rentry.conn_id}{self.describe_recv(rentry)}, "
                             f"delivered up to #{rentry.delivered}, holding {held}, missing {missing}")
        return lines or ["no connections"]

    def describe_pair(self, sender: Any, receiver: Any, names: Sequence[str]) -> list[str]:
        """What the chart's reader must see about one direction: seqnos the sender purged that the
        receiver's window on the same connection never delivered (gone for good)."""
        entry, window = sender.send[receiver.me], receiver.recv[sender.me]
        if entry is None or window is None or entry.conn_id != window.conn_id or window.delivered >= entry.acked:
            return []
        gone = ", ".join(f"#{s}" for s in range(window.delivered + 1, entry.acked + 1))
        return [f"gone for good: {gone} from {names[sender.me]} to {names[receiver.me]}: purged by "
                f"{names[sender.me]}, never delivered by {names[receiver.me]}'s window (conn_id={window.conn_id})"]

    # -- timestamp renumbering (a sound reduction; see models/world.py rule 5) -------------------
    def node_timestamps(self, node: Any) -> tuple[int, tuple[int, ...]]:
        """(timestamps issued so far, last timestamp accepted from each peer; 0 = none)."""
        return node.timestamper, tuple(0 if e is None else e.last_ts for e in node.send)

    def packet_timestamp(self, msg: Any) -> int:
        """The timestamp a message carries, 0 if none."""
        return int(msg.ts) if isinstance(msg, self.timestamped) else 0

    def timestamp_fields(self) -> dict[type, frozenset[str]]:
        """The fields rule 5 renumbers, by the type that has them: a node's counter, its send
        entries' last accepted timestamp, the timestamped messages' ``ts`` (what ``renumber_node``
        and ``renumber_packet`` change, and nothing else)."""
        fields = {self.spec.Node: frozenset({"timestamper"}), self.spec.SendEntry: frozenset({"last_ts"})}
        return {**fields, **{kind: frozenset({"ts"}) for kind in self.timestamped}}

    def renumber_node(self, node: Any, ranks: tuple[dict[int, int], ...]) -> Any:
        """``node`` with every send entry's ``last_ts`` renumbered by the ranks of its stream (the
        peer that issued it to this node), and its own counter set to the largest number of its
        timestamps still in use on one of its streams."""
        n, me = len(node.send), node.me
        send = tuple(e if e is None or e.last_ts == 0 else replace(e, last_ts=ranks[peer * n + me][e.last_ts])
                     for peer, e in enumerate(node.send))
        return replace(node, timestamper=max(len(ranks[me * n + peer]) for peer in range(n)), send=send)

    def renumber_packet(self, packet_msg: Any, rank: dict[int, int]) -> Any:
        return packet_msg._replace(ts=rank[packet_msg.ts]) if self.packet_timestamp(packet_msg) else packet_msg
