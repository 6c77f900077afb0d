"""The invariants of one UNICAST3 connection, as formulas over ``unicast3.model``'s state.

``TARGETS`` are the issue's invariants, restated from ``spec/unicast_common.py``: I1 window_order,
I4 conn_id_purity, I7 timestamps_issued, purge_covered (state invariants) and I3 acks_monotone,
no_spurious_purge, timestamps_increase (step invariants over a pre- and a post-state).
``STRENGTHENINGS`` are what it takes to make their conjunction inductive; each carries ``why``: the
sentence that says why it holds, i.e. why UNICAST3 works (docs/proofs.md, "Why it works").

Every formula is written against ``Ops`` (``checks/symbolic/ops.py``), so the same text is proved by
z3 and evaluated on the explicit checker's states (``crosscheck``), where the restated targets
must agree with the spec's own predicates (``SPEC_AGREEMENT``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import State
from spec import unicast3 as u3
from spec.unicast3 import Variant


@dataclass(frozen=True)
class Invariant:
    name: str
    why: str
    state: Callable[[Ops, State, Any], Any] | None = None  # a state invariant (the last argument: the Variant)
    step: Callable[[Ops, State, State, Any], Any] | None = None  # a step invariant (pre, post)


def _acc(o: Ops, p: State, ts: Any, v: Variant) -> Any:
    """Would A's send entry accept timestamp ``ts`` now (updateLastTimestamp)?"""
    return True if v.no_timestamps else o.Or(p.s_last_ts == 0, ts > p.s_last_ts)


def _window_on(o: Ops, p: State, conn: Any) -> Any:
    return o.And(p.r_exists, p.r_conn == conn)


def _current(o: Ops, p: State, conn: Any) -> Any:
    return o.And(p.s_exists, p.s_conn == conn)


# ---------------------------------------------------------------------------------------------
# The invariants.
def window_order(o: Ops, p: State, v: Variant) -> Any:
    """I1: the slot after hd is a gap, nothing at or below hd is held; 0 <= HA <= HS, watermark <= HS."""
    receive = o.Implies(p.r_exists, o.And(o.get(p.r_buf, p.r_hd + 1) == EMPTY,
                                          o.forall_map(p.r_buf, lambda s, c: s > p.r_hd)))
    send = o.Implies(p.s_exists, o.And(p.s_acked >= 0, p.s_acked <= p.s_hs, p.s_wm_hi <= p.s_hs))
    return o.And(receive, send)


def conn_id_purity(o: Ops, p: State, v: Variant) -> Any:
    """I4: every message B's window holds carries the window's conn_id."""
    return o.Implies(p.r_exists, o.forall_map(p.r_buf, lambda s, c: c == p.r_conn))


def timestamps_issued(o: Ops, p: State, v: Variant) -> Any:
    """I7: A's last accepted timestamp was issued by B."""
    return o.Implies(p.s_exists, p.s_last_ts <= p.b_ts)


def purge_covered(o: Ops, p: State, v: Variant) -> Any:
    """P6/P7: B's window on A's current connection has delivered everything A purged."""
    return o.Implies(o.And(p.s_exists, _window_on(o, p, p.s_conn)), p.r_hd >= p.s_acked)


def acks_monotone(o: Ops, p: State, q: State, v: Variant) -> Any:
    """I3: on one connection HA never decreases, and HA <= HS."""
    same = o.And(p.s_exists, q.s_exists, q.s_conn == p.s_conn)
    return o.Implies(same, o.And(q.s_acked >= p.s_acked, q.s_acked <= q.s_hs))


def no_spurious_purge(o: Ops, p: State, q: State, v: Variant) -> Any:
    """P6 at the purge: a purge on a connection B's window is on stays within what B delivered."""
    purge = o.And(p.s_exists, q.s_exists, q.s_conn == p.s_conn, q.s_acked > p.s_acked)
    return o.Implies(o.And(purge, _window_on(o, q, q.s_conn)), q.r_hd >= q.s_acked)


def timestamps_increase(o: Ops, p: State, q: State, v: Variant) -> Any:
    """I7 (step): the timestamps one send entry accepts strictly increase."""
    changed = o.And(p.s_exists, q.s_exists, q.s_conn == p.s_conn, p.s_last_ts != 0, q.s_last_ts != p.s_last_ts)
    return o.Implies(changed, q.s_last_ts > p.s_last_ts)


TARGETS: tuple[Invariant, ...] = (
    Invariant("window_order", "I1.", state=window_order),
    Invariant("conn_id_purity", "I4.", state=conn_id_purity),
    Invariant("timestamps_issued", "I7.", state=timestamps_issued),
    Invariant("purge_covered", "P6/P7.", state=purge_covered),
    Invariant("acks_monotone", "I3.", step=acks_monotone),
    Invariant("no_spurious_purge", "P6.", step=no_spurious_purge),
    Invariant("timestamps_increase", "I7 (step).", step=timestamps_increase),
)


# ---------------------------------------------------------------------------------------------
# Strengthenings.
def conn_ids_fresh(o: Ops, p: State, v: Variant) -> Any:
    return o.And(p.a_next_conn >= 0, o.Implies(p.s_exists, o.And(p.s_conn >= 0, p.s_conn == p.a_next_conn - 1)),
                 o.Implies(p.r_exists, o.And(p.r_conn >= 0, p.r_conn < p.a_next_conn)),
                 o.forall_in(p.n_ack, lambda a, c, t: c < p.a_next_conn),
                 o.forall_in(p.n_close, lambda c: o.And(c < p.a_next_conn, o.Implies(p.s_exists, c < p.s_conn))))


def data_current(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_data, lambda s, c, f: o.And(_current(o, p, c), s >= 1, s <= p.s_hs))


def cache_issued(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.b_cache, lambda s, c: o.And(s >= 1, c >= 0, c < p.a_next_conn,
                                                     o.Implies(_current(o, p, c), s <= p.s_hs)))


def stamps_issued(o: Ops, p: State, v: Variant) -> Any:
    if v.no_timestamps:  # JGRP-1873: nothing is ever stamped
        return o.And(p.b_ts == 0, o.Implies(p.s_exists, p.s_last_ts == 0),
                     o.forall_in(p.n_ack, lambda a, c, t: t == 0), o.forall_in(p.n_sfs, lambda t: t == 0))
    low = 1
    return o.And(p.b_ts >= 0, o.Implies(p.s_exists, p.s_last_ts >= 0),
                 o.forall_in(p.n_ack, lambda a, c, t: o.And(t >= low, t <= p.b_ts)),
                 o.forall_in(p.n_sfs, lambda t: o.And(t >= low, t <= p.b_ts)))


def window_within_sent(o: Ops, p: State, v: Variant) -> Any:
    inside = o.And(p.r_hd <= p.s_hs, o.forall_map(p.r_buf, lambda s, c: s <= p.s_hs))
    return o.And(o.Implies(p.r_exists, p.r_hd >= 0), o.Implies(o.And(p.s_exists, _window_on(o, p, p.s_conn)), inside))


def acks_within_sent(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_ack, lambda a, c, t: o.And(a >= 0, o.Implies(_current(o, p, c), a <= p.s_hs)))


def acks_from_window(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_ack, lambda a, c, t: o.Implies(o.And(_current(o, p, c), p.r_exists), p.r_conn == c))


def live_acks_delivered(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_ack, lambda a, c, t: o.Implies(
        o.And(_current(o, p, c), _acc(o, p, t, v), _window_on(o, p, c)), a <= p.r_hd))


def live_ack_below_first(o: Ops, p: State, v: Variant) -> Any:
    def pair(a: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_data, lambda s, c2, f: o.Implies(
            o.And(f, c2 == c, _current(o, p, c), _acc(o, p, t, v), o.Not(_window_on(o, p, c))), a <= s))
    return o.forall_in(p.n_ack, pair)


def sync_before_live_ack(o: Ops, p: State, v: Variant) -> Any:
    def pair(a: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_sfs, lambda t0: o.Implies(
            o.And(_current(o, p, c), _acc(o, p, t, v), t > t0), _window_on(o, p, c)))
    return o.forall_in(p.n_ack, pair)


def xmit_req_needs_window(o: Ops, p: State, v: Variant) -> Any:
    def pair(a: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_xreq, lambda x: o.Implies(o.And(_current(o, p, c), _acc(o, p, t, v)),
                                                         _window_on(o, p, c)))
    return o.forall_in(p.n_ack, pair)


def watermark_read_earlier(o: Ops, p: State, v: Variant) -> Any:
    return o.Implies(p.s_exists, o.And(p.s_wm_lo >= 0, p.s_wm_lo <= p.s_wm_hi, p.s_wm_lo <= p.s_acked))


def first_data_above_acked(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_data, lambda s, c, f: o.Implies(
        o.And(f, _current(o, p, c), o.Not(_window_on(o, p, c))), s >= p.s_acked))


STRENGTHENINGS: tuple[Invariant, ...] = (
    Invariant("conn_ids_fresh", "A numbers its connections from a counter that only grows, and a CLOSE names "
              "a connection A has left, so every conn_id in B's window or on the wire is older than the next one "
              "and a new send entry shares its conn_id with nothing that exists.", state=conn_ids_fresh),
    Invariant("data_current", "Every DATA in flight belongs to A's current connection and to a seqno A has "
              "sent: A drops a send entry only when none of its DATA is in flight (conn_close_timeout = 2 x MSL).",
              state=data_current),
    Invariant("cache_issued", "Every DATA in B's message cache was a DATA in flight: a seqno A has sent, on a "
              "connection A opened, and on A's current connection at most its highest sent (the cache is "
              "not the network: it keeps DATA of connections A has left, which a drain drops, as their "
              "conn_id is never a window's again).", state=cache_issued),
    Invariant("stamps_issued", "Every timestamp on the wire or accepted by A was issued by B's counter, which "
              "only grows (and starts at 1).", state=stamps_issued),
    Invariant("window_within_sent", "B's window on A's current connection holds and delivered only seqnos A "
              "has sent.", state=window_within_sent),
    Invariant("acks_within_sent", "An ACK on A's current connection acknowledges at most what A has sent.",
              state=acks_within_sent),
    Invariant("acks_from_window", "An ACK on A's current connection comes from B's window on it, and B's "
              "window, once on that connection, is only removed, never replaced by another (only a first DATA "
              "of a different connection replaces a window, and all DATA is on the current one).",
              state=acks_from_window),
    Invariant("live_acks_delivered", "An ACK A would still accept, on the connection B's window is on, "
              "acknowledges only what that window delivered: either the window sent it, or it survived a "
              "receiver reset and then every way to a new window went through a SEND_FIRST_SEQNO whose newer "
              "timestamp A accepted first, making the stale ACK unacceptable.", state=live_acks_delivered),
    Invariant("live_ack_below_first", "While B has no window on the connection, a first DATA in flight starts "
              "the next window at or above every ACK A would still accept: it is the lowest unacked message "
              "sent after A accepted the SEND_FIRST_SEQNO that asked for it (so older ACKs are dead), or the "
              "highest-sent resend of #1.", state=live_ack_below_first),
    Invariant("sync_before_live_ack", "An ACK A would accept that is newer than a SEND_FIRST_SEQNO in flight was "
              "sent by B's window on the connection after B asked, and B cannot drop that window while its "
              "request is in flight.", state=sync_before_live_ack),
    Invariant("xmit_req_needs_window", "An XMIT_REQ in flight while A would accept an ACK on its connection "
              "means B's window on that connection is still there: B sends XMIT_REQs only from a window and "
              "drops it only when none is in flight.", state=xmit_req_needs_window),
    Invariant("watermark_read_earlier", "The watermark is (HA, HS) as an earlier retransmit run read them, "
              "and HA never decreases on a connection. (No target needs it: it keeps z3's counterexamples to "
              "states a run could have.)", state=watermark_read_earlier),
    Invariant("first_data_above_acked", "While B has no window on the connection, no first DATA in flight lies "
              "below what A has purged: every ACK that could purge is below it.", state=first_data_above_acked),
)


# ---------------------------------------------------------------------------------------------
# Agreement with the spec's own predicates on explicit states (crosscheck).
def _spec_node(pred: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda view: all(pred(node) for node in view.nodes)


def _spec_pair(pred: Callable[[Any, Any], bool]) -> Callable[[Any], bool]:
    return lambda view: pred(view.nodes[0], view.nodes[1])


def _symbolic(formula: Callable[[Ops, State, Variant], Any]) -> Callable[[State], bool]:
    from checks.symbolic.crosscheck import CONCRETE
    return lambda state: bool(formula(CONCRETE, state, Variant()))


SPEC_AGREEMENT: tuple[tuple[str, Callable[[Any], bool], Callable[[State], bool]], ...] = (
    ("window_order", _spec_node(u3.window_order), _symbolic(window_order)),
    ("conn_id_purity", _spec_node(u3.conn_id_purity), _symbolic(conn_id_purity)),
    ("timestamps_issued", _spec_pair(u3.timestamps_issued), _symbolic(timestamps_issued)),
    ("purge_covered", _spec_pair(u3.purge_covered), _symbolic(purge_covered)),
)
