"""NAKACK2 (with STABLE) read from the harness (``java/seqcheck/jgroups/Nakack2Model.java``) as
``spec/nakack2.py`` values, and the releases the spec stands for.

Messages: NAKACK's MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO and GMS's JoinRsp (``mcast_lockstep``),
STABLE's gossip (a ``StableVote``: the voter's view and digest) and STABILITY. State: a Table is the
spec's ``Window``; stable_xmit_map, LastSeqnoResender's record; STABLE's votes (by the ranks of its
view), its merged digest (an entry no vote set yet is None) and whether GMS suspended it.

Release profiles (the first tag holding each fix, from JGroups' history): JGRP-1539 (previous-batch
retransmission) from 3.3, JGRP-2678 (STABLE asks for the previous digest's hr) and JGRP-2675 (an
unbounded become_server_queue without retransmission) from 5.2.13. Before JGRP-2675 the queue was a
BoundedList that evicts its oldest entry (``queue_drops_oldest``). Before 5.1.6 STABLE sends the
coordinator its own vote and STABILITY as packets (``stable_vote_to_self``); from 3.6.0 to 5.1.x
the retransmit task has UNICAST3's JGRP-2573 (``stale_xmit_record_asks_all``: the SeqnoList is
shared). The no-retransmission mode the
spec's ``xmit_interval <= 0`` stands for existed from 5.2.13 to 5.4.3: 5.4.4 on refuses it (the
harness's reset then fails with JGroups' own message).
"""

from __future__ import annotations

from typing import Any

from checks.jgroups import mcast_lockstep as mc
from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.locate import JGroupsUnavailable, Release
from spec import nakack2 as n2


def message(m: dict[str, Any], n: int = 0) -> n2.Msg:
    kind = m["type"]
    if kind in ("STABLE_VOTE", "STABILITY"):
        view = tuple(m["view"]) if m["view"] is not None else ()
        digest = mc.digest(m["digest"], m["n"])
        return n2.StableVote(view, digest) if kind == "STABLE_VOTE" else n2.Stability(view, digest)
    found = mc.common_message(m, n)
    if found is None:
        raise ValueError(f"NAKACK2 message of type {kind} has no spec counterpart")
    return found


def _window(w: dict[str, Any] | None) -> n2.Window | None:
    if w is None:
        return None
    kept = mc.data_items(w["kept"])
    if any(m is None for m in kept):
        raise ValueError(f"a delivered slot is empty in window {w}")
    return n2.Window(w["low"], w["hd"], kept, mc.data_items(w["buffered"], w["hd"] + 1))


def node(state: dict[str, Any], me: int, n: int) -> n2.Node:
    """The spec node a JGroups member's state stands for."""
    windows = tuple(_window(w) for w in mc.per_member(state["windows"], n, None))
    queue = tuple((item["src"], message(item["msg"], n)) for item in state["queue"])
    merged = mc.digest(state["merged"], n)
    return n2.Node(me, frozenset(state["members"]), state["seqno"], windows, state["is_server"],
                   state["become_server_pending"], queue, mc.per_member(state["xmit_last"], n, 0),
                   mc.per_member(state["stable_xmit"], n, n2.NO_ENTRY), state["last_seqno_resent"],
                   state["num_resends"], state["skip_next_resend"], frozenset(state["votes"]), merged,
                   state["stable_suspended"], frozenset(state.get("dont_loopback", ())))


def timer(t: n2.Timer) -> tuple[str, int | None]:
    return n2.TIMER_NAMES[t.kind], None


def check(cfg: n2.Config, release: Release) -> None:
    """A model without retransmission on a release that refuses it (5.4.4 on: "xmit_interval has to be
    > 0"), or with the LastSeqnoResender on a release before it (JGRP-1904, 3.5), is one line."""
    if cfg.resend_last_seqno and cfg.retransmission and release.numbers < (3, 5, 0):
        raise JGroupsUnavailable(f"resend_last_seqno: JGroups {release.version}'s NAKACK2 has no LastSeqnoResender "
                                 "(JGRP-1904, 3.5); set [config] resend_last_seqno = false to run this model on it")
    if cfg.xmit_interval <= 0 and release.numbers >= (5, 4, 4):
        raise JGroupsUnavailable(f"xmit_interval = {cfg.xmit_interval} (no retransmission): JGroups {release.version} "
                                 "refuses it (NAKACK2.init: xmit_interval has to be > 0, from 5.4.4 on); the mode "
                                 "existed from 5.2.13 to 5.4.3")


def props(cfg: n2.Config) -> dict[str, Any]:
    """The model's settings the harness passes on."""
    return {"xmit_interval": cfg.xmit_interval, "use_mcast_xmit": cfg.use_mcast_xmit,
            "resend_last_seqno": cfg.resend_last_seqno, "resend_last_seqno_max_times": cfg.resend_last_seqno_max_times,
            "become_server_queue_size": cfg.become_server_queue_size, "dont_loopback": cfg.dont_loopback}


_OLD_STABLE = ("stable_xmit_current_hr", "bounded_queue_no_xmit", "queue_drops_oldest")

BINDING = JGroupsBinding(
    "nakack2", "nakack2", message, node, timer,
    (ReleaseProfile((3, 0, 0), (3, 3, 0), ("xmit_all_gaps", *_OLD_STABLE, "stable_vote_to_self"),
                    "3.0-3.2: before JGRP-1539, JGRP-2678 and JGRP-2675"),
     ReleaseProfile((3, 3, 0), (3, 6, 0), (*_OLD_STABLE, "stable_vote_to_self"),
                    "3.3-3.5: JGRP-1539 fixed; before JGRP-2678 and JGRP-2675; the coordinator's STABLE vote and "
                    "STABILITY copy packets to itself (5.1.6 merges the vote directly and sends STABILITY with "
                    "DONT_LOOPBACK: commit 605ea5b3e) (run on 3.4.8)"),
     ReleaseProfile((3, 6, 0), (5, 1, 6), (*_OLD_STABLE, "stable_vote_to_self", "stale_xmit_record_asks_all"),
                    "3.6-5.1.5: as 3.3-3.5, and JGRP-2573: 3.6.0's bitset SeqnoList ignores a previous-batch record "
                    "below hd, fixed in 5.2.0 (run on 3.6.20)"),
     ReleaseProfile((5, 1, 6), (5, 2, 0), (*_OLD_STABLE, "stale_xmit_record_asks_all"),
                    "5.1.6-5.1.x: the coordinator merges its own vote; JGRP-2573; before JGRP-2678 and JGRP-2675"),
     ReleaseProfile((5, 2, 0), (5, 2, 13), _OLD_STABLE, "5.2.0-5.2.12: before JGRP-2678 and JGRP-2675 (run on 5.2.12)"),
     ReleaseProfile((5, 2, 13), None, (), "5.2.13 on: JGRP-2678 and JGRP-2675 fixed")),
    props=props, check=check, drive=mc.drive)
