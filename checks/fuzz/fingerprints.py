"""Fingerprints of the states a fuzz run visits: the definition, and the incremental computation the runs use.

Rules
-----
1. A state fingerprint is 64 bits of BLAKE2b over a canonical encoding of the *reduced* world state
   (``models/world.py`` rule 5: timestamps renumbered; rule 5b: conn_ids ranked, by the world's
   own ``conn_ranks``, before anything else), decoded to values: interned ids and
   Python's per-process string hashing play no part, so equal states give equal fingerprints on
   every executor, and the count of distinct fingerprints is comparable with the checker's count
   of distinct states (``[check] states`` of a model file).
2. ``Fingerprints`` is the definition: every call puts the whole state's encoding together (each
   part looked up or computed per interned id, the ranks part per timestamp layout).
   ``StepFingerprints`` computes the same function incrementally: it keeps the parts of the state
   it fingerprinted last and recomputes only the slots (nodes, network, environment, history)
   whose ids changed, and the ranks part only when a node's accepted timestamps or the stamped
   packets in flight changed; the texts of new values come from ``FastCanonical`` (the text of
   ``checks.explore.fingerprint.Canonical``, computed with fewer calls). What it keeps is a cache:
   its result depends on the state only, never on which states came before
   (``tests/fuzz/test_fuzz_fingerprints.py`` checks it against ``Fingerprints`` on several models,
   in run order and shuffled).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from hashlib import blake2b
from operator import attrgetter
from typing import Any

from checks.explore.fingerprint import Canonical, digest64
from models.world import Packet, World

PRIMITIVES = frozenset({int, str, bool, type(None), float, bytes})  # Canonical's primitives: repr()
NetInfo = tuple[bytes, tuple[set[int], ...], tuple[tuple[int, int, int], ...]]


class FastCanonical(Canonical):
    """``Canonical``'s text (same memo by identity, same ``zeroed`` fields), with a field's or an
    item's primitive or memoised text taken inline instead of through a call, and a named tuple's
    or dataclass's fields read by one ``attrgetter``."""

    def __init__(self, zeroed: dict[type, frozenset[str]] | None = None) -> None:
        super().__init__(zeroed)
        self.getters: dict[type, tuple[str, Callable[[Any], tuple[Any, ...]], tuple[int, ...]]] = {}

    def __call__(self, value: Any) -> str:
        kind = type(value)
        if kind in PRIMITIVES:
            return repr(value)
        by_id = self.by_id
        seen = by_id.get(id(value))
        if seen is not None:
            return seen[1]
        zero: tuple[int, ...] = ()
        if kind is tuple or kind is list:
            head, items = "(", value
        elif kind is frozenset or kind is set:
            text = "{" + ",".join(sorted(map(self, value))) + "}"
            if kind is frozenset:
                by_id[id(value)] = (value, text)
            return text
        else:
            getter = self.getters.get(kind)
            if getter is None:
                getter = self.getters[kind] = self._getter(kind, value)
            head, read, zero = getter
            items = read(value)
        texts = []
        for item in items:
            if type(item) in PRIMITIVES:
                texts.append(repr(item))
            else:
                found = by_id.get(id(item))
                texts.append(found[1] if found is not None else self(item))
        for index in zero:
            texts[index] = "0"
        text = head + ",".join(texts) + ")"
        if kind is not list:  # mutable values may change under the same id
            by_id[id(value)] = (value, text)
        return text

    def _getter(self, kind: type, value: Any) -> tuple[str, Callable[[Any], tuple[Any, ...]], tuple[int, ...]]:
        """(``Name(``, a function reading every field as a tuple, the indexes of the zeroed fields)."""
        name, names = self._shape(kind, value)
        fields = [field for field, _ in names]
        read: Callable[[Any], Any] = attrgetter(*fields) if len(fields) != 1 else _one(fields[0])
        return name + "(", read, tuple(i for i, (_, zero) in enumerate(names) if zero)


def _one(field: str) -> Callable[[Any], tuple[Any, ...]]:
    get = attrgetter(field)
    return lambda value: (get(value),)


class Fingerprints:
    """Fingerprints of the states of a world of one model, reduced or not (rule 1); the definition
    (rule 2).

    A state of an unreduced world (real timestamps, as the lockstep harness runs) gets the
    fingerprint of the reduced state it stands for (what ``World.adopt`` would make of it),
    without building that state: ``models/world.py`` rule 5 replaces each timestamp in use by its
    rank among the timestamps in use on its stream (issuer, holder) and each member's counter by
    the largest number of its timestamps in use on one stream, so the reduced state is determined
    by the state with every timestamp
    set to 0 (*stripped*: digested once per interned node and network) and the ranks (listed after
    the digests, in the network's order, which ranking does not change). States of a reduced world
    are already ranked: for them the ranks are the timestamps themselves. Only the adapter's
    rule-5 functions are used (``timestamp_fields`` to strip, ``node_timestamps`` and
    ``packet_timestamp`` to rank)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.adapter = world.adapter
        self.node_info: dict[int, tuple[bytes, tuple[int, ...]]] = {}  # node id -> (stripped, last_ts per peer)
        self.net_info: dict[int, NetInfo] = {}  # network id -> (stripped, timestamps per stream, stamped)
        self.others: dict[tuple[int, int], bytes] = {}  # (slot, id) of the environment and the history
        self.ranked: dict[tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, int, int], ...]], bytes] = {}
        self.canonical = self.make_canonical(self.adapter.timestamp_fields())  # timestamps read as 0

    def make_canonical(self, zeroed: dict[type, frozenset[str]]) -> Canonical:
        return Canonical(zeroed)

    def conn_ranked(self, state: tuple[int, ...]) -> tuple[int, ...]:
        """``state`` with its conn_ids ranked per stream (rule 5b of ``models/world.py``, where the
        reduced world applies it; a no-op on its own states): the same ids elsewhere."""
        ranks, n = getattr(self.world, "conn_ranks", None), self.world.n  # none in the multicast world
        if ranks is None:
            return state
        nodes, net_id = ranks.rank(state[:n], state[n])
        return nodes + (net_id,) + state[n + 1:]

    def __call__(self, state: tuple[int, ...]) -> int:
        state = self.conn_ranked(state)
        n, parts, held = self.world.n, [], []
        for member in range(n):
            info = self.node(state[member])
            parts.append(info[0])
            held.append(info[1])
        stripped_net, flight, stamped = self.network(state[n])
        parts += [stripped_net, self.other(n + 1, state[n + 1]), self.other(n + 2, state[n + 2]),
                  self.ranks(held, flight, stamped)]
        return digest64(b"".join(parts))

    def node(self, node_id: int) -> tuple[bytes, tuple[int, ...]]:
        """(digest of the node with every timestamp 0, the last timestamp it accepted from each peer)."""
        info = self.node_info.get(node_id)
        if info is None:
            node = self.world.node_table.values[node_id]
            info = self.node_info[node_id] = self.digest(node), self.adapter.node_timestamps(node)[1]
        return info

    def network(self, net_id: int) -> NetInfo:
        """(digest of the network with every timestamp 0, in its order; timestamps in flight per
        stream; (issuer, holder, timestamp) of each stamped packet, in order)."""
        info = self.net_info.get(net_id)
        if info is None:
            info = self.net_info[net_id] = self._stripped_net(self.world.net_table.values[net_id])
        return info

    def other(self, slot: int, value_id: int) -> bytes:
        """The digest of the environment (slot n+1) or the history (slot n+2) of that id."""
        found = self.others.get((slot, value_id))
        if found is None:
            table = self.world.env_table if slot == self.world.n + 1 else self.world.hist_table
            found = self.others[slot, value_id] = self.digest(table.values[value_id])
        return found

    def ranks(self, held: Iterable[tuple[int, ...]], flight: tuple[set[int], ...],
              stamped: tuple[tuple[int, int, int], ...]) -> bytes:
        """The ranks part of a fingerprint: per member the largest number of its timestamps in use
        on one stream, then the rank of each timestamp held by a node (per peer) and in flight (in
        the network's order), each among those in use on its stream (issuer * n + holder).
        ``flight`` less 0 is what ``stamped`` lists per stream, so (held, stamped) is the key."""
        key = (tuple(held), stamped)  # every timestamp in use, where it is
        found = self.ranked.get(key)
        if found is not None:
            return found
        n = self.world.n
        ranks = []
        for issuer in range(n):
            for holder in range(n):
                used = set(flight[issuer * n + holder])
                accepted = key[0][holder]  # empty for a world without timestamps (the multicast world)
                if holder != issuer and issuer < len(accepted):
                    used.add(accepted[issuer])
                used.discard(0)
                ranks.append(dict(zip(sorted(used), range(1, len(used) + 1))))
        ranked = [max(len(ranks[issuer * n + holder]) for holder in range(n)) for issuer in range(n)]
        for holder, last in enumerate(key[0]):
            ranked += [ranks[peer * n + holder].get(ts, 0) for peer, ts in enumerate(last)]
        ranked += [ranks[src * n + dst][ts] for src, dst, ts in stamped]
        found = self.ranked[key] = repr(ranked).encode()
        return found

    def _stripped_net(self, network: tuple[Packet, ...]) -> NetInfo:
        n = self.world.n
        per_stream: tuple[set[int], ...] = tuple(set() for _ in range(n * n))
        stamped = []
        for packet in network:
            ts = self.adapter.packet_timestamp(packet.msg)
            per_stream[packet.src * n + packet.dst].add(ts)
            if ts:
                stamped.append((packet.src, packet.dst, ts))
        return self.digest(network), per_stream, tuple(stamped)

    def digest(self, value: Any) -> bytes:
        """8 bytes of the canonical text of ``value`` with its timestamps read as 0 (those of
        rule 5; an environment or a history has none)."""
        return struct.pack(">q", digest64(self.canonical(value).encode()))


class StepFingerprints(Fingerprints):
    """``Fingerprints`` computed incrementally (rule 2): a lockstep step changes one member's node,
    the network and the history at most, so only the slots whose ids differ from the state
    fingerprinted last are looked up, and the ranks part is looked up only when the timestamps
    in use may have moved."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.last: tuple[int, ...] = ()
        self.last_fingerprint = 0
        self.parts: list[bytes] = []  # per slot of ``last``: its digest
        self.held: list[tuple[int, ...]] = []  # per member of ``last``: the last timestamps accepted
        self.flight: tuple[set[int], ...] = ()
        self.stamped: tuple[tuple[int, int, int], ...] = ()
        self.ranks_part = b""

    def make_canonical(self, zeroed: dict[type, frozenset[str]]) -> Canonical:
        return FastCanonical(zeroed)

    def digest(self, value: Any) -> bytes:
        """``Fingerprints.digest``: the 8 bytes of BLAKE2b themselves (``digest64`` packed back)."""
        return blake2b(self.canonical(value).encode(), digest_size=8).digest()

    def __call__(self, state: tuple[int, ...]) -> int:
        state = self.conn_ranked(state)
        last = self.last
        if state == last:
            return self.last_fingerprint
        if len(last) != len(state):
            return self.first(state)
        n, parts, held = self.world.n, self.parts, self.held
        moved = False  # the timestamps in use
        for member in range(n):
            if state[member] != last[member]:
                digest, accepted = self.node(state[member])
                parts[member] = digest
                if accepted != held[member]:
                    held[member], moved = accepted, True
        if state[n] != last[n]:
            parts[n], flight, stamped = self.network(state[n])
            self.flight = flight
            if stamped != self.stamped:
                self.stamped, moved = stamped, True
        for slot in (n + 1, n + 2):
            if state[slot] != last[slot]:
                parts[slot] = self.other(slot, state[slot])
        if moved:
            self.ranks_part = self.ranks(held, self.flight, self.stamped)
        self.last = state
        self.last_fingerprint = digest64(b"".join(parts) + self.ranks_part)
        return self.last_fingerprint

    def first(self, state: tuple[int, ...]) -> int:
        """A call with nothing kept: every part computed, and kept."""
        n = self.world.n
        nodes = [self.node(state[member]) for member in range(n)]
        stripped_net, self.flight, self.stamped = self.network(state[n])
        self.held = [accepted for _, accepted in nodes]
        self.parts = [digest for digest, _ in nodes] + [stripped_net, self.other(n + 1, state[n + 1]),
                                                         self.other(n + 2, state[n + 2])]
        self.ranks_part = self.ranks(self.held, self.flight, self.stamped)
        self.last = state
        self.last_fingerprint = digest64(b"".join(self.parts) + self.ranks_part)
        return self.last_fingerprint
