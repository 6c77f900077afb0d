"""The map between ``models/world.py``'s concrete UNICAST2 worlds and ``unicast2.model``'s states
(as ``unicast3.abstraction`` does for UNICAST3), and the ``Binding`` the cross-check uses."""

from __future__ import annotations

from typing import Any

from checks.symbolic.crosscheck import Binding
from checks.symbolic.system import State
from checks.symbolic.unicast2.model import ACTION_BY_NAME, FIELDS, MAX_STABLE_MSGS
from checks.symbolic.unicast3.abstraction import OutOfScope
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
from spec import unicast2 as u2
from spec.reliable_fifo import Channel

A, B = 0, 1
TIMER_ACTIONS = {(A, u2.XMIT): "xmit_a", (B, u2.XMIT): "xmit_b", (B, u2.STABLE): "stable_b",
                 (A, u2.IDLE_SEND): "idle_send", (B, u2.IDLE_RECV): "idle_recv"}
TIMER_OF_ACTION = {name: key for key, name in TIMER_ACTIONS.items()}
PACKETS = {"deliver_data": ("n_data", ("seqno", "conn", "first")),
           "deliver_stable": ("n_stable", ("hd", "hr", "conn", "ts")), "deliver_sfs": ("n_sfs", ("seqno", "ts")),
           "deliver_ack": ("n_ack", ("seqno", "conn"))}
KINDS = {u2.Data: "deliver_data", u2.Stable: "deliver_stable", u2.SendFirstSeqno: "deliver_sfs",
         u2.Ack: "deliver_ack", u2.XmitReq: "deliver_xreq"}


def abstract(view: Any) -> State:
    if len(view.nodes) != 2:
        raise OutOfScope(f"{len(view.nodes)} members: the symbolic model has two")
    a, b = view.nodes
    if a.recv[B] is not None or b.send[A] is not None:
        raise OutOfScope("B sends to A: the symbolic model has one connection, A to B")
    out = State({name: (0 if kind == "int" else False) for name, kind in FIELDS.items() if isinstance(kind, str)})
    s, r = a.send[B], b.recv[A]
    if s is not None:
        out.update(s_exists=True, s_conn=s.conn_id, s_acked=s.acked, s_hs=s.highest_sent,
                   s_ack_received=s.ack_received, s_wm_lo=s.watermark[0], s_wm_hi=s.watermark[1],
                   s_last_ts=s.last_ts)
    buf: dict[int, int] = {}
    if r is not None:
        for index, msg in enumerate(r.buffered):
            if msg is not None:
                if msg.seqno != r.delivered + 1 + index or msg.conn_id < 0:
                    raise OutOfScope(f"DATA #{msg.seqno} (conn_id {msg.conn_id}) in slot #{r.delivered + 1 + index}")
                buf[msg.seqno] = msg.conn_id
        out.update(r_exists=True, r_conn=r.conn_id, r_hd=r.delivered, r_hr=r.highest_received,
                   r_last_highest=r.last_highest, r_stable_count=r.stable_count)
    out.update(r_buf=buf, a_next_conn=a.next_conn_id, a_view_b=B in a.members, b_ts=b.timestamper,
               b_view_a=A in b.members)
    out.update(_network(view.network))
    return out


def _network(packets: tuple[Packet, ...]) -> dict[str, frozenset[tuple[Any, ...]]]:
    sets: dict[str, set[tuple[Any, ...]]] = {n: set() for n in ("n_data", "n_stable", "n_sfs", "n_ack", "n_xreq")}
    for p in packets:
        m, forward = p.msg, (p.src, p.dst) == (A, B)
        if isinstance(m, u2.Data) and forward:
            sets["n_data"].add((m.seqno, m.conn_id, m.first))
        elif isinstance(m, u2.Stable) and not forward:
            sets["n_stable"].add((m.hd, m.hr, m.conn_id, m.ts))
        elif isinstance(m, u2.SendFirstSeqno) and not forward:
            sets["n_sfs"].add((m.seqno, m.ts))
        elif isinstance(m, u2.Ack) and not forward:
            sets["n_ack"].add((m.seqno, m.conn_id))
        elif isinstance(m, u2.XmitReq) and not forward:
            sets["n_xreq"].update((s,) for s in m.seqnos)
        else:
            raise OutOfScope(f"packet {p.kind} from {p.src} to {p.dst}")
    return {k: frozenset(v) for k, v in sets.items()}


def _delivery(packet: Packet, keep: bool) -> tuple[str, dict[str, Any]]:
    m = packet.msg
    name = KINDS[type(m)]
    if isinstance(m, u2.XmitReq):
        return name, {"R": frozenset((s,) for s in m.seqnos), "keep": keep}
    return name, {**dict(zip(PACKETS[name][1], m)), "keep": keep}


def action_instance(action: WorldAction, max_stable_msgs: int) -> tuple[str, dict[str, Any]]:
    """(symbolic action, parameters) of a world action (``max_stable_msgs``: the world's config)."""
    if isinstance(action, AppSend) and (action.src, action.dst) == (A, B):
        return "send", {}
    if isinstance(action, (DeliverPacket, DuplicatePacket)):
        return _delivery(action.packet, isinstance(action, DuplicatePacket))
    if isinstance(action, LosePacket):
        return "lose", {}
    if isinstance(action, FireTimer) and (action.member, action.timer.kind) in TIMER_ACTIONS:
        name = TIMER_ACTIONS[action.member, action.timer.kind]
        return name, ({MAX_STABLE_MSGS: max_stable_msgs} if name == "stable_b" else {})
    if isinstance(action, InstallView):
        other = B if action.member == A else A
        return ("view_a" if action.member == A else "view_b"), {"member": other in action.members}
    if isinstance(action, RemoveReceiver) and (action.member, action.peer) == (B, A):
        return "remove_recv", {}
    raise OutOfScope(f"action {action!r}")


def world_action(world: World, view: Any, name: str, params: dict[str, Any]) -> WorldAction | None:
    if name == "send":
        return AppSend(A, B)
    if name in TIMER_OF_ACTION:
        member, kind = TIMER_OF_ACTION[name]
        peer = -1 if kind in (u2.XMIT, u2.STABLE) else (B if member == A else A)
        return FireTimer(member, u2.Timer(kind, peer))
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


def binding_for(world: World) -> Binding:
    """The cross-check's binding of UNICAST2 in ``world`` (whose max_stable_msgs stable_b takes)."""
    limit = world.cfg.max_stable_msgs
    def switched_off(cfg: u2.Config, kind: int) -> bool:
        return kind in (u2.IDLE_SEND, u2.IDLE_RECV) and not cfg.conn_expiry

    return Binding(ACTION_BY_NAME, abstract, lambda action: action_instance(action, limit), world_action, u2,
                   TIMER_OF_ACTION, PACKETS, switched_off, {"stable_b": {MAX_STABLE_MSGS: limit}})


def concretize(state: State, base: Any = None) -> WorldView:
    """A concrete ``State`` as UNICAST2 nodes and packets (payload n for seqno n; a held message's
    first flag is ``seqno == 1``); budgets and view scripts from ``base``, a fresh history."""
    send = None
    if state.s_exists:
        send = u2.SendEntry(state.s_conn, state.s_acked, tuple(range(state.s_acked + 1, state.s_hs + 1)),
                            state.s_ack_received, (state.s_wm_lo, state.s_wm_hi), state.s_last_ts)
    recv = None
    if state.r_exists:
        slots = tuple(None if s not in state.r_buf else u2.Data(s, state.r_buf[s], s == 1, s)
                      for s in range(state.r_hd + 1, state.r_hr + 1))
        recv = u2.RecvEntry(state.r_conn, state.r_hd, slots, state.r_last_highest, state.r_stable_count)
    node_a = u2.Node(A, frozenset({A, B} if state.a_view_b else {A}), (None, send), (None, None), (0, 0), 0,
                     state.a_next_conn)
    node_b = u2.Node(B, frozenset({A, B} if state.b_view_a else {B}), (None, None), (recv, None), (0, 0),
                     state.b_ts, 0)
    packets = [Packet(A, B, "Data", u2.Data(s, c, f, s)) for s, c, f in state.n_data]
    packets += [Packet(B, A, "Stable", u2.Stable(*key)) for key in state.n_stable]
    packets += [Packet(B, A, "SendFirstSeqno", u2.SendFirstSeqno(*key)) for key in state.n_sfs]
    packets += [Packet(B, A, "Ack", u2.Ack(*key)) for key in state.n_ack]
    packets += [Packet(B, A, "XmitReq", u2.XmitReq((s,))) for (s,) in state.n_xreq]
    env = base.env if base is not None else Env(9, 9, 9, (0, 0))
    history = History(tuple(Channel() for _ in range(4)), 0, (0,) * 4)
    return WorldView((node_a, node_b), tuple(sorted(packets)), env, history)
