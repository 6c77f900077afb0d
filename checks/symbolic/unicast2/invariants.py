"""UNICAST2's invariants over ``unicast2.model``'s state: the issue's targets (the same formulas as
UNICAST3's, ``unicast3.invariants.TARGETS``: the fields they read mean the same) and the
strengthenings that make them inductive for UNICAST2 *with the fix flags* (``FIXED``: timestamps,
the lowest-only sync answer, the HS resend, and no first-message resend, i.e. UNICAST3's choices),
in runs without the removals that are not gated by rule 6 (``UNGATED_REMOVALS``: a view change and
the sender-side reaper drop an entry while its packets are in flight).

The strengthenings are UNICAST3's argument with STABLE in the place of ACK; each ``why`` says what
differs. As shipped (no fix flag) some of them fail: ``EXPECTED_SHIPPED`` lists those obligations.
"""

from __future__ import annotations

from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import State
from checks.symbolic.unicast3.invariants import TARGETS, Invariant, watermark_read_earlier
from spec import unicast2 as u2

FIXED = u2.Variant(fix_timestamps=True, fix_sync_lowest_only=True, fix_resend_highest=True, no_first_ack=True)
SHIPPED = u2.Variant()


def _acc(o: Ops, p: State, ts: Any, v: u2.Variant) -> Any:
    return o.Or(p.s_last_ts == 0, ts > p.s_last_ts) if v.fix_timestamps else True


def _window_on(o: Ops, p: State, conn: Any) -> Any:
    return o.And(p.r_exists, p.r_conn == conn)


def _current(o: Ops, p: State, conn: Any) -> Any:
    return o.And(p.s_exists, p.s_conn == conn)


def conn_ids_fresh(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.And(p.a_next_conn >= 0, o.Implies(p.s_exists, o.And(p.s_conn >= 0, p.s_conn == p.a_next_conn - 1)),
                 o.Implies(p.r_exists, o.And(p.r_conn >= 0, p.r_conn < p.a_next_conn)),
                 o.forall_in(p.n_stable, lambda hd, hr, c, t: c < p.a_next_conn),
                 o.forall_in(p.n_ack, lambda s, c: c < p.a_next_conn))


def data_current(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.forall_in(p.n_data, lambda s, c, f: o.And(_current(o, p, c), s >= 1, s <= p.s_hs))


def stamps_issued(o: Ops, p: State, v: u2.Variant) -> Any:
    if not v.fix_timestamps:
        return o.And(p.b_ts == 0, o.Implies(p.s_exists, p.s_last_ts == 0),
                     o.forall_in(p.n_stable, lambda hd, hr, c, t: t == 0), o.forall_in(p.n_sfs, lambda s, t: t == 0))
    return o.And(p.b_ts >= 0, o.Implies(p.s_exists, p.s_last_ts >= 0),
                 o.forall_in(p.n_stable, lambda hd, hr, c, t: o.And(t >= 1, t <= p.b_ts)),
                 o.forall_in(p.n_sfs, lambda s, t: o.And(t >= 1, t <= p.b_ts)))


def window_shape(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.Implies(p.r_exists, o.And(p.r_hd >= 0, p.r_hr >= p.r_hd, o.forall_map(p.r_buf, lambda s, c: s <= p.r_hr),
                                       o.Implies(p.r_hr > p.r_hd, o.get(p.r_buf, p.r_hr) != EMPTY)))


def window_within_sent(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.Implies(o.And(p.s_exists, _window_on(o, p, p.s_conn)), p.r_hr <= p.s_hs)


def stables_within_sent(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.forall_in(p.n_stable, lambda hd, hr, c, t: o.And(
        hd >= 0, hd <= hr, o.Implies(_current(o, p, c), hr <= p.s_hs)))


def stables_from_window(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.forall_in(p.n_stable, lambda hd, hr, c, t: o.Implies(o.And(_current(o, p, c), p.r_exists),
                                                                    p.r_conn == c))


def live_stables_delivered(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.forall_in(p.n_stable, lambda hd, hr, c, t: o.Implies(
        o.And(_current(o, p, c), _acc(o, p, t, v), _window_on(o, p, c)), hd <= p.r_hd))


def live_stable_below_first(o: Ops, p: State, v: u2.Variant) -> Any:
    def pair(hd: Any, hr: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_data, lambda s, c2, f: o.Implies(
            o.And(f, c2 == c, _current(o, p, c), _acc(o, p, t, v), o.Not(_window_on(o, p, c))), hd <= s))
    return o.forall_in(p.n_stable, pair)


def sync_before_live_stable(o: Ops, p: State, v: u2.Variant) -> Any:
    def pair(hd: Any, hr: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_sfs, lambda s, t0: o.Implies(
            o.And(_current(o, p, c), _acc(o, p, t, v), t > t0), _window_on(o, p, c)))
    return o.forall_in(p.n_stable, pair)


def stables_in_order_need_window(o: Ops, p: State, v: u2.Variant) -> Any:
    def pair(hd: Any, hr: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_stable, lambda hd2, hr2, c2, t2: o.Implies(
            o.And(c2 == c, _current(o, p, c), t2 > t), _window_on(o, p, c)))
    return o.forall_in(p.n_stable, pair)


def xmit_req_needs_window(o: Ops, p: State, v: u2.Variant) -> Any:
    def pair(hd: Any, hr: Any, c: Any, t: Any) -> Any:
        return o.forall_in(p.n_xreq, lambda x: o.Implies(o.And(_current(o, p, c), _acc(o, p, t, v)),
                                                         _window_on(o, p, c)))
    return o.forall_in(p.n_stable, pair)


def first_data_above_acked(o: Ops, p: State, v: u2.Variant) -> Any:
    return o.forall_in(p.n_data, lambda s, c, f: o.Implies(
        o.And(f, _current(o, p, c), o.Not(_window_on(o, p, c))), s >= p.s_acked))


STRENGTHENINGS: tuple[Invariant, ...] = (
    Invariant("conn_ids_fresh", "As in UNICAST3: conn_ids come from a growing counter (fewer than 32768 "
              "connections), so a new send entry shares its conn_id with nothing in B's window or on the wire.",
              state=conn_ids_fresh),
    Invariant("data_current", "Every DATA in flight is of A's current connection: without view changes and "
              "the reaper, A's send entry is never dropped.", state=data_current),
    Invariant("stamps_issued", "Every STABLE and SEND_FIRST_SEQNO timestamp was issued by B's growing counter "
              "(all 0 without the timestamp fix).", state=stamps_issued),
    Invariant("window_shape", "B's window: hd <= hr, nothing held above hr, the slot of hr is held.",
              state=window_shape),
    Invariant("window_within_sent", "B's window on A's current connection has seen only seqnos A sent.",
              state=window_within_sent),
    Invariant("stables_within_sent", "A STABLE reports hd <= hr, and on A's current connection hr <= HS.",
              state=stables_within_sent),
    Invariant("stables_from_window", "A STABLE on A's current connection comes from B's window on it, which "
              "is never replaced by another (all DATA is on the current connection).", state=stables_from_window),
    Invariant("live_stables_delivered", "A STABLE A would still accept, on the connection B's window is on, "
              "reports only what that window delivered: the timestamp fix makes every STABLE older than the "
              "SEND_FIRST_SEQNO that led to a new window unacceptable.", state=live_stables_delivered),
    Invariant("live_stable_below_first", "While B has no window on the connection, a first DATA in flight starts "
              "the next window at or above every STABLE A would accept: it answers a newer SEND_FIRST_SEQNO "
              "(the lowest message only, fix:JGRP-1874), or resends #1 (HS resend, or STABLE's resend from "
              "hr <= 1); the first-message resend of JGRP-1563's fix would break this and is off.",
              state=live_stable_below_first),
    Invariant("sync_before_live_stable", "A STABLE A would accept that is newer than a SEND_FIRST_SEQNO in flight "
              "comes from B's window on the connection, which B cannot drop while its request is in flight.",
              state=sync_before_live_stable),
    Invariant("stables_in_order_need_window", "Two STABLEs of one connection in flight, one newer, mean B's "
              "window on it is there: B drops a window only when none of its packets is in flight, so after a "
              "removal only its final STABLE travels (else the older one's resend of #1 could start a window "
              "below the newer one's hd).", state=stables_in_order_need_window),
    Invariant("xmit_req_needs_window", "An XMIT_REQ in flight while A would accept a STABLE means B's window on "
              "the connection is there.", state=xmit_req_needs_window),
    Invariant("first_data_above_acked", "While B has no window on the connection, no first DATA in flight lies "
              "below what A purged.", state=first_data_above_acked),
    Invariant("watermark_read_earlier", "As in UNICAST3 (fix:JGRP-1548's watermark).", state=watermark_read_earlier),
)
INVARIANTS = TARGETS + STRENGTHENINGS
