"""One NAKACK4 sender's window and its receivers' acknowledgements as a symbolic transition system.

Scope and design
----------------
One sender S (member ``ME`` = 0) multicasts; the model holds S's own window (FixedBuffer), its
AckTable and, for every member, how far that member's window for S delivered. Seqnos, ACKs and
the capacity are unbounded integers; members are unbounded integers too (maps and sets over them),
so a proof holds for any group size and any number of ACKs in flight.

State (``FIELDS``):

- ``cap``: the capacity (constant, >= 1); ``low``, ``high``: the own window's low and high;
  ``seqno``: the counter (the last seqno an application thread took); ``sending``: the seqnos
  threads took and have not added yet (blocked, or between the two steps of a non-atomic send).
- ``hd``: member -> the hd of its window for S (``EMPTY``: it has none). S's own hd is ``hd[ME]``.
  Messages are abstracted away: a member's window may deliver any seqno up to S's ``high`` (every
  DATA, original or resent, is one S added), which over-approximates loss, reordering and
  retransmission.
- ``members``: S's view (a set); ``table``: the AckTable, member -> highest ACK (``EMPTY`` =
  ``NO_ENTRY``); ``ack_min``: the AckTable minimum as last computed.
- ``n_ack``: the ACKs to S in flight, a *set* of (src, seqno): any copy may be lost, delivered or
  duplicated, with no budget, so the model covers every count of copies.

Actions (``ACTIONS``) follow ``spec/nakack4.py``: an application thread entering send (atomic add
and send if the window has room, else it holds its seqno; or, variant ``drop_dont_block``, drops
it), a thread adding its seqno (guarded by the window edge: ``beyond``), a delivery at a member
(its hd rises, at most to ``high``, and it may ACK at once), a retransmit run at a member (its
pending ACK), an ACK delivered at S (``on_ack``: AckTable, exact minimum, purge clamped to the own
hd), S's view change removing members (the table adjusted, purge unless ``view_change_no_purge``),
a member's view change dropping its window for S, loss, and ``stutter`` (a step that changes
nothing here: another sender's traffic, HIGHEST_SEQNO, XMIT_REQ, a stop).

Out of scope (``abstraction`` raises ``OutOfScope``): joins and merges (a window or an AckTable
entry created after the start), ``dont_loopback`` (the own hd moves and S acks itself inside the
add), and S leaving its own view. The minimum is exact: at most every entry and equal to one of
them (an existential z3 skolemises), or the previous one for an empty table.
"""

from __future__ import annotations

from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import BOOL, INT, Action, ModelSpec, State, frame
from spec.nakack4_state import Variant

ME = 0
FIELDS: dict[str, Any] = {
    "cap": INT, "low": INT, "high": INT, "seqno": INT, "sending": ("set", INT), "hd": ("map",),
    "members": ("set", INT), "table": ("map",), "ack_min": INT, "n_ack": ("set", INT, INT),
}


# ---------------------------------------------------------------------------------------------
# Helpers shared by the actions and the invariants.
def room(o: Ops, p: State, s: Any, v: Variant) -> Any:
    """The own window takes ``s`` (not ``beyond``: s - low <= capacity; the seed's edge: < capacity)."""
    return s - p.low < p.cap if v.seed_edge else s - p.low <= p.cap


def is_min(o: Ops, table: Any, m: Any, previous: Any) -> Any:
    """``m`` is AckTable.computeMin of ``table``: its lowest entry, or ``previous`` if it has none."""
    empty = o.forall_map(table, lambda k, x: False)
    lowest = o.And(o.forall_map(table, lambda k, x: m <= x), o.Not(o.forall_map(table, lambda k, x: x != m)))
    return o.If(empty, m == previous, lowest)


def _purged(o: Ops, p: State, q: State, purge: Any) -> Any:
    """_purge_to_min: if the new minimum rose (and ``purge``), low := max(low, min(minimum, own hd))."""
    upto = o.min(q.ack_min, o.get(p.hd, ME))
    return o.If(o.And(purge, q.ack_min > p.ack_min, upto > p.low), upto, p.low)


def _keep_or_consume(o: Ops, s: Any, keep: Any, *key: Any) -> Any:
    return o.If(keep, s, o.remove(s, *key))


# ---------------------------------------------------------------------------------------------
# Actions. Each is (guard, effect); the transition relation of an action is guard AND effect.
def _send(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_send: the thread takes seqno + 1, then adds and sends it at once (atomic, with room),
    holds it (non-atomic, or no room), or drops it (variant drop_dont_block, no room)."""
    s = p.seqno + 1
    held = frame(o, p, q, {"seqno": s, "sending": o.add(p.sending, s)})
    added = o.And(room(o, p, s, v), frame(o, p, q, {"seqno": s, "high": o.If(s > p.high, s, p.high)}))
    dropped = o.And(v.drop_dont_block, o.Not(room(o, p, s, v)), frame(o, p, q, {"seqno": s}))
    return o.Or(held, added, dropped)


def _add(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """Timer(SEND, s): the thread holding ``s`` adds it to the own window and sends it."""
    s = a["s"]
    return frame(o, p, q, {"sending": o.remove(p.sending, s), "high": o.If(s > p.high, s, p.high)})


def _add_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.has(p.sending, a["s"]), room(o, p, a["s"], v))


def _drop(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {"sending": o.remove(p.sending, a["s"])})


def _drop_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(v.drop_dont_block, o.has(p.sending, a["s"]), o.Not(room(o, p, a["s"], v)))


def _deliver(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """A member's window for S delivers up to a new hd (at most S's high), perhaps ACKing at once."""
    r = a["r"]
    new = o.get(q.hd, r)
    acked = o.Or(q.n_ack == p.n_ack, q.n_ack == o.add(p.n_ack, r, new))
    return o.And(new >= o.get(p.hd, r), new <= p.high, q.hd == o.put(p.hd, r, new), acked,
                 frame(o, p, q, {}, free=("hd", "n_ack")))


def _xmit(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """A member's retransmit run: its pending ACK(hd) to S, if any."""
    r = a["r"]
    return o.And(o.Or(q.n_ack == p.n_ack, q.n_ack == o.add(p.n_ack, r, o.get(p.hd, r))),
                 frame(o, p, q, {}, free=("n_ack",)))


def _deliver_ack(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_ack at S: a higher ACK from a member with an entry (variant ack_from_non_members: from
    anyone) updates the table, recomputes the minimum and purges if it rose."""
    r, seqno = a["r"], a["seqno"]
    current = o.get(p.table, r)
    known = True if v.ack_from_non_members else current != EMPTY
    taken = o.And(known, seqno > current)
    consumed = _keep_or_consume(o, p.n_ack, a["keep"], r, seqno)
    update = o.And(q.table == o.put(p.table, r, seqno), is_min(o, q.table, q.ack_min, p.ack_min),
                   frame(o, p, q, {"n_ack": consumed, "low": _purged(o, p, q, True)}, free=("table", "ack_min")))
    return o.If(taken, update, frame(o, p, q, {"n_ack": consumed}))


def _view_s(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_view at S with members ``M`` (no joiner: M within the view): the table keeps M's entries,
    the minimum is recomputed and the own window purged if it rose (unless view_change_no_purge)."""
    m = a["M"]
    return o.And(q.table == o.restrict_to(p.table, m, 0), is_min(o, q.table, q.ack_min, p.ack_min),
                 frame(o, p, q, {"members": m, "low": _purged(o, p, q, not v.view_change_no_purge)},
                       free=("table", "ack_min")))


def _view_s_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.subset(a["M"], p.members), o.has(a["M"], ME))


def _view_r(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """Member r installs a view without S: its window for S is dropped."""
    return frame(o, p, q, {"hd": o.put(p.hd, a["r"], EMPTY)})


def _lose(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.subset(q.n_ack, p.n_ack), frame(o, p, q, {}, free=("n_ack",)))


def _stutter(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {})


def _always(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return True


ACTIONS: tuple[Action, ...] = (
    Action("send", (), _always, _send),
    Action("add", (("s", INT),), _add_guard, _add),
    Action("drop", (("s", INT),), _drop_guard, _drop),
    Action("deliver", (("r", INT),), lambda o, p, a, v: o.get(p.hd, a["r"]) != EMPTY, _deliver),
    Action("xmit", (("r", INT),), lambda o, p, a, v: o.get(p.hd, a["r"]) != EMPTY, _xmit),
    Action("deliver_ack", (("r", INT), ("seqno", INT), ("keep", BOOL)),
           lambda o, p, a, v: o.has(p.n_ack, a["r"], a["seqno"]), _deliver_ack),
    Action("view_s", (("M", ("set", INT)),), _view_s_guard, _view_s),
    Action("view_r", (("r", INT),), lambda o, p, a, v: a["r"] != ME, _view_r),
    Action("lose", (), _always, _lose),
    Action("stutter", (), _always, _stutter),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}


def initial(o: Ops, p: State) -> Any:
    """Founders in one view: a window at 0 and an AckTable entry at 0 for each, nothing sent."""
    return o.And(p.cap >= 1, p.low == 0, p.high == 0, p.seqno == 0, p.ack_min == 0, o.has(p.members, ME),
                 o.forall_in(p.sending, lambda s: False), o.forall_in(p.n_ack, lambda r, s: False),
                 o.forall_in(p.members, lambda k: o.And(o.get(p.table, k) == 0, o.get(p.hd, k) == 0)),
                 o.forall_map(p.table, lambda k, x: o.has(p.members, k)),
                 o.forall_map(p.hd, lambda k, x: o.has(p.members, k)))


NAKACK4 = ModelSpec("nakack4", FIELDS, ACTIONS, initial)
