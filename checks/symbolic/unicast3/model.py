"""One UNICAST3 connection as a symbolic transition system: its state and its actions.

Scope and design
----------------
Member A (0) sends to member B (1); B sends no application messages, so the connection is A's send
entry for B, B's receive entry for A, and what they exchange. Every number is an unbounded integer
(seqnos, conn_ids, timestamps); nothing is bounded by a model file's budgets.

State (``FIELDS``; ``s_`` is A's send entry, ``r_`` B's receive entry, ``n_`` the network):

- ``s_exists s_conn s_open s_acked s_hs s_wm_lo s_wm_hi s_last_ts``: SendEntry (``s_hs`` is
  highest_sent = acked + len(unacked); payloads are abstracted away: no invariant reads them).
  ``a_next_conn`` is A's next_conn_id, ``a_view_b`` "B is in A's view".
- ``r_exists r_conn r_open r_hd r_ack_pending``: RecvEntry; ``r_buf`` maps a seqno above ``r_hd``
  to the conn_id of the message held in that slot (``EMPTY``: a gap). A slot is keyed by its own
  seqno, so "each message sits in its own slot" (the second half of I4) holds by construction.
  ``b_ts`` is B's timestamper, ``b_sync_sent`` "A is in B's last_sync_sent", ``b_view_a`` "A is in
  B's view". B's xmit_task_map is abstracted away (the XMIT_REQ it drives is over-approximated).
  ``b_cache`` is B's message cache for A (decision 7, JGRP-2327): the (seqno, conn_id) of the
  non-first DATA it holds (a set, as in the spec; the payload of seqno n is n).
- The network is an unbounded *set* of in-flight packets per message type: ``n_data`` (seqno,
  conn_id, first), ``n_ack`` (seqno, conn_id, ts), ``n_sfs`` (ts), ``n_close`` (conn_id), and
  ``n_xreq``: the seqnos named by some XMIT_REQ in flight. A set, not a multiset: a delivery may
  consume its packet or leave it in flight (a duplicate), and any packet may be lost, with no
  budget, so the model covers every count of copies.

Actions (``ACTIONS``) follow ``spec/unicast3.py``'s handlers and ``models/world.py``'s rules: the
application send, the delivery of each message type (``keep``: a copy stays in flight), loss, the
timers of each member (XMIT, IDLE_*, CLOSE_*, SYNC_EXPIRED), B's receiver-removal hook, and view
changes to any view (over-approximating the model files' scripts). Rule 6 of the world (a window or
send entry is dropped only while nothing of it is in flight: conn_close_timeout = 2 x MSL) is the
guard ``quiet``. Two actions over-approximate the spec and say so: an XMIT run may add any seqno
above B's highest delivered that B does not hold to ``n_xreq`` (the spec asks only for gaps seen on
the previous run), and an XMIT_REQ delivery resends any subset ``R`` of ``n_xreq`` it holds.

The relation is hand-written once, against ``checks/symbolic/ops.Ops``; ``crosscheck`` evaluates
this same source on every concrete step of the explicit checker (concrete -> symbolic) and checks
that every concretely enabled instance of a guard is enabled in the spec (symbolic -> spec), so the
two cannot drift silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import BOOL, INT, Action, ModelSpec, State, frame
from spec.unicast3 import Variant

FIELDS: dict[str, Any] = {
    "s_exists": BOOL, "s_conn": INT, "s_open": BOOL, "s_acked": INT, "s_hs": INT,
    "s_wm_lo": INT, "s_wm_hi": INT, "s_last_ts": INT, "a_next_conn": INT, "a_view_b": BOOL,
    "r_exists": BOOL, "r_conn": INT, "r_open": BOOL, "r_hd": INT, "r_buf": ("map",),
    "r_ack_pending": BOOL, "b_ts": INT, "b_sync_sent": BOOL, "b_view_a": BOOL, "b_cache": ("set", INT, INT),
    "n_data": ("set", INT, INT, BOOL), "n_ack": ("set", INT, INT, INT), "n_sfs": ("set", INT),
    "n_xreq": ("set", INT), "n_close": ("set", INT),
}
SENDER = ("s_conn", "s_open", "s_acked", "s_hs", "s_wm_lo", "s_wm_hi", "s_last_ts")
RECEIVER = ("r_conn", "r_open", "r_hd", "r_buf", "r_ack_pending")


# ---------------------------------------------------------------------------------------------
# Helpers shared by the actions.
def _accepts(o: Ops, p: State, ts: Any, v: Variant) -> Any:
    """updateLastTimestamp: the first timestamp is accepted, later ones only if strictly newer."""
    if v.no_timestamps:
        return True
    return o.Or(p.s_last_ts == 0, ts > p.s_last_ts)


def quiet(o: Ops, p: State) -> Any:
    """World rule 6: nothing of B's window for A (DATA to it, ACK / SFS / XMIT_REQ from it) in flight."""
    def none(s: Any) -> Any:
        return o.forall_in(s, lambda *k: False)
    return o.And(none(p.n_data), none(p.n_ack), none(p.n_sfs), none(p.n_xreq))


def _flush_ack(o: Ops, p: State, v: Variant) -> dict[str, Any]:
    """sendPendingAcks for B's window: ACK(hd, conn, next timestamp) if an ACK is pending."""
    pending = o.And(p.r_exists, p.r_ack_pending)
    ts = 0 if v.no_timestamps else p.b_ts + 1
    return {"b_ts": p.b_ts if v.no_timestamps else o.If(pending, p.b_ts + 1, p.b_ts),
            "r_ack_pending": o.If(pending, False, p.r_ack_pending),
            "n_ack": o.If(pending, o.add(p.n_ack, p.r_hd, p.r_conn, ts), p.n_ack)}


def _keep_or_consume(o: Ops, s: Any, keep: Any, *key: Any) -> Any:
    return o.If(keep, s, o.remove(s, *key))


# ---------------------------------------------------------------------------------------------
# Actions. Each is (guard, effect); the transition relation of an action is guard AND effect.
def _send(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    new = o.Not(p.s_exists)
    conn = o.If(new, p.a_next_conn, p.s_conn)
    hs = o.If(new, 0, p.s_hs)
    return frame(o, p, q, {
        "s_exists": True, "s_conn": conn, "s_open": True, "s_acked": o.If(new, 0, p.s_acked), "s_hs": hs + 1,
        "s_wm_lo": o.If(new, 0, p.s_wm_lo), "s_wm_hi": o.If(new, 0, p.s_wm_hi),
        "s_last_ts": o.If(new, 0, p.s_last_ts), "a_next_conn": o.If(new, p.a_next_conn + 1, p.a_next_conn),
        "n_data": o.add(p.n_data, hs + 1, conn, hs + 1 == 1)})


def _request_first_seqno(o: Ops, p: State, q: State, net: dict[str, Any], v: Variant) -> Any:
    """B asks A for its first seqno (rate-limited unless the JGRP-1874 variant, which remembers
    nothing: 3.4.x has no last_sync_sent); ``net`` holds the other changes (the DATA taken off the
    network, and put into B's cache)."""
    limited = False if v.no_sync_rate_limit else p.b_sync_sent
    ts = 0 if v.no_timestamps else p.b_ts + 1
    asked = {**net, "b_ts": p.b_ts if v.no_timestamps else p.b_ts + 1,
             "b_sync_sent": p.b_sync_sent if v.no_sync_rate_limit else True,
             "n_sfs": o.add(p.n_sfs, ts)}
    return o.If(limited, frame(o, p, q, net), frame(o, p, q, asked))


def _receive_into_window(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant, net: dict[str, Any]) -> Any:
    """_on_data with a usable window (the existing one, or a new one for a first DATA): add the
    cached DATA of the window's connection and the message to their slots if new (the cache is
    drained), deliver from hd + 1 up to the first gap, set ACK pending."""
    s, c = a["seqno"], a["conn"]
    match = o.And(p.r_exists, p.r_conn == c)
    conn0, hd0 = o.If(match, p.r_conn, c), o.If(match, p.r_hd, s - 1)
    buf0 = o.fill_row(o.If(match, p.r_buf, o.empty_map()), p.b_cache, conn0, lambda x: x > hd0)
    buf1 = o.If(o.And(s > hd0, o.get(buf0, s) == EMPTY), o.put(buf0, s, c), buf0)
    pending = True
    if v.ack_only_new:
        pending = o.Or(o.If(match, p.r_ack_pending, False), q.r_hd > hd0)
    delivered = o.And(q.r_hd >= hd0, o.forall_range(hd0, q.r_hd, lambda x: o.get(buf1, x) != EMPTY),
                      o.get(buf1, q.r_hd + 1) == EMPTY)
    return o.And(delivered, frame(o, p, q, {
        **net, "r_exists": True, "r_conn": conn0, "r_open": True, "r_ack_pending": pending,
        "r_buf": o.restrict_above(buf1, q.r_hd), "b_cache": o.remove_where(p.b_cache, lambda x, y: True)},
        free=("r_hd",)))


def _deliver_data(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    s, c, f = a["seqno"], a["conn"], a["first"]
    net = {"n_data": _keep_or_consume(o, p.n_data, a["keep"], s, c, f)}
    ask = o.And(o.Not(o.And(p.r_exists, p.r_conn == c)), o.Not(f))
    cached = net if v.no_message_cache else {**net, "b_cache": o.add(p.b_cache, s, c)}
    return o.And(o.Implies(ask, _request_first_seqno(o, p, q, cached, v)),
                 o.Implies(o.Not(ask), _receive_into_window(o, p, q, a, v, net)))


def _deliver_ack(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    accept = o.And(p.s_exists, p.s_conn == a["conn"], _accepts(o, p, a["ts"], v))
    upto = o.min(a["seqno"], p.s_hs)
    return frame(o, p, q, {
        "n_ack": _keep_or_consume(o, p.n_ack, a["keep"], a["seqno"], a["conn"], a["ts"]),
        "s_acked": o.If(o.And(accept, upto > p.s_acked), upto, p.s_acked),
        "s_last_ts": p.s_last_ts if v.no_timestamps else o.If(accept, a["ts"], p.s_last_ts)})


def _deliver_sfs(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    accept = o.And(p.s_exists, _accepts(o, p, a["ts"], v))
    answer = o.And(accept, p.s_hs > p.s_acked)
    return frame(o, p, q, {
        "n_sfs": _keep_or_consume(o, p.n_sfs, a["keep"], a["ts"]),
        "s_last_ts": p.s_last_ts if v.no_timestamps else o.If(accept, a["ts"], p.s_last_ts),
        "n_data": o.If(answer, o.add(p.n_data, p.s_acked + 1, p.s_conn, True), p.n_data)})


def _deliver_xreq(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    resent = o.add_where(p.n_data, a["R"], lambda x: (p.s_conn, x == 1),
                         lambda x: o.And(p.s_exists, p.s_acked < x, x <= p.s_hs))
    requests = o.Or(a["keep"], o.And(o.subset(q.n_xreq, p.n_xreq),
                                     o.forall_in(p.n_xreq, lambda x: o.Or(o.has(q.n_xreq, x), o.has(a["R"], x)))))
    return o.And(o.If(a["keep"], q.n_xreq == p.n_xreq, requests),
                 frame(o, p, q, {"n_data": resent}, free=("n_xreq",)))


def _deliver_close(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    removed = o.And(p.r_exists, p.r_conn == a["conn"])
    keep_window = o.And(*[q[f] == p[f] for f in RECEIVER])
    return o.And(o.Implies(o.Not(removed), keep_window),
                 frame(o, p, q, {"n_close": _keep_or_consume(o, p.n_close, a["keep"], a["conn"]),
                                 "r_exists": o.And(p.r_exists, o.Not(removed))}, free=RECEIVER))


def _lose(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    nets = ("n_data", "n_ack", "n_sfs", "n_xreq", "n_close")
    return o.And(*[o.subset(q[n], p[n]) for n in nets], frame(o, p, q, {}, free=nets))


def _xmit_a(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """A's retransmit task: HS resend while (HA, HS) is stalled, else remember (HA, HS)."""
    stalled = o.And(p.s_exists, p.s_acked < p.s_hs, p.s_wm_lo == p.s_acked, p.s_wm_hi == p.s_hs)
    moved = o.And(p.s_exists, o.Or(p.s_wm_lo != p.s_acked, p.s_wm_hi != p.s_hs))
    resend = p.n_data if v.no_hs_resend else o.add(p.n_data, p.s_hs, p.s_conn, p.s_hs == 1)
    return frame(o, p, q, {"n_data": o.If(stalled, resend, p.n_data),
                           "s_wm_lo": o.If(moved, p.s_acked, p.s_wm_lo), "s_wm_hi": o.If(moved, p.s_hs, p.s_wm_hi)})


def _xmit_b(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """B's retransmit task: the pending ACK, then XMIT_REQs for gaps (over-approximated)."""
    def missing(x: Any) -> Any:
        return o.And(p.r_exists, x > p.r_hd, o.get(p.r_buf, x) == EMPTY)
    return o.And(o.grown_by(p.n_xreq, q.n_xreq, missing),
                 frame(o, p, q, _flush_ack(o, p, v), free=("n_xreq",)))


def _idle_send(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {"s_open": False})


def _idle_recv(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {"r_open": False})


def _close_send(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """conn_close_timeout on A's CLOSING entry: removed, CLOSE(conn) to B if B is a member."""
    return frame(o, p, q, {"s_exists": False, "n_close": o.If(p.a_view_b, o.add(p.n_close, p.s_conn), p.n_close)},
                 free=SENDER)


def _remove_recv(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """removeReceiveConnection (hook, or conn_close_timeout of a CLOSING window): flush, drop."""
    flushed = _flush_ack(o, p, v)
    del flushed["r_ack_pending"]
    return frame(o, p, q, {**flushed, "r_exists": False}, free=RECEIVER)


def _sync_expired(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {"b_sync_sent": False})


def _view_a(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    member = a["member"]
    if v.remove_on_view_change:
        gone = o.And(p.s_exists, o.Not(member))
        return o.And(o.Implies(o.Not(gone), o.And(*[q[f] == p[f] for f in SENDER])),
                     frame(o, p, q, {"a_view_b": member, "s_exists": o.And(p.s_exists, member)}, free=SENDER))
    return frame(o, p, q, {"a_view_b": member, "s_open": o.If(p.s_exists, member, p.s_open)})


def _view_b(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    member = a["member"]
    if v.remove_on_view_change:
        gone = o.And(p.r_exists, o.Not(member))
        return o.And(o.Implies(o.Not(gone), o.And(*[q[f] == p[f] for f in RECEIVER])),
                     frame(o, p, q, {"b_view_a": member, "r_exists": o.And(p.r_exists, member)}, free=RECEIVER))
    return frame(o, p, q, {"b_view_a": member, "r_open": o.If(p.r_exists, member, p.r_open)})


def _always(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return True


def _packet(field: str, *names: str) -> Callable[[Ops, State, dict[str, Any], Variant], Any]:
    return lambda o, p, a, v: o.has(p[field], *[a[n] for n in names])


def _xreq_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.forall_in(a["R"], lambda x: o.has(p.n_xreq, x)), o.Not(o.forall_in(a["R"], lambda x: False)))


ACTIONS: tuple[Action, ...] = (
    Action("send", (), _always, _send),
    Action("deliver_data", (("seqno", INT), ("conn", INT), ("first", BOOL), ("keep", BOOL)),
           _packet("n_data", "seqno", "conn", "first"), _deliver_data),
    Action("deliver_ack", (("seqno", INT), ("conn", INT), ("ts", INT), ("keep", BOOL)),
           _packet("n_ack", "seqno", "conn", "ts"), _deliver_ack),
    Action("deliver_sfs", (("ts", INT), ("keep", BOOL)), _packet("n_sfs", "ts"), _deliver_sfs),
    Action("deliver_xreq", (("R", ("set", INT)), ("keep", BOOL)), _xreq_guard, _deliver_xreq),
    Action("deliver_close", (("conn", INT), ("keep", BOOL)), _packet("n_close", "conn"), _deliver_close),
    Action("lose", (), _always, _lose),
    Action("xmit_a", (), _always, _xmit_a),
    Action("xmit_b", (), _always, _xmit_b),
    Action("idle_send", (), lambda o, p, a, v: o.And(p.s_exists, p.s_open), _idle_send),
    Action("idle_recv", (), lambda o, p, a, v: o.And(p.r_exists, p.r_open), _idle_recv),
    Action("close_send", (), lambda o, p, a, v: o.And(p.s_exists, o.Not(p.s_open), quiet(o, p)), _close_send),
    Action("close_recv", (), lambda o, p, a, v: o.And(p.r_exists, o.Not(p.r_open), quiet(o, p)), _remove_recv),
    Action("remove_recv", (), lambda o, p, a, v: o.And(p.r_exists, quiet(o, p)), _remove_recv),
    Action("sync_expired", (), lambda o, p, a, v: p.b_sync_sent, _sync_expired),
    Action("view_a", (("member", BOOL),), _always, _view_a),
    Action("view_b", (("member", BOOL),), _always, _view_b),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}


def initial(o: Ops, p: State) -> Any:
    """The initial state: no entries, empty network, conn_ids and timestamps from 0, full views."""
    def none(s: Any) -> Any:
        return o.forall_in(s, lambda *k: False)
    return o.And(o.Not(p.s_exists), o.Not(p.r_exists), p.a_next_conn == 0, p.b_ts == 0, o.Not(p.b_sync_sent),
                 p.a_view_b, p.b_view_a, none(p.n_data), none(p.n_ack), none(p.n_sfs), none(p.n_xreq),
                 none(p.n_close), none(p.b_cache))


UNICAST3 = ModelSpec("unicast3", FIELDS, ACTIONS, initial, SENDER, RECEIVER)
