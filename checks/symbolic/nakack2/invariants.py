"""The invariants of one NAKACK2 sender's window under STABLE, over ``nakack2.model``'s state.

``TARGETS`` restate ``spec/nakack2_state.py``'s ``purge_covered`` (for every receiver), the own
window's order (low <= hd <= hr), that nothing purged passes the minimum a STABLE round of S's view
could compute (``low_below_view_min``), that no window delivers what S did not send, and two step
invariants (a purge is never undone, a window's hd never moves back). ``STRENGTHENINGS`` make their
conjunction inductive, each with the sentence that says why it holds (each is needed: without any one
z3 no longer proves every obligation). ``spec_agreement`` pairs each
restated target with the spec's own predicate, for the cross-check on explicit states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checks.symbolic.nakack2.model import in_view
from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import State
from checks.symbolic.unicast3.invariants import Invariant
from spec import nakack2_state as n2
from spec.nakack2_state import Variant


def _own_view(o: Ops, p: State) -> Any:
    return o.get(p.cur, p.me)


# ---------------------------------------------------------------------------------------------
# The targets.
def purge_covered(o: Ops, p: State, v: Variant) -> Any:
    """P6: while S and r are in each other's views and r has a window for S, S purged nothing that
    window has not delivered."""
    return o.forall_map(p.hd, lambda r, x: o.Implies(
        o.And(r != p.me, in_view(o, p, _own_view(o, p), r), o.get(p.cur, r) != EMPTY,
              in_view(o, p, o.get(p.cur, r), p.me)), p.low <= x))


def own_window_order(o: Ops, p: State, v: Variant) -> Any:
    """I1 for S's own window: low <= hd <= hr (S's hr is its counter, ``high``)."""
    hd = o.get(p.hd, p.me)
    return o.And(hd != EMPTY, p.low <= hd, hd <= p.high)


def low_below_view_min(o: Ops, p: State, v: Variant) -> Any:
    """Purge never past the stability minimum: low <= the hd of every window for S at a member of
    S's view (the minimum a complete round of S's view could merge)."""
    return o.forall_map(p.hd, lambda k, x: o.Implies(in_view(o, p, _own_view(o, p), k), p.low <= x))


def delivered_sent(o: Ops, p: State, v: Variant) -> Any:
    """No window for S delivers past what S sent: every hd for S lies in 0 .. S's counter."""
    return o.forall_map(p.hd, lambda k, x: o.And(x >= 0, x <= p.high))


def low_monotone(o: Ops, p: State, q: State, v: Variant) -> Any:
    """A purge is never undone (step)."""
    return q.low >= p.low


def hd_monotone(o: Ops, p: State, q: State, v: Variant) -> Any:
    """A window's hd never moves back while it exists (step)."""
    return o.forall_map(p.hd, lambda k, x: o.Or(o.get(q.hd, k) == EMPTY, o.get(q.hd, k) >= x))


TARGETS: tuple[Invariant, ...] = (
    Invariant("purge_covered", "P6 for every receiver of S.", state=purge_covered),
    Invariant("own_window_order", "I1: low <= hd <= hr.", state=own_window_order),
    Invariant("low_below_view_min", "low <= min hd over S's view.", state=low_below_view_min),
    Invariant("delivered_sent", "every hd <= S's counter.", state=delivered_sent),
    Invariant("low_monotone", "purge (step).", step=low_monotone),
    Invariant("hd_monotone", "delivery (step).", step=hd_monotone),
)


# ---------------------------------------------------------------------------------------------
# Strengthenings.
def own_in_view(o: Ops, p: State, v: Variant) -> Any:
    return o.And(_own_view(o, p) != EMPTY, in_view(o, p, _own_view(o, p), p.me))


def windows_follow_views(o: Ops, p: State, v: Variant) -> Any:
    return o.And(o.forall_map(p.cur, lambda k, view: o.Implies(k != p.me, (o.get(p.hd, k) != EMPTY) == in_view(
        o, p, view, p.me))), o.forall_map(p.hd, lambda k, x: o.get(p.cur, k) != EMPTY))


def votes_in_flight_truthful(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_vote, lambda k, view, h: o.Implies(in_view(o, p, view, p.me), o.And(
        h >= 0, o.Implies(o.get(p.hd, k) != EMPTY, h <= o.get(p.hd, k)))))


def votes_counted_truthful(o: Ops, p: State, v: Variant) -> Any:
    def counted(c: Any, k: Any) -> Any:
        view, m = o.get(p.cur, c), o.get(p.merged, c)
        return o.And(view != EMPTY, o.Implies(in_view(o, p, view, p.me), o.And(
            m != EMPTY, o.Implies(o.get(p.hd, k) != EMPTY, m <= o.get(p.hd, k)))))
    return o.forall_in(p.votes, counted)


def stability_truthful(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_stab, lambda j, view, h: o.Implies(o.And(in_view(o, p, view, p.me), h != EMPTY),
                                                              o.forall_map(p.hd, lambda k, x: o.Implies(
                                                                  in_view(o, p, view, k), h <= x))))


STRENGTHENINGS: tuple[Invariant, ...] = (
    Invariant("own_in_view", "S is always in its own view (a view change never removes the own member), so a "
              "STABILITY S takes names a view holding S, and its hd for S is a minimum over a round that counted "
              "every member of S's view.", state=own_in_view),
    Invariant("windows_follow_views", "A member other than S has a window for S exactly when S is in its "
              "view: the founders start so, a view change drops the window of a non-member and creates one "
              "for a member lacking it, and nothing else creates or drops one (no joins, no merges).",
              state=windows_follow_views),
    Invariant("votes_in_flight_truthful", "A vote in flight that names S carries the hd the voter's window "
              "for S had when it voted; that hd only grows, and a window once dropped never comes back (views "
              "only shrink), so the vote never exceeds what the voter's window for S delivered.",
              state=votes_in_flight_truthful),
    Invariant("votes_counted_truthful", "A coordinator merges only votes naming its current view and starts a "
              "new round at every view change, so when its view holds S every vote it merged named S, and the "
              "merged minimum is at most what each of those voters' windows for S delivered.",
              state=votes_counted_truthful),
    Invariant("stability_truthful", "A round completes only when every member of the view voted, so the "
              "STABILITY it sends names an hd for S at most what every member of that view with a window for "
              "S delivered, and windows only grow: S purges to it only while its own view is that view, so "
              "never past a member of its view.", state=stability_truthful),
)
INVARIANTS = TARGETS + STRENGTHENINGS


# ---------------------------------------------------------------------------------------------
# Agreement with the spec's own predicates on explicit states (crosscheck).
def spec_agreement(cfg: n2.Config, sender: int) -> tuple[tuple[str, Callable[[Any], bool], Callable[[State], bool]],
                                                         ...]:
    """(name, spec predicate of a WorldView, restated invariant of an abstract State) for ``sender``."""
    from checks.symbolic.crosscheck import CONCRETE

    def symbolic(formula: Callable[[Ops, State, Variant], Any]) -> Callable[[State], bool]:
        return lambda state: bool(formula(CONCRETE, state, cfg.variant))

    def own_order(view: Any) -> bool:
        w = view.nodes[sender].windows[sender]
        return w is not None and w.low <= w.delivered <= w.highest_received

    return (
        ("purge_covered", lambda view: all(n2.purge_covered(view.nodes[sender], r) for r in view.nodes),
         symbolic(purge_covered)),
        ("own_window_order", own_order, symbolic(own_window_order)),
    )
