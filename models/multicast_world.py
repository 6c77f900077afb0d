"""The multicast world: a multicast protocol (``spec/nakack2.py`` through its adapter) composed
with a network, per-member view scripts, joins and faults, as a
``checks.explore.system.TransitionSystem``. This module owns the world's state, its actions and
their semantics; ``models/multicast_factory.py`` reads its model-file sections and
``models/protocols/nakack2.py`` and ``models/protocols/nakack4.py`` are the adapters (handlers,
properties, rendering).

Rules
-----
1. What it shares with ``models/world.py``: the packet and action types (``Packet``,
   ``DeliverPacket``, ``DuplicatePacket``, ``LosePacket``, ``FireTimer``, ``InstallView``), the
   ``History`` of ``spec/reliable_fifo`` channels, the ``WorldView`` decoding, the ``Interner``
   and network rule 2 (a per-channel *set* of packets: a copy identical to one in flight adds
   nothing) and rule 3 (``max_in_flight`` per directed channel: a state over it is cut). Rule 5
   (timestamps) and rule 6 (receiver removals) do not apply: NAKACK2 has neither.
2. A multicast is the protocol's one ``Send`` per member of the sender's view, its own loopback
   copy included: one packet per destination, each delivered, lost, duplicated, reordered or
   dropped below the protocol on its own. JoinRsp, STABLE votes, STABILITY, XMIT_REQ, XMIT_RSP
   and HIGHEST_SEQNO are packets like any other, so a late or stale STABILITY is in the model.
3. Loopback copies (``src == dst``) are neither lost nor dropped below (they may be duplicated
   and delayed): a decision of this world. The network never carries them; whether JGroups'
   loopback path can lose one to a thread-pool rejection is not modelled, because NAKACK2 could
   never recover it (nobody asks for a gap in the own window) and every model with a below drop
   would then fail for a reason seed 004 does not discuss.
4. ``DropBelow(packet)``: a copy consumed between the transport and NAKACK2 (seed 004's thread-pool
   rejection), with its own budget (``[faults] below_drop``), distinct from network loss.
5. Views are per-member scripts installed in order at any moment (asymmetric, delayed). A join
   is ``AnswerJoin(coordinator, joiner)``: the coordinator's GMS takes the digest
   (``on_join``: STABLE suspended, JoinRsp sent) and installs its next scripted view, which must
   hold the joiner, in the same step (decision of this world: a multicast the coordinator makes
   between taking the digest and installing the view would miss the joiner, a gap JGroups leaves
   to retransmission and FLUSH; the models keep the join atomic at the coordinator). The joiner's
   own script lists the views after the one its JoinRsp installs; none is installed before it.
   Other members install the joining view by their scripts, when they please.
6. Application multicasts: ``AppMcast(src)`` while ``[sends]`` for ``src`` lasts and ``src`` has
   its own window (a joiner before its JoinRsp cannot send). Payload n is the sender's n-th
   multicast; the history counts it sent on every channel ``(src, r)``; with the protocol's
   ``dont_loopback`` setting (``[config]``: every application multicast is DONT_LOOPBACK, as
   NAKACK4's JGRP-2829 models set it), or with its number in the model's ``[dont_loopback]``
   table (NAKACK2: ``A = [2]``, A's second multicast), the handler gets the flag and the channel
   ``(src, src)`` counts it as one its sender must never deliver (``spec/reliable_fifo`` rule 4a).
   With its number in the model's ``[oob]`` table (``A = [1]``: NAKACK2 and NAKACK4) the handler
   gets the OOB flag and every channel ``(src, r)`` counts it OOB: exempt from ``in_order``, not
   from ``no_duplicate`` (``spec/reliable_fifo`` rule 4). ``sends_after_joins``
   (a model-file switch) holds every multicast back until every join is answered. Without it a
   multicast the coordinator makes before a join, whose loopback copy is still in flight when
   it takes the digest, is below the joiner's window yet never sent to it (the digest's hd for
   the coordinator's own window counts only what the loopback delivered): a gap only
   retransmission fills, so with ``xmit_interval = 0`` a permanent one
   (``models/nakack2/join-digest-lags-loopback.toml``). The JGRP-2675 models study the join's
   queue alone and set the switch.
7. Fault-free continuations (liveness): deliveries and the timers the adapter calls progress
   (the retransmit task, STABLE, BECOME_SERVER). Faults: loss, duplication, below drops, views,
   joins, stops and application sends. With ``views_are_progress`` (a model-file switch) the
   scripted views are progress too: the view a failure detector asks for after a crash is
   eventually installed, which is how a sender blocked on a departed member is released (digest
   P8 (b), NAKACK4's JGRP-2853/2854); and so are join answers, since a coordinator's scripted
   view that admits a joiner is installed by the join's answer (else a member that installed
   that view first waits for ever on a coordinator that never does, and STABLE never agrees),
   and so are leaves (the leaver disconnects once GMS answers its LEAVE_REQ with the view
   without it; else it waits for ever on a gap only a member that dropped it could fill).
   Crashes stay faults. ``progress_successors`` lists the fault-free actions alone, without computing
   the faults' next states (``checks/explore/closure.py`` judges liveness on these continuations).
8. Leaves and crashes (``[[stops]]``, each at most once): ``Stop(member, crash)``. A crash may
   happen at any moment; a leave only once the lowest other member of the leaver's view (the
   coordinator of the view without it) installed a view without it (GMS answers a LEAVE_REQ
   with that view, then the leaver disconnects). A stopped member acts no more: no sends,
   timers, views or join answers; a packet delivered to it is discarded (its socket is closed,
   the ``DeliverPacket`` changes no node). Its packets in flight stay and are delivered. The
   others learn of it only through their view scripts: a view without it drops its window
   (``on_view``) and STABLE's rounds go on among the rest (votes naming the old view are
   ignored). Until then a crashed member blocks STABLE (its vote never comes), as in JGroups.
9. Young copies (``McastBounds.track_young``, set when a model checks ``no_premature_xmit_req``,
   retransmission on): an application multicast's copy to another member is *young* until that
   member ends a round (the adapter's ``ends_round``: a run of the retransmit task, of STABLE's
   gossip, or a STABILITY or vote it handles) or it leaves the network. A round's end whose
   handler asks for a copy still young on its way to the asker (an XMIT_REQ) sets the history's
   ``PREMATURE`` bit: JGRP-1539's and JGRP-2678's needless retransmissions. Other requests (the
   answer to a HIGHEST_SEQNO, also from a joiner's queue, asks for the sender's counter at once
   by design, digest 3.11) are not checked. A
   re-multicast copy is never young (only originals are); a copy identical to one in flight
   keeps that one's age (rule 2). A round's end that asks for a seqno its sender's application
   thread took but has not passed down yet (the adapter's ``unsent``: NAKACK4's concurrent senders,
   JGRP-2780) sets the bit too; originals are what the adapter's ``sends_originals`` actions send
   (an application multicast, or NAKACK4's thread passing its message down).

10. Merges (``merges``, a model-file list of members): a listed member installs the *last* view of
   its script as a merge view, ``MergeView(member, view)``: in one step MERGE_DIGEST (each sender of
   the view at the (hd, hr) of its own window, read from the sender's node at that moment: the
   adapter's ``own_digest``), then the view. JGroups' merge leader collects the digests of the
   subgroups' coordinators; reading each sender's own entry is the value those digests hold for
   it once its subgroup delivered its messages, and the earliest the merge could use.
11. Batches (``[faults] max_batch``, default off): ``DeliverBatch``, 2 to N packets of one channel
   and one bundle handed up as one input (``models/multicast_batch.py`` says which and how).

12. Symmetry (``models/multicast_symmetry.py`` says when renaming members is a symmetry: the same
   scripts for the renamed members, and every view's coordinator kept) and packed states (a world is
   ``n`` node ids, a network, an environment and a history id: ``state_width``), as in
   ``models/world.py``. The vocabulary (actions, bounds, environment) is ``models/multicast_types.py``'s.

Left out (issue 14 lists it; not built yet): batch expansion.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from models.interning import InternedWorldStates, Interner
from models.multicast_batch import batch_successors
from models.multicast_batch import stimulus as batch_stimulus
from models.multicast_symmetry import MulticastSymmetry
from models.multicast_types import (
    CRASH,
    DONT_LOOPBACK,
    FAULTS,
    LEAVE,
    OOB,
    PREMATURE,
    AnswerJoin,
    AppMcast,
    DropBelow,
    McastAction,
    McastBounds,
    McastEnv,
    MergeView,
    Stop,
    advance_view,
    observe_channels,
    stopped,
)
from models.world import (
    DeliverBatch,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    History,
    InstallView,
    LosePacket,
    Packet,
    WorldView,
    fullest_channel,
    to_json,
)
from spec.reliable_fifo import Channel

# the vocabulary is ``models/multicast_types.py``'s; importers of this module may name it here
__all__ = ["CRASH", "DONT_LOOPBACK", "FAULTS", "LEAVE", "OOB", "PREMATURE", "AnswerJoin", "AppMcast", "DropBelow",
           "McastAction", "McastBounds", "McastEnv", "MergeView", "MulticastWorld", "Stop", "advance_view",
           "observe_channels", "stopped"]


class MulticastWorld(InternedWorldStates):
    """A multicast protocol composed with the world, as a ``TransitionSystem``."""

    def __init__(self, name: str, adapter: Any, cfg: Any, n: int, bounds: McastBounds,
                 initial_views: Sequence[frozenset[int]]) -> None:
        self.name, self.adapter, self.cfg, self.n, self.bounds = name, adapter, cfg, n, bounds
        self.initial_views = tuple(initial_views)
        self.window_bound = 2  # the window_bounded property's limit (the model file's window_bound)
        self.properties_read_network = False  # some selected property reads the copies in flight
        self.dont_loopback = bool(getattr(cfg, "dont_loopback", False))  # rule 6
        self.properties: list[Any] = []
        self.member_names: tuple[str, ...] = ()
        self.pairs = [(s, d) for s in range(n) for d in range(n) if s != d]
        self.node_table, self.net_table = Interner(), Interner()
        self.env_table, self.hist_table = Interner(), Interner()
        self._node_memo: dict[tuple[int, Hashable], tuple[int, tuple[Packet, ...], tuple[Any, ...]]] = {}
        self._net_memo: dict[tuple[int, Packet | None, tuple[Packet, ...]], int] = {}
        self._hist_memo: dict[tuple[int, int, tuple[Any, ...]], int] = {}
        self._bounded: dict[int, bool] = {}
        self._timer_memo: dict[tuple[int, int], tuple[tuple[FireTimer, tuple[str, Any]], ...]] = {}
        self._expanded: tuple[tuple[int, ...], dict[tuple[type, Hashable], tuple[int, ...]]] = ((), {})
        self.batch_memo: dict[int, tuple[DeliverBatch, ...]] = {}  # network -> its batches (rule 11)
        nodes = tuple(self.node_table(adapter.initial_node(cfg, m, initial_views[m])) for m in range(n))
        history = History(tuple(Channel() for _ in range(n * n)), 0, ())
        env = McastEnv(bounds.loss, bounds.duplicate, bounds.below_drop, (0,) * n, 0)
        self._init = nodes + (self.net_table(()), self.env_table(env), self.hist_table(history))
        # rule 12: the renamings of members that map the model onto itself (models/multicast_symmetry.py),
        # the group's order (1: none) and orbit representatives
        self.symmetry = MulticastSymmetry(self)
        self.symmetry_group_size = self.symmetry.group_size
        self.canonical_batch = self.symmetry.canonical_batch
        self.symmetry_images = self.symmetry.images_batch  # ``SymmetryImages``: for searches across processes

    # -- TransitionSystem ---------------------------------------------------------------------
    def init_states(self) -> Sequence[tuple[int, ...]]:
        return [self._init]

    def successors(self, world: tuple[int, ...]) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        return self._successors(world, None)

    def progress_successors(self, world: tuple[int, ...]) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        """``ProgressSuccessors``: the pairs of ``successors`` whose action is no fault (``is_fault``),
        in its order; the faults' next states are never computed (liveness judges fault-free closures)."""
        return self._successors(world, self.is_fault)

    def _successors(self, world: tuple[int, ...], skip: Callable[[Hashable], bool] | None
                    ) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        """``successors``, leaving out the actions ``skip`` names (before their next states are computed)."""
        n = self.n
        net: tuple[Packet, ...] = self.net_table.values[world[n]]
        env: McastEnv = self.env_table.values[world[n + 1]]
        history: History = self.hist_table.values[world[n + 2]]
        keep = _keeping(skip)
        for src in range(n):
            sent = history.channels[src * n + src].sent
            if sent < self.bounds.sends[src] and not stopped(env, src) and keep(AppMcast(src)) and \
                    self.adapter.can_send(self.cfg, self.node(world, src)) and (
                    not self.bounds.sends_after_joins or env.joined == (1 << len(self.bounds.joins)) - 1):
                yield from self._after(world, src, AppMcast(src), self.mcast_stimulus(src, sent + 1), None, env)
        for packet in net:
            deliver = DeliverPacket(packet)
            if stopped(env, packet.dst):  # rule 8: a stopped member's socket is closed
                if keep(deliver):
                    yield deliver, self._consumed(world, packet, env)
                continue
            if keep(deliver):
                yield from self._after(world, packet.dst, deliver, packet, packet, env)
            if env.duplicate and keep(DuplicatePacket(packet)):
                yield from self._after(world, packet.dst, DuplicatePacket(packet), packet, None,
                                       env._replace(duplicate=env.duplicate - 1))
            if packet.src != packet.dst:
                if env.loss and keep(LosePacket(packet)):
                    yield LosePacket(packet), self._consumed(world, packet, env._replace(loss=env.loss - 1))
                if env.below_drop and keep(DropBelow(packet)):
                    yield DropBelow(packet), self._consumed(world, packet,
                                                            env._replace(below_drop=env.below_drop - 1))
        for member in range(n):
            if stopped(env, member):
                continue
            for fire, stimulus in self._timers(member, world[member]):
                if keep(fire):
                    yield from self._after(world, member, fire, stimulus, None, env)
        yield from self._membership_actions(world, env, keep)
        yield from self._stops(world, env, keep)
        yield from batch_successors(self, world, env, keep, stopped, self._after, self._net_after)

    def _stops(self, world: tuple[int, ...], env: McastEnv, keep: Callable[[Hashable], bool]
               ) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        """Rule 8: a crash at any moment; a leave once the leaver's coordinator-to-be (the lowest
        other member of its view) installed a view without it."""
        n = self.n
        for member, kind in self.bounds.stops:
            if stopped(env, member) or not keep(Stop(member, kind == CRASH)):
                continue
            if kind == LEAVE:
                view = self.adapter.view_members(self.node(world, member))
                others = [m for m in view if m != member]
                if not others or member in self.adapter.view_members(self.node(world, min(others))):
                    continue
            after = env._replace(stopped=env.stopped | 1 << member)
            yield Stop(member, kind == CRASH), world[:n + 1] + (self.env_table(after), world[n + 2])

    def _membership_actions(self, world: tuple[int, ...], env: McastEnv, keep: Callable[[Hashable], bool]
                            ) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        """Rule 5: scripted views, and the joins whose coordinator's next view admits the joiner."""
        for member in range(self.n):
            view = self.next_view(env, member)
            if view is None or stopped(env, member) or not self.adapter.has_view(self.node(world, member)):
                continue
            if any(j in view and not self.joined(env, i) for i, (j, c) in enumerate(self.bounds.joins) if c == member):
                continue  # that view is installed by the join's answer
            if member in self.bounds.merges and env.view_index[member] == len(self.bounds.views[member]) - 1:
                if not keep(MergeView(member, tuple(sorted(view)))):
                    continue
                yield from self._after(world, member, MergeView(member, tuple(sorted(view))),
                                       self.merge_stimulus(world, view), None, advance_view(env, member))
                continue
            if keep(InstallView(member, tuple(sorted(view)))):
                yield from self._after(world, member, InstallView(member, tuple(sorted(view))), ("view", view),
                                       None, advance_view(env, member))
        for i, (joiner, coordinator) in enumerate(self.bounds.joins):
            view = self.next_view(env, coordinator)
            if self.joined(env, i) or view is None or joiner not in view or stopped(env, coordinator) or \
                    not keep(AnswerJoin(coordinator, joiner)):
                continue
            after = advance_view(env, coordinator)._replace(joined=env.joined | 1 << i)
            yield from self._after(world, coordinator, AnswerJoin(coordinator, joiner), ("join", joiner, view),
                                   None, after)

    def merge_stimulus(self, world: tuple[int, ...], view: frozenset[int]
                       ) -> tuple[str, tuple[Any, ...], frozenset[int]]:
        """Rule 10: ("merge", digest, view), the digest naming each member of ``view`` at the (hd, hr)
        of its own window now (None for a member without one)."""
        digest = tuple(self.adapter.own_digest(self.node(world, s)) if s in view else None for s in range(self.n))
        return "merge", digest, view

    def next_view(self, env: McastEnv, member: int) -> frozenset[int] | None:
        script = self.bounds.views[member]
        index = env.view_index[member]
        return script[index] if index < len(script) else None

    def joined(self, env: McastEnv, join: int) -> bool:
        return bool(env.joined >> join & 1)

    def node(self, world: tuple[int, ...], member: int) -> Any:
        return self.node_table.values[world[member]]

    def within_bounds(self, world: tuple[int, ...]) -> bool:
        net_id = world[self.n]
        ok = self._bounded.get(net_id)
        if ok is None:
            ok = self._bounded[net_id] = fullest_channel(self.net_table.values[net_id]) <= self.bounds.max_in_flight
        return ok

    def accepts_end(self, world: tuple[int, ...]) -> bool:
        """Always: a world without successors is quiescent (STABLE's gossip stays armed at every
        member and changes nothing once a round is done); what is undelivered then is what the
        liveness properties report."""
        return True

    def is_fault(self, action: Hashable) -> bool:
        if isinstance(action, FireTimer):
            return not self.adapter.timer_is_progress(action.timer)
        if self.bounds.views_are_progress and (isinstance(action, (InstallView, AnswerJoin))
                                               or (isinstance(action, Stop) and not action.crash)):
            return False
        return isinstance(action, FAULTS)

    def action_to_json(self, action: Hashable) -> dict[str, Any]:
        return {"action": type(action).__name__, **to_json(action._asdict())}  # type: ignore[attr-defined]

    def format_action(self, action: Hashable) -> str:
        return str(self.adapter.format_action(action, self.member_name))

    def member_name(self, member: int) -> str:
        return self.member_names[member] if self.member_names else str(member)

    # -- decoding, for properties, charts and tests -------------------------------------------------
    def view(self, world: tuple[int, ...]) -> WorldView:
        n = self.n
        return WorldView(tuple(self.node_table.values[i] for i in world[:n]), self.net_table.values[world[n]],
                         self.env_table.values[world[n + 1]], self.hist_table.values[world[n + 2]])

    def emitted(self, world: tuple[int, ...], action: Hashable) -> tuple[Packet, ...]:
        """The packets the handler of ``action`` put on the wire (before rule 2's de-duplication)."""
        acting = self.stimulus_of(world, action)
        if acting is None:
            return ()
        member, stimulus = acting
        return self._handled(member, world[member], stimulus)[1]

    def mcast_stimulus(self, member: int, number: int) -> tuple[Any, ...]:
        """The handler input of ``member``'s ``number``-th multicast: ("mcast", number), then ``OOB``
        when the model's ``[oob]`` flags it, and ``DONT_LOOPBACK`` last when the setting or the model's
        ``[dont_loopback]`` flags it (rule 6)."""
        flags: tuple[str, ...] = (OOB,) if (member, number) in self.bounds.oob else ()
        if self.dont_loopback or (member, number) in self.bounds.dont_loopback:
            flags += (DONT_LOOPBACK,)
        return ("mcast", number, *flags)

    def stimulus_of(self, world: tuple[int, ...], action: Hashable) -> tuple[int, Hashable] | None:
        """(member, handler input) of ``action`` in ``world``; None for a loss, a below drop, a
        stop, or a packet discarded at a stopped member."""
        if isinstance(action, AppMcast):
            history: History = self.hist_table.values[world[self.n + 2]]
            number = history.channels[action.src * self.n + action.src].sent + 1
            return action.src, self.mcast_stimulus(action.src, number)
        if isinstance(action, (DeliverPacket, DuplicatePacket)):
            if stopped(self.env_table.values[world[self.n + 1]], action.packet.dst):
                return None  # rule 8: discarded at a stopped member
            return action.packet.dst, action.packet
        if isinstance(action, DeliverBatch):
            return action.packets[0].dst, batch_stimulus(action)
        if isinstance(action, FireTimer):
            return action.member, ("timer", action.timer)
        if isinstance(action, InstallView):
            return action.member, ("view", frozenset(action.members))
        if isinstance(action, AnswerJoin):
            env: McastEnv = self.env_table.values[world[self.n + 1]]
            return action.coordinator, ("join", action.joiner, self.next_view(env, action.coordinator))
        if isinstance(action, MergeView):
            return action.member, self.merge_stimulus(world, frozenset(action.members))
        return None

    # -- the lockstep harness (checks/conform/differential.py) ---------------------------------
    def step_effects(self, world: tuple[int, ...], action: Hashable
                     ) -> tuple[int | None, tuple[Packet, ...], tuple[tuple[int, int], ...]]:
        """(member that acted, packets it sent in order, (src, payload) it delivered in order);
        None when no member acts (a loss, a below drop, a stop, a packet at a stopped member)."""
        acting = self.stimulus_of(world, action)
        if acting is None:
            return None, (), ()
        member, stimulus = acting
        _, packets, observed = self._handled(member, world[member], stimulus)
        delivered = tuple((e.src, e.payload) for kind, e in observed if kind == "Deliver")
        return member, packets, delivered

    def app_payload(self, world: tuple[int, ...], action: Hashable) -> int:
        """The payload number an application multicast sends (rule 6: the sender's n-th), else 0."""
        if not isinstance(action, AppMcast):
            return 0
        history: History = self.hist_table.values[world[self.n + 2]]
        return history.channels[action.src * self.n + action.src].sent + 1

    def canonical_action(self, world: tuple[int, ...], action: Hashable) -> Hashable:
        """``action`` as the checker names it: this world renumbers nothing (no timestamps)."""
        return action

    @property
    def state_width(self) -> int:
        """``PackedStates``: a world is n node ids, a network, an environment and a history id (rule 12)."""
        return self.n + 3

    def property_key(self, world: tuple[int, ...]) -> tuple[int, ...]:
        """``PropertyKey``: the nodes, the environment and the history, unless a selected property
        reads the network (``properties_read_network``, set by the adapter): then the whole state."""
        return world if self.properties_read_network else world[:self.n] + world[self.n + 1:]

    # -- one action at a time (random walks: checks/fuzz/run.py) ---------------------------------
    # As ``models/world.py``'s: ``[a for a in candidates(w, K) if successor(w, a) is not None]`` is
    # ``[a for a, _ in successors(w) if type(a) is K]``. Here both read the successors of the last
    # state asked about, computed once (this world has no lazier path).
    def _successors_of(self, world: tuple[int, ...]) -> dict[tuple[type, Hashable], tuple[int, ...]]:
        """(type, action) -> next state: keyed by the type too, since actions are NamedTuples and
        ``LosePacket(p) == DeliverPacket(p)`` as tuples."""
        if self._expanded[0] != world:
            self._expanded = (world, {(type(a), a): after for a, after in self.successors(world)})
        return self._expanded[1]

    def candidates(self, world: tuple[int, ...], kind: type) -> list[Hashable]:
        """The enabled actions of type ``kind`` in ``world``, in ``successors``' order (a fresh list)."""
        return [a for t, a in self._successors_of(world) if t is kind]

    def successor(self, world: tuple[int, ...], action: Hashable) -> tuple[int, ...] | None:
        """The state ``successors`` pairs with ``action`` in ``world``; None if it is not enabled."""
        return self._successors_of(world).get((type(action), action))

    def adopt(self, view: WorldView) -> tuple[int, ...]:
        """The state of this world that ``view`` (decoded from a world of the same model) stands for:
        its values interned here (this world renumbers nothing)."""
        nodes = tuple(self.node_table(node) for node in view.nodes)
        return nodes + (self.net_table(view.network), self.env_table(view.env), self.hist_table(view.history))

    def budget_usage(self, world: tuple[int, ...]) -> dict[str, tuple[int, int]]:
        """``BudgetUsage``: sends, fault budgets and view scripts used by ``world``."""
        n, bounds = self.n, self.bounds
        env: McastEnv = self.env_table.values[world[n + 1]]
        history: History = self.hist_table.values[world[n + 2]]
        return {"sends": (sum(history.channels[m * n + m].sent for m in range(n)), sum(bounds.sends)),
                "loss": (bounds.loss - env.loss, bounds.loss),
                "duplicate": (bounds.duplicate - env.duplicate, bounds.duplicate),
                "below_drop": (bounds.below_drop - env.below_drop, bounds.below_drop),
                "views": (sum(env.view_index), sum(map(len, bounds.views))),
                "stops": (bin(env.stopped).count("1"), len(bounds.stops))}

    def stats(self) -> dict[str, int]:
        return {"node_states": len(self.node_table.values), "networks": len(self.net_table.values),
                "histories": len(self.hist_table.values), "handler_calls_memoised": len(self._node_memo)}

    # -- one step -------------------------------------------------------------------------------
    def _after(self, world: tuple[int, ...], member: int, action: McastAction, stimulus: Hashable,
               consumed: Packet | None, env: McastEnv) -> Iterator[tuple[McastAction, tuple[int, ...]]]:
        """The world after ``member`` handles ``stimulus`` (``consumed`` leaves the network)."""
        n = self.n
        new_node, packets, observed = self._handled(member, world[member], stimulus)
        if consumed is None and not packets and not observed and new_node == world[member] \
                and env is self.env_table.values[world[n + 1]] and not self._ends_young_round(member, action, env):
            return  # nothing changes (a timer with nothing to do): the world itself, never yielded
        net_id = world[n]
        if consumed is not None or packets:
            net_id = self._net_after(net_id, consumed, packets)
        nodes = world[:member] + (new_node,) + world[member + 1:n]
        hist_id = world[n + 2]
        if self.bounds.track_young:
            env, premature = self._young_after(world, member, action, consumed, packets, env)
            if premature:
                history = self.hist_table.values[hist_id]
                hist_id = self.hist_table(history._replace(step_violations=history.step_violations | PREMATURE))
        if observed:
            key = (hist_id, member, observed)
            found = self._hist_memo.get(key)
            if found is None:
                updated = self.adapter.observe_history(self.hist_table.values[hist_id], member, observed, n)
                found = self._hist_memo[key] = self.hist_table(updated)
            hist_id = found
        after = nodes + (net_id, self.env_table(env), hist_id)
        if after != world:
            yield action, after

    def _timers(self, member: int, node_id: int) -> tuple[tuple[FireTimer, tuple[str, Any]], ...]:
        """(action, handler input) of each timer enabled at ``member``'s node ``node_id``, memoised."""
        found = self._timer_memo.get((member, node_id))
        if found is None:
            timers = self.adapter.enabled_timers(self.cfg, self.node_table.values[node_id])
            found = self._timer_memo[(member, node_id)] = tuple((FireTimer(member, t), ("timer", t)) for t in timers)
        return found

    def _ends_young_round(self, member: int, action: McastAction, env: McastEnv) -> bool:
        """Does ``action`` end a round of ``member`` while copies to it are young (rule 9: they age)?"""
        return self.bounds.track_young and bool(env.young) and self.adapter.ends_round(action) and any(
            y.dst == member for y in env.young)

    def _handled(self, member: int, node_id: int, stimulus: Hashable
                 ) -> tuple[int, tuple[Packet, ...], tuple[Any, ...]]:
        """The handler's result, memoised: (new node id, packets sent, observations)."""
        key = (node_id, stimulus)
        found = self._node_memo.get(key)
        if found is None:
            new_node, effects = self.adapter.handle(self.cfg, self.node_table.values[node_id], stimulus)
            packets, observed = [], []
            for effect in effects:
                if self.adapter.is_send(effect):
                    packets.append(Packet(member, effect.dst, type(effect.msg).__name__, effect.msg))
                else:
                    observed.append((type(effect).__name__, effect))
            if isinstance(stimulus, tuple) and stimulus[0] == "mcast":
                observed.insert(0, ("stimulus", stimulus))
            found = self._node_memo[key] = (self.node_table(new_node), tuple(packets), tuple(observed))
        return found

    def _young_after(self, world: tuple[int, ...], member: int, action: McastAction, consumed: Packet | None,
                     packets: tuple[Packet, ...], env: McastEnv) -> tuple[McastEnv, bool]:
        """Rule 9: the young copies after ``member``'s step, and whether the step, a round's end,
        asked for one of the copies still young on their way to it."""
        young = env.young  # sets are rebuilt only when they change: ``env`` itself comes back if nothing does
        if consumed is not None and consumed in young:
            young = young - {consumed}
        premature = False
        if self.adapter.ends_round(action):
            asked = {(p.dst, seqno) for p in packets if p.src == member for seqno in self.adapter.requested(p)}
            premature = bool(asked) and (any(y.dst == member and (y.src, y.msg.seqno) in asked for y in young) or any(
                self.adapter.unsent(self.node(world, sender), seqno) for sender, seqno in asked))
            if any(y.dst == member for y in young):
                young = frozenset(y for y in young if y.dst != member)
        if self.adapter.sends_originals(action):
            net = self.net_table.values[world[self.n]]
            added = {p for p in packets if p.src != p.dst and p not in net}
            if not added <= young:
                young = young | added
        return (env if young is env.young else env._replace(young=young)), premature

    def _consumed(self, world: tuple[int, ...], packet: Packet, env: McastEnv) -> tuple[int, ...]:
        """The world after ``packet`` leaves the network unseen (lost, dropped below, or at a
        stopped member)."""
        n = self.n
        if packet in env.young:
            env = env._replace(young=env.young - {packet})
        return world[:n] + (self._net_after(world[n], packet, ()), self.env_table(env), world[n + 2])

    def _net_after(self, net_id: int, consumed: Packet | None, added: tuple[Packet, ...]) -> int:
        key = (net_id, consumed, added)
        found = self._net_memo.get(key)
        if found is None:
            packets = set(self.net_table.values[net_id])
            if consumed is not None:
                packets.discard(consumed)
            packets.update(added)
            # digests mix None and pairs, which do not compare: order by the text (deterministic)
            found = self._net_memo[key] = self.net_table(tuple(sorted(packets, key=repr)))
        return found


def _keeping(skip: Callable[[Hashable], bool] | None) -> Callable[[Hashable], bool]:
    """The actions ``MulticastWorld._successors`` yields: every one, or those ``skip`` does not name."""
    if skip is None:
        return _every
    return lambda action: not skip(action)


def _every(action: Hashable) -> bool:
    return True
