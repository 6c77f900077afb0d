"""Batched expansion of a ``World``: the transitions of ``World.successors``, for the checker's fast path.

Rules
-----
1. Same relation, same order: for every world, ``expand`` yields exactly the states
   ``World.successors`` yields, in the same order, each with "is this action a fault" (the
   differential test ``tests/checks/test_batch_world.py`` pins this on the shipped models).
2. Same values: the expander shares the world's interners, so a state built here is the same tuple
   of ids as the one ``World.successors`` builds (counterexamples are rebuilt with the latter).
3. No actions are built. Everything ``World.successors`` recomputes per transition is computed
   once per id here: per network its packets, per environment its fault and view moves, per node
   its timers, per history its application sends; handler results, network updates, history
   updates and rule-5 renumbering are memoised on small int keys. The three memos that grow with
   the search (handler results, network and history updates) are emptied when one reaches
   ``MEMO_LIMIT`` entries (about 100 bytes each): a result is a function of its key, so emptying
   costs recomputation only, and a long search's memory is the states', not the memos'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from models.interning import Interner
from models.ranks import streams_in_use

if TYPE_CHECKING:
    from models.world import World

MEMO_LIMIT = 2_000_000  # entries per growing memo (rule 3): about 0.2 GB each


class _Net(NamedTuple):
    packets: tuple[tuple[int, int, bool, int], ...]  # (stimulus id of the packet, its destination, carries a
    # timestamp, its source)
    within_bounds: bool


class _Env(NamedTuple):
    duplicate: int  # env id after a duplication, -1 if the budget is spent
    loss: int  # env id after a loss, -1 if the budget is spent
    views: tuple[tuple[int, int, int], ...]  # (member, stimulus id, env id after)
    removal: int  # env id after a receiver removal, -1 if the budget is spent


# (new node id, id of the packets sent, id of the observations, renumber timestamps?, rank conn_ids?,
# the members whose new nodes the history update reads: None when the history does not change)
_Handled = tuple[int, int, int, bool, bool, tuple[int, ...] | None]


class BatchExpander:
    """The successors of many worlds at once, as plain state tuples."""

    def __init__(self, world: World) -> None:
        self.world, self.n = world, world.n
        self.renumbers = world.reduce_timestamps
        self.conn_ranks = world.conn_ranks if world.ranks_conn_ids else None  # rule 5b
        self.carries_conn: dict[int, bool] = {}  # stimulus -> is it a packet that carries a conn_id (rule 5b)
        self.stimuli = Interner()
        self.sent = Interner(())  # tuples of packets; 0 = nothing sent
        self.observations = Interner(())  # 0 = nothing observed
        self.handled: dict[tuple[int, int], _Handled] = {}
        self.net_after: dict[tuple[int, int, int], int] = {}
        self.hist_after: dict[tuple[int, ...], int] = {}
        self.reads: dict[tuple[int, int], tuple[int, ...]] = {}  # (member, observations) -> nodes read
        self.nets: dict[int, _Net] = {}
        self.envs: dict[int, _Env] = {}
        self.timers: dict[int, tuple[tuple[int, int, bool], ...]] = {}  # node -> (stimulus, quiet pair, progress)
        self.receivers: dict[int, tuple[tuple[int, int], ...]] = {}  # node -> (peer, stimulus)
        self.sends: dict[int, tuple[tuple[int, int], ...]] = {}  # history -> (member, stimulus)
        self.node_sig: dict[int, int] = {}  # node -> id of its timestamps
        self.net_sig: dict[int, int] = {}  # network -> id of the timestamps in flight
        self.node_signatures, self.net_signatures = Interner(), Interner()
        self.ranking: dict[tuple[int, ...], int] = {}  # signatures -> -1 (canonical) or ranks id
        self.in_use = Interner()  # per stream, the timestamps in use, sorted -> ranks id
        self.ranks: list[tuple[dict[int, int], ...]] = []  # ranks id -> per stream, timestamp -> rank
        self.renumbered_node: dict[tuple[int, int], int] = {}
        self.renumbered_net: dict[tuple[int, int], int] = {}

    def expand(self, states: Sequence[tuple[int, ...]], where: list[int] | None = None
               ) -> tuple[list[tuple[int, ...]], list[int], list[bool]]:
        """The successors of every state, concatenated; per state their count (-1: outside the
        bounds, not expanded); per successor whether its action is progress (not a fault). With
        ``where``, per successor its action's *place* is appended to it: ``src * n + dst`` for an
        action of one directed pair (a send, a packet's delivery, duplicate or loss, a timer or
        receiver removal with a peer), ``-1 - member`` for one of a whole member (a timer without
        peer), ``-1 - n - member`` for a view: what ``models/reduction.py`` needs."""
        afters: list[tuple[int, ...]] = []
        counts: list[int] = []
        progress: list[bool] = []
        n = self.n
        nets = self.nets
        for world in states:
            net = nets.get(world[n]) or self._net(world[n])
            if not net.within_bounds:
                counts.append(-1)
                continue
            before = len(afters)
            self._expand_one(world, net, afters, progress, where)
            counts.append(len(afters) - before)
        return afters, counts, progress

    def _expand_one(self, world: tuple[int, ...], net: _Net, afters: list[tuple[int, ...]],
                    progress: list[bool], where: list[int] | None) -> None:
        n, step = self.n, self._step
        net_id, env_id, hist_id = world[n], world[n + 1], world[n + 2]
        env = self.envs.get(env_id) or self._env(env_id)
        sends = self.sends.get(hist_id)
        for member, stimulus in (self._sends(hist_id) if sends is None else sends):
            after = step(world, member, stimulus, -1, env_id)
            if after is not None:
                afters.append(after)
                progress.append(False)
                if where is not None:
                    where.append(member * n + self.stimuli.values[stimulus][1])
        for packet, dst, stamped, src in net.packets:
            after = step(world, dst, packet, packet, env_id)
            if after is not None:
                afters.append(after)
                progress.append(True)
                if where is not None:
                    where.append(src * n + dst)
            if env.duplicate >= 0:
                after = step(world, dst, packet, -1, env.duplicate)
                if after is not None:
                    afters.append(after)
                    progress.append(False)
                    if where is not None:
                        where.append(src * n + dst)
            if env.loss >= 0:
                afters.append(self._lose(world, packet, stamped, env.loss))
                progress.append(False)
                if where is not None:
                    where.append(src * n + dst)
        quiet = self.world.quiet
        for member in range(n):
            timers = self.timers.get(world[member])
            for stimulus, removed, moves in (self._timers(world[member]) if timers is None else timers):
                if removed >= 0 and not quiet(net_id, *divmod(removed, n)):
                    continue
                after = step(world, member, stimulus, -1, env_id)
                if after is not None:
                    afters.append(after)
                    progress.append(moves)
                    if where is not None:
                        where.append(self._timer_place(member, stimulus))
        self._expand_environment(world, env, afters, progress, where)
        if self.world.bounds.max_batch:  # models/world.py rule 6b, by the world's own step (rare, small)
            for batch in self.world.batches(net_id):
                after = self.world.successor(world, batch)
                if after is not None:
                    afters.append(after)
                    progress.append(True)
                    if where is not None:
                        where.append(batch.packets[0].src * n + batch.packets[0].dst)

    def _expand_environment(self, world: tuple[int, ...], env: _Env, afters: list[tuple[int, ...]],
                            progress: list[bool], where: list[int] | None) -> None:
        """``_expand_one``'s view installations and receiver removals (faults, never progress)."""
        n, step, net_id, quiet = self.n, self._step, world[self.n], self.world.quiet
        for member, stimulus, moved in env.views:
            after = step(world, member, stimulus, -1, moved)
            if after is not None:
                afters.append(after)
                progress.append(False)
                if where is not None:
                    where.append(-1 - n - member)  # a view: its own place (models/reduction.py rule 1)
        if env.removal >= 0:
            for member in range(n):
                receivers = self.receivers.get(world[member])
                for peer, stimulus in (self._receivers(world[member]) if receivers is None else receivers):
                    if quiet(net_id, peer, member):
                        after = step(world, member, stimulus, -1, env.removal)
                        if after is not None:
                            afters.append(after)
                            progress.append(False)
                            if where is not None:
                                one = self.world.adapter.removal_on_one_connection()
                                where.append(member * n + peer if one else -1 - member)

    def _timer_place(self, member: int, stimulus: int) -> int:
        """Where a timer acts (``expand``'s ``where``)."""
        timer = self.stimuli.values[stimulus][1]
        if self.world.adapter.timer_on_one_connection(self.world.cfg, timer):
            return int(member * self.n + timer.peer)
        return -1 - member

    def _step(self, world: tuple[int, ...], member: int, stimulus: int, consumed: int,
              env_id: int) -> tuple[int, ...] | None:
        """The world after ``member`` handles ``stimulus`` (``World._after``); None if unchanged.
        The new world is written into one list and made a tuple once (rule 3)."""
        n = self.n
        node_id = world[member]
        handled = self.handled.get((node_id, stimulus))
        if handled is None:
            handled = self._handle(member, node_id, stimulus)
        new_node, sent, observed, drops, conns, reads = handled
        after = list(world)
        after[member] = new_node
        net_id = world[n]
        if consumed >= 0 or sent:
            key = (net_id, consumed, sent)
            found = self.net_after.get(key)
            net_id = self._net_after(key) if found is None else found
        if drops:
            after[:n], net_id = self._renumber(tuple(after[:n]), net_id)
        if reads is not None:
            if len(reads) == 1:
                hkey: tuple[int, ...] = (after[n + 2], member, node_id, observed, after[reads[0]])
            else:
                hkey = (after[n + 2], member, node_id, observed, *[after[i] for i in reads])
            found = self.hist_after.get(hkey)
            after[n + 2] = self._hist_after(hkey, reads) if found is None else found
            sticky = self.world.sticky
            if sticky is not None and new_node != node_id:  # models/reduction.py rule 4 (as World._after)
                bits = sticky.broken(member, tuple(after[:n]))
                if bits:
                    after[n + 2] = sticky.add(after[n + 2], bits)
        if conns:
            after[:n], net_id = self.conn_ranks.rank(tuple(after[:n]), net_id)  # type: ignore[union-attr]
        after[n] = net_id
        after[n + 1] = env_id
        state = tuple(after)
        return None if state == world else state

    def _lose(self, world: tuple[int, ...], packet: int, stamped: bool, env_id: int) -> tuple[int, ...]:
        n = self.n
        key = (world[n], packet, 0)
        found = self.net_after.get(key)
        lost = self._net_after(key) if found is None else found
        after = list(world)
        if stamped and self.renumbers:
            after[:n], lost = self._renumber(world[:n], lost)
        if self.conn_ranks is not None and self._carries_conn(packet):
            after[:n], lost = self.conn_ranks.rank(tuple(after[:n]), lost)
        after[n] = lost
        after[n + 1] = env_id
        return tuple(after)

    # -- memoised pieces ---------------------------------------------------------------------------
    def _handle(self, member: int, node_id: int, stimulus: int) -> _Handled:
        value = self.stimuli.values[stimulus]
        new_node, packets, observed, drops = self.world.handle_stimulus(member, node_id, value)
        ranks = self.conn_ranks  # rule 5b: a node's conn_ids changed, or a packet that carries one was handled
        conns = ranks is not None and (ranks.moved(node_id, new_node) or self._carries_conn(stimulus))
        seen = self.observations(observed)
        reads = self._reads(member, seen) if seen or new_node != node_id else None  # the history stays
        if len(self.handled) >= MEMO_LIMIT:
            self.handled.clear()
        found = self.handled[node_id, stimulus] = (new_node, self.sent(packets), seen, drops and self.renumbers,
                                                   conns, reads)
        return found

    def _carries_conn(self, stimulus: int) -> bool:
        """Is the stimulus a packet that carries a conn_id (rule 5b)? Memoised per stimulus."""
        found = self.carries_conn.get(stimulus)
        if found is None:
            value = self.stimuli.values[stimulus]
            found = self.carries_conn[stimulus] = hasattr(value, "msg") and (
                self.world.adapter.packet_conn_id(value.msg) is not None)
        return found

    def _net_after(self, key: tuple[int, int, int]) -> int:
        net_id, consumed, sent = key
        packets = set(self.world.net_table.values[net_id])
        if consumed >= 0:
            packets.discard(self.stimuli.values[consumed])
        packets.update(self.sent.values[sent])
        if len(self.net_after) >= MEMO_LIMIT:
            self.net_after.clear()
        found = self.net_after[key] = self.world.net_table(tuple(sorted(packets)))
        return found

    def _reads(self, member: int, observed: int) -> tuple[int, ...]:
        """Which members' new nodes the history update reads (all, if the adapter cannot say)."""
        found = self.reads.get((member, observed))
        if found is None:
            reads_of = getattr(self.world.adapter, "observe_reads", None)
            found = tuple(range(self.n)) if reads_of is None else tuple(
                reads_of(member, self.observations.values[observed]))
            self.reads[member, observed] = found
        return found

    def _hist_after(self, key: tuple[int, ...], reads: tuple[int, ...]) -> int:
        world, n = self.world, self.n
        hist_id, member, node_id, observed = key[:4]
        read = dict(zip(reads, key[4:]))
        decoded = tuple(world.node_table.values[read[i]] if i in read else None for i in range(n))
        updated = world.adapter.observe(world.hist_table.values[hist_id], member, world.node_table.values[node_id],
                                        decoded, self.observations.values[observed], n, world.cfg)
        if len(self.hist_after) >= MEMO_LIMIT:
            self.hist_after.clear()
        found = self.hist_after[key] = world.hist_table(updated)
        return found

    def _net(self, net_id: int) -> _Net:
        world = self.world
        packets = tuple((self.stimuli(p), p.dst, bool(world.adapter.packet_timestamp(p.msg)), p.src)
                        for p in world.net_table.values[net_id])
        found = self.nets[net_id] = _Net(packets, world.within_bounds((0,) * self.n + (net_id,)))
        return found

    def _env(self, env_id: int) -> _Env:
        world = self.world
        intern, env = world.env_table, world.env_table.values[env_id]
        duplicate = intern(env._replace(duplicate=env.duplicate - 1)) if env.duplicate else -1
        loss = intern(env._replace(loss=env.loss - 1)) if env.loss else -1
        views = []
        for member in range(self.n):
            script, index = world.bounds.views[member], env.view_index[member]
            if index < len(script):
                moved = env._replace(view_index=env.view_index[:member] + (index + 1,) + env.view_index[member + 1:])
                views.append((member, self.stimuli(("view", script[index])), intern(moved)))
        removal = intern(env._replace(removals=env.removals - 1)) if env.removals else -1
        found = self.envs[env_id] = _Env(duplicate, loss, tuple(views), removal)
        return found

    def _timers(self, node_id: int) -> tuple[tuple[int, int, bool], ...]:
        world = self.world
        adapter, node = world.adapter, world.node_table.values[node_id]
        out = []
        for timer in adapter.enabled_timers(world.cfg, node):
            pair = adapter.quiet_connection(node.me, timer)  # as sender * n + receiver
            out.append((self.stimuli(("timer", timer)), -1 if pair is None else pair[0] * self.n + pair[1],
                        bool(adapter.timer_is_progress(timer))))
        found = self.timers[node_id] = tuple(out)
        return found

    def _receivers(self, node_id: int) -> tuple[tuple[int, int], ...]:
        world = self.world
        peers = world.adapter.receivers(world.node_table.values[node_id])
        found = self.receivers[node_id] = tuple((peer, self.stimuli(("remove", peer))) for peer in peers)
        return found

    def _sends(self, hist_id: int) -> tuple[tuple[int, int], ...]:
        world, n = self.world, self.n
        channels = world.hist_table.values[hist_id].channels
        out = []
        for src, dst in world.pairs:
            sent = channels[src * n + dst].sent
            if sent < world.bounds.sends[src * n + dst]:
                out.append((src, self.stimuli(world.send_stimulus(src, dst, sent + 1))))
        found = self.sends[hist_id] = tuple(out)
        return found

    # -- rule 5: timestamp renumbering ---------------------------------------------------------
    def _renumber(self, nodes: tuple[int, ...], net_id: int) -> tuple[tuple[int, ...], int]:
        """``TimestampRanks.renumber`` (models/ranks.py), memoised on what it reads: the timestamps of each node
        and those in flight (few distinct values), then per node and per network."""
        sig = self.net_sig.get(net_id)
        if sig is None:
            sig = self.net_sig[net_id] = self.net_signatures(self.world.ts_ranks.in_flight(net_id))
        node_sig = self.node_sig
        key = [sig]
        for node in nodes:
            found = node_sig.get(node)
            if found is None:
                found = node_sig[node] = self.node_signatures(self.world.ts_ranks.of_node(node))
            key.append(found)
        ranks = self.ranking.get(tuple(key))
        if ranks is None:
            ranks = self._ranking(tuple(key))
        if ranks < 0:
            return nodes, net_id
        renumbered = []
        for node in nodes:
            found = self.renumbered_node.get((node, ranks))
            if found is None:
                found = self.renumbered_node[node, ranks] = self.world.node_table(self.world.adapter.renumber_node(
                    self.world.node_table.values[node], self.ranks[ranks]))
            renumbered.append(found)
        net = self.renumbered_net.get((net_id, ranks))
        if net is None:
            rank = self.ranks[ranks]
            adapter = self.world.adapter
            n = self.n
            packets = tuple(sorted(p._replace(msg=adapter.renumber_packet(p.msg, rank[p.src * n + p.dst]))
                                   for p in self.world.net_table.values[net_id]))
            net = self.renumbered_net[net_id, ranks] = self.world.net_table(packets)
        return tuple(renumbered), net

    def _ranking(self, key: tuple[int, ...]) -> int:
        in_flight = self.net_signatures.values[key[0]]
        infos = [self.node_signatures.values[s] for s in key[1:]]
        in_use = streams_in_use(self.n, infos, in_flight)
        if in_use is None:
            self.ranking[key] = -1
            return -1
        found = self.ranking[key] = self.in_use(in_use)
        if found == len(self.ranks):
            self.ranks.append(tuple({value: rank for rank, value in enumerate(values, 1)} for values in in_use))
        return found
