"""Rule 5 of ``models/world.py``: timestamps renumbered per stream (the world's and its batched
expander's, ``models/batch.py``), and the timestamps in use on each stream.

Timestamps are renumbered, per *stream*. UNICAST3 compares the timestamps of ACK and
SEND_FIRST_SEQNO only with each other (newer or not), and only those one member issued to one
peer (the peer's send entry keeps the last it accepted from that member), and issues each new
one as "one more than the last issued". So replacing the timestamps in use on each stream
(issuer, holder) (the ``last_ts`` the holder keeps for the issuer, those in flight from the
issuer to the holder) by their ranks 1..k changes no future behaviour: the renumbered world is
bisimilar to the original. The issuer's counter becomes the largest k of its streams: the next
timestamp only has to be newer than every one still in use. Ranking per stream rather than per
issuer forgets the order of what a member stamped for two different peers, which no future step
reads; it merges more states and makes the world symmetric under renaming peers
(``models/symmetry.py``). With two members each issuer has one stream and both readings agree.
Without renumbering, a receiver that keeps asking (an unfair schedule that never delivers one
packet) drives its counter up forever and the state space is infinite. Traces therefore show
ranks: only the order of two timestamps of one stream means anything.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any


def streams_in_use(n: int, infos: Sequence[tuple[int, tuple[int, ...]]], in_flight: Sequence[frozenset[int]]
                   ) -> tuple[tuple[int, ...], ...] | None:
    """Rule 5: per stream (issuer * n + holder) the timestamps in use on it, sorted, from each
    member's (counter, last timestamp accepted per peer) and the timestamps in flight per stream;
    None if they are already ranks (each stream's are 1..k, each counter its streams' largest k)."""
    used: list[tuple[int, ...]] = []
    canonical = True
    for issuer in range(n):
        largest = 0
        for holder in range(n):
            values = set(in_flight[issuer * n + holder])
            values.add(infos[holder][1][issuer])  # a member's own slot: its ACKs to itself (3.4.x)
            values.discard(0)
            ordered = tuple(sorted(values))
            if ordered and ordered[-1] != len(ordered):
                canonical = False
            largest = max(largest, len(ordered))
            used.append(ordered)
        canonical = canonical and infos[issuer][0] == largest
    return None if canonical else tuple(used)


RENUMBER_MEMO_LIMIT = 200_000  # bounds the memory the renumbering memo may take


class TimestampRanks:
    """Rule 5 over a world's interned nodes and networks (``models/world.py``), memoised."""

    def __init__(self, world: Any) -> None:
        self.world, self.n, self.adapter = world, world.n, world.adapter
        self.node_ts: dict[int, tuple[int, tuple[int, ...]]] = {}
        self.net_ts: dict[int, tuple[frozenset[int], ...]] = {}
        self.renumbered: dict[Hashable, tuple[tuple[int, ...], int]] = {}
        self.shared_sets: dict[frozenset[int], frozenset[int]] = {}

    def of_node(self, node_id: int) -> tuple[int, tuple[int, ...]]:
        """(timestamps the node issued, the last it accepted from each peer)."""
        found = self.node_ts.get(node_id)
        if found is None:
            found = self.node_ts[node_id] = self.adapter.node_timestamps(self.world.node_table.values[node_id])
        return found

    def in_flight(self, net_id: int) -> tuple[frozenset[int], ...]:
        """Per stream (index issuer * n + holder), the timestamps in flight on it (0: unstamped)."""
        found = self.net_ts.get(net_id)
        if found is None:
            n = self.n
            per_stream: list[set[int]] = [set() for _ in range(n * n)]
            for packet in self.world.net_table.values[net_id]:
                per_stream[packet.src * n + packet.dst].add(self.adapter.packet_timestamp(packet.msg))
            shared = self.shared_sets  # equal sets once: few distinct ones, many networks
            found = self.net_ts[net_id] = tuple(shared.setdefault(fs, fs) for fs in map(frozenset, per_stream))
        return found

    def renumber(self, nodes: tuple[int, ...], net_id: int) -> tuple[tuple[int, ...], int]:
        """The timestamps in use on each stream become 1..k, in the same order."""
        in_use = streams_in_use(self.n, [self.of_node(i) for i in nodes], self.in_flight(net_id))
        if in_use is None:
            return nodes, net_id
        key = (nodes, net_id, in_use)
        found = self.renumbered.get(key)
        if found is None:
            world, adapter, n = self.world, self.adapter, self.n
            ranks = tuple({value: rank for rank, value in enumerate(values, 1)} for values in in_use)
            renumbered = tuple(world.node_table(adapter.renumber_node(world.node_table.values[i], ranks))
                               for i in nodes)
            packets = tuple(sorted(p._replace(msg=adapter.renumber_packet(p.msg, ranks[p.src * n + p.dst]))
                                   for p in world.net_table.values[net_id]))
            found = renumbered, int(world.net_table(packets))
            if len(self.renumbered) < RENUMBER_MEMO_LIMIT:
                self.renumbered[key] = found
        return found

    def renamed_action(self, world: tuple[int, ...], action: Hashable) -> Hashable:
        """``action`` with the timestamp its packet carries replaced by its rank among those in use
        on its stream in ``world``: how a renumbering world names it (``world`` may be unreduced)."""
        packet: Any = getattr(action, "packet", None)
        if packet is None or not self.adapter.packet_timestamp(packet.msg):
            return action
        values = set(self.in_flight(world[self.n])[packet.src * self.n + packet.dst])
        values.add(self.of_node(world[packet.dst])[1][packet.src])
        values.discard(0)
        rank = {value: r for r, value in enumerate(sorted(values), 1)}
        renamed = packet._replace(msg=self.adapter.renumber_packet(packet.msg, rank))
        return type(action)(renamed)  # type: ignore[call-arg]
