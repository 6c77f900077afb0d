"""A concrete state of ``nakack2.model`` as spec nodes and packets of a multicast world, and a
symbolic action as that world's action: what ``checks/symbolic/cti.validate_cti`` needs to replay
z3's counterexamples-to-induction on ``spec/nakack2.py``.

- ``concretize(state, base)``: every member's view (the bits of its view id), its window for the
  sender S (S's own: low .. hd kept, hd .. high stored, payload n for seqno n; another member's at
  its hd, low == hd) and a window at 0 for every other member of its view; S's counter; each
  coordinator's votes and merged entry for S (hd, hd); votes in flight to their view's coordinator
  and STABILITY from it, each digest naming S at (hd, hd) or not at all. Everything else (budgets,
  history, the other senders' counters) comes from ``base``, the world's initial view.
- ``world_action``: the world action of a symbolic action with concrete parameters (None for those
  that name no single world action: ``lose``, ``deliver``, whose new hd the model leaves open).
- ``pins``, ``scope``: the world's views (``vdef``, the bitmasks of its members) and sender as
  constants, and member numbers within the world's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import z3

from checks.symbolic.nakack2.abstraction import vdef
from checks.symbolic.ops import EMPTY, Z3Ops
from checks.symbolic.system import State
from models.multicast_world import AppMcast, MergeView
from models.world import DeliverPacket, FireTimer, InstallView, Packet, WorldView
from spec import nakack2 as nak


def _members(view_id: int) -> frozenset[int]:
    return frozenset(m for m in range(view_id.bit_length()) if view_id >> m & 1)


def _digest(n: int, sender: int, h: int) -> nak.Digest:
    return tuple((h, h) if m == sender and h != EMPTY else None for m in range(n))


def concretize(state: State, base: WorldView) -> WorldView:
    """``state`` as spec nodes and packets over ``base`` (see the module docstring)."""
    n, me = len(base.nodes), state.me
    nodes = []
    for node in base.nodes:
        k = node.me
        members = _members(state.cur[k]) if k in state.cur else frozenset()
        windows = [nak.new_window(0) if p in members else None for p in range(n)]
        hd = state.hd.get(k)
        if k == me:
            kept = tuple(nak.Data(s, s) for s in range(state.low + 1, hd + 1))
            windows[me] = nak.Window(state.low, hd, kept, tuple(nak.Data(s, s) for s in range(hd + 1, state.high + 1)))
        else:
            windows[me] = None if hd is None else nak.Window(hd, hd, (), ())
        merged = tuple((state.merged[k], state.merged[k]) if p == me and k in state.merged else None for p in range(n))
        nodes.append(replace(node, members=members, windows=tuple(windows), seqno=state.high if k == me else 0,
                             is_server=bool(members), votes=frozenset(j for c, j in state.votes if c == k),
                             merged=merged))
    packets = [Packet(k, min(_members(v)), "StableVote", nak.StableVote(tuple(sorted(_members(v))), _digest(n, me, h)))
               for k, v, h in state.n_vote]
    packets += [Packet(min(_members(v)), j, "Stability", nak.Stability(tuple(sorted(_members(v))), _digest(n, me, h)))
                for j, v, h in state.n_stab]
    return WorldView(tuple(nodes), tuple(sorted(packets, key=repr)), base.env, base.history)


def world_action(sender: int) -> Any:
    """The world action of ``name(params)`` in ``view`` for ``sender``'s model (see the module docstring)."""

    def action(world: Any, view: WorldView, name: str, params: dict[str, Any]) -> Any:
        if name in ("view", "merge"):
            members = tuple(sorted(_members(params["view"])))
            return (InstallView if name == "view" else MergeView)(params["k"], members)
        if name == "stable":
            return FireTimer(params["k"], nak.Timer(nak.STABLE))
        if name == "send":
            return AppMcast(sender)
        if name in ("deliver_vote", "deliver_stab"):
            kind = "StableVote" if name == "deliver_vote" else "Stability"
            wanted = (params["k"], params["c"]) if kind == "StableVote" else (params["j"],)
            for packet in view.network:
                who = (packet.src, packet.dst) if kind == "StableVote" else (packet.dst,)
                if packet.kind == kind and who == wanted and sum(1 << m for m in packet.msg.view) == params["view"]:
                    return DeliverPacket(packet)
        return None
    return action


def pins(world: Any, sender: int = 0) -> dict[str, Any]:
    return {"vdef": vdef(world.n), "me": sender}


def scope(world: Any) -> Any:
    """Side condition: every member the state names is one of the world's (0 .. n-1), every view one of
    its views, and a member with a view is in it (as in every state of the world)."""
    n = world.n

    def member(k: Any) -> Any:
        return z3.And(k >= 0, k < n)

    def condition(o: Z3Ops, p: State) -> Any:
        return z3.And(o.forall_map(p.hd, lambda k, x: member(k)),
                      o.forall_map(p.cur, lambda k, v: z3.And(member(k), o.has(p.vdef, v, k))),  # in its own view
                      o.forall_map(p.merged, lambda k, x: member(k)),
                      o.forall_in(p.votes, lambda c, k: z3.And(member(c), member(k))),
                      o.forall_in(p.n_vote, lambda k, v, h: z3.And(member(k), v >= 1, v < 2 ** n)),
                      o.forall_in(p.n_stab, lambda j, v, h: z3.And(member(j), v >= 1, v < 2 ** n)))
    return condition
