"""The checkable properties of a composed world, by name, each a ``checks.explore.system`` property.

Three sources, one catalogue:
- the abstract channel (``spec/reliable_fifo``): no_duplicate, in_order, delivered_was_sent;
- the protocol's state and step properties (from its ``ProtocolAdapter``);
- liveness and the vacuity witness, stated over the channels and the send windows.

Predicates of one history or one node are memoised on its id, so checking every property on a
state costs a few dictionary look-ups and a few cheap pair checks; the checker also evaluates
them once per ``World.property_key`` (nodes and history).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from checks.explore.system import Always, Liveness, Property, Sometimes
from models.reduction import sticky_bits
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.protocols.base import ProtocolAdapter
    from models.world import World

CHANNEL_PROPERTIES: tuple[tuple[str, Callable[[fifo.Channel], bool]], ...] = (
    ("no_duplicate", fifo.no_duplicate),
    ("in_order", fifo.in_order),
    ("delivered_was_sent", fifo.delivered_was_sent),
)
# with DONT_LOOPBACK to self (``ProtocolAdapter.dont_loopback_flag``: UNICAST3, UNICAST4)
SELF_DELIVERY = ("no_self_delivery", fifo.no_self_delivery)
LIVENESS = (
    ("eventually_delivered", "From every reachable state, without further faults, every message is "
                             "delivered at least once (unless the sender discarded it at the end of the "
                             "grace period the protocol promises: UNICAST3's conn_close_timeout of an "
                             "entry that became CLOSING when the receiver left the sender's view, or by "
                             "idling out, and whose receiver has been in no view of the sender since; "
                             "UNICAST2 promises none)."),
    ("eventually_acked", "... and moreover every send window is emptied by acknowledgements."),
)
WITNESS = ("all_delivered_witness", "Some reachable state has every budgeted message sent and delivered "
                                    "(guards against a model that cannot do anything).")


def channel_properties(adapter: ProtocolAdapter) -> tuple[tuple[str, Callable[[fifo.Channel], bool]], ...]:
    """The channel properties of ``adapter``'s worlds: the three, and ``no_self_delivery`` where a
    send to oneself may be flagged DONT_LOOPBACK."""
    return CHANNEL_PROPERTIES + ((SELF_DELIVERY,) if adapter.dont_loopback_flag else ())


def property_names(adapter: ProtocolAdapter) -> list[str]:
    return ([n for n, _ in channel_properties(adapter)] + [n for n, _ in adapter.step_properties]
            + [p.name for p in adapter.node_properties] + [p.name for p in adapter.pair_properties]
            + [n for n, _ in adapter.config_properties] + [n for n, _ in LIVENESS]
            + [n for n, _ in adapter.liveness_goals] + [WITNESS[0]])


def property_docs(adapter: ProtocolAdapter) -> dict[str, str]:
    docs = {n: (f.__doc__ or "").strip() for n, f in channel_properties(adapter)}
    docs.update({p.name: p.doc.strip() for p in adapter.node_properties + adapter.pair_properties})
    docs.update({n: d.strip() for n, d in adapter.step_properties})
    docs.update({n: d.strip() for n, d in adapter.config_properties + adapter.liveness_goals})
    docs.update(dict(LIVENESS))
    docs[WITNESS[0]] = WITNESS[1]
    return {k: " ".join(docs[k].split()) for k in property_names(adapter)}  # in the order "all" takes them


def _cached(compute: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``compute`` memoised on its argument (a node id, a history id or a pair of node ids)."""
    cache: dict[Hashable, bool] = {}

    def get(key: Hashable) -> bool:
        found = cache.get(key)
        if found is None:
            found = cache[key] = compute(key)
        return found

    return get


def build_properties(world: World, adapter: ProtocolAdapter, selected: tuple[str, ...]) -> list[Property]:
    """The ``selected`` properties as checker properties over ``world``'s states.

    Predicates of one history or one node are memoised on its id (few distinct values); nothing is
    memoised on whole worlds or pairs of nodes (about one entry per state: memory, not speed)."""
    n = world.n
    hist = world.hist_table.values
    nodes = world.node_table.values
    pairs = tuple(world.pairs)

    def on_history(per_history: Callable[[Any], bool]) -> Callable[[tuple[int, ...]], bool]:
        cached = _cached(per_history)
        return lambda w: cached(w[n + 2])

    def on_nodes(per_node: Callable[[Any], bool]) -> Callable[[tuple[int, ...]], bool]:
        cached = _cached(lambda i: per_node(nodes[i]))
        return lambda w: all(map(cached, w[:n]))

    def on_pairs(per_pair: Callable[[Any, Any], bool]) -> Callable[[tuple[int, ...]], bool]:
        # not memoised: as many pairs of nodes as combinations of nodes, and each check is cheap
        return lambda w: all(per_pair(nodes[w[s]], nodes[w[d]]) for s, d in pairs)

    def channels_hold(predicate: Callable[[fifo.Channel], bool]) -> Callable[[int], bool]:
        return lambda h: all(predicate(c) for c in hist[h].channels)

    def step_holds(bit: int) -> Callable[[tuple[int, ...]], bool]:
        return lambda w: not hist[w[n + 2]].step_violations & bit

    sticky = sticky_bits(adapter)  # set only while reducing (models/reduction.py rule 4)

    def stable(name: str, now: Callable[[tuple[int, ...]], bool]) -> Callable[[tuple[int, ...]], bool]:
        bit = sticky[name]
        return lambda w: not hist[w[n + 2]].step_violations & bit and now(w)

    out: list[Property] = []
    docs = property_docs(adapter)
    for name, predicate in channel_properties(adapter):
        if name in selected:
            out.append(Always(name, on_history(channels_hold(predicate)), docs[name]))
    for name, _ in adapter.step_properties:
        if name in selected:
            out.append(Always(name, step_holds(adapter.step_bit(name)), docs[name]))
    for node_prop in adapter.node_properties:
        if node_prop.name in selected:
            out.append(Always(node_prop.name, stable(node_prop.name, on_nodes(node_prop.holds)), docs[node_prop.name]))
    for pair_prop in adapter.pair_properties:
        if pair_prop.name in selected:
            out.append(Always(pair_prop.name, stable(pair_prop.name, on_pairs(pair_prop.holds)), docs[pair_prop.name]))
    cfg = world.cfg
    for name, _ in adapter.config_properties:
        if name in selected:
            holds = on_nodes(lambda node, name=name: adapter.config_property_holds(name, cfg, node))  # type: ignore[misc]
            out.append(Always(name, holds, docs[name]))  # not sticky: checked on every state explored
    # a dead member (``Bounds.dead``) delivers nothing: the channels to it and the send entries to
    # it are no part of the liveness goals (what a sender does about it is: ``liveness_goals``)
    dead = world.bounds.dead
    live = tuple(i for i in range(n * n) if i % n not in dead)
    delivered = on_history(lambda h: all(hist[h].channels[i].all_delivered() for i in live))
    # (member, node id) -> its send entries to every live peer are fully acknowledged
    all_acked = _cached(lambda key: all(adapter.nothing_unacked(nodes[key[1]], d) for d in range(n)
                                        if d != key[0] and d not in dead))

    def acked(w: tuple[int, ...]) -> bool:
        return delivered(w) and all(all_acked((s, w[s])) for s in range(n))

    goals = {"eventually_delivered": delivered, "eventually_acked": acked}
    for name, doc in LIVENESS:
        if name in selected:
            out.append(Liveness(name, goals[name], doc))
    for name, _ in adapter.liveness_goals:
        if name in selected:
            reached = on_nodes(lambda node, name=name: adapter.goal_holds(name, node))  # type: ignore[misc]
            out.append(Liveness(name, reached, docs[name]))
    if WITNESS[0] in selected:
        budget = world.bounds.sends

        def witness(h: int) -> bool:
            channels = hist[h].channels
            return all(c.sent == budget[i] and (i % n in dead or c.all_delivered()) for i, c in enumerate(channels))

        out.append(Sometimes(WITNESS[0], on_history(witness), WITNESS[1]))
    return out
