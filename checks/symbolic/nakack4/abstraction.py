"""The map between ``models/multicast_world.py``'s NAKACK4 worlds and ``nakack4.model``'s states.

- ``abstract(view, capacity)`` (``binder(cfg)``: with the configuration's capacity): a decoded
  world as a concrete ``State`` of the symbolic model, for sender member 0 (``ME``): its own
  window, counter, held seqnos, view and AckTable, every member's hd for it, and the ACKs to it
  in flight. Worlds outside the model's scope (DONT_LOOPBACK, S out of its own view) raise
  ``OutOfScope``; so do joins and merges (``action_instance``).
- ``action_instance(action)``: a world action as (symbolic action name, parameters).
- ``enabled_check(actions)``: the symbolic -> spec direction for the window's guard: a held seqno is
  symbolically addable exactly when the spec enables its thread's ``Timer(SEND, s)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from checks.symbolic.nakack4.model import ME
from checks.symbolic.system import Action, State
from checks.symbolic.unicast3.abstraction import OutOfScope
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, Stop
from models.world import DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, WorldView
from spec import nakack4 as n4
from spec.nakack2_state import Data, XmitRsp


def abstract(view: WorldView, capacity: int) -> State:
    """``view`` as a concrete symbolic state (see the module docstring); ``capacity``: the
    configuration's (a constant of the world, not of a node)."""
    node = view.nodes[ME]
    own = node.windows[ME]
    if own is None or ME not in node.members:
        raise OutOfScope("member 0 has no own window or is out of its own view")
    hd = {m.me: m.windows[ME].delivered for m in view.nodes if m.windows[ME] is not None}
    acks = frozenset((p.src, p.msg.seqno) for p in view.network if p.dst == ME and isinstance(p.msg, n4.Ack))
    return State(cap=capacity, low=own.low, high=own.high, seqno=node.seqno,
                 sending=frozenset((s,) for s, _ in node.sending), hd=hd,
                 members=frozenset((m,) for m in node.members),
                 table={m: a for m, a in enumerate(node.ack_table) if a != n4.NO_ENTRY}, ack_min=node.ack_min,
                 n_ack=acks)


def binder(cfg: n4.Config) -> Callable[[WorldView], State]:
    """``abstract`` with the configuration's capacity (constant in a world)."""
    if cfg.dont_loopback:
        raise OutOfScope("dont_loopback: the own hd moves and S acks itself inside the add")

    return lambda view: abstract(view, cfg.capacity)


def action_instance(action: Any) -> tuple[str, dict[str, Any]]:
    """(symbolic action, parameters) of a world action."""
    if isinstance(action, AppMcast):
        return ("send", {}) if action.src == ME else ("stutter", {})
    if isinstance(action, (DeliverPacket, DuplicatePacket)):
        return _delivery(action.packet, isinstance(action, DuplicatePacket))
    if isinstance(action, (LosePacket, DropBelow)):
        return "lose", {}
    if isinstance(action, FireTimer):
        kind = action.timer.kind
        if kind == n4.SEND and action.member == ME:
            return "add", {"s": action.timer.peer}
        if kind == n4.XMIT:
            return "xmit", {"r": action.member}
        if kind == n4.DELIVER_FAULT:
            return "stutter", {}
    if isinstance(action, InstallView):
        if action.member == ME:
            return "view_s", {"M": frozenset((m,) for m in action.members)}
        return ("stutter", {}) if ME in action.members else ("view_r", {"r": action.member})
    if isinstance(action, Stop):
        return "stutter", {}
    if isinstance(action, (AnswerJoin, MergeView)):
        raise OutOfScope(f"action {action!r}: joins and merges create windows and entries")
    raise OutOfScope(f"action {action!r}")


def _delivery(packet: Any, keep: bool) -> tuple[str, dict[str, Any]]:
    m = packet.msg
    if isinstance(m, n4.Ack):
        return ("deliver_ack", {"r": packet.src, "seqno": m.seqno, "keep": keep}) if packet.dst == ME else (
            "stutter", {})
    if (isinstance(m, Data) and packet.src == ME) or (isinstance(m, XmitRsp) and m.sender == ME):
        return "deliver", {"r": packet.dst}
    return "stutter", {}


def enabled_check(actions: dict[str, Action]) -> Callable[[Any, tuple[int, ...], WorldView, State, Any],
                                                            tuple[int, list[str]]]:
    """Symbolic -> spec for the window's edge, with ``actions`` (a binding's): for every held
    seqno, the symbolic ``add`` guard holds exactly when the spec enables ``Timer(SEND, s)``
    (member 0 not stopped). The check returns (instances compared, mismatches)."""
    from checks.symbolic.crosscheck import CONCRETE
    from models.multicast_world import McastEnv, stopped

    def check(world: Any, state: tuple[int, ...], view: WorldView, pre: State, variant: Any
              ) -> tuple[int, list[str]]:
        if stopped(cast(McastEnv, view.env), ME):
            return 0, []
        timers = set(n4.enabled_timers(world.cfg, view.nodes[ME]))
        problems = []
        for (s,) in sorted(pre.sending):
            symbolic = bool(actions["add"].guard(CONCRETE, pre, {"s": s}, variant))
            if symbolic != (n4.Timer(n4.SEND, s) in timers):
                problems.append(f"add {s}: symbolic guard {symbolic}, spec enables its SEND timer "
                                f"{not symbolic} on {pre}")
        return len(pre.sending), problems
    return check
