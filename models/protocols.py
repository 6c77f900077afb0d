"""How the world talks to a protocol spec: one ``ProtocolAdapter`` per ``spec/`` module.

The adapter turns world stimuli into calls of the spec's handlers, tells which effects are packets,
and maps the spec's observations onto history: the abstract channel of ``spec/reliable_fifo`` and
one bit per violated *step* property (a property about a transition, such as "a purge never
removes what the receiver's window still needs"). It also lists the protocol's properties by name.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from spec import reliable_fifo as fifo
from spec import unicast3 as u3

if TYPE_CHECKING:
    from models.world import History


@dataclass(frozen=True)
class NodeProperty:
    """A safety property of one member's state."""

    name: str
    holds: Callable[[Any], bool]
    doc: str


@dataclass(frozen=True)
class PairProperty:
    """A safety property of (sender state, receiver state)."""

    name: str
    holds: Callable[[Any, Any], bool]
    doc: str


@dataclass(frozen=True)
class ProtocolAdapter:
    name: str
    node_properties: tuple[NodeProperty, ...]
    pair_properties: tuple[PairProperty, ...]
    step_properties: tuple[tuple[str, str], ...]  # (name, doc); bit i of History.step_violations

    def step_bit(self, name: str) -> int:
        return 1 << [n for n, _ in self.step_properties].index(name)

    # The rest is protocol-specific; UNICAST3's is below.
    def initial_node(self, cfg: Any, member: int, view: frozenset[int]) -> Any:
        return u3.initial_node(member, cfg, view)

    def handle(self, cfg: Any, node: Any, stimulus: Hashable) -> tuple[Any, tuple[Any, ...]]:
        if isinstance(stimulus, tuple) and len(stimulus) == 4 and hasattr(stimulus, "msg"):
            step = u3.on_receive(cfg, node, stimulus.src, stimulus.msg)  # type: ignore[attr-defined]
        elif stimulus[0] == "send":  # type: ignore[index]
            step = u3.on_send(cfg, node, stimulus[1], stimulus[2])  # type: ignore[index]
        elif stimulus[0] == "timer":  # type: ignore[index]
            step = u3.on_timer(cfg, node, stimulus[1])  # type: ignore[index]
        elif stimulus[0] == "view":  # type: ignore[index]
            step = u3.on_view(cfg, node, stimulus[1])  # type: ignore[index]
        else:
            step = u3.on_remove_receiver(cfg, node, stimulus[1])  # type: ignore[index]
        return step.node, step.effects

    def enabled_timers(self, cfg: Any, node: Any) -> tuple[Any, ...]:
        return u3.enabled_timers(cfg, node)

    def receivers(self, node: Any) -> list[int]:
        return [peer for peer, entry in enumerate(node.recv) if entry is not None]

    def timer_is_progress(self, timer: Any) -> bool:
        """Timers a liveness continuation may use: the retransmit task and the sync expiry.
        Idle closing and expiry removal discard state, so they count as disruptions."""
        return bool(timer.kind in (u3.XMIT, u3.SYNC_EXPIRED))

    def step_observations(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                          ) -> tuple[tuple[str, Any], ...]:
        """Observations of one handler call that need the node before and after it, in the same
        timestamp numbering (before rule 5 renumbers). I7: a send entry's accepted timestamps
        strictly increase, and an ACK or SEND_FIRST_SEQNO whose timestamp is not newer than the
        last accepted one changes nothing and sends nothing."""
        msg = getattr(stimulus, "msg", None)
        if not isinstance(msg, (u3.Ack, u3.SendFirstSeqno)):
            return ()
        peer = stimulus.src  # type: ignore[attr-defined]
        before, after = old.send[peer], new.send[peer]
        if before is None or before.last_ts == 0:
            return ()
        if msg.ts <= before.last_ts:
            ignored = new == old and not any(isinstance(e, u3.Send) for e in effects)
            return (("TimestampOrder", ignored),)
        if after is not None and after.conn_id == before.conn_id and after.last_ts != before.last_ts:
            return (("TimestampOrder", after.last_ts > before.last_ts),)
        return ()

    def receiver_removed_by(self, timer: Any) -> int | None:
        """The peer whose receive window ``timer`` removes, if it removes one."""
        return int(timer.peer) if timer.kind == u3.CLOSE_RECV else None

    def receive_window_of(self, packet: Any) -> tuple[int, int] | None:
        """(sender, receiver) of the receive window ``packet`` belongs to, if any: a DATA belongs
        to its destination's window for its source; an ACK, SEND_FIRST_SEQNO or XMIT_REQ to its
        source's window for its destination."""
        if isinstance(packet.msg, u3.Data):
            return packet.src, packet.dst
        if isinstance(packet.msg, (u3.Ack, u3.SendFirstSeqno, u3.XmitReq)):
            return packet.dst, packet.src
        return None

    def is_send(self, effect: Any) -> bool:
        return isinstance(effect, u3.Send)

    def nothing_unacked(self, node: Any, peer: int) -> bool:
        return u3.nothing_unacked(node, peer)

    def observe(self, history: History, member: int, old: Any, nodes: tuple[Any, ...],
                observed: tuple[tuple[str, Any], ...], n: int) -> History:
        """History after ``member`` moved from ``old`` to ``nodes[member]`` observing ``observed``."""
        channels, syncs = list(history.channels), list(history.syncs)
        violations = history.step_violations
        for kind, value in observed:
            if kind == "stimulus" and value[0] == "send":
                channels[member * n + value[1]] = fifo.send(channels[member * n + value[1]])
            elif kind == "stimulus" and value[1].kind == u3.SYNC_EXPIRED:
                syncs[value[1].peer * n + member] = 0
            elif kind == "Deliver":
                channels[value.src * n + member] = fifo.deliver(channels[value.src * n + member], value.payload)
            elif kind in ("WindowCreated", "WindowRemoved"):
                channels[value.src * n + member] = fifo.new_incarnation(channels[value.src * n + member])
            elif kind == "Purged" and not u3.purge_is_safe(nodes[value.dst], member, value):
                violations |= self.step_bit("no_spurious_purge")
            elif kind == "SyncRequested":
                syncs[value.dst * n + member] += 1
                if syncs[value.dst * n + member] > 1:
                    violations |= self.step_bit("sync_rate_limited")
            elif kind == "TimestampOrder" and not value:
                violations |= self.step_bit("timestamps_increase")
            elif kind == "Discarded" and value.flushed:
                channels[member * n + value.dst] = fifo.excuse(channels[member * n + value.dst], value.payloads)
        if not u3.acks_monotone(old, nodes[member]):
            violations |= self.step_bit("acks_monotone")
        return type(history)(tuple(channels), violations, tuple(syncs))

    def observe_reads(self, member: int, observed: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
        """The members whose new node ``observe`` reads for these observations (it reads no other
        entry of ``nodes``), so that history updates can be memoised on those nodes alone. The
        batched world (``models/batch.py``) passes None for the others: a read not listed here fails."""
        return (member,) + tuple(value.dst for kind, value in observed if kind == "Purged")

    def format_action(self, action: Any, name: Callable[[int], str]) -> str:
        from models.render_actions import format_action

        return format_action(action, name)

    def format_message(self, kind: str, msg: Any) -> str:
        from models.render_actions import format_message

        return format_message(kind, msg)

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        """One line per connection of ``node``, for the end of a chart."""
        lines = []
        for peer, entry in enumerate(node.send):
            if entry is not None:
                unacked = ", ".join(f"#{entry.acked + 1 + i}" for i in range(len(entry.unacked))) or "none"
                lines.append(f"send to {names[peer]}: conn_id={entry.conn_id} {u3.STATE_NAMES[entry.state]}, "
                             f"acked (purged) up to #{entry.acked}, unacked {unacked}, last_ts={entry.last_ts}")
        for peer, rentry in enumerate(node.recv):
            if rentry is not None:
                missing = ", ".join(f"#{s}" for s in rentry.missing()) or "none"
                held = ", ".join(f"#{m.seqno}" for m in rentry.buffered if m is not None) or "none"
                lines.append(f"receive from {names[peer]}: conn_id={rentry.conn_id} {u3.STATE_NAMES[rentry.state]}, "
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
        return msg.ts if isinstance(msg, (u3.Ack, u3.SendFirstSeqno)) else 0

    def renumber_node(self, node: Any, ranks: tuple[dict[int, int], ...]) -> Any:
        """``node`` with every send entry's ``last_ts`` renumbered by the ranks of the peer that
        issued it, and its own counter set to the number of its timestamps still in use."""
        send = tuple(e if e is None or e.last_ts == 0 else replace(e, last_ts=ranks[peer][e.last_ts])
                     for peer, e in enumerate(node.send))
        return replace(node, timestamper=len(ranks[node.me]), send=send)

    def renumber_packet(self, packet_msg: Any, rank: dict[int, int]) -> Any:
        return packet_msg._replace(ts=rank[packet_msg.ts]) if self.packet_timestamp(packet_msg) else packet_msg


UNICAST3 = ProtocolAdapter(
    name="unicast3",
    node_properties=(
        NodeProperty("window_order", u3.window_order, u3.window_order.__doc__ or ""),
        NodeProperty("conn_id_purity", u3.conn_id_purity, u3.conn_id_purity.__doc__ or ""),
    ),
    pair_properties=(
        PairProperty("purge_covered", u3.purge_covered, u3.purge_covered.__doc__ or ""),
        PairProperty("timestamps_issued", u3.timestamps_issued, u3.timestamps_issued.__doc__ or ""),
    ),
    step_properties=(
        ("no_spurious_purge", u3.purge_is_safe.__doc__ or ""),
        ("acks_monotone", u3.acks_monotone.__doc__ or ""),
        ("timestamps_increase", "I7: the ACK and SEND_FIRST_SEQNO timestamps a send entry accepts strictly "
                                "increase (the first is accepted whatever it is); one not newer changes nothing."),
        ("sync_rate_limited", "JGRP-1874: at most one SEND_FIRST_SEQNO from a receiver to a sender "
                              "per sync_min_interval."),
    ),
)

PROTOCOLS: dict[str, ProtocolAdapter] = {"unicast3": UNICAST3}
