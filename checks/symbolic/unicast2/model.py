"""One UNICAST2 connection as a symbolic transition system (``spec/unicast2.py``), built like
``unicast3.model`` (read its docstring first: scope A -> B, unbounded numbers, the network as
packet sets, ``keep`` for duplicates, rule 6's ``quiet`` gate, the XMIT_REQ over-approximation).

What differs (UNICAST2's decisions, spec docstring):

- The send entry has no state but ``s_ack_received`` (the first message was acknowledged,
  JGRP-1563); the receive entry keeps ``r_hr`` (highest received) and the stable task's
  ``r_last_highest`` / ``r_stable_count``; there is no sync rate limit and no CLOSE.
- Packets: ``n_data`` (seqno, conn_id, first), ``n_stable`` (hd, hr, conn_id, ts), ``n_sfs``
  (seqno, ts), ``n_ack`` (seqno, conn_id) for a first DATA, ``n_xreq`` (seqnos asked for).
- STABLE purges up to hd (forced, clamped to HS) and resends hr .. HS; SEND_FIRST_SEQNO is
  answered with the window up to its seqno (the lowest marked first; ``fix_sync_lowest_only``:
  the lowest only); timestamps only with ``fix_timestamps``; the retransmit task resends the lowest
  message marked first until it is ACKed (unless ``no_first_ack``) and, with
  ``fix_resend_highest``, the highest while (HA, HS) is stalled.
- A view without the peer removes *both* entries at once (the receive entry after a final STABLE),
  with no rule 6 gate; so does the reaper (``idle_send``, ``idle_recv``; only the latter gated).
- conn_ids: the spec wraps them at 32767; this model counts on (a member opening fewer than 32768
  connections), ``checks/symbolic/counters`` shows what the wrap does. The variants without
  conn_ids on every header (``no_conn_ids``, ``conn_id_first_only``) are out of scope.
"""

from __future__ import annotations

from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import BOOL, INT, Action, ModelSpec, State, frame
from spec import unicast2 as u2

FIELDS: dict[str, Any] = {
    "s_exists": BOOL, "s_conn": INT, "s_acked": INT, "s_hs": INT, "s_ack_received": BOOL,
    "s_wm_lo": INT, "s_wm_hi": INT, "s_last_ts": INT, "a_next_conn": INT, "a_view_b": BOOL,
    "r_exists": BOOL, "r_conn": INT, "r_hd": INT, "r_hr": INT, "r_buf": ("map",), "r_last_highest": INT,
    "r_stable_count": INT, "b_ts": INT, "b_view_a": BOOL,
    "n_data": ("set", INT, INT, BOOL), "n_stable": ("set", INT, INT, INT, INT), "n_sfs": ("set", INT, INT),
    "n_ack": ("set", INT, INT), "n_xreq": ("set", INT),
}
SENDER = ("s_conn", "s_acked", "s_hs", "s_ack_received", "s_wm_lo", "s_wm_hi", "s_last_ts")
RECEIVER = ("r_conn", "r_hd", "r_hr", "r_buf", "r_last_highest", "r_stable_count")
NETWORK = ("n_data", "n_stable", "n_sfs", "n_ack", "n_xreq")
MAX_STABLE_MSGS = "max_stable_msgs"  # a parameter of every stable-task action: the model's config


def _none(o: Ops, s: Any) -> Any:
    return o.forall_in(s, lambda *k: False)


def quiet(o: Ops, p: State) -> Any:
    """World rule 6: nothing of B's window for A (DATA to it; ACK, SFS, XMIT_REQ, STABLE from it)."""
    return o.And(*[_none(o, p[n]) for n in NETWORK])


def _next_ts(o: Ops, p: State, v: u2.Variant) -> tuple[Any, Any]:
    """(timestamp of the next STABLE / SFS, B's counter after it): 0 and unchanged without the fix."""
    return (p.b_ts + 1, p.b_ts + 1) if v.fix_timestamps else (0, p.b_ts)


def _accepts(o: Ops, p: State, ts: Any, v: u2.Variant) -> Any:
    return o.Or(p.s_last_ts == 0, ts > p.s_last_ts) if v.fix_timestamps else True


def _send(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    new = o.Not(p.s_exists)
    conn, hs = o.If(new, p.a_next_conn, p.s_conn), o.If(new, 0, p.s_hs)
    keep = {f: o.If(new, fresh, p[f]) for f, fresh in (("s_acked", 0), ("s_ack_received", False), ("s_wm_lo", 0),
                                                           ("s_wm_hi", 0), ("s_last_ts", 0))}
    return frame(o, p, q, {**keep, "s_exists": True, "s_conn": conn, "s_hs": hs + 1,
                           "a_next_conn": o.If(new, p.a_next_conn + 1, p.a_next_conn),
                           "n_data": o.add(p.n_data, hs + 1, conn, hs + 1 == 1)})


def _deliver_data(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    s, c, f = a["seqno"], a["conn"], a["first"]
    net = {"n_data": o.If(a["keep"], p.n_data, o.remove(p.n_data, s, c, f))}
    match = o.And(p.r_exists, p.r_conn == c)
    ask = o.And(o.Not(match), o.Not(f))
    ts, b_ts = _next_ts(o, p, v)
    asked = frame(o, p, q, {**net, "b_ts": b_ts, "n_sfs": o.add(p.n_sfs, s, ts)})
    hd0, hr0 = o.If(match, p.r_hd, s - 1), o.If(match, p.r_hr, s - 1)
    buf0 = o.If(match, p.r_buf, o.empty_map())
    added = o.And(s > hd0, o.get(buf0, s) == EMPTY)
    buf1 = o.If(added, o.put(buf0, s, c), buf0)
    delivered = o.And(q.r_hd >= hd0, o.forall_range(hd0, q.r_hd, lambda x: o.get(buf1, x) != EMPTY),
                      o.get(buf1, q.r_hd + 1) == EMPTY)
    ack = o.If(o.And(f, not v.no_first_ack), o.add(p.n_ack, s, c), p.n_ack)
    window = o.And(delivered, frame(o, p, q, {
        **net, "r_exists": True, "r_conn": o.If(match, p.r_conn, c), "r_buf": o.restrict_above(buf1, q.r_hd),
        "r_hr": o.If(o.And(added, s > hr0), s, hr0), "r_last_highest": o.If(match, p.r_last_highest, 0),
        "r_stable_count": o.If(match, p.r_stable_count, 0), "n_ack": ack}, free=("r_hd",)))
    return o.And(o.Implies(ask, asked), o.Implies(o.Not(ask), window))


def _deliver_xreq(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    resent = o.add_where(p.n_data, a["R"], lambda x: (p.s_conn, x == 1),
                         lambda x: o.And(p.s_exists, p.s_acked < x, x <= p.s_hs))
    consumed = o.And(o.subset(q.n_xreq, p.n_xreq),
                     o.forall_in(p.n_xreq, lambda x: o.Or(o.has(q.n_xreq, x), o.has(a["R"], x))))
    return o.And(o.If(a["keep"], q.n_xreq == p.n_xreq, consumed), frame(o, p, q, {"n_data": resent}, free=("n_xreq",)))


def _deliver_sfs(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    accept = o.And(p.s_exists, _accepts(o, p, a["ts"], v))
    lowest = p.s_acked + 1
    upto = lowest if v.fix_sync_lowest_only else o.min(a["seqno"], p.s_hs)
    answer = o.And(accept, lowest <= p.s_hs, upto >= lowest)
    resent = o.add_range(o.add(p.n_data, lowest, p.s_conn, True), lowest, upto, lambda x: (p.s_conn, x == 1))
    return frame(o, p, q, {
        "n_sfs": o.If(a["keep"], p.n_sfs, o.remove(p.n_sfs, a["seqno"], a["ts"])),
        "s_last_ts": o.If(o.And(accept, v.fix_timestamps), a["ts"], p.s_last_ts),
        "n_data": o.If(answer, resent, p.n_data)})


def _deliver_stable(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    hd, hr, c, ts = a["hd"], a["hr"], a["conn"], a["ts"]
    accept = o.And(p.s_exists, p.s_conn == c, _accepts(o, p, ts, v))
    upto = o.min(hd, p.s_hs)
    acked = o.If(o.And(accept, upto > p.s_acked), upto, p.s_acked)
    start = o.If(hr > acked + 1, hr, acked + 1)  # resend max(hr, HA + 1) .. HS
    resent = o.add_range(p.n_data, start - 1, p.s_hs, lambda x: (p.s_conn, x == 1))
    return frame(o, p, q, {
        "n_stable": o.If(a["keep"], p.n_stable, o.remove(p.n_stable, hd, hr, c, ts)), "s_acked": acked,
        "s_last_ts": o.If(o.And(accept, v.fix_timestamps), ts, p.s_last_ts),
        "n_data": o.If(o.And(accept, p.s_hs > hr), resent, p.n_data)})


def _deliver_ack(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    match = o.And(p.s_exists, p.s_conn == a["conn"])
    return frame(o, p, q, {"n_ack": o.If(a["keep"], p.n_ack, o.remove(p.n_ack, a["seqno"], a["conn"])),
                           "s_ack_received": o.If(match, True, p.s_ack_received)})


def _lose(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    return o.And(*[o.subset(q[n], p[n]) for n in NETWORK], frame(o, p, q, {}, free=NETWORK))


def _xmit_a(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    """A's retransmit task: the first-message resend, and the HS resend (fix_resend_highest)."""
    busy = o.And(p.s_exists, p.s_hs > p.s_acked)
    data = p.n_data
    if not v.no_first_ack:
        data = o.If(o.And(busy, o.Not(p.s_ack_received)), o.add(data, p.s_acked + 1, p.s_conn, True), data)
    changes: dict[str, Any] = {"n_data": data}
    if v.fix_resend_highest:
        stalled = o.And(busy, p.s_wm_lo == p.s_acked, p.s_wm_hi == p.s_hs)
        moved = o.And(busy, o.Not(stalled))
        changes = {"n_data": o.If(stalled, o.add(data, p.s_hs, p.s_conn, p.s_hs == 1), data),
                   "s_wm_lo": o.If(moved, p.s_acked, p.s_wm_lo), "s_wm_hi": o.If(moved, p.s_hs, p.s_wm_hi)}
    return frame(o, p, q, changes)


def _xmit_b(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    def missing(x: Any) -> Any:
        return o.And(p.r_exists, x > p.r_hd, x < p.r_hr, o.get(p.r_buf, x) == EMPTY)
    return o.And(o.grown_by(p.n_xreq, q.n_xreq, missing), frame(o, p, q, {}, free=("n_xreq",)))


def _final_stable(o: Ops, p: State, v: u2.Variant) -> dict[str, Any]:
    ts, b_ts = _next_ts(o, p, v)
    return {"b_ts": b_ts, "n_stable": o.add(p.n_stable, p.r_hd, p.r_hr, p.r_conn, ts)}


def _stable_b(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    """B's stable task: STABLE(hd, hr) unless max_stable_msgs were sent for an unchanged hr."""
    same = p.r_hr == p.r_last_highest
    sends = o.And(p.r_exists, o.Or(o.Not(same), p.r_stable_count < a[MAX_STABLE_MSGS]))
    stable = _final_stable(o, p, v)
    return frame(o, p, q, {
        "b_ts": o.If(sends, stable["b_ts"], p.b_ts), "n_stable": o.If(sends, stable["n_stable"], p.n_stable),
        "r_last_highest": o.If(sends, p.r_hr, p.r_last_highest),
        "r_stable_count": o.If(sends, o.If(same, p.r_stable_count + 1, 1), p.r_stable_count)})


def _remove_recv(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    return frame(o, p, q, {**_final_stable(o, p, v), "r_exists": False}, free=RECEIVER)


def _idle_send(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    return frame(o, p, q, {"s_exists": False}, free=SENDER)


def _view_a(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    gone = o.And(p.s_exists, o.Not(a["member"]))
    return o.And(o.Implies(o.Not(gone), o.And(*[q[f] == p[f] for f in SENDER])),
                 frame(o, p, q, {"a_view_b": a["member"], "s_exists": o.And(p.s_exists, a["member"])}, free=SENDER))


def _view_b(o: Ops, p: State, q: State, a: dict[str, Any], v: u2.Variant) -> Any:
    gone = o.And(p.r_exists, o.Not(a["member"]))
    stable = _final_stable(o, p, v)
    return o.And(o.Implies(o.Not(gone), o.And(*[q[f] == p[f] for f in RECEIVER])), frame(o, p, q, {
        "b_view_a": a["member"], "r_exists": o.And(p.r_exists, a["member"]),
        "b_ts": o.If(gone, stable["b_ts"], p.b_ts), "n_stable": o.If(gone, stable["n_stable"], p.n_stable)},
        free=RECEIVER))


def _always(o: Ops, p: State, a: dict[str, Any], v: u2.Variant) -> Any:
    return True


def _packet(field: str, *names: str) -> Any:
    return lambda o, p, a, v: o.has(p[field], *[a[n] for n in names])


def _xreq_guard(o: Ops, p: State, a: dict[str, Any], v: u2.Variant) -> Any:
    return o.And(o.forall_in(a["R"], lambda x: o.has(p.n_xreq, x)), o.Not(_none(o, a["R"])))


ACTIONS: tuple[Action, ...] = (
    Action("send", (), _always, _send),
    Action("deliver_data", (("seqno", INT), ("conn", INT), ("first", BOOL), ("keep", BOOL)),
           _packet("n_data", "seqno", "conn", "first"), _deliver_data),
    Action("deliver_stable", (("hd", INT), ("hr", INT), ("conn", INT), ("ts", INT), ("keep", BOOL)),
           _packet("n_stable", "hd", "hr", "conn", "ts"), _deliver_stable),
    Action("deliver_sfs", (("seqno", INT), ("ts", INT), ("keep", BOOL)), _packet("n_sfs", "seqno", "ts"),
           _deliver_sfs),
    Action("deliver_ack", (("seqno", INT), ("conn", INT), ("keep", BOOL)), _packet("n_ack", "seqno", "conn"),
           _deliver_ack),
    Action("deliver_xreq", (("R", ("set", INT)), ("keep", BOOL)), _xreq_guard, _deliver_xreq),
    Action("lose", (), _always, _lose),
    Action("xmit_a", (), _always, _xmit_a),
    Action("xmit_b", (), _always, _xmit_b),
    Action("stable_b", ((MAX_STABLE_MSGS, INT),), lambda o, p, a, v: a[MAX_STABLE_MSGS] >= 1, _stable_b),
    Action("remove_recv", (), lambda o, p, a, v: o.And(p.r_exists, quiet(o, p)), _remove_recv),
    Action("idle_recv", (), lambda o, p, a, v: o.And(p.r_exists, quiet(o, p)), _remove_recv),
    Action("idle_send", (), lambda o, p, a, v: p.s_exists, _idle_send),
    Action("view_a", (("member", BOOL),), _always, _view_a),
    Action("view_b", (("member", BOOL),), _always, _view_b),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}
UNGATED_REMOVALS = ("view_a", "view_b", "idle_send")  # remove an entry with its packets still in flight


def initial(o: Ops, p: State) -> Any:
    return o.And(o.Not(p.s_exists), o.Not(p.r_exists), p.a_next_conn == 0, p.b_ts == 0, p.a_view_b, p.b_view_a,
                 *[_none(o, p[n]) for n in NETWORK])


UNICAST2 = ModelSpec("unicast2", FIELDS, ACTIONS, initial, SENDER, RECEIVER)
