"""Member symmetry of the multicast world (``models/multicast_world.py``): which renamings of members
map a multicast model onto itself, and how a renaming acts on its states. The images and orbit
representatives are ``models/symmetry.py``'s (``MemberSymmetry``: per-part tables of images by id,
the smallest image as representative, orbit sizes counted exactly); this module owns the rule for the
multicast world and its renaming of networks, environments and histories.

Rules
-----
1. A permutation ``p`` of the members is a symmetry when it maps every bound of the model onto
   itself: ``p[m]`` makes as many application multicasts as ``m``, with the same numbers flagged
   OOB and DONT_LOOPBACK; its view script is ``m``'s renamed, so is its initial view; the joins
   (joiner, coordinator), the stops (member, leave or crash) and the merging members are the same
   set renamed; the protocol renames members in a node (``ProtocolAdapter.permute_node``); and the
   initial world is its own image. Fault budgets, ``max_in_flight``, ``max_batch``, the switches and
   the protocol's settings are the same for every member.
2. **The coordinator.** NAKACK2's STABLE coordinator, the leave rule's answering member (world
   rule 8) and nothing else in either protocol depends on the numbering of members: a view's
   coordinator is its lowest member (``min``), so a renaming commutes with the handlers only if
   it maps the coordinator of every view that can be installed onto the coordinator of the
   renamed view: ``p[min(V)] == min(p(V))`` for every initial and scripted view ``V`` (a JoinRsp
   carries its coordinator's scripted view; a merge view is a scripted one), and, for a member
   ``m`` that may leave, ``p[min(V - {m})] == min(p(V) - {p[m]})`` for every such view holding
   ``m``. Everything else the handlers do with numbers is per member (windows, digests, ACK and
   STABLE vectors, XMIT maps indexed by member; sets of members; views compared for equality as
   sorted tuples, so renamed and re-sorted) or iterates over members only to emit packets (a set in
   the world) and observations of distinct channels (applied channel by channel), which renaming
   reorders without changing any state. So with three members and the coordinator of every view
   fixed, only members that are never coordinators, or always coordinators of the same views, can
   be swapped: in NAKACK2 the coordinator is never symmetric with another member, and a member that
   becomes coordinator when another leaves or crashes is distinguished too. NAKACK4 has no STABLE
   (its adapter's ``coordinator_matters`` is false): its only coordinators are the join's, named by
   the model's ``[[joins]]`` (renamed with them, rule 1), and the leave rule's, so there the first
   condition is not asked (with A crashing, B and C are interchangeable though B coordinates [B, C]).
3. A permutation acts on a world by renaming (``models/symmetry.py`` rule 2): node ``p[m]`` is node
   ``m`` renamed (``permute_node``: its own number, its view, every per-member tuple, the members
   named in its queue and vote set); a packet from ``s`` to ``d`` becomes one from ``p[s]`` to
   ``p[d]`` with its message renamed (``permute_message``: the original sender of an XMIT_REQ or
   XMIT_RSP; the view and digest of a STABLE vote, a STABILITY, a JoinRsp), and the network is
   re-sorted as the world sorts it (by text); the environment's view positions, joins answered
   (bit ``i`` goes to the bit of the renamed join), stopped members (bit ``m`` to ``p[m]``) and young
   copies are renamed; the history's channel ``(p[s], p[d])`` is ``(s, d)``'s. Fault budgets and
   step-violation bits are global and stay.
4. Soundness is ``models/symmetry.py``'s rule 3: the handlers commute with renaming (rule 2 above),
   the world treats members alike given equal bounds (rule 1), ``max_in_flight`` is per channel and
   every property quantifies over all members and channels alike (delivery, windows, purge safety
   with the merging members renamed, the witness with the sends renamed), so each symmetry is an
   automorphism of the labelled transition system and the quotient keeps every verdict and every
   breadth-first depth. ``tests/checks/test_multicast_symmetry.py`` checks that renaming commutes
   with every handler call of small models, and that the reduced reachable states are exactly the
   orbit representatives of the full search.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import permutations
from typing import TYPE_CHECKING, Any

from models.symmetry import MemberSymmetry, Perm

if TYPE_CHECKING:
    from models.multicast_world import MulticastWorld


def _renamed(view: Iterable[int], perm: Perm) -> frozenset[int]:
    return frozenset(perm[m] for m in view)


def keeps_coordinators(world: MulticastWorld, perm: Perm) -> bool:
    """Rule 2: ``perm`` maps the coordinator of every view that can be installed onto the renamed
    view's, and so the answering member of every leave."""
    bounds = world.bounds
    views = {v for v in world.initial_views if v} | {v for script in bounds.views for v in script}
    if world.adapter.coordinator_matters and any(perm[min(v)] != min(_renamed(v, perm)) for v in views):
        return False
    for member, kind in bounds.stops:
        if kind != "leave":
            continue
        for view in views:
            others = view - {member}
            if member in view and others and perm[min(others)] != min(_renamed(others, perm)):
                return False
    return True


def multicast_symmetries(world: MulticastWorld) -> tuple[list[Perm], str]:
    """The non-identity symmetries of a multicast model (rules 1 and 2), and why there are none
    when that is so ("" otherwise)."""
    n, bounds = world.n, world.bounds
    init = world.init_states()[0]
    try:
        renamed = world.adapter.permute_node(world.node_table.values[init[0]], tuple(range(n)))
    except ValueError as error:  # a node field the adapter has not classified: no symmetry, and why
        return [], str(error)
    if renamed is None:
        return [], f"protocol {world.adapter.name} does not rename members"
    found = []
    for perm in permutations(range(n)):
        if perm == tuple(range(n)) or any(bounds.sends[perm[m]] != bounds.sends[m] for m in range(n)):
            continue
        if any(bounds.views[perm[m]] != tuple(_renamed(v, perm) for v in bounds.views[m]) for m in range(n)):
            continue
        if any(world.initial_views[perm[m]] != _renamed(world.initial_views[m], perm) for m in range(n)):
            continue
        if {(perm[j], perm[c]) for j, c in bounds.joins} != set(bounds.joins):
            continue
        if {(perm[m], kind) for m, kind in bounds.stops} != set(bounds.stops) or \
                _renamed(bounds.merges, perm) != bounds.merges:
            continue
        if any(frozenset((perm[m], k) for m, k in flags) != flags for flags in (bounds.oob, bounds.dont_loopback)):
            continue
        if keeps_coordinators(world, perm):
            found.append(perm)
    if not found:
        return [], ("no renaming of members maps the model's sends, views, joins, stops and coordinators "
                    "onto themselves")
    return found, ""


class MulticastSymmetry(MemberSymmetry):
    """``MemberSymmetry`` for the multicast world: its rule (``multicast_symmetries``) and its
    renaming of networks, environments and histories (rule 3)."""

    world: MulticastWorld  # type: ignore[assignment]

    def __init__(self, world: MulticastWorld) -> None:
        joins = world.bounds.joins
        self._join_bits: list[tuple[int, ...]] = []  # per symmetry: join i -> the index of its image
        self._joins = joins
        super().__init__(world)  # type: ignore[arg-type]

    def find_symmetries(self) -> tuple[list[Perm], str]:
        perms, reason = multicast_symmetries(self.world)
        self._join_bits = [tuple(self._joins.index((p[j], p[c])) for j, c in self._joins) for p in perms]
        return perms, reason

    def _net(self, net_id: int, k: int) -> int:
        world, perm = self.world, self.perms[k]
        return world.net_table(tuple(sorted((self._packet(p, perm) for p in world.net_table.values[net_id]), key=repr)))

    def _packet(self, packet: Any, perm: Perm) -> Any:
        return packet._replace(src=perm[packet.src], dst=perm[packet.dst],
                               msg=self.world.adapter.permute_message(packet.msg, perm))

    def _env(self, env_id: int, k: int) -> int:
        env = self.world.env_table.values[env_id]
        perm, bits = self.perms[k], self._join_bits[k]
        joined = sum(1 << bits[i] for i in range(len(bits)) if env.joined >> i & 1)
        stopped = sum(1 << perm[m] for m in range(self.n) if env.stopped >> m & 1)
        young = frozenset(self._packet(p, perm) for p in env.young)
        return self.world.env_table(env._replace(view_index=self._per_member(env.view_index, k), joined=joined,
                                                 stopped=stopped, young=young))

    def _history(self, hist_id: int, k: int) -> int:
        history = self.world.hist_table.values[hist_id]
        return self.world.hist_table(history._replace(channels=self._per_pair(history.channels, k)))
