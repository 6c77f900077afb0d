"""The map between ``models/world.py``'s concrete UNICAST3 worlds and ``unicast3.model``'s states.

- ``abstract(view)``: a decoded two-member world (A = member 0 sends to B = member 1) as a concrete
  ``State`` of the symbolic model: ints, bools, frozensets of packet tuples, a dict of B's slots.
  Worlds outside the model's scope (B with a send entry, A with a receive window, a message held
  in a slot that is not its own seqno) raise ``OutOfScope`` naming what is out of scope.
- ``action_instance(action)``: a world action as (symbolic action name, parameters).
- ``world_action(name, params, view)``: the other way, for the enabledness check and for
  replaying a counterexample-to-induction on the spec.
- ``concretize(state)``: a concrete ``State`` (e.g. from a z3 model) as spec nodes and packets,
  a ``WorldView`` that ``World.adopt`` turns into a state of a world built from a model file.
"""

from __future__ import annotations

from typing import Any

from checks.symbolic.system import State
from checks.symbolic.unicast3.model import FIELDS
from models.world import (
    AppSend,
    DeliverPacket,
    DuplicatePacket,
    Env,
    FireTimer,
    History,
    InstallView,
    LosePacket,
    Packet,
    RemoveReceiver,
    World,
    WorldAction,
    WorldView,
)
from spec import unicast3 as u3
from spec.reliable_fifo import Channel

A, B = 0, 1
TIMER_ACTIONS = {(A, u3.XMIT): "xmit_a", (B, u3.XMIT): "xmit_b", (A, u3.IDLE_SEND): "idle_send",
                 (B, u3.IDLE_RECV): "idle_recv", (A, u3.CLOSE_SEND): "close_send", (B, u3.CLOSE_RECV): "close_recv",
                 (B, u3.SYNC_EXPIRED): "sync_expired"}
TIMER_OF_ACTION = {name: key for key, name in TIMER_ACTIONS.items()}
DELIVERY = {"Data": "deliver_data", "Ack": "deliver_ack", "SendFirstSeqno": "deliver_sfs",
            "XmitReq": "deliver_xreq", "Close": "deliver_close"}


class OutOfScope(ValueError):
    """A concrete world or action that the one-connection symbolic model does not describe."""


def abstract(view: WorldView) -> State:
    """``view`` as a concrete symbolic state (see the module docstring)."""
    if len(view.nodes) != 2:
        raise OutOfScope(f"{len(view.nodes)} members: the symbolic model has two")
    a, b = view.nodes
    if a.recv[B] is not None or b.send[A] is not None:
        raise OutOfScope("B sends to A: the symbolic model has one connection, A to B")
    out = State({name: (0 if kind == "int" else False) for name, kind in FIELDS.items() if isinstance(kind, str)})
    s, r = a.send[B], b.recv[A]
    if s is not None:
        out.update(s_exists=True, s_conn=s.conn_id, s_open=s.state == u3.OPEN, s_acked=s.acked,
                   s_hs=s.highest_sent, s_wm_lo=s.watermark[0], s_wm_hi=s.watermark[1], s_last_ts=s.last_ts)
    buf: dict[int, int] = {}
    if r is not None:
        for index, msg in enumerate(r.buffered):
            if msg is None:
                continue
            if msg.seqno != r.delivered + 1 + index:
                raise OutOfScope(f"DATA #{msg.seqno} held in the slot of #{r.delivered + 1 + index}")
            buf[msg.seqno] = msg.conn_id
        out.update(r_exists=True, r_conn=r.conn_id, r_open=r.state == u3.OPEN, r_hd=r.delivered,
                   r_ack_pending=r.ack_pending)
    if a.cache[B]:
        raise OutOfScope("A caches DATA from B: the symbolic model has one connection, A to B")
    if any(m.first or m.payload != m.seqno for m in b.cache[A]):
        raise OutOfScope(f"B caches {sorted(b.cache[A])}: the model caches non-first DATA with payload n at seqno n")
    out.update(r_buf=buf, a_next_conn=a.next_conn_id, a_view_b=B in a.members, b_ts=b.timestamper,
               b_sync_sent=A in b.sync_sent, b_view_a=A in b.members,
               b_cache=frozenset((m.seqno, m.conn_id) for m in b.cache[A]))
    out.update(_network(view.network))
    return out


def _network(packets: tuple[Packet, ...]) -> dict[str, frozenset[tuple[Any, ...]]]:
    sets: dict[str, set[tuple[Any, ...]]] = {n: set() for n in ("n_data", "n_ack", "n_sfs", "n_xreq", "n_close")}
    for p in packets:
        m = p.msg
        forward = (p.src, p.dst) == (A, B)
        if isinstance(m, u3.Data) and forward:
            sets["n_data"].add((m.seqno, m.conn_id, m.first))
        elif isinstance(m, u3.Close) and forward:
            sets["n_close"].add((m.conn_id,))
        elif isinstance(m, u3.Ack) and not forward:
            sets["n_ack"].add((m.seqno, m.conn_id, m.ts))
        elif isinstance(m, u3.SendFirstSeqno) and not forward:
            sets["n_sfs"].add((m.ts,))
        elif isinstance(m, u3.XmitReq) and not forward:
            sets["n_xreq"].update((s,) for s in m.seqnos)
        else:
            raise OutOfScope(f"packet {p.kind} from {p.src} to {p.dst}")
    return {k: frozenset(v) for k, v in sets.items()}


def action_instance(action: WorldAction) -> tuple[str, dict[str, Any]]:
    """(symbolic action, parameters) of a world action."""
    if isinstance(action, AppSend) and (action.src, action.dst) == (A, B):
        return "send", {}
    if isinstance(action, (DeliverPacket, DuplicatePacket)):
        return _delivery(action.packet, isinstance(action, DuplicatePacket))
    if isinstance(action, LosePacket):
        return "lose", {}
    if isinstance(action, FireTimer) and (action.member, action.timer.kind) in TIMER_ACTIONS:
        return TIMER_ACTIONS[action.member, action.timer.kind], {}
    if isinstance(action, InstallView):
        other = B if action.member == A else A
        return ("view_a" if action.member == A else "view_b"), {"member": other in action.members}
    if isinstance(action, RemoveReceiver) and (action.member, action.peer) == (B, A):
        return "remove_recv", {}
    raise OutOfScope(f"action {action!r}")


def _delivery(packet: Packet, keep: bool) -> tuple[str, dict[str, Any]]:
    m = packet.msg
    name = DELIVERY[type(m).__name__]
    if isinstance(m, u3.Data):
        return name, {"seqno": m.seqno, "conn": m.conn_id, "first": m.first, "keep": keep}
    if isinstance(m, u3.Ack):
        return name, {"seqno": m.seqno, "conn": m.conn_id, "ts": m.ts, "keep": keep}
    if isinstance(m, u3.SendFirstSeqno):
        return name, {"ts": m.ts, "keep": keep}
    if isinstance(m, u3.XmitReq):
        return name, {"R": frozenset((s,) for s in m.seqnos), "keep": keep}
    return name, {"conn": m.conn_id, "keep": keep}


def concretize(state: State, base: WorldView | None = None) -> WorldView:
    """A concrete ``State`` as spec nodes and packets (payload n for seqno n; the first flag of a
    held message is ``seqno == 1``). Fault budgets and view scripts come from ``base`` (a world's
    initial view) when given; the history starts fresh."""
    members_a = frozenset({A, B} if state.a_view_b else {A})
    members_b = frozenset({A, B} if state.b_view_a else {B})
    send = None
    if state.s_exists:
        send = u3.SendEntry(state.s_conn, u3.OPEN if state.s_open else u3.CLOSING, state.s_acked,
                            tuple(range(state.s_acked + 1, state.s_hs + 1)), (state.s_wm_lo, state.s_wm_hi),
                            state.s_last_ts)
    recv = None
    if state.r_exists:
        top = max(state.r_buf, default=state.r_hd)
        slots = tuple(None if state.r_buf.get(s) is None else u3.Data(s, state.r_buf[s], s == 1, s)
                      for s in range(state.r_hd + 1, top + 1))
        recv = u3.RecvEntry(state.r_conn, u3.OPEN if state.r_open else u3.CLOSING, state.r_hd, slots,
                            state.r_ack_pending)
    none: tuple[frozenset[u3.Data], ...] = (frozenset(), frozenset())
    cached: tuple[frozenset[u3.Data], ...] = (frozenset(u3.Data(s, c, False, s) for s, c in state.b_cache), frozenset())
    synced = frozenset({A}) if state.b_sync_sent else frozenset()
    node_a = u3.Node(A, members_a, (None, send), (None, None), none, frozenset(), (0, 0), 0, state.a_next_conn)
    node_b = u3.Node(B, members_b, (None, None), (recv, None), cached, synced, (0, 0), state.b_ts, 0)
    packets = [Packet(A, B, "Data", u3.Data(s, c, f, s)) for s, c, f in state.n_data]
    packets += [Packet(A, B, "Close", u3.Close(c)) for (c,) in state.n_close]
    packets += [Packet(B, A, "Ack", u3.Ack(s, c, t)) for s, c, t in state.n_ack]
    packets += [Packet(B, A, "SendFirstSeqno", u3.SendFirstSeqno(t)) for (t,) in state.n_sfs]
    packets += [Packet(B, A, "XmitReq", u3.XmitReq((s,))) for (s,) in state.n_xreq]
    env = base.env if base is not None else Env(9, 9, 9, (0, 0))
    history = History(tuple(Channel() for _ in range(4)), 0, (0,) * 4)
    return WorldView((node_a, node_b), tuple(sorted(packets)), env, history)


def world_action(world: World, view: WorldView, name: str, params: dict[str, Any]) -> WorldAction | None:
    """The world action that ``name(params)`` stands for in ``view`` (None: ``lose``, which names
    no single packet, or a delivery whose packet is not in flight)."""
    if name == "send":
        return AppSend(A, B)
    if name in TIMER_OF_ACTION:
        member, kind = TIMER_OF_ACTION[name]
        peer = -1 if kind == u3.XMIT else (B if member == A else A)
        return FireTimer(member, u3.Timer(kind, peer))
    if name == "remove_recv":
        return RemoveReceiver(B, A)
    if name in ("view_a", "view_b"):
        member = A if name == "view_a" else B
        other = B if member == A else A
        return InstallView(member, tuple(sorted({member, other} if params["member"] else {member})))
    for packet in view.network:
        if _delivery(packet, params.get("keep", False)) == (name, params):
            return (DuplicatePacket if params.get("keep") else DeliverPacket)(packet)
    return None
