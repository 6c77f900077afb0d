"""Member symmetry of a composed world: which renamings of members map the model onto itself, and
the canonical representative of a world's orbit under them (the checker's symmetry reduction,
``checks/explore/search.py``, asks ``World.canonical_batch`` for it).

Rules
-----
1. A permutation ``p`` of the members (member ``m`` becomes ``p[m]``) is a symmetry of the model
   when it maps every bound onto itself: the application sends of each pair ``(p[s], p[d])``
   equal those of ``(s, d)``, and so do the sends flagged OOB; the view script of ``p[m]`` is
   ``m``'s with every member renamed; so is the initial view; the protocol can rename members in a node
   (``ProtocolAdapter.permute_node`` is not None); and the initial world is its own image. (A
   member stamps what it sends to all its peers from one counter; rule 5 ranks timestamps per
   stream, (issuer, holder), so the order in which it stamped for two peers is forgotten and
   renaming them changes nothing. Ranked per issuer, as before, it would not be symmetric.) Loss,
   duplication, removal budgets, ``max_in_flight`` and the protocol's settings are the same for
   every member. The permutations that pass form a group (they are exactly the automorphisms of
   these finitely many structures).
2. A permutation acts on a world by renaming: node ``p[m]`` of the image is node ``m`` renamed, a
   packet from ``s`` to ``d`` becomes one from ``p[s]`` to ``p[d]``, the history's channel, sync
   counter and grace bit of pair ``(p[s], p[d])`` are those of ``(s, d)``, and member ``p[m]`` is where
   ``m`` was in its view script. Budgets and step-violation bits are global and stay.
3. Why this is sound (the argument the checker relies on): the protocol promises its handlers
   commute with renaming, and the world treats members alike (every pair and packet in the same
   way, rule 5's timestamp renumbering per stream), so ``w -> w'`` by action ``a`` iff
   ``p(w) -> p(w')`` by ``a`` renamed, with the same fault flag; a state is cut iff its image is
   (``max_in_flight`` is per channel); and every property quantifies over all members and pairs
   alike, so it holds on ``p(w)`` iff on ``w``. Each symmetry is therefore an automorphism of the
   labelled transition system, and the quotient (one state per orbit) is bisimilar to it for
   these labels (Emerson and Sistla, 1996; Clarke, Filkorn and Jha, 1993): every safety verdict,
   deadlock and ``AG EF goal`` on the fault-free subgraph is the same on the quotient, and breadth-
   first depths (so shortest counterexamples) are equal, as orbit members are reached at equal
   depth.
4. The representative of an orbit is its smallest world (tuples of interned ids compared as
   tuples): any total order works, since the minimum over an orbit does not depend on which member
   of the orbit one starts from. Ids are this process's, so representatives are too; they are never
   written down (traces hold actions, which replay on the unreduced world). A search across processes
   (Spark) asks for the images themselves (``images_batch``) and takes the one whose process-independent
   encoding is smallest (``checks/explore/portable.py``).
5. The orbit size is counted exactly (distinct images), so the checker reports how many states of
   the unreduced world the explored ones stand for.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, permutations
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from models.world import World

Perm = tuple[int, ...]


def model_symmetries(world: World) -> tuple[list[Perm], str]:
    """The non-identity symmetries of ``world``'s model (rule 1), and why there are none when
    that is so ("" otherwise)."""
    n, bounds = world.n, world.bounds
    if world.adapter.permute_node(world.node_table.values[world.init_states()[0][0]], tuple(range(n))) is None:
        return [], f"protocol {world.adapter.name} does not rename members"

    def renamed(view: frozenset[int], perm: Perm) -> frozenset[int]:
        return frozenset(perm[m] for m in view)

    found = []
    for perm in permutations(range(n)):
        if perm == tuple(range(n)):
            continue
        if any(bounds.sends[perm[s] * n + perm[d]] != bounds.sends[s * n + d] for s, d in world.pairs):
            continue
        if any(bounds.views[perm[m]] != tuple(renamed(v, perm) for v in bounds.views[m]) for m in range(n)):
            continue
        if any(world.initial_views[perm[m]] != renamed(world.initial_views[m], perm) for m in range(n)):
            continue
        if any((perm[m] in bounds.dead) != (m in bounds.dead) for m in range(n)):
            continue
        if frozenset((perm[s], perm[d], k) for s, d, k in bounds.oob) != bounds.oob:
            continue
        found.append(perm)
    if not found:
        return [], "no renaming of members maps the model's sends, views and scripts onto themselves"
    return found, ""


class MemberSymmetry:
    """Images and orbit representatives of worlds under the model's symmetries (rules 2, 4, 5)."""

    def __init__(self, world: World) -> None:
        self.world, self.n = world, world.n
        self.perms, self.reason = self.find_symmetries()
        self.inverses = [tuple(sorted(range(self.n), key=perm.__getitem__)) for perm in self.perms]
        # per part (nodes, network, environment, history) and symmetry: image id by id, -1 unknown
        self._tables = [[np.full(64, -1, dtype=np.int64) for _ in self.perms] for _ in range(4)]
        init = world.init_states()[0]
        if any(self.image(init, k) != init for k in range(len(self.perms))):
            self.perms, self.inverses, self.reason = [], [], "the initial world is not its own image"

    def find_symmetries(self) -> tuple[list[Perm], str]:
        """The model's non-identity symmetries and why there are none (rule 1; a subclass for
        another world, ``models/multicast_symmetry.py``, has its own rule)."""
        return model_symmetries(self.world)

    @property
    def group_size(self) -> int:
        """The order of the symmetry group (the identity included)."""
        return len(self.perms) + 1

    def canonical_batch(self, worlds: Sequence[tuple[int, ...]]) -> tuple[npt.NDArray[np.int64], list[int]]:
        """Per world, the smallest world of its orbit (rows of an array) and the orbit's size:
        every image of every world at once (``images_batch``), then a row-wise lexicographic minimum."""
        if not len(worlds):
            return np.empty((0, self.n + 3), dtype=np.int64), []
        return self.best_and_sizes(self.images_batch(worlds))

    def images_batch(self, worlds: Sequence[tuple[int, ...]]) -> list[npt.NDArray[np.int64]]:
        """Per element of the group (the identity first, ``group_size`` in all), the images of
        ``worlds`` as rows of an array: component by component through per-symmetry tables of
        images by id (the ``SymmetryImages`` capability of ``checks/explore/system.py``)."""
        width = self.n + 3
        rows = np.fromiter(chain.from_iterable(worlds), dtype=np.int64, count=len(worlds) * width).reshape(-1, width)
        images = [rows]
        for k in range(len(self.perms)):
            image = np.empty_like(rows)
            columns = [self.inverses[k][position] for position in range(self.n)] + [self.n, self.n + 1, self.n + 2]
            for position, column in enumerate(columns):
                image[:, position] = self._images(0 if position < self.n else position - self.n + 1, k, rows[:, column])
            images.append(image)
        return images

    def best_and_sizes(self, images: list[npt.NDArray[np.int64]]) -> tuple[npt.NDArray[np.int64], list[int]]:
        """The row-wise smallest of ``images`` (``images_batch``) and the number of distinct images per row."""
        rows = images[0]
        best = rows.copy()
        for image in images[1:]:
            differ = best != image
            first = differ.argmax(axis=1)
            picked = np.arange(len(best))
            smaller = differ.any(axis=1) & (image[picked, first] < best[picked, first])
            best[smaller] = image[smaller]
        sizes = np.ones(len(rows), dtype=np.int64)
        for j in range(1, len(images)):
            new = np.ones(len(rows), dtype=bool)
            for i in range(j):
                new &= (images[i] != images[j]).any(axis=1)
            sizes += new
        return best, sizes.tolist()

    def _images(self, part: int, k: int, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The ids of the images under symmetry ``k`` of the ids ``ids`` of one part of a world
        (``part``: 0 nodes, 1 network, 2 environment, 3 history), through a table grown on demand."""
        table = self._tables[part][k]
        top = int(ids.max()) + 1
        if top > len(table):
            table = self._tables[part][k] = np.concatenate([table, np.full(max(top, 2 * len(table)) - len(table), -1)])
        looked = table[ids]
        if (looked < 0).any():
            compute = (self._node, self._net, self._env, self._history)[part]
            for missing in np.unique(ids[looked < 0]).tolist():
                table[missing] = compute(missing, k)
            looked = table[ids]
        return looked

    def image(self, world: tuple[int, ...], k: int) -> tuple[int, ...]:
        """``world`` renamed by the ``k``-th symmetry (rule 2)."""
        n, inverse = self.n, self.inverses[k]
        row = np.array([world], dtype=np.int64)
        nodes = [int(self._images(0, k, row[:, inverse[position]])[0]) for position in range(n)]
        rest = [int(self._images(part + 1, k, row[:, n + part])[0]) for part in range(3)]
        return (*nodes, *rest)

    def _node(self, node_id: int, k: int) -> int:
        world = self.world
        return world.node_table(world.adapter.permute_node(world.node_table.values[node_id], self.perms[k]))

    def _net(self, net_id: int, k: int) -> int:
        world, perm = self.world, self.perms[k]
        adapter = world.adapter
        packets = world.net_table.values[net_id]
        return world.net_table(tuple(sorted(
            p._replace(src=perm[p.src], dst=perm[p.dst], msg=adapter.permute_message(p.msg, perm)) for p in packets)))

    def _env(self, env_id: int, k: int) -> int:
        env = self.world.env_table.values[env_id]
        return self.world.env_table(env._replace(view_index=self._per_member(env.view_index, k)))

    def _history(self, hist_id: int, k: int) -> int:
        history = self.world.hist_table.values[hist_id]
        return self.world.hist_table(history._replace(channels=self._per_pair(history.channels, k),
                                                      syncs=self._per_pair(history.syncs, k),
                                                      grace=self._per_pair_bits(history.grace, k)))

    def _per_member(self, values: tuple[Any, ...], k: int) -> tuple[Any, ...]:
        inverse = self.inverses[k]
        return tuple(values[inverse[m]] for m in range(self.n))

    def _per_pair(self, values: tuple[Any, ...], k: int) -> tuple[Any, ...]:
        n, inverse = self.n, self.inverses[k]
        return tuple(values[inverse[i // n] * n + inverse[i % n]] for i in range(n * n))

    def _per_pair_bits(self, bits: int, k: int) -> int:
        """A bit set over pairs (bit src*n+dst) renamed like ``_per_pair``."""
        if not bits:
            return 0
        n, inverse = self.n, self.inverses[k]
        return sum(1 << i for i in range(n * n) if bits >> (inverse[i // n] * n + inverse[i % n]) & 1)
