"""The invariants of one NAKACK4 sender's window and AckTable, over ``nakack4.model``'s state.

``TARGETS`` restate ``spec/nakack4_state.py``'s properties (window_within_capacity, purge_covered,
acks_truthful, ack_table_members, ack_min_is_min, blocks_only_when_full) and add the purge
chain ``low <= min ack`` and ACK monotonicity (step invariants). ``STRENGTHENINGS`` make their
conjunction inductive, each with the sentence that says why it holds. ``SPEC_AGREEMENT`` pairs
each restated target with the spec's own predicate, for the cross-check on explicit states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checks.symbolic.nakack4.model import ME, room
from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import State
from checks.symbolic.unicast3.invariants import Invariant
from spec import nakack4_state as n4
from spec.nakack4_state import Variant


def _has_window(o: Ops, p: State, k: Any) -> Any:
    return o.get(p.hd, k) != EMPTY


# ---------------------------------------------------------------------------------------------
# The targets.
def window_bound(o: Ops, p: State, v: Variant) -> Any:
    """window_within_capacity: the own window spans at most its capacity (high - low <= capacity)."""
    return p.high - p.low <= p.cap


def low_below_min(o: Ops, p: State, v: Variant) -> Any:
    """Purge safety, first link: nothing is purged above the AckTable minimum."""
    return p.low <= p.ack_min


def min_is_min(o: Ops, p: State, v: Variant) -> Any:
    """ack_min_is_min: the minimum is at most every entry and equal to one (or the table is empty)."""
    empty = o.forall_map(p.table, lambda k, x: False)
    return o.Or(empty, o.And(o.forall_map(p.table, lambda k, x: p.ack_min <= x),
                             o.Not(o.forall_map(p.table, lambda k, x: x != p.ack_min))))


def acks_truthful(o: Ops, p: State, v: Variant) -> Any:
    """I3: the table never credits a current member with more than its window for S delivered."""
    return o.forall_in(p.members, lambda k: o.Implies(o.And(o.get(p.table, k) != EMPTY, _has_window(o, p, k)),
                                                      o.get(p.table, k) <= o.get(p.hd, k)))


def purge_covered(o: Ops, p: State, v: Variant) -> Any:
    """P6: S purged nothing a current member's window for S has not delivered."""
    return o.forall_in(p.members, lambda k: o.Implies(_has_window(o, p, k), p.low <= o.get(p.hd, k)))


def ack_table_members(o: Ops, p: State, v: Variant) -> Any:
    """I6: an AckTable entry for every member of S's view and for nobody else (JGRP-2904)."""
    return o.And(o.forall_map(p.table, lambda k, x: o.has(p.members, k)),
                 o.forall_in(p.members, lambda k: o.get(p.table, k) != EMPTY))


def blocks_only_when_full(o: Ops, p: State, v: Variant) -> Any:
    """No thread waits for room for a seqno within (low, low + capacity] (the seed's edge does)."""
    return o.forall_in(p.sending, lambda s: o.Or(room(o, p, s, v), s - p.low > p.cap))


def acks_monotone(o: Ops, p: State, q: State, v: Variant) -> Any:
    """I3 (step): an entry of the AckTable never decreases while it exists."""
    return o.forall_map(p.table, lambda k, x: o.Or(o.get(q.table, k) == EMPTY, o.get(q.table, k) >= x))


def low_monotone(o: Ops, p: State, q: State, v: Variant) -> Any:
    """The own window's low never moves back (a purge is never undone)."""
    return q.low >= p.low


# Implied (not inductive alone: z3 does not find the chain through the new minimum, but the
# inductive conjunction implies it at once): ``consequence`` obligations.
CONSEQUENCES: tuple[Invariant, ...] = (
    Invariant("purge_covered", "P6: low <= each current member's entry <= what its window delivered.",
              state=purge_covered),
)
TARGETS: tuple[Invariant, ...] = (
    Invariant("window_bound", "high - low <= capacity.", state=window_bound),
    Invariant("low_below_min", "low <= min ack.", state=low_below_min),
    Invariant("min_is_min", "ack_min_is_min.", state=min_is_min),
    Invariant("acks_truthful", "I3.", state=acks_truthful),
    Invariant("ack_table_members", "I6.", state=ack_table_members),
    Invariant("blocks_only_when_full", "FixedBuffer's edge.", state=blocks_only_when_full),
    Invariant("acks_monotone", "I3 (step).", step=acks_monotone),
    Invariant("low_monotone", "purge (step).", step=low_monotone),
)


# ---------------------------------------------------------------------------------------------
# Strengthenings.
def own_window(o: Ops, p: State, v: Variant) -> Any:
    hd = o.get(p.hd, ME)
    return o.And(p.cap >= 1, o.has(p.members, ME), hd != EMPTY, p.low <= hd, hd <= p.high, p.high <= p.seqno)


def delivered_sent(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_map(p.hd, lambda k, x: o.And(x >= 0, x <= p.high))


def table_truthful(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_map(p.table, lambda k, x: o.And(x >= 0, o.Implies(_has_window(o, p, k), x <= o.get(p.hd, k))))


def acks_in_flight_truthful(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.n_ack, lambda r, a: o.And(a >= 0, o.Implies(_has_window(o, p, r), a <= o.get(p.hd, r))))


def low_below_entries(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.members, lambda k: p.low <= o.get(p.table, k))


def members_have_entries(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.members, lambda k: o.get(p.table, k) != EMPTY)


def threads_hold_taken(o: Ops, p: State, v: Variant) -> Any:
    return o.forall_in(p.sending, lambda s: o.And(s >= 1, s <= p.seqno))


STRENGTHENINGS: tuple[Invariant, ...] = (
    Invariant("own_window", "S is always in its own view with its own window, whose low never passes its hd "
              "(a purge is clamped to it), whose hd never passes its high, and whose high never passes the "
              "counter (only taken seqnos are added).", state=own_window),
    Invariant("delivered_sent", "A member's window for S delivers only what S added: every copy on the wire, "
              "original or re-multicast, is a message of S's window, so no hd passes S's high.",
              state=delivered_sent),
    Invariant("table_truthful", "Every AckTable entry is an ACK some member sent, and an ACK carries the "
              "hd of the sender's window when it was sent; a window's hd only grows and a window once dropped "
              "is never re-created (no joins), so an entry never exceeds what that window delivered.",
              state=table_truthful),
    Invariant("acks_in_flight_truthful", "The same for every ACK still in flight: it was sent with the hd "
              "of a window that has only grown since (or was dropped).", state=acks_in_flight_truthful),
    Invariant("low_below_entries", "S purges only to a minimum it computed over a table holding every "
              "current member's entry, entries only grow, and a view change only removes members, so low "
              "never passes a current member's entry (even when a stale entry of a non-member drags the "
              "minimum itself below low: JGRP-2904).", state=low_below_entries),
    Invariant("members_have_entries", "Every member of S's view has an AckTable entry: the founders start "
              "with one at 0, an ACK only raises it and a view change keeps the entries of the members it "
              "keeps.", state=members_have_entries),
    Invariant("threads_hold_taken", "A thread holds a seqno it took from the counter, so adding it never "
              "raises high past the counter.", state=threads_hold_taken),
)


# ---------------------------------------------------------------------------------------------
# Agreement with the spec's own predicates on explicit states (crosscheck).
def spec_agreement(cfg: n4.Config, sender: int = ME
                   ) -> tuple[tuple[str, Callable[[Any], bool], Callable[[State], bool]], ...]:
    """(name, spec predicate of a WorldView, restated invariant of an abstract State), for ``cfg``."""
    from checks.symbolic.crosscheck import CONCRETE

    def symbolic(formula: Callable[[Ops, State, Variant], Any]) -> Callable[[State], bool]:
        return lambda state: bool(formula(CONCRETE, state, cfg.variant))

    def pairs(pred: Callable[[Any, Any], bool]) -> Callable[[Any], bool]:
        return lambda view: all(pred(view.nodes[sender], r) for r in view.nodes)

    return (
        ("window_bound", lambda view: n4.window_within_capacity(cfg, view.nodes[sender]), symbolic(window_bound)),
        ("min_is_min", lambda view: n4.ack_min_is_min(view.nodes[sender]), symbolic(min_is_min)),
        ("ack_table_members", lambda view: n4.ack_table_members(view.nodes[sender]), symbolic(ack_table_members)),
        ("blocks_only_when_full", lambda view: n4.blocks_only_when_full(cfg, view.nodes[sender]),
         symbolic(blocks_only_when_full)),
        ("purge_covered", pairs(n4.purge_covered), symbolic(purge_covered)),
        ("acks_truthful", pairs(n4.acks_truthful), symbolic(acks_truthful)),
    )
