"""How the world talks to a protocol spec: one ``ProtocolAdapter`` per ``spec/`` module.

The adapter turns world stimuli into calls of the spec's handlers, tells which effects are packets,
and maps the spec's observations (``spec/effects.py``) onto history: the abstract channel of
``spec/reliable_fifo`` and one bit per violated *step* property (a property about a transition,
such as "a purge never removes what the receiver's window still needs"). It also lists the
protocol's properties, variants, settings and timers by name, for model files and charts.

``ProtocolAdapter`` holds what every unicast spec shares (the handler names ``on_send``,
``on_receive``, ``on_timer``, ``on_view``, ``on_remove_receiver``; send and receive entries with
``conn_id``, ``acked``, ``unacked``, ``delivered``, ``buffered``; timestamps ``ts`` on the messages
a receiver sends back); ``models/protocol_unicast3.py`` and ``models/protocol_unicast2.py`` add
what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields, replace
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from spec import reliable_fifo as fifo

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


def doc_of(function: Callable[..., Any]) -> str:
    return function.__doc__ or ""


class ProtocolAdapter:
    """The world's view of one unicast spec module. Subclasses set the class attributes."""

    name: str
    spec: ModuleType
    node_properties: tuple[NodeProperty, ...]
    pair_properties: tuple[PairProperty, ...]
    step_properties: tuple[tuple[str, str], ...]  # (name, doc); bit i of History.step_violations
    variant_aliases: ClassVar[dict[str, str]]  # JIRA id or scenario name -> Variant field
    timer_keys: ClassVar[dict[str, bool]]  # model file [timers]: Config field -> default
    config_keys: ClassVar[dict[str, tuple[int, int]]]  # model file [config]: Config field -> (default, minimum)
    timer_text: tuple[str, ...]  # per timer kind, for traces; "{peer}" is the timer's peer
    progress_timers: frozenset[int]  # timer kinds a liveness continuation may use
    removal_timers: frozenset[int]  # timer kinds that remove the receive window of their peer
    send_removal_timers: frozenset[int] = frozenset()  # ... the send entry to their peer (conn_close_timeout)
    history_timers: frozenset[int] = frozenset()  # timer kinds whose firing ``observe_timer`` records
    timestamped: tuple[type[Any], ...]  # message types carrying a timestamp ``ts``
    window_replies: tuple[type[Any], ...]  # message types a receive window sends back to its sender

    def step_bit(self, name: str) -> int:
        return 1 << [n for n, _ in self.step_properties].index(name)

    # -- configuration ----------------------------------------------------------------------
    def variant_names(self) -> set[str]:
        return {f.name for f in fields(self.spec.Variant)}

    def make_config(self, members: int, variant: Sequence[str], timers: dict[str, bool],
                    settings: dict[str, int]) -> Any:
        """The spec's Config for a validated model file."""
        return self.spec.Config(members, variant=self.spec.Variant(**{name: True for name in variant}),
                                **timers, **settings)

    # -- handlers ---------------------------------------------------------------------------
    def initial_node(self, cfg: Any, member: int, view: frozenset[int]) -> Any:
        return self.spec.initial_node(member, cfg, view)

    def handle(self, cfg: Any, node: Any, stimulus: Hashable) -> tuple[Any, tuple[Any, ...]]:
        spec = self.spec
        if isinstance(stimulus, tuple) and len(stimulus) == 4 and hasattr(stimulus, "msg"):
            step = spec.on_receive(cfg, node, stimulus.src, stimulus.msg)  # type: ignore[attr-defined]
        elif stimulus[0] == "send":  # type: ignore[index]
            step = spec.on_send(cfg, node, stimulus[1], stimulus[2])  # type: ignore[index]
        elif stimulus[0] == "timer":  # type: ignore[index]
            step = spec.on_timer(cfg, node, stimulus[1])  # type: ignore[index]
        elif stimulus[0] == "view":  # type: ignore[index]
            step = spec.on_view(cfg, node, stimulus[1])  # type: ignore[index]
        else:
            step = spec.on_remove_receiver(cfg, node, stimulus[1])  # type: ignore[index]
        return step.node, step.effects

    def enabled_timers(self, cfg: Any, node: Any) -> tuple[Any, ...]:
        return tuple(self.spec.enabled_timers(cfg, node))

    def receivers(self, node: Any) -> list[int]:
        return [peer for peer, entry in enumerate(node.recv) if entry is not None]

    def timer_is_progress(self, timer: Any) -> bool:
        return timer.kind in self.progress_timers

    def quiet_connection(self, member: int, timer: Any) -> tuple[int, int] | None:
        """(sender, receiver) of the connection ``timer`` at ``member`` removes an entry of, if it
        is one that ``models/world.py`` rule 6 lets fire only while none of its packets is in flight."""
        if timer.kind in self.removal_timers:
            return int(timer.peer), member
        if timer.kind in self.send_removal_timers:
            return member, int(timer.peer)
        return None

    def receive_window_of(self, packet: Any) -> tuple[int, int] | None:
        """(sender, receiver) of the receive window ``packet`` belongs to, if any: a DATA belongs
        to its destination's window for its source; what a window sends back to its sender
        (ACK, SEND_FIRST_SEQNO, XMIT_REQ, STABLE) to its source's window for its destination."""
        if isinstance(packet.msg, self.spec.Data):
            return packet.src, packet.dst
        if isinstance(packet.msg, self.window_replies):
            return packet.dst, packet.src
        return None

    def is_send(self, effect: Any) -> bool:
        return type(effect).__name__ == "Send"

    def nothing_unacked(self, node: Any, peer: int) -> bool:
        return bool(self.spec.nothing_unacked(node, peer))

    # -- observations and history -----------------------------------------------------------
    def step_observations(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                          ) -> tuple[tuple[str, Any], ...]:
        """Observations of one handler call that need the node before and after it, in the same
        timestamp numbering (before rule 5 renumbers). I7: a send entry's accepted timestamps
        strictly increase, and a message whose timestamp is not newer than the last accepted one
        changes nothing and sends nothing."""
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

    def observe(self, history: History, member: int, old: Any, nodes: tuple[Any, ...],
                observed: tuple[tuple[str, Any], ...], n: int, cfg: Any) -> History:
        """History after ``member`` moved from ``old`` to ``nodes[member]`` observing ``observed``."""
        channels, syncs = list(history.channels), list(history.syncs)
        violations = history.step_violations
        for kind, value in observed:
            if kind == "stimulus" and value[0] == "send":
                channels[member * n + value[1]] = fifo.send(channels[member * n + value[1]])
            elif kind == "stimulus":
                self.observe_timer(value[1], member, n, syncs)
            elif kind == "Deliver":
                channels[value.src * n + member] = fifo.deliver(channels[value.src * n + member], value.payload)
            elif kind in ("WindowCreated", "WindowRemoved"):
                channels[value.src * n + member] = fifo.new_incarnation(channels[value.src * n + member])
            elif kind == "Purged" and not self.spec.purge_is_safe(nodes[value.dst], member, value):
                violations |= self.step_bit("no_spurious_purge")
            elif kind == "SyncRequested":
                violations |= self.observe_sync_request(syncs, value.dst * n + member)
            elif kind == "SyncAnswered":
                violations |= self.observe_sync_answer(value, cfg)
            elif kind == "TimestampOrder" and not value:
                violations |= self.step_bit("timestamps_increase")
            elif kind == "Discarded" and value.flushed:
                channels[member * n + value.dst] = fifo.excuse(channels[member * n + value.dst], value.payloads)
        if not self.spec.acks_monotone(old, nodes[member]):
            violations |= self.step_bit("acks_monotone")
        return type(history)(tuple(channels), violations, tuple(syncs))

    def observe_timer(self, timer: Any, member: int, n: int, syncs: list[int]) -> None:
        """A timer fired at ``member``: update the sync counters ``syncs`` if it is a rate limit's
        (only timers of ``history_timers``; the world skips the others when they change nothing else)."""

    def observe_sync_request(self, syncs: list[int], pair: int) -> int:
        """A SEND_FIRST_SEQNO on ``pair`` (index sender * n + requester): update ``syncs`` if the
        protocol rate-limits them, and return the violation bits."""
        return 0

    def observe_sync_answer(self, answered: Any, cfg: Any) -> int:
        """Violation bits for a SEND_FIRST_SEQNO answered by resending ``answered.resent`` messages."""
        return 0

    def observe_reads(self, member: int, observed: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
        """The members whose new node ``observe`` reads for these observations (it reads no other
        entry of ``nodes``), so that history updates can be memoised on those nodes alone. The
        batched world (``models/batch.py``) passes None for the others: a read not listed here fails."""
        return (member,) + tuple(value.dst for kind, value in observed if kind == "Purged")

    # -- rendering --------------------------------------------------------------------------
    def format_action(self, action: Any, name: Callable[[int], str]) -> str:
        from models.render_actions import format_action

        return format_action(action, name, self.timer_text)

    def format_message(self, kind: str, msg: Any) -> str:
        from models.render_actions import format_message

        return format_message(kind, msg)

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
        """``node`` with every send entry's ``last_ts`` renumbered by the ranks of the peer that
        issued it, and its own counter set to the number of its timestamps still in use."""
        send = tuple(e if e is None or e.last_ts == 0 else replace(e, last_ts=ranks[peer][e.last_ts])
                     for peer, e in enumerate(node.send))
        return replace(node, timestamper=len(ranks[node.me]), send=send)

    def renumber_packet(self, packet_msg: Any, rank: dict[int, int]) -> Any:
        return packet_msg._replace(ts=rank[packet_msg.ts]) if self.packet_timestamp(packet_msg) else packet_msg


def _registry() -> dict[str, ProtocolAdapter]:
    from models.protocol_unicast2 import UNICAST2
    from models.protocol_unicast3 import UNICAST3

    return {adapter.name: adapter for adapter in (UNICAST2, UNICAST3)}


PROTOCOLS: dict[str, ProtocolAdapter] = _registry()
