"""Persistent sets of the unicast world (``models/world.py``), for partial-order reduction.

The checker's side (provisos, and why every verdict is kept) is ``checks/explore/reduction.py``;
this module says which actions of a world state form a persistent set, by *connections*.

Rules
-----
1. A *connection* is an unordered pair of members {a, b}: both members' state about each other
   (a's send and receive entries for b and b's for a, with their timers and records, and UNICAST3's
   message cache of each for the other: only DATA between the two adds to or drains it), the two
   channels a -> b and b -> a, and the history of both directions. An action's *footprint* is the
   connections it reads or writes: a delivery, duplicate or loss of a packet and an application
   send touch one; a timer touches one if the adapter says it acts on its peer's connection alone
   (``timer_on_one_connection``), else all of its member's; so does a receiver removal (UNICAST's
   hook flushes every pending ACK). A view installation touches the connections of the peers the
   adapter names for any view of its member's script (``view_peers``: UNICAST3's, with
   conn_expiry off, the peers outside the view or the one before), else all of its member's; and
   if a view of the script leaves a peer out and the adapter says that may make a timer on the
   whole member possible later (``view_widens``: UNICAST3's conn_close_timeout on the receive
   entry the view makes CLOSING flushes every pending ACK), all of its member's.
2. What connections share besides: a member's view (written only by its view installations: while
   a member has views left in its script, the connections they touch are one *cluster*), its next conn_id
   (taken by an application send that opens a send entry: while one of a member's sends would open
   one now, the connections it still has sends for are one cluster; not where the world ranks
   conn_ids per stream, rule 5b, after which the order of two openings leaves no trace), the actions on a whole member
   that may come (while a receiver removal is left in the budget, or the adapter says a timer on the
   whole member may fire, ``wide_timers_possible``, its connections are one cluster), its timestamp
   counter (no coupling: the world renumbers timestamps per stream, rule 5, so the order in which
   two connections issue theirs leaves the same state), the loss and duplicate budgets (no
   coupling in the sense the checker needs: two losses commute while the budget allows both, and
   one that ends the budget only disables the other, which a key action never is), and the
   step-violation bits (an or of bits).
3. The persistent set is every enabled action whose footprint lies in one cluster, the union of
   connections joined by rule 2 and by the footprints of enabled actions: its actions touch
   nothing outside it, and no action outside it can reach inside it later, since an action's
   footprint is fixed by its kind and its member and peer, and a cluster's couplings only loosen.
   Every cluster with an enabled action that is no fault (a delivery or a progress timer: nothing
   outside their connection can disable them) gives one, fewest enabled actions first; the checker
   takes the first that its provisos accept.
4. The properties are made stable while reducing (``World.enable_partial_order``): node and pair
   properties are recorded as history bits when broken, as step properties are; the channel
   properties already are. ``tests/checks/test_partial_order.py`` checks rule 3's commutation on
   every state of small shipped models and the stability of every property.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.world import World


class ConnectionClusters:
    """Persistent sets of one ``World`` (rules 1-3)."""

    def __init__(self, world: World) -> None:
        self.world = world
        n = world.n
        self.connection = [[-1] * n for _ in range(n)]
        count = 0
        for a in range(n):
            for b in range(a + 1, n):
                self.connection[a][b] = self.connection[b][a] = count
                count += 1
        self.connections = count
        self.of_member = [tuple(self.connection[m][p] for p in range(n) if p != m) for m in range(n)]
        self.of_views = [self._view_footprint(m) for m in range(n)]  # rule 1: any view of the member's
        # memoised on ids (environments, histories, nodes: few distinct values) and on what they decide
        self._viewing: dict[int, tuple[int, ...]] = {}  # environment -> per member, 2: a removal left, 1: views
        self._sending: dict[int, tuple[frozenset[int], ...]] = {}  # history -> per member, peers with sends left
        self._opening: dict[int, frozenset[int]] = {}  # node -> peers a send to would open a send entry
        self._wide: dict[int, bool] = {}  # node -> may a timer on the whole member fire (adapter)
        self._couplings: dict[tuple[Any, ...], tuple[tuple[int, ...], ...]] = {}
        self._roots: dict[tuple[Any, ...], dict[int, int]] = {}

    def _view_footprint(self, member: int) -> tuple[int, ...]:
        """The connections any view of ``member``'s script touches (rule 1, ``view_peers``)."""
        world, peers = self.world, set[int]()
        old = world.initial_views[member]
        if world.adapter.view_widens(world.cfg) and any(set(range(world.n)) - {member} - view
                                                        for view in world.bounds.views[member]):
            return self.of_member[member]
        for new in world.bounds.views[member]:
            touched = world.adapter.view_peers(world.cfg, member, old, new)
            if touched is None:
                return self.of_member[member]
            peers |= touched
            old = new
        return tuple(sorted({self.connection[member][p] for p in peers}))

    def place(self, action: Any) -> int:
        """Where ``action`` acts, as ``models/batch.py`` reports it: ``src * n + dst`` for one
        directed pair, ``-1 - member`` for a whole member, ``-1 - n - member`` for a view (rule 1)."""
        n, kind = self.world.n, type(action).__name__
        if kind == "AppSend":
            return int(action.src * n + action.dst)
        if kind in ("DeliverPacket", "DuplicatePacket", "LosePacket"):
            return int(action.packet.src * n + action.packet.dst)
        if kind == "DeliverBatch":
            return int(action.packets[0].src * n + action.packets[0].dst)
        adapter = self.world.adapter
        if kind == "FireTimer" and adapter.timer_on_one_connection(self.world.cfg, action.timer):
            return int(action.member * n + action.timer.peer)
        if kind == "RemoveReceiver" and adapter.removal_on_one_connection():
            return int(action.member * n + action.peer)
        if kind == "InstallView":
            return -1 - n - int(action.member)
        return -1 - int(action.member)  # a timer or removal on the whole member

    def footprint(self, place: int) -> tuple[int, ...]:
        """The connections an action at ``place`` touches (rule 1); a view may touch none."""
        if place < -self.world.n:
            return self.of_views[-1 - self.world.n - place]
        if place < 0:
            return self.of_member[-1 - place]
        return (self.connection[place // self.world.n][place % self.world.n],)

    def couplings(self, state: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
        """The clusters rule 2 forms in ``state`` (besides enabled actions' footprints)."""
        world, n = self.world, self.world.n
        viewing = self._viewing.get(state[n + 1])
        if viewing is None:  # a receiver removal left (the hook flushes every ACK), or views left
            env = world.env_table.values[state[n + 1]]
            removing = env.removals > 0 and not world.adapter.removal_on_one_connection()
            viewing = self._viewing[state[n + 1]] = tuple(2 if removing else int(index < len(script))
                                                          for index, script in zip(env.view_index, world.bounds.views))
        sending = self._sending.get(state[n + 2])
        if sending is None:
            channels = world.hist_table.values[state[n + 2]].channels
            sending = self._sending[state[n + 2]] = tuple(
                frozenset(p for p in range(n) if p != m and channels[m * n + p].sent < world.bounds.sends[m * n + p])
                for m in range(n))
        opening, wide = [], []
        for member in range(n):
            found_wide = self._wide.get(state[member])
            if found_wide is None:
                found_wide = self._wide[state[member]] = world.adapter.wide_timers_possible(
                    world.cfg, world.node_table.values[state[member]])
            wide.append(found_wide)
            opens = self._opening.get(state[member])
            if opens is None:  # with conn_ids ranked (rule 5b of models/world.py), two openings commute
                node = world.node_table.values[state[member]]
                opens = self._opening[state[member]] = frozenset() if world.ranks_conn_ids else frozenset(
                    p for p in range(n) if p != member and world.adapter.opens_connection(node, p))
            opening.append(bool(opens & sending[member]))
        key = (viewing, sending, tuple(opening), tuple(wide))
        found = self._couplings.get(key)
        if found is None:
            found = self._couplings[key] = self._groups(viewing, sending, opening, wide)
        return found

    def _groups(self, viewing: tuple[int, ...], sending: tuple[frozenset[int], ...], opening: list[bool],
                wide: list[bool]) -> tuple[tuple[int, ...], ...]:
        """Rule 2's clusters, from what ``couplings`` found per member."""
        groups: list[tuple[int, ...]] = []
        for m in range(self.world.n):
            if viewing[m] == 2 or wide[m]:
                groups.append(self.of_member[m])
                continue
            if viewing[m] and len(self.of_views[m]) > 1:
                groups.append(self.of_views[m])
            if opening[m] and len(sending[m]) > 1:
                groups.append(tuple(self.connection[m][p] for p in sorted(sending[m])))
        return tuple(groups)

    def masks(self, states: Sequence[tuple[int, ...]], counts: Sequence[int], places: Sequence[int],
              progress: Sequence[bool]) -> list[list[Any]]:
        """Per state, its persistent sets other than all of its successors (rule 3), as masks over
        them, fewest actions first; ``places`` and ``progress`` per successor, ``counts`` per state
        (``models/batch.py``)."""
        out: list[list[Any]] = []
        if self.connections < 2:  # two members: one connection, nothing to choose from
            return [[] for _ in states]
        start = 0
        for state, count in zip(states, counts):
            if count <= 1:
                out.append([])
                start += max(count, 0)
                continue
            end = start + count
            out.append(self.state_masks(state, places[start:end], progress[start:end]))
            start = end
        return out

    def state_masks(self, state: tuple[int, ...], places: Sequence[int], progress: Sequence[bool]) -> list[Any]:
        """Rule 3 for one state: ``places`` and ``progress`` of its successors, in order."""
        groups = self.couplings(state)
        wide = tuple(sorted({p for p in places if p < 0}))
        root_of = self._roots.get((groups, wide))
        if root_of is None:
            root_of = self._clusters_of(groups, wide)
        cluster = [root_of[p] for p in places]
        size: dict[int, int] = {}
        for root in cluster:
            size[root] = size.get(root, 0) + 1
        if len(size) < 2:
            return []
        keyed = {root for root, moves in zip(cluster, progress) if moves}
        ranked = sorted((size[root], root) for root in keyed)
        return [[root == chosen for root in cluster] for _, chosen in ranked]

    def _clusters_of(self, groups: tuple[tuple[int, ...], ...], wide: tuple[int, ...]) -> dict[int, int]:
        """Place -> the root of its cluster, for every place, given the couplings and the
        member-wide places enabled."""
        parent = list(range(self.connections))

        def find(c: int) -> int:
            while parent[c] != c:
                parent[c] = parent[parent[c]]
                c = parent[c]
            return c

        for group in groups + tuple(f for p in wide if (f := self.footprint(p))):
            root = find(group[0])
            for c in group[1:]:
                other = find(c)
                if other != root:
                    parent[other] = root
        n = self.world.n
        places = [src * n + dst for src, dst in self.world.pairs] + [-1 - m for m in range(2 * n)]
        # a view that touches no connection is a cluster of its own, named by its place (below 0)
        found = self._roots[groups, wide] = {p: find(f[0]) if (f := self.footprint(p)) else p for p in places}
        return found


def sticky_bits(adapter: Any) -> dict[str, int]:
    """Rule 4: the history bit of each node and pair property, above the step properties' bits."""
    names = [p.name for p in adapter.node_properties] + [p.name for p in adapter.pair_properties]
    first = len(adapter.step_properties)
    return {name: 1 << (first + i) for i, name in enumerate(names)}


class StickyProperties:
    """Rule 4: the bits of the node and pair properties a member's new node breaks, alone or with
    a peer's (as sender or receiver), memoised on node ids; and a history with bits added."""

    def __init__(self, world: World) -> None:
        self.world = world
        bits = sticky_bits(world.adapter)
        checked = {p.name for p in world.properties}  # a bit of an unchecked property would only split states
        self.node_props = [(p.holds, bits[p.name]) for p in world.adapter.node_properties if p.name in checked]
        self.pair_props = [(p.holds, bits[p.name]) for p in world.adapter.pair_properties if p.name in checked]
        self._node: dict[int, int] = {}
        self._pair: dict[tuple[int, int], int] = {}
        self._added: dict[tuple[int, int], int] = {}

    def broken(self, member: int, nodes: Sequence[int]) -> int:
        """The bits ``member``'s node breaks in ``nodes`` (node ids)."""
        mine = nodes[member]
        found = self._node.get(mine)
        if found is None:
            node = self.world.node_table.values[mine]
            found = self._node[mine] = sum(bit for holds, bit in self.node_props if not holds(node))
        broken = found
        for peer, theirs in enumerate(nodes):
            if peer != member:
                broken |= self._pair_bits(mine, theirs) | self._pair_bits(theirs, mine)
        return broken

    def _pair_bits(self, sender: int, receiver: int) -> int:
        found = self._pair.get((sender, receiver))
        if found is None:
            values = self.world.node_table.values
            found = self._pair[sender, receiver] = sum(
                bit for holds, bit in self.pair_props if not holds(values[sender], values[receiver]))
        return found

    def add(self, hist_id: int, bits: int) -> int:
        """The history ``hist_id`` with ``bits`` set among its step violations."""
        found = self._added.get((hist_id, bits))
        if found is None:
            table = self.world.hist_table
            history = table.values[hist_id]
            found = self._added[hist_id, bits] = table(history._replace(step_violations=history.step_violations | bits))
        return found
