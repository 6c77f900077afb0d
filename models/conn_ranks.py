"""Rule 5b of ``models/world.py``: conn_ids ranked per stream, for worlds of three members or more.

Why it is sound. In UNICAST3 a conn_id is issued by the sender of a connection (its send entry
takes the member's ``next_conn_id``, which then grows by one) and is read only on that sender's
*stream* (issuer, holder): the issuer's send entry for the holder, the holder's receive entry for
the issuer and the DATA it buffers, the DATA the holder's message cache keeps for the issuer, DATA
and CLOSE from the issuer to the holder, ACK from the holder to the issuer. Handlers and properties
compare two conn_ids of one stream, for equality or (``newer_conn_id``) order, and never anything
else. A conn_id that no node and no packet holds can never come back: new ones come from the
counter. So replacing the conn_ids in use on each stream by their ranks 0..k-1, in the same order,
and the issuer's counter by the largest k of its streams (so that the next one is newer than every
one in use on every stream) gives a world that is bisimilar to the original, with the same
properties in every state.

What it merges. The counter is one per member, shared by its connections: with three members, the
order in which A opened its connections to B and to C, and how many it reopened, name different
states that behave alike. With two members each issuer has one stream and the counter only counts
reopenings; the rule is applied from three members on, which leaves every two-member model's
state count as it was. It also lets partial-order reduction treat two openings of one member as
independent (``models/reduction.py``): after ranking, their order leaves no trace.

The step properties compare a node before and after one handler call in one numbering: the world
ranks after the history update (``World._after``, ``BatchExpander._step``)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from models.interning import Interner

# (next conn_id, the send entry's per peer (-1: none), those the receive entry per peer holds)
ConnInfo = tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]
Maps = tuple[dict[int, int], ...]  # per stream (issuer * n + holder): conn_id in use -> rank


class ConnRanks:
    """Rule 5b over a world's interned nodes and networks, memoised on what it reads."""

    def __init__(self, world: Any) -> None:
        self.world, self.n, self.adapter = world, world.n, world.adapter
        self.node_info: dict[int, ConnInfo] = {}
        self.net_info: dict[int, tuple[tuple[int, int], ...]] = {}  # network -> (stream, conn_id) in flight
        self.node_sig: dict[int, int] = {}  # node -> id of its ConnInfo
        self.net_sig: dict[int, int] = {}  # network -> id of its conn_ids in flight
        self.signatures = Interner()
        self.shared: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = {}
        self.ranking: dict[tuple[int, ...], int] = {}  # signatures -> -1 (canonical) or maps id
        self.in_use = Interner()  # per stream, the conn_ids in use, sorted -> maps id
        self.maps: list[Maps] = []
        self.renamed_node: dict[tuple[int, int], int] = {}
        self.renamed_net: dict[tuple[int, int], int] = {}

    def of_node(self, node_id: int) -> ConnInfo:
        found = self.node_info.get(node_id)
        if found is None:
            found = self.node_info[node_id] = self.adapter.node_conn_ids(self.world.node_table.values[node_id])
        return found

    def carried(self, packet: Any) -> tuple[int, int] | None:
        """(stream, conn_id) of a packet that carries a conn_id: DATA and CLOSE travel from the
        issuer to the holder, ACK the other way."""
        found = self.adapter.packet_conn_id(packet.msg)
        if found is None:
            return None
        from_issuer, conn_id = found
        n = self.n
        return (packet.src * n + packet.dst if from_issuer else packet.dst * n + packet.src), conn_id

    def of_net(self, net_id: int) -> tuple[tuple[int, int], ...]:
        found = self.net_info.get(net_id)
        if found is None:
            out = {carried for carried in map(self.carried, self.world.net_table.values[net_id]) if carried}
            listed = tuple(sorted(out))  # few distinct ones among many networks: kept once
            found = self.net_info[net_id] = self.shared.setdefault(listed, listed)
        return found

    def moved(self, before: int, after: int) -> bool:
        """Did a node's conn_ids change (a step that must look whether ranking is needed)?"""
        return before != after and self.of_node(before) != self.of_node(after)

    def streams_in_use(self, nodes: Sequence[int], net_id: int) -> tuple[tuple[int, ...], ...] | None:
        """Per stream the conn_ids in use, sorted; None if they are already ranks (each stream's
        are 0..k-1 and each counter its streams' largest k)."""
        n = self.n
        used: list[set[int]] = [set() for _ in range(n * n)]
        for stream, conn_id in self.of_net(net_id):
            used[stream].add(conn_id)
        infos = [self.of_node(node) for node in nodes]
        for me, (_, sends, recvs) in enumerate(infos):
            for peer in range(n):
                if sends[peer] >= 0:
                    used[me * n + peer].add(sends[peer])
                used[peer * n + me].update(recvs[peer])
        ordered = tuple(tuple(sorted(values)) for values in used)
        canonical = all(not values or values[-1] == len(values) - 1 for values in ordered)
        for issuer in range(n):
            largest = max(len(ordered[issuer * n + holder]) for holder in range(n))
            canonical = canonical and infos[issuer][0] == largest
        return None if canonical else ordered

    def rank(self, nodes: tuple[int, ...], net_id: int) -> tuple[tuple[int, ...], int]:
        """The nodes and network with every conn_id replaced by its rank on its stream."""
        key = self._signature(nodes, net_id)
        maps_id = self.ranking.get(key)
        if maps_id is None:
            maps_id = self._ranking(key, nodes, net_id)
        if maps_id < 0:
            return nodes, net_id
        maps, table = self.maps[maps_id], self.world.node_table
        renamed = []
        for node in nodes:
            found = self.renamed_node.get((node, maps_id))
            if found is None:
                found = self.renamed_node[node, maps_id] = table(self.adapter.rename_conn_ids(table.values[node], maps))
            renamed.append(found)
        net = self.renamed_net.get((net_id, maps_id))
        if net is None:
            net = self.renamed_net[net_id, maps_id] = self._renamed_net(net_id, maps)
        return tuple(renamed), net

    def _signature(self, nodes: tuple[int, ...], net_id: int) -> tuple[int, ...]:
        """What the ranking reads, as a few small ints (far fewer distinct keys than states)."""
        sig = self.net_sig.get(net_id)
        if sig is None:
            sig = self.net_sig[net_id] = self.signatures(("net", self.of_net(net_id)))
        key = [sig]
        node_sig = self.node_sig
        for node in nodes:
            found = node_sig.get(node)
            if found is None:
                found = node_sig[node] = self.signatures(self.of_node(node))
            key.append(found)
        return tuple(key)

    def _ranking(self, key: tuple[int, ...], nodes: tuple[int, ...], net_id: int) -> int:
        in_use = self.streams_in_use(nodes, net_id)
        if in_use is None:
            self.ranking[key] = -1
            return -1
        found = self.ranking[key] = self.in_use(in_use)
        if found == len(self.maps):
            self.maps.append(tuple({value: rank for rank, value in enumerate(values)} for values in in_use))
        return found

    def _renamed_net(self, net_id: int, maps: Maps) -> int:
        packets = []
        for packet in self.world.net_table.values[net_id]:
            carried = self.carried(packet)
            if carried is not None:
                packet = packet._replace(msg=self.adapter.rename_packet_conn_id(packet.msg, maps[carried[0]]))
            packets.append(packet)
        return int(self.world.net_table(tuple(sorted(packets))))

    def renamed_action(self, world: tuple[int, ...], action: Hashable) -> Hashable:
        """``action`` (of an unranked world in state ``world``) with the conn_id its packet
        carries replaced by its rank on its stream: how a ranking world names it."""
        batch: Any = getattr(action, "packets", None)
        if batch is not None:  # a batch delivery (models/world.py rule 6b): each DATA renamed
            return type(action)(tuple(self.renamed_action(world, _One(p)).packet for p in batch))  # type: ignore[call-arg, attr-defined]
        packet: Any = getattr(action, "packet", None)
        carried = None if packet is None else self.carried(packet)
        if carried is None:
            return action
        in_use = self.streams_in_use(world[:self.n], world[self.n])
        if in_use is None:
            return action
        rank = {value: r for r, value in enumerate(in_use[carried[0]])}
        renamed = packet._replace(msg=self.adapter.rename_packet_conn_id(packet.msg, rank))
        return type(action)(renamed)  # type: ignore[call-arg]


class _One(NamedTuple):
    """One packet of a batch, as ``renamed_action`` renames a delivery's."""

    packet: Any
