"""A concrete state of ``nakack4.model`` as spec nodes and packets of a multicast world, and a
symbolic action as that world's action: what ``checks/symbolic/cti.validate_cti`` needs to replay
z3's counterexamples-to-induction on ``spec/nakack4.py``.

- ``concretize(state, base)``: sender 0's node (its own window low .. hd kept, hd .. high stored
  except the seqnos threads still hold, payload n for seqno n; its counter, held threads, view,
  AckTable and minimum) and every other member's window for it at its hd (low == hd: a receiver
  nulls what it delivers); members without a window for 0 have a view without 0; the ACKs to 0 in
  flight. Everything else (other senders' windows, counters, budgets, history) comes from ``base``,
  the world's initial view.
- ``world_action``: the world action of a symbolic action with concrete parameters (None for those
  that name no single world action: ``lose``, a delivery whose new hd the model leaves open).
- ``pins``, ``scope``: the world's capacity as a constant, and member numbers within the world's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import z3

from checks.symbolic.nakack4.model import ME
from checks.symbolic.ops import Z3Ops
from checks.symbolic.system import State
from models.multicast_world import AppMcast
from models.world import DeliverPacket, DuplicatePacket, FireTimer, InstallView, Packet, WorldView
from spec import nakack4 as n4
from spec.nakack2_state import Data


def concretize(state: State, base: WorldView) -> WorldView:
    """``state`` as spec nodes and packets over ``base`` (see the module docstring)."""
    held = {s for (s,) in state.sending}
    own_hd = state.hd[ME]
    kept = tuple(Data(s, s) for s in range(state.low + 1, own_hd + 1))
    buffered = tuple(None if s in held else Data(s, s) for s in range(own_hd + 1, state.high + 1))
    n = len(base.nodes)
    members = frozenset(m for (m,) in state.members)
    nodes = []
    for node in base.nodes:
        if node.me == ME:
            windows = n4.set_at(node.windows, ME, n4.Window(state.low, own_hd, kept, buffered))
            nodes.append(replace(node, members=members, seqno=state.seqno, windows=windows,
                                 ack_table=tuple(state.table.get(m, n4.NO_ENTRY) for m in range(n)),
                                 ack_min=state.ack_min, sending=tuple((s, s) for s in sorted(held))))
            continue
        hd = state.hd.get(node.me)
        window = None if hd is None else n4.Window(hd, hd, (), ())
        view = node.members if hd is not None else node.members - {ME}
        nodes.append(replace(node, members=view, windows=n4.set_at(node.windows, ME, window)))
    acks = tuple(sorted(Packet(r, ME, "Ack", n4.Ack(a)) for r, a in state.n_ack))
    return WorldView(tuple(nodes), acks, base.env, base.history)


def world_action(world: Any, view: WorldView, name: str, params: dict[str, Any]) -> Any:
    """The world action of ``name(params)`` in ``view`` (see the module docstring)."""
    if name == "deliver_ack":
        packet = Packet(params["r"], ME, "Ack", n4.Ack(params["seqno"]))
        return DuplicatePacket(packet) if params["keep"] else DeliverPacket(packet)
    if name == "view_s":
        return InstallView(ME, tuple(sorted(m for (m,) in params["M"])))
    if name == "view_r":
        return InstallView(params["r"], tuple(sorted(m for m in view.nodes[params["r"]].members if m != ME)))
    if name == "send":
        return AppMcast(ME)
    if name == "add":
        return FireTimer(ME, n4.Timer(n4.SEND, params["s"]))
    return None


def pins(world: Any) -> dict[str, Any]:
    return {"cap": world.cfg.capacity}


def scope(world: Any) -> Any:
    """Side condition: every member the state names is one of the world's (0 .. n-1)."""
    n = world.n

    def member(k: Any) -> Any:
        return z3.And(k >= 0, k < n)

    def condition(o: Z3Ops, p: State) -> Any:
        return z3.And(o.forall_in(p.members, member), o.forall_map(p.hd, lambda k, x: member(k)),
                      o.forall_map(p.table, lambda k, x: member(k)), o.forall_in(p.n_ack, lambda r, a: member(r)))
    return condition
