"""One NAKACK2 sender's window at every member, with STABLE's rounds, as a symbolic transition system.

Scope and design
----------------
One sender S (member ``me``, a constant of the state: any member) multicasts; the model holds S's
own window (``low``, its hd ``hd[me]``, ``high`` = its hr = its counter), every member's window for
S (``hd``: member -> its hd, ``EMPTY`` without one), every member's view, and STABLE's round as far
as S's entry goes: the votes each coordinator merged this round, its merged minimum for S, the
votes and the STABILITY messages in flight. Seqnos and members are unbounded integers (maps and
sets over them), so a proof holds for any group size and any number of messages in flight.

Views keep what the spec compares: a view is an *id* (``cur``: member -> view id) whose members are
the constant relation ``vdef`` (id, member). A vote and a STABILITY carry their view's id; a vote
counts only at a member whose view is that id, STABILITY only at a member whose view is that id.
The abstraction (``nakack2.abstraction``) names a view by its members' bitmask, so equal ids are
equal member sets, as the spec compares them; z3 proves the obligations for *every* ``vdef``,
the bitmask one included.

State (``FIELDS``): ``me``; ``low``, ``high``; ``hd``; ``cur``; ``vdef``; ``votes`` (coordinator c,
voter k): k's vote merged at c this round; ``merged``: c -> min hd for S over those votes (``EMPTY``:
none named S); ``n_vote`` (voter k, view, hd for S or ``EMPTY``): STABLE votes in flight (to the
coordinator of that view); ``n_stab`` (destination j, view, hd for S or ``EMPTY``): STABILITY in flight.
Every packet set has no budget: any copy may be lost, delivered or duplicated.

Actions (``ACTIONS``) follow ``spec/nakack2.py`` and ``spec/nakack2_stable.py``: S multicasts (high + 1);
a member's window for S delivers (its hd rises, at most to S's high); STABLE's gossip at a member
(its vote to the coordinator, or merged at once by the coordinator itself); a vote delivered (merged
if the coordinator's view is the vote's, the voter is in it and has not voted; once every member of
the view voted, a new round, STABILITY to every other member and, at S, the purge); a STABILITY
delivered (in the member's own view: a new round and, at S, purge to min(digest's hd, own hd)); a
view change at a member (its window for S dropped when S is not in the view; its round reset); loss;
``stutter`` (what does not touch S's windows or STABLE: other senders' traffic, XMIT_REQ, XMIT_RSP of
others, HIGHEST_SEQNO, the retransmit task, a stop).

Abstracted (over-approximated): the messages themselves. A window for S may deliver any seqno up to
S's high at any moment, which covers loss, reordering, the retransmit task, XMIT_REQ/XMIT_RSP and
HIGHEST_SEQNO at once. STABLE's gossip may also send nothing (the spec sends nothing while a member of
the view lacks a window), and a vote or STABILITY may be ignored even when the spec takes it, and a
complete round may stay open: each adds behaviours, never removes one, so a proof covers the spec.

Out of the proven scope (``view`` is guarded to *shrinking* views): joins (a JoinRsp creates windows at
the coordinator's digest, the become_server_queue, STABLE suspended) and merges. ``merge`` is in the
model (rule 10 of the multicast world: MERGE_DIGEST at S's own hd, then the view) so that its
obligations show *why* a merge breaks purge safety: the expected counterexamples-to-induction.
"""

from __future__ import annotations

from typing import Any

from checks.symbolic.ops import EMPTY, Ops
from checks.symbolic.system import INT, Action, ModelSpec, State, frame
from spec.nakack2_state import Variant

FIELDS: dict[str, Any] = {
    "me": INT, "low": INT, "high": INT, "hd": ("map",), "cur": ("map",), "vdef": ("set", INT, INT),
    "votes": ("set", INT, INT), "merged": ("map",), "n_vote": ("set", INT, INT, INT),
    "n_stab": ("set", INT, INT, INT),
}


# ---------------------------------------------------------------------------------------------
# Helpers shared by the actions and the invariants.
def in_view(o: Ops, p: State, view: Any, member: Any) -> Any:
    return o.has(p.vdef, view, member)


def coordinates(o: Ops, p: State, view: Any, c: Any) -> Any:
    """``c`` is the coordinator of ``view``: its lowest member."""
    return o.And(in_view(o, p, view, c), o.forall_in(p.vdef, lambda i, j: o.Implies(i == view, c <= j)))


def subview(o: Ops, p: State, small: Any, big: Any) -> Any:
    return o.forall_in(p.vdef, lambda i, j: o.Implies(i == small, in_view(o, p, big, j)))


def _reset(o: Ops, p: State, k: Any) -> dict[str, Any]:
    """resetDigest at ``k``: no vote merged this round."""
    return {"votes": o.remove_where(p.votes, lambda c, j: c == k), "merged": o.put(p.merged, k, EMPTY)}


def _purged(o: Ops, p: State, h: Any) -> Any:
    """S's own window after stable(digest) with ``h`` for S: purge(min(h, own hd)), never back."""
    upto = o.min(h, o.get(p.hd, p.me))
    return o.If(o.And(h != EMPTY, upto > p.low), upto, p.low)


def _merge_min(o: Ops, old: Any, h: Any) -> Any:
    return o.If(old == EMPTY, h, o.If(h == EMPTY, old, o.min(old, h)))


def _counted(o: Ops, p: State, q: State, c: Any, k: Any, view: Any, h: Any, net: dict[str, Any]) -> Any:
    """on_vote at ``c`` of ``k``'s vote (``view``, ``h``), the network changed by ``net``: ignored, merged,
    or merged and the round complete (every member of the view voted): a new round, STABILITY to every
    other member of the view and, if ``c`` is S, S's purge."""
    accepted = o.And(o.get(p.cur, c) == view, view != EMPTY, coordinates(o, p, view, c), in_view(o, p, view, k),
                     o.Not(o.has(p.votes, c, k)))
    merged = _merge_min(o, o.get(p.merged, c), h)
    complete = o.forall_in(p.vdef, lambda i, j: o.Implies(i == view, o.Or(j == k, o.has(p.votes, c, j))))
    stab = o.add_row(p.n_stab, p.vdef, view, lambda j: j != c, (view, merged))
    done = {**net, **_reset(o, p, c), "n_stab": stab, "low": o.If(c == p.me, _purged(o, p, merged), p.low)}
    return o.Or(frame(o, p, q, net),
                o.And(accepted, frame(o, p, q, {**net, "votes": o.add(p.votes, c, k),
                                                 "merged": o.put(p.merged, c, merged)})),
                o.And(accepted, complete, frame(o, p, q, done)))


# ---------------------------------------------------------------------------------------------
# Actions. Each is (guard, effect); the transition relation of an action is guard AND effect.
def _send(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_send at S: the next seqno into the own window (its hr and the counter)."""
    return frame(o, p, q, {"high": p.high + 1})


def _deliver(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """A copy of S's message (MSG, a re-multicast or an XMIT_RSP) at member r: its window for S, if any,
    delivers up to a new hd, at most S's high (the loopback copy at S: up to its hr)."""
    r = a["r"]
    old, new = o.get(p.hd, r), o.get(q.hd, r)
    return o.And(q.hd == o.put(p.hd, r, new), new >= old, new <= p.high, o.Implies(old == EMPTY, new == EMPTY),
                 frame(o, p, q, {}, free=("hd",)))


def _stable(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """STABLE's gossip at k: its vote (view, hd for S if S is in the view) to the coordinator, or
    merged at once if k coordinates its view; or nothing (a member of the view without a window)."""
    k = a["k"]
    view = o.get(p.cur, k)
    h = o.If(in_view(o, p, view, p.me), o.get(p.hd, k), EMPTY)
    coordinator = coordinates(o, p, view, k)
    return o.Or(frame(o, p, q, {}), o.And(o.Not(coordinator), frame(o, p, q, {"n_vote": o.add(p.n_vote, k, view, h)})),
                o.And(coordinator, _counted(o, p, q, k, k, view, h, {})))


def _stable_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    view = o.get(p.cur, a["k"])
    return o.And(view != EMPTY, in_view(o, p, view, a["k"]))


def _consumed(o: Ops, p: State, q: State, name: str, *key: Any) -> Any:
    """The copy ``key`` of packet set ``name`` consumed, or not: a duplicate, or another copy that reads
    the same here (two votes of one voter and view that differ only in other senders' entries)."""
    return o.Or(q[name] == p[name], q[name] == o.remove(p[name], *key))


def _deliver_vote(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    k, view, h = a["k"], a["view"], a["h"]
    return o.And(_consumed(o, p, q, "n_vote", k, view, h), _counted(o, p, q, a["c"], k, view, h, {"n_vote": q.n_vote}))


def _deliver_stab(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_stability at j: in j's own view, a new round and stable(digest) (S's purge if j is S)."""
    j, view, h = a["j"], a["view"], a["h"]
    net = {"n_stab": q.n_stab}
    taken = {**net, **_reset(o, p, j), "low": o.If(j == p.me, _purged(o, p, h), p.low)}
    return o.And(_consumed(o, p, q, "n_stab", j, view, h),
                 o.Or(frame(o, p, q, net), o.And(o.get(p.cur, j) == view, view != EMPTY, frame(o, p, q, taken))))


def _view(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """on_view at k: its window for S dropped if S is not in the view (S's own never), created at 0 if
    S is and k has none; a new round."""
    k, view = a["k"], a["view"]
    old = o.get(p.hd, k)
    window = o.If(k == p.me, old, o.If(in_view(o, p, view, p.me), o.If(old == EMPTY, 0, old), EMPTY))
    return frame(o, p, q, {"cur": o.put(p.cur, k, view), "hd": o.put(p.hd, k, window), **_reset(o, p, k)})


def _view_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    """The proven scope: a member with a view installs a smaller (or the same) one holding itself."""
    k, view = a["k"], a["view"]
    return o.And(o.get(p.cur, k) != EMPTY, view != EMPTY, in_view(o, p, view, k),
                 subview(o, p, view, o.get(p.cur, k)))


def _merge(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    """MERGE_DIGEST (S at its own hd, if S is in the view) then on_view at k: a window for S below the
    digest's hd is replaced by one at it (S's own is kept); any view holding k."""
    k, view = a["k"], a["view"]
    old, digest = o.get(p.hd, k), o.get(p.hd, p.me)
    merged = o.If(o.And(old != EMPTY, old >= digest), old, digest)
    window = o.If(k == p.me, old, o.If(in_view(o, p, view, p.me), merged, EMPTY))
    return frame(o, p, q, {"cur": o.put(p.cur, k, view), "hd": o.put(p.hd, k, window), **_reset(o, p, k)})


def _merge_guard(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.get(p.cur, a["k"]) != EMPTY, a["view"] != EMPTY, in_view(o, p, a["view"], a["k"]))


def _lose(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return o.And(o.subset(q.n_vote, p.n_vote), o.subset(q.n_stab, p.n_stab),
                 frame(o, p, q, {}, free=("n_vote", "n_stab")))


def _stutter(o: Ops, p: State, q: State, a: dict[str, Any], v: Variant) -> Any:
    return frame(o, p, q, {})


def _always(o: Ops, p: State, a: dict[str, Any], v: Variant) -> Any:
    return True


ACTIONS: tuple[Action, ...] = (
    Action("send", (), _always, _send),
    Action("deliver", (("r", INT),), _always, _deliver),
    Action("stable", (("k", INT),), _stable_guard, _stable),
    Action("deliver_vote", (("c", INT), ("k", INT), ("view", INT), ("h", INT)),
           lambda o, p, a, v: o.has(p.n_vote, a["k"], a["view"], a["h"]), _deliver_vote),
    Action("deliver_stab", (("j", INT), ("view", INT), ("h", INT)),
           lambda o, p, a, v: o.has(p.n_stab, a["j"], a["view"], a["h"]), _deliver_stab),
    Action("view", (("k", INT), ("view", INT)), _view_guard, _view),
    Action("merge", (("k", INT), ("view", INT)), _merge_guard, _merge),
    Action("lose", (), _always, _lose),
    Action("stutter", (), _always, _stutter),
)
ACTION_BY_NAME = {a.name: a for a in ACTIONS}
PROVEN_SCOPE = tuple(a for a in ACTIONS if a.name != "merge")  # founders, shrinking views


def initial(o: Ops, p: State) -> Any:
    """Founders: S in its own view, every member in its own view with a window at 0 for S exactly when
    S is in that view; nothing sent, no vote, nothing in flight."""
    me = p.me
    return o.And(p.low == 0, p.high == 0, o.get(p.cur, me) != EMPTY, in_view(o, p, o.get(p.cur, me), me),
                 o.forall_map(p.cur, lambda k, view: o.And(in_view(o, p, view, k), o.Implies(
                     k != me, (o.get(p.hd, k) != EMPTY) == in_view(o, p, view, me)))),
                 o.forall_map(p.hd, lambda k, x: o.And(x == 0, o.get(p.cur, k) != EMPTY)),
                 o.get(p.hd, me) != EMPTY,
                 o.forall_in(p.votes, lambda c, k: False), o.forall_map(p.merged, lambda c, x: False),
                 o.forall_in(p.n_vote, lambda k, view, h: False), o.forall_in(p.n_stab, lambda j, view, h: False))


NAKACK2 = ModelSpec("nakack2", FIELDS, ACTIONS, initial)
