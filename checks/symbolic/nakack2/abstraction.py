"""The map between ``models/multicast_world.py``'s NAKACK2 worlds and ``nakack2.model``'s states.

- ``abstract(view, sender, n)`` (``binder(sender, n)``): a decoded world as a concrete ``State`` of the
  symbolic model for ``sender``: its own window, every member's window for it and view (a view's id is
  its members' bitmask, ``view_id``; ``vdef`` is every bitmask of ``n`` members with its members), the
  coordinators' votes and merged minimum for the sender, and the votes and STABILITY messages in flight.
  A member with a JoinRsp still to come (no view) has no entry; a world where the sender has no own
  window or is out of its own view raises ``OutOfScope``, and so does a join (``action_instance``).
- ``action_instance(sender)``: a world action as (symbolic action name, parameters).
- ``stable_enabled(sender)``: the symbolic -> spec direction for the gossip's guard: a member's
  ``stable`` is symbolically enabled exactly when the spec enables its STABLE timer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from checks.symbolic.ops import EMPTY
from checks.symbolic.system import Action, State
from checks.symbolic.unicast3.abstraction import OutOfScope
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, Stop
from models.world import DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, WorldView
from spec import nakack2 as nak


def view_id(members: Any) -> int:
    """A view's id: the bitmask of its members (equal ids are equal member sets, as the spec compares)."""
    return sum(1 << m for m in members)


def vdef(n: int) -> frozenset[tuple[int, int]]:
    """Every view of ``n`` members (by id) with its members: the model's constant ``vdef``."""
    return frozenset((mask, m) for mask in range(1, 1 << n) for m in range(n) if mask >> m & 1)


def _entry(digest: nak.Digest, sender: int) -> int:
    entry = digest[sender]
    return EMPTY if entry is None else entry[0]


def abstract(view: WorldView, sender: int, views: frozenset[tuple[int, int]]) -> State:
    """``view`` as a concrete symbolic state for ``sender`` (see the module docstring)."""
    node = view.nodes[sender]
    own = node.windows[sender]
    if own is None or sender not in node.members:
        raise OutOfScope(f"member {sender} has no own window or is out of its own view")
    hd = {m.me: m.windows[sender].delivered for m in view.nodes if m.windows[sender] is not None}
    votes = frozenset((m.me, k) for m in view.nodes for k in m.votes)
    merged = {m.me: m.merged[sender][0] for m in view.nodes if m.merged[sender] is not None}
    n_vote = frozenset((p.src, view_id(p.msg.view), _entry(p.msg.digest, sender)) for p in view.network
                       if isinstance(p.msg, nak.StableVote))
    n_stab = frozenset((p.dst, view_id(p.msg.view), _entry(p.msg.digest, sender)) for p in view.network
                       if isinstance(p.msg, nak.Stability))
    return State(me=sender, low=own.low, high=own.highest_received, hd=hd,
                 cur={m.me: view_id(m.members) for m in view.nodes if m.members}, vdef=views, votes=votes,
                 merged=merged, n_vote=n_vote, n_stab=n_stab)


def binder(sender: int, n: int) -> Callable[[WorldView], State]:
    views = vdef(n)
    return lambda view: abstract(view, sender, views)


def action_instance(sender: int) -> Callable[[Any], tuple[str, dict[str, Any]]]:
    """(symbolic action, parameters) of a world action, for ``sender``'s model."""

    def instance(action: Any) -> tuple[str, dict[str, Any]]:
        if isinstance(action, AppMcast):
            return ("send", {}) if action.src == sender else ("stutter", {})
        if isinstance(action, (DeliverPacket, DuplicatePacket)):
            return _delivery(sender, action.packet)
        if isinstance(action, (LosePacket, DropBelow)):
            return "lose", {}
        if isinstance(action, FireTimer):
            if action.timer.kind == nak.STABLE:
                return "stable", {"k": action.member}
            if action.timer.kind == nak.XMIT:
                return "stutter", {}
            raise OutOfScope("BECOME_SERVER: a joiner's queue")
        if isinstance(action, InstallView):
            return "view", {"k": action.member, "view": view_id(action.members)}
        if isinstance(action, MergeView):
            return "merge", {"k": action.member, "view": view_id(action.members)}
        if isinstance(action, Stop):
            return "stutter", {}
        if isinstance(action, AnswerJoin):
            raise OutOfScope(f"action {action!r}: a join creates windows at the coordinator's digest")
        raise OutOfScope(f"action {action!r}")
    return instance


def _delivery(sender: int, packet: Any) -> tuple[str, dict[str, Any]]:
    """A delivered packet: a vote, a STABILITY, a copy of ``sender``'s message, or nothing here."""
    m = packet.msg
    if isinstance(m, nak.StableVote):
        return "deliver_vote", {"c": packet.dst, "k": packet.src, "view": view_id(m.view),
                                "h": _entry(m.digest, sender)}
    if isinstance(m, nak.Stability):
        return "deliver_stab", {"j": packet.dst, "view": view_id(m.view), "h": _entry(m.digest, sender)}
    if (isinstance(m, nak.Data) and packet.src == sender) or (isinstance(m, nak.XmitRsp) and m.sender == sender):
        return "deliver", {"r": packet.dst}
    if isinstance(m, nak.JoinRsp):
        raise OutOfScope("a JoinRsp: joins are out of scope")
    return "stutter", {}


def stable_enabled(actions: dict[str, Action]) -> Callable[[Any, tuple[int, ...], WorldView, State, Any],
                                                             tuple[int, list[str]]]:
    """Symbolic -> spec for the gossip, with ``actions`` (a binding's): for every member that has not
    stopped, the symbolic ``stable`` guard holds exactly when the spec enables its STABLE timer."""
    from checks.symbolic.crosscheck import CONCRETE
    from models.multicast_world import McastEnv, stopped

    def check(world: Any, state: tuple[int, ...], view: WorldView, pre: State, variant: Any
              ) -> tuple[int, list[str]]:
        problems, checked = [], 0
        for node in view.nodes:
            if stopped(cast(McastEnv, view.env), node.me):
                continue
            checked += 1
            symbolic = bool(actions["stable"].guard(CONCRETE, pre, {"k": node.me}, variant))
            spec = nak.Timer(nak.STABLE) in nak.enabled_timers(world.cfg, node)
            if symbolic != spec:
                problems.append(f"stable {node.me}: symbolic guard {symbolic}, spec enables STABLE {spec} on {pre}")
        return checked, problems
    return check
