"""What the unicast protocols (UNICAST2, UNICAST3) declare alike to the world.

Their specs have per-peer ``send`` and ``recv`` entries with a ``conn_id``, ``acked``, ``unacked``,
``delivered`` and ``buffered``; a receive window sends back (``window_replies``) to its sender;
some messages carry a timestamp ``ts`` that a send entry remembers as ``last_ts``; the spec states
``purge_is_safe`` and ``acks_monotone``. From these this adapter derives the step properties
``no_spurious_purge``, ``acks_monotone`` and ``timestamps_increase``, rule 6's connection gates and
rule 5's timestamp renumbering (``models/world.py``), and the end-of-chart summary.
``models/protocols/unicast3.py`` and ``unicast2.py`` add what differs.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

from models.protocols.base import ProtocolAdapter


class UnicastAdapter(ProtocolAdapter):
    """A unicast spec in the point-to-point world. Subclasses set the class attributes."""

    removal_timers: frozenset[int]  # timer kinds that remove the receive window of their peer
    send_removal_timers: frozenset[int] = frozenset()  # ... the send entry to their peer (conn_close_timeout)
    timestamped: tuple[type[Any], ...]  # message types carrying a timestamp ``ts``
    window_replies: tuple[type[Any], ...]  # message types a receive window sends back to its sender

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
        """Members appear as the node's own ``me``, its view, its per-peer tuples and (UNICAST3)
        the peers it recently asked for a first seqno; entries and messages name none. Nothing in
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
        return replace(node, **changes)

    # -- observations ---------------------------------------------------------------------------
    def step_observations(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
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
