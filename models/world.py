"""The world around a protocol: members, an unreliable network, membership, faults and history.

Rules
-----
1. The protocol (a ``ProtocolAdapter`` over a ``spec/`` module) decides what members do; the world
   decides everything else: which packet arrives next, which is lost or duplicated, when timers
   fire, which view a member installs. The protocol never decides a fault.
2. The network holds, per directed channel, a *set* of in-flight packets: any packet may be
   delivered next (reordering), lost (within the loss budget) or delivered while a copy stays in
   flight (duplication, within its budget). Sending a packet identical to one already in flight
   adds nothing: the two copies are indistinguishable until one is duplicated, and the duplicate
   budget covers that. This keeps retransmission loops finite.
3. Bounds come from the model file: application sends per pair, loss, duplication and
   receiver-removal budgets, the per-member view scripts, and ``max_in_flight`` per channel
   (a state over it is a *cut* state: checked but not expanded, and reported).
4. History (``spec/reliable_fifo.Channel`` per pair, plus one bit per violated step property) is
   part of the state, so every violation is visible in the state where it happens.
5. Timestamps are renumbered per *stream* (issuer, holder) to their ranks 1..k: a bisimulation that
   keeps the state space finite (``models/ranks.py`` says why). Traces show ranks.
5b. With three members or more, conn_ids are ranked per stream the same way, where the protocol
   allows it (UNICAST3): ``models/conn_ranks.py`` says why it is sound and what it merges.
6. Packets do not outlive a connection's entries. A member drops its receive window for a peer (the
   test hook, or conn_close_timeout of a CLOSING entry) only while no packet of that window is in
   flight: no DATA from the peer, and no ACK, SEND_FIRST_SEQNO or XMIT_REQ of the window to the
   peer (the ACKs the removal itself flushes may be delayed at will: that is JGRP-1873). The same
   holds for a send entry removed by conn_close_timeout (UNICAST3's CLOSE_SEND): no DATA of it to
   the peer and nothing from the peer's window for it in flight. View changes are not gated: in
   UNICAST2 they remove entries at once, which is that protocol's own behaviour (so is its reaper's
   removal of a send entry: it has no CLOSING to wait in), so an old connection's first DATA may
   arrive after the new one's and replace the new window (no_spurious_reset:
   ``models/unicast2/stale-first-data-resets-window.toml``). JGroups
   sizes conn_close_timeout as "2 x MSL" (digest 1.2 (d)) for this reason: a copy of a first
   message, or a SEND_FIRST_SEQNO, that arrives after the reset makes the sender and the new
   window disagree about what was received. The model ``residual-stale-packets.toml`` lifts this
   assumption (``[faults] stale_packets = true``) and shows what happens then.
6b. With ``[faults] max_batch = N`` (N >= 2; 0, the default, is off), the network may also hand a
   receiver 2 to N DATA in flight on one channel as one input (``DeliverBatch``: the protocol's batch
   input, UNICAST3's ``up(MessageBatch)``): any subset of the channel's DATA of one OOB mode (the
   transport splits a bundle into its OOB and regular batches), in seqno order. A sender's bundler
   queues what the application and the retransmit task send close together, so any DATA in flight at
   once may share a bundle; control messages are never batched (the protocol handles those of a
   batch one at a time anyway). A batch delivery consumes its packets and is progress.
7. A *dead* member (``[faults] dead``) crashed before the run and nobody has suspected it: it is in
   every view, handles nothing (a packet to it is consumed, its timers change nothing) and sends
   nothing. Liveness asks nothing of the channels to it (``models/properties.py``).

Representation (for speed, invisible to the spec): node states, networks, budgets and histories
are interned to small ints, a world is a flat tuple of those ints, and every handler call is
memoised on ``(node id, input)``. ``WorldView`` decodes a world for properties and people.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, NamedTuple

from models.batch import BatchExpander
from models.conn_ranks import ConnRanks
from models.interning import InternedWorldStates, Interner
from models.protocols.base import ProtocolAdapter
from models.ranks import TimestampRanks
from models.reduction import ConnectionClusters, StickyProperties
from models.symmetry import MemberSymmetry
from spec import reliable_fifo
from spec.reliable_fifo import Channel

# --------------------------------------------------------------------------------------------
# Packets and world actions.


class Packet(NamedTuple):
    """A message in flight. ``kind`` (the message type's name) makes packets of different message
    types unequal even when their fields coincide."""

    src: int
    dst: int
    kind: str
    msg: Any


class AppSend(NamedTuple):
    src: int
    dst: int


class DeliverPacket(NamedTuple):
    packet: Packet


class DeliverBatch(NamedTuple):
    """Rule 6b: DATA of one channel delivered as one batch, in seqno order."""

    packets: tuple[Packet, ...]


class DuplicatePacket(NamedTuple):
    packet: Packet


class LosePacket(NamedTuple):
    packet: Packet


class FireTimer(NamedTuple):
    member: int
    timer: Any  # the protocol's timer value


class InstallView(NamedTuple):
    member: int
    members: tuple[int, ...]


class RemoveReceiver(NamedTuple):
    member: int
    peer: int


WorldAction = (AppSend | DeliverPacket | DeliverBatch | DuplicatePacket | LosePacket | FireTimer | InstallView
               | RemoveReceiver)
FAULTS = (AppSend, DuplicatePacket, LosePacket, InstallView, RemoveReceiver)


@dataclass(frozen=True, slots=True)
class Bounds:
    """What the environment may do, from the model file."""

    sends: tuple[int, ...]  # per pair index src*n+dst: application messages the sender may send
    loss: int
    duplicate: int
    receiver_removals: int
    views: tuple[tuple[frozenset[int], ...], ...]  # per member, views installed in this order
    max_in_flight: int
    # lift rule 6: windows may be dropped with their packets in flight (True), or with the replies of the
    # window (ACK, SEND_FIRST_SEQNO, XMIT_REQ, STABLE) in flight but no DATA ("replies")
    stale_packets: bool | str = False
    dead: frozenset[int] = frozenset()  # rule 7: members that crashed before the run (never act)
    # the application sends flagged OOB, as (src, dst, n): src's n-th message to dst (UNICAST3)
    oob: frozenset[tuple[int, int, int]] = frozenset()
    max_batch: int = 0  # rule 6b: DATA per batch delivery (0: no batches)
    # the application sends to itself flagged DONT_LOOPBACK, as (member, member, n) (UNICAST3, UNICAST4)
    dont_loopback: frozenset[tuple[int, int, int]] = frozenset()


class Env(NamedTuple):
    """Remaining fault budgets and each member's position in its view script."""

    loss: int
    duplicate: int
    removals: int
    view_index: tuple[int, ...]


class History(NamedTuple):
    channels: tuple[Channel, ...]  # per pair index src*n+dst
    step_violations: int  # bit i: the adapter's step property i was violated on some step
    syncs: tuple[int, ...]  # per pair: sync requests dst->src since dst's last sync expiry
    # bit src*n+dst: src's send entry to dst is in a grace period that excuses a discard at its end
    # (UNICAST3: it became CLOSING when dst left src's view, or by idling out, and no view since
    # has contained dst; ``ProtocolAdapter.observe``). In the shipped specs a function of the node
    # states (every CLOSING entry got there so), so it costs no states; a defect makes it differ.
    grace: int = 0


@dataclass(frozen=True, slots=True)
class WorldView:
    """A decoded world, for properties, rendering and tests."""

    nodes: tuple[Any, ...]
    network: tuple[Packet, ...]
    env: Env
    history: History

    def channel(self, src: int, dst: int) -> Channel:
        return self.history.channels[src * len(self.nodes) + dst]


class World(InternedWorldStates):
    """A protocol composed with the world, as a ``checks.explore.system.TransitionSystem``."""

    def __init__(self, name: str, adapter: ProtocolAdapter, cfg: Any, n: int, bounds: Bounds,
                 initial_views: Sequence[frozenset[int]], properties: Sequence[Any], *,
                 reduce_timestamps: bool = True, rank_conn_ids: bool = True) -> None:
        self.name = name
        self.initial_views = tuple(initial_views)
        self.reduce_timestamps = reduce_timestamps  # rule 5; off for driving real engines
        self.adapter, self.cfg, self.n, self.bounds = adapter, cfg, n, bounds
        self.properties = list(properties)
        # the channels: every ordered pair of members, and a member to itself if it sends itself messages
        self.pairs = [(s, d) for s in range(n) for d in range(n) if s != d or bounds.sends[s * n + d]]
        # The interners of a world's four parts (its state is their ids): public for the batched
        # expander (models/batch.py), the properties and the fuzz coverage, which read ``.values``
        # and intern through them; nothing else may change them.
        self.node_table, self.net_table = Interner(), Interner()
        self.env_table, self.hist_table = Interner(), Interner()
        self._node_memo: dict[tuple[int, Hashable], tuple[int, tuple[Packet, ...], tuple[Any, ...], bool]] = {}
        self._net_memo: dict[tuple[int, Packet | tuple[Packet, ...] | None, tuple[Packet, ...]], int] = {}
        self._hist_memo: dict[Hashable, int] = {}
        self._bounded: dict[int, bool] = {}
        self._busy: dict[int, frozenset[tuple[int, int]]] = {}
        self.ts_ranks = TimestampRanks(self)  # rule 5 (models/ranks.py)
        self._batch: BatchExpander | None = None  # made on first use
        self._candidate_memo: dict[Hashable, tuple[Any, ...]] = {}  # ``candidates`` of one component
        self._batch_memo: dict[int, tuple[DeliverBatch, ...]] = {}  # network -> its batches (rule 6b)
        self._clusters: ConnectionClusters | None = None  # partial-order reduction (models/reduction.py)
        # rule 5b: the ranking, if this model's reduced world applies it (an unreduced world keeps it
        # to name actions and fingerprint states as the reduced one would), and whether this one does
        self.conn_ranks = ConnRanks(self) if adapter.ranks_conn_ids and n >= 3 and rank_conn_ids else None
        self.ranks_conn_ids = reduce_timestamps and self.conn_ranks is not None
        self.sticky: StickyProperties | None = None  # ... and its stable properties (rule 4 there)
        nodes = tuple(self.node_table(adapter.initial_node(cfg, m, initial_views[m])) for m in range(n))
        history = History(tuple(Channel() for _ in range(n * n)), 0, (0,) * (n * n))
        env = Env(bounds.loss, bounds.duplicate, bounds.receiver_removals, (0,) * n)
        self._init = nodes + (self.net_table(()), self.env_table(env), self.hist_table(history))
        # ``Symmetric`` (checks/explore/system.py): the renamings of members that map the model onto
        # itself, the group's order (1: none) and orbit representatives (models/symmetry.py)
        self.symmetry = MemberSymmetry(self)
        self.symmetry_group_size = self.symmetry.group_size
        self.canonical_batch = self.symmetry.canonical_batch
        self.symmetry_images = self.symmetry.images_batch  # ``SymmetryImages``: for searches across processes

    # -- TransitionSystem ---------------------------------------------------------------------
    def init_states(self) -> Sequence[tuple[int, ...]]:
        return [self._init]

    def successors(self, world: tuple[int, ...]) -> Iterator[tuple[WorldAction, tuple[int, ...]]]:
        n = self.n
        net: tuple[Packet, ...] = self.net_table.values[world[n]]
        env: Env = self.env_table.values[world[n + 1]]
        history: History = self.hist_table.values[world[n + 2]]
        for src, dst in self.pairs:
            sent = history.channels[src * n + dst].sent
            if sent < self.bounds.sends[src * n + dst]:
                yield from self._after(world, src, AppSend(src, dst), self.send_stimulus(src, dst, sent + 1), None, env)
        for packet in net:
            yield from self._after(world, packet.dst, DeliverPacket(packet), packet, packet, env)
            if env.duplicate:
                yield from self._after(world, packet.dst, DuplicatePacket(packet), packet, None,
                                       env._replace(duplicate=env.duplicate - 1))
            if env.loss:
                yield LosePacket(packet), self._lost(world, packet, env)
        for member in range(n):
            node = self.node_table.values[world[member]]
            for timer in self.adapter.enabled_timers(self.cfg, node):
                pair = self.adapter.quiet_connection(member, timer)
                if pair is not None and not self.quiet(world[n], *pair):
                    continue
                yield from self._after(world, member, FireTimer(member, timer), ("timer", timer), None, env)
        yield from self._environment_actions(world, env)
        if self.bounds.max_batch:
            for batch in self.batches(world[n]):
                yield from self._after(world, batch.packets[0].dst, batch, self.batch_stimulus(batch),
                                       batch.packets, env)

    def batches(self, net_id: int) -> tuple[DeliverBatch, ...]:
        """Rule 6b: every batch the network may deliver in network ``net_id``, channel by channel."""
        found = self._batch_memo.get(net_id)
        if found is None:
            groups: dict[tuple[int, int, bool], list[Packet]] = {}
            for p in self.net_table.values[net_id]:
                mode = self.adapter.batch_mode(p.msg)
                if mode is not None:
                    groups.setdefault((p.src, p.dst, mode), []).append(p)
            found = self._batch_memo[net_id] = tuple(
                DeliverBatch(c) for group in groups.values() for size in range(2, self.bounds.max_batch + 1)
                for c in combinations(sorted(group, key=lambda p: p.msg), size))
        return found

    @staticmethod
    def batch_stimulus(batch: DeliverBatch) -> tuple[Any, ...]:
        """The handler input of a batch delivery: ``("batch", src, its messages in order)``."""
        return ("batch", batch.packets[0].src, tuple(p.msg for p in batch.packets))

    def _environment_actions(self, world: tuple[int, ...], env: Env) -> Iterator[tuple[WorldAction, tuple[int, ...]]]:
        for member in range(self.n):
            script = self.bounds.views[member]
            index = env.view_index[member]
            if index < len(script):
                view = script[index]
                action = InstallView(member, tuple(sorted(view)))
                yield from self._after(world, member, action, ("view", view), None, _next_view(env, member))
        if env.removals:
            fewer = env._replace(removals=env.removals - 1)
            for member in range(self.n):
                node = self.node_table.values[world[member]]
                for peer in self.adapter.receivers(node):
                    if not self.quiet(world[self.n], peer, member):
                        continue
                    yield from self._after(world, member, RemoveReceiver(member, peer), ("remove", peer), None, fewer)

    def quiet(self, net_id: int, sender: int, receiver: int) -> bool:
        """Rule 6: nothing of ``receiver``'s window for ``sender`` is in flight."""
        stale = self.bounds.stale_packets
        if stale is True:
            return True
        busy = self._busy.get(net_id)
        if busy is None:
            busy = self._busy[net_id] = frozenset(
                pair for p in self.net_table.values[net_id]
                if (pair := self.adapter.receive_window_of(p)) is not None and (stale != "replies" or p.src == pair[0]))
        return (sender, receiver) not in busy

    def within_bounds(self, world: tuple[int, ...]) -> bool:
        net_id = world[self.n]
        ok = self._bounded.get(net_id)
        if ok is None:
            ok = self._bounded[net_id] = fullest_channel(self.net_table.values[net_id]) <= self.bounds.max_in_flight
        return ok

    def accepts_end(self, world: tuple[int, ...]) -> bool:
        """Always: every member's retransmit task stays armed, so a world without successors is
        one where every enabled action changes nothing (quiescence), never a deadlock. Quiescence
        with a message undelivered or unacknowledged is what the liveness properties report."""
        return True

    def is_fault(self, action: Hashable) -> bool:
        if isinstance(action, FireTimer):
            return not self.adapter.timer_is_progress(action.timer)
        return isinstance(action, FAULTS)

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"action": type(action).__name__, **to_json(action._asdict())}  # type: ignore[attr-defined]

    def format_action(self, action: Hashable) -> str:
        return self.adapter.format_action(action, self.member_name)

    # -- optional capabilities of checks.explore.system (speed and memory) ----------------------------
    @property
    def state_width(self) -> int:
        """``PackedStates``: a world is n node ids, a network, an environment and a history id."""
        return self.n + 3

    def property_key(self, world: tuple[int, ...]) -> tuple[int, ...]:
        """``PropertyKey``: every property of ``models/properties.py`` reads only the nodes and
        the history."""
        return world[:self.n] + (world[self.n + 2],)

    def expand_batch(self, worlds: Sequence[tuple[int, ...]]
                     ) -> tuple[list[tuple[int, ...]], list[int], list[bool]]:
        """``BatchExpansion``: ``successors`` of many worlds, by ``models/batch.py``."""
        if self._batch is None:
            self._batch = BatchExpander(self)
        return self._batch.expand(worlds)

    def enable_partial_order(self) -> None:
        """Make the properties stable (``models/reduction.py`` rule 4) so that ``expand_persistent``
        may be used; call before exploring (history memo entries made before are dropped)."""
        if self._clusters is None:
            self._clusters = ConnectionClusters(self)
            self.sticky = StickyProperties(self)
            self._batch = None

    @property
    def reducing(self) -> bool:
        return self._clusters is not None

    def expand_persistent(self, worlds: Sequence[tuple[int, ...]]
                          ) -> tuple[list[tuple[int, ...]], list[int], list[bool], list[list[Any]]]:
        """``PersistentSets``: ``expand_batch`` with each state's persistent sets, by connections
        (``models/reduction.py``)."""
        if self._clusters is None:
            raise RuntimeError("expand_persistent before enable_partial_order")
        if self._batch is None:
            self._batch = BatchExpander(self)
        places: list[int] = []
        afters, counts, progress = self._batch.expand(worlds, places)
        return afters, counts, progress, self._clusters.masks(worlds, counts, places, progress)

    def budget_usage(self, world: tuple[int, ...]) -> dict[str, tuple[int, int]]:
        """``BudgetUsage``: what ``world`` has used of the model's sends, fault budgets, view
        scripts and ``max_in_flight`` (its fullest channel)."""
        n, bounds = self.n, self.bounds
        env: Env = self.env_table.values[world[n + 1]]
        history: History = self.hist_table.values[world[n + 2]]
        return {"sends": (sum(c.sent for c in history.channels), sum(bounds.sends)),
                "loss": (bounds.loss - env.loss, bounds.loss),
                "duplicate": (bounds.duplicate - env.duplicate, bounds.duplicate),
                "receiver_removals": (bounds.receiver_removals - env.removals, bounds.receiver_removals),
                "views": (sum(env.view_index), sum(map(len, bounds.views))),
                "fullest_channel": (fullest_channel(self.net_table.values[world[n]]), bounds.max_in_flight)}

    def view(self, world: tuple[int, ...]) -> WorldView:
        n = self.n
        return WorldView(tuple(self.node_table.values[i] for i in world[:n]), self.net_table.values[world[n]],
                         self.env_table.values[world[n + 1]], self.hist_table.values[world[n + 2]])

    def adopt(self, view: WorldView) -> tuple[int, ...]:
        """The state of this world that ``view`` (decoded from a world of the same model, e.g. an
        unreduced one) stands for: its values interned here, its timestamps renumbered if this
        world reduces them (rule 5), so the result is the state this world reaches by the same
        actions."""
        nodes = tuple(self.node_table(node) for node in view.nodes)
        net_id = self.net_table(view.network)
        if self.reduce_timestamps:
            nodes, net_id = self.ts_ranks.renumber(nodes, net_id)
        if self.ranks_conn_ids and self.conn_ranks is not None:
            nodes, net_id = self.conn_ranks.rank(nodes, net_id)
        return nodes + (net_id, self.env_table(view.env), self.hist_table(view.history))

    member_names: tuple[str, ...] = ()

    def member_name(self, member: int) -> str:
        return self.member_names[member] if member < len(self.member_names) else str(member)

    # -- composition --------------------------------------------------------------------------
    def _after(self, world: tuple[int, ...], member: int, action: WorldAction, stimulus: Hashable,
               consumed: Packet | tuple[Packet, ...] | None, env: Env) -> Iterator[tuple[WorldAction, tuple[int, ...]]]:
        """The world after ``member`` handles ``stimulus``; nothing if the step changes nothing."""
        n = self.n
        node_id = world[member]
        key = (node_id, stimulus)
        result = self._node_memo.get(key)
        if result is None:
            result = self._node_memo[key] = self.handle_stimulus(member, node_id, stimulus)
        new_node, packets, observed, drops_timestamp = result
        if new_node == node_id and not packets and consumed is None and self._idle_timer(stimulus, observed):
            if self.env_table(env) == world[n + 1]:
                return  # a timer that changed nothing: its history update is the identity
        net_id = world[n]
        if consumed is not None or packets:
            net_id = self._net_after(net_id, consumed, packets)
        nodes = world[:member] + (new_node,) + world[member + 1:n]
        if drops_timestamp and self.reduce_timestamps:
            nodes, net_id = self.ts_ranks.renumber(nodes, net_id)
        hist_id = world[n + 2]
        if observed or new_node != node_id:
            hist_id = self._history_after(hist_id, member, node_id, nodes, observed, new_node != node_id)
        ranks = self.conn_ranks
        if self.ranks_conn_ids and ranks is not None and (
                ranks.moved(node_id, new_node) or self._carries_conn_id(consumed)):
            nodes, net_id = ranks.rank(nodes, net_id)  # rule 5b, after the step properties read the step
        after = nodes + (net_id, self.env_table(env), hist_id)
        if after != world:
            yield action, after

    def _carries_conn_id(self, consumed: Packet | tuple[Packet, ...] | None) -> bool:
        """Does a consumed packet (or one of a batch) carry a conn_id (rule 5b)?"""
        if consumed is None:
            return False
        gone = (consumed,) if type(consumed) is Packet else consumed
        return any(self.adapter.packet_conn_id(p.msg) for p in gone)  # type: ignore[union-attr]

    def _idle_timer(self, stimulus: Hashable, observed: tuple[Any, ...]) -> bool:
        """Was the only observation of a handler call that changed nothing the firing of a timer
        that the history does not record (``ProtocolAdapter.history_timers``)? Then ``observe``
        would return the history unchanged (``acks_monotone`` of a node and itself holds)."""
        return (len(observed) == 1 and observed[0][0] == "stimulus" and stimulus[0] == "timer"  # type: ignore[index]
                and stimulus[1].kind not in self.adapter.history_timers)  # type: ignore[index]

    def _lost(self, world: tuple[int, ...], packet: Packet, env: Env) -> tuple[int, ...]:
        """The world after ``packet`` is lost (within the loss budget ``env`` still has)."""
        n = self.n
        nodes, net_id = world[:n], self._net_after(world[n], packet, ())
        if self.reduce_timestamps and self.adapter.packet_timestamp(packet.msg):
            nodes, net_id = self.ts_ranks.renumber(nodes, net_id)
        if self.ranks_conn_ids and self.conn_ranks is not None and self.adapter.packet_conn_id(packet.msg):
            nodes, net_id = self.conn_ranks.rank(nodes, net_id)
        return nodes + (net_id, self.env_table(env._replace(loss=env.loss - 1)), world[n + 2])

    def handle_stimulus(self, member: int, node_id: int, stimulus: Hashable
                        ) -> tuple[int, tuple[Packet, ...], tuple[Any, ...], bool]:
        """Run the handler: (new node id, packets sent, observations, may a timestamp in use have
        disappeared or a new one been issued, so that rule 5's renumbering must look)."""
        if member in self.bounds.dead:
            return node_id, (), (), False  # rule 7
        node = self.node_table.values[node_id]
        new_node, effects = self.adapter.handle(self.cfg, node, stimulus)
        packets, observed = [], []
        for effect in effects:
            if self.adapter.is_send(effect):
                packets.append(Packet(member, effect.dst, type(effect.msg).__name__, effect.msg))
            else:
                observed.append((type(effect).__name__, effect))
        if isinstance(stimulus, tuple) and stimulus[0] in ("send", "timer"):
            observed.append(("stimulus", stimulus))
        observed.extend(self.adapter.step_observations(node, new_node, stimulus, effects))
        new_id = self.node_table(new_node)
        drops = (isinstance(stimulus, Packet) and self.adapter.packet_timestamp(stimulus.msg) != 0) or (
            self.ts_ranks.of_node(node_id) != self.ts_ranks.of_node(new_id))
        return new_id, tuple(packets), tuple(observed), drops

    def _net_after(self, net_id: int, consumed: Packet | tuple[Packet, ...] | None, added: tuple[Packet, ...]) -> int:
        key = (net_id, consumed, added)
        found = self._net_memo.get(key)
        if found is None:
            packets = set(self.net_table.values[net_id])
            if type(consumed) is Packet:
                packets.discard(consumed)
            elif consumed is not None:
                packets.difference_update(consumed)
            packets.update(added)
            found = self._net_memo[key] = self.net_table(tuple(sorted(packets)))
        return found

    def _history_after(self, hist_id: int, member: int, old_node: int, nodes: tuple[int, ...],
                       observed: tuple[Any, ...], moved: bool = True) -> int:
        key = (hist_id, member, old_node, nodes, observed)
        found = self._hist_memo.get(key)
        if found is None:
            history = self.hist_table.values[hist_id]
            decoded = tuple(self.node_table.values[i] for i in nodes)
            old = self.node_table.values[old_node]
            updated = self.adapter.observe(history, member, old, decoded, observed, self.n, self.cfg)
            found = self._hist_memo[key] = self.hist_table(updated)
        if self.sticky is not None and moved:  # models/reduction.py rule 4 (an unmoved node breaks nothing new)
            bits = self.sticky.broken(member, nodes)
            if bits:
                found = self.sticky.add(found, bits)
        return found

    def emitted(self, world: tuple[int, ...], action: WorldAction) -> tuple[Packet, ...]:
        """The packets the handler of ``action`` put on the wire (before any de-duplication)."""
        return self.step_effects(world, action)[1]

    def step_effects(self, world: tuple[int, ...], action: WorldAction
                     ) -> tuple[int | None, tuple[Packet, ...], tuple[tuple[int, int], ...]]:
        """(member that acted, packets it sent in order, (src, payload) it delivered in order);
        a loss involves no member."""
        stimulus: Hashable
        if isinstance(action, AppSend):
            member = action.src
            sent = self.hist_table.values[world[self.n + 2]].channels[action.src * self.n + action.dst].sent
            stimulus = self.send_stimulus(action.src, action.dst, sent + 1)
        elif isinstance(action, (DeliverPacket, DuplicatePacket)):
            member, stimulus = action.packet.dst, action.packet
        elif isinstance(action, DeliverBatch):
            member, stimulus = action.packets[0].dst, self.batch_stimulus(action)
        elif isinstance(action, FireTimer):
            member, stimulus = action.member, ("timer", action.timer)
        elif isinstance(action, InstallView):
            member, stimulus = action.member, ("view", frozenset(action.members))
        elif isinstance(action, RemoveReceiver):
            member, stimulus = action.member, ("remove", action.peer)
        else:
            return None, (), ()
        result = self._node_memo.get((world[member], stimulus))  # the handler's memo (pure, same result)
        if result is None:
            result = self._node_memo[world[member], stimulus] = self.handle_stimulus(member, world[member], stimulus)
        _, packets, observed, _ = result
        delivered = tuple((e.src, e.payload) for kind, e in observed if kind == "Deliver")
        return member, packets, delivered

    def send_stimulus(self, src: int, dst: int, payload: int) -> tuple[Any, ...]:
        """The handler input of ``src``'s application sending its ``payload``-th message to ``dst``:
        ``("send", dst, payload)``, followed by the flags the model gives it: ``"oob"`` ([oob]),
        ``"dont_loopback"`` ([dont_loopback], a send to itself)."""
        key = (src, dst, payload)
        if key in self.bounds.oob:
            return ("send", dst, payload, "oob", "dont_loopback") if key in self.bounds.dont_loopback else \
                ("send", dst, payload, "oob")
        if key in self.bounds.dont_loopback:
            return ("send", dst, payload, "dont_loopback")
        return ("send", dst, payload)

    def app_payload(self, world: tuple[int, ...], action: WorldAction) -> int:
        """The payload number an ``AppSend`` sends (its channel's next), else 0."""
        if type(action) is not AppSend:
            return 0
        return int(self.hist_table.values[world[self.n + 2]].channels[action.src * self.n + action.dst].sent + 1)

    def canonical_action(self, world: tuple[int, ...], action: WorldAction) -> WorldAction:
        """``action`` with the timestamps it carries replaced by their rank among the timestamps
        in use in ``world`` (rule 5), and its conn_id by its rank (rule 5b, where this world ranks
        them): how a world that renumbers would name the same action (``world`` may be unreduced)."""
        renamed = self.ts_ranks.renamed_action(world, action)
        if self.conn_ranks is not None:
            renamed = self.conn_ranks.renamed_action(world, renamed)
        return renamed  # type: ignore[return-value]  # the same kind of action as ``action``

    # -- one action at a time (random walks: checks/fuzz/run.py) --------------------------------
    # Both agree exactly with ``successors``, computing only what is asked for:
    # ``[a for a in candidates(w, K) if successor(w, a) is not None]`` is
    # ``[a for a, _ in successors(w) if type(a) is K]``, and ``successor(w, a)`` is the state
    # ``successors(w)`` pairs with ``a``.
    def candidates(self, world: tuple[int, ...], kind: type) -> list[WorldAction]:
        """The actions of type ``kind`` ``successors`` considers in ``world``, in its order
        (including those that would change nothing); a fresh list."""
        n, memo = self.n, self._candidate_memo
        if kind is FireTimer:
            out: list[WorldAction] = []
            for member in range(n):
                timers = memo.get((member, world[member]))  # (FireTimer, connection that must be quiet)
                if timers is None:
                    node = self.node_table.values[world[member]]
                    timers = memo[member, world[member]] = tuple(
                        (FireTimer(member, t), self.adapter.quiet_connection(member, t))
                        for t in self.adapter.enabled_timers(self.cfg, node))
                out += [a for a, pair in timers if pair is None or self.quiet(world[n], *pair)]
            return out
        if kind is RemoveReceiver:
            if not self.env_table.values[world[n + 1]].removals:
                return []
            return [RemoveReceiver(m, peer) for m in range(n)
                    for peer in self.adapter.receivers(self.node_table.values[world[m]])
                    if self.quiet(world[n], peer, m)]
        key = (kind, world[n + 2] if kind is AppSend else world[n] if kind in (DeliverPacket, DeliverBatch)
               else world[n:n + 2])
        found = memo.get(key)
        if found is None:
            found = memo[key] = tuple(self._structural_candidates(world, kind))
        return list(found)

    def _structural_candidates(self, world: tuple[int, ...], kind: type) -> list[WorldAction]:
        """``candidates`` of the kinds that depend on the network, environment or history only."""
        n = self.n
        net: tuple[Packet, ...] = self.net_table.values[world[n]]
        env: Env = self.env_table.values[world[n + 1]]
        if kind is DeliverPacket:
            return [DeliverPacket(p) for p in net]
        if kind is DeliverBatch:
            return list(self.batches(world[n])) if self.bounds.max_batch else []
        if kind is DuplicatePacket:
            return [DuplicatePacket(p) for p in net] if env.duplicate else []
        if kind is LosePacket:
            return [LosePacket(p) for p in net] if env.loss else []
        if kind is AppSend:
            channels = self.hist_table.values[world[n + 2]].channels
            return [AppSend(s, d) for s, d in self.pairs if channels[s * n + d].sent < self.bounds.sends[s * n + d]]
        if kind is InstallView:
            return [InstallView(m, tuple(sorted(script[i]))) for m, script in enumerate(self.bounds.views)
                    if (i := env.view_index[m]) < len(script)]
        return []

    def successor(self, world: tuple[int, ...], action: WorldAction) -> tuple[int, ...] | None:
        """The state after ``action`` (one of ``candidates``), None if it changes nothing."""
        n = self.n
        env: Env = self.env_table.values[world[n + 1]]
        steps: Iterator[tuple[WorldAction, tuple[int, ...]]]
        if isinstance(action, DeliverPacket):
            steps = self._after(world, action.packet.dst, action, action.packet, action.packet, env)
        elif isinstance(action, DuplicatePacket):
            steps = self._after(world, action.packet.dst, action, action.packet, None,
                                env._replace(duplicate=env.duplicate - 1))
        elif isinstance(action, DeliverBatch):
            steps = self._after(world, action.packets[0].dst, action, self.batch_stimulus(action), action.packets, env)
        elif isinstance(action, LosePacket):
            return self._lost(world, action.packet, env)
        elif isinstance(action, AppSend):
            sent = self.hist_table.values[world[n + 2]].channels[action.src * n + action.dst].sent
            steps = self._after(world, action.src, action, self.send_stimulus(action.src, action.dst, sent + 1),
                                None, env)
        elif isinstance(action, FireTimer):
            steps = self._after(world, action.member, action, ("timer", action.timer), None, env)
        elif isinstance(action, InstallView):
            m = action.member
            view = self.bounds.views[m][env.view_index[m]]
            steps = self._after(world, m, action, ("view", view), None, _next_view(env, m))
        else:
            assert isinstance(action, RemoveReceiver), action
            steps = self._after(world, action.member, action, ("remove", action.peer), None,
                                env._replace(removals=env.removals - 1))
        return next((after for _, after in steps), None)

    def stats(self) -> dict[str, int]:
        return {"node_states": len(self.node_table.values), "networks": len(self.net_table.values),
                "histories": len(self.hist_table.values), "handler_calls_memoised": len(self._node_memo)}


def fullest_channel(packets: Sequence[Packet]) -> int:
    """The most packets in flight on one directed channel (rule 3's ``max_in_flight``)."""
    counts: dict[tuple[int, int], int] = {}
    for packet in packets:
        counts[packet.src, packet.dst] = counts.get((packet.src, packet.dst), 0) + 1
    return max(counts.values(), default=0)


def _next_view(env: Env, member: int) -> Env:
    """``env`` with ``member`` one view further in its script."""
    index = env.view_index
    return env._replace(view_index=index[:member] + (index[member] + 1,) + index[member + 1:])


def to_json(value: Any) -> Any:
    """A JSON-able form of an action's fields (NamedTuples as tables, frozensets sorted)."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):
        return {"type": type(value).__name__, **to_json(value._asdict())}
    if isinstance(value, (tuple, list, frozenset)):
        return [to_json(v) for v in (sorted(value) if isinstance(value, frozenset) else value)]
    return value


__all__ = ["Bounds", "DeliverBatch", "Env", "History", "Packet", "World", "WorldView", "reliable_fifo"]
