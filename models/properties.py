"""The checkable properties of a composed world, by name, each a ``checks.system`` property.

Three sources, one catalogue:
- the abstract channel (``spec/reliable_fifo``): no_duplicate, in_order, delivered_was_sent;
- the protocol's state and step properties (from its ``ProtocolAdapter``);
- liveness and the vacuity witness, stated over the channels and the send windows.

Every predicate is memoised on the part of the world it reads (node ids, history id), so checking
every property on every state costs a dictionary look-up in the common case.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from checks.system import Always, Liveness, Property, Sometimes
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.protocols import ProtocolAdapter
    from models.world import World

CHANNEL_PROPERTIES: tuple[tuple[str, Callable[[fifo.Channel], bool]], ...] = (
    ("no_duplicate", fifo.no_duplicate),
    ("in_order", fifo.in_order),
    ("delivered_was_sent", fifo.delivered_was_sent),
)
LIVENESS = (
    ("eventually_delivered", "From every reachable state, without further faults, every message is "
                             "delivered at least once (unless discarded after conn_close_timeout)."),
    ("eventually_acked", "... and moreover every send window is emptied by acknowledgements."),
)
WITNESS = ("all_delivered_witness", "Some reachable state has every budgeted message sent and delivered "
                                    "(guards against a model that cannot do anything).")


def property_names(adapter: ProtocolAdapter) -> list[str]:
    return ([n for n, _ in CHANNEL_PROPERTIES] + [n for n, _ in adapter.step_properties]
            + [p.name for p in adapter.node_properties] + [p.name for p in adapter.pair_properties]
            + [n for n, _ in LIVENESS] + [WITNESS[0]])


def property_docs(adapter: ProtocolAdapter) -> dict[str, str]:
    docs = {n: (f.__doc__ or "").strip() for n, f in CHANNEL_PROPERTIES}
    docs.update({p.name: p.doc.strip() for p in adapter.node_properties + adapter.pair_properties})
    docs.update({n: d.strip() for n, d in adapter.step_properties})
    docs.update(dict(LIVENESS))
    docs[WITNESS[0]] = WITNESS[1]
    return {k: " ".join(v.split()) for k, v in docs.items()}


def _memo(key: Callable[[Any], Hashable], compute: Callable[[Any], bool]) -> Callable[[Any], bool]:
    cache: dict[Hashable, bool] = {}

    def holds(world: Any) -> bool:
        k = key(world)
        found = cache.get(k)
        if found is None:
            found = cache[k] = compute(world)
        return found

    return holds


def build_properties(world: World, adapter: ProtocolAdapter, selected: tuple[str, ...]) -> list[Property]:
    """The ``selected`` properties as checker properties over ``world``'s states."""
    n = world.n
    hist = world._hists.values
    nodes = world._nodes.values

    def history_key(w: tuple[int, ...]) -> int:
        return w[n + 2]

    def nodes_key(w: tuple[int, ...]) -> tuple[int, ...]:
        return w[:n]

    def nodes_history_key(w: tuple[int, ...]) -> tuple[int, ...]:
        return w[:n] + (w[n + 2],)

    out: list[Property] = []
    docs = property_docs(adapter)
    for name, predicate in CHANNEL_PROPERTIES:
        if name in selected:
            out.append(Always(name, _memo(history_key, lambda w, p=predicate: all(  # type: ignore[misc]
                p(c) for c in hist[w[n + 2]].channels)), docs[name]))
    for name, _ in adapter.step_properties:
        if name in selected:
            bit = adapter.step_bit(name)
            out.append(Always(name, _memo(history_key, lambda w, b=bit: not hist[w[n + 2]].step_violations & b),  # type: ignore[misc]
                              docs[name]))

    for node_prop in adapter.node_properties:
        if node_prop.name in selected:
            out.append(Always(node_prop.name, _memo(nodes_key, lambda w, p=node_prop.holds: all(  # type: ignore[misc]
                p(nodes[i]) for i in w[:n])), docs[node_prop.name]))
    for pair_prop in adapter.pair_properties:
        if pair_prop.name in selected:
            out.append(Always(pair_prop.name, _memo(nodes_key, lambda w, p=pair_prop.holds: all(  # type: ignore[misc]
                p(nodes[w[s]], nodes[w[d]]) for s, d in world.pairs)), docs[pair_prop.name]))
    def delivered(w: tuple[int, ...]) -> bool:
        return all(c.all_delivered() for c in hist[w[n + 2]].channels)

    def acked(w: tuple[int, ...]) -> bool:
        return delivered(w) and all(adapter.nothing_unacked(nodes[w[s]], d) for s, d in world.pairs)

    goals = {"eventually_delivered": delivered, "eventually_acked": acked}
    for name, doc in LIVENESS:
        if name in selected:
            out.append(Liveness(name, _memo(nodes_history_key, goals[name]), doc))
    if WITNESS[0] in selected:
        budget = world.bounds.sends

        def witness(w: tuple[int, ...]) -> bool:
            channels = hist[w[n + 2]].channels
            return all(c.sent == budget[i] and c.all_delivered() for i, c in enumerate(channels))

        out.append(Sometimes(WITNESS[0], _memo(history_key, witness), WITNESS[1]))
    return out
