"""UNICAST2 read from the harness (``java/seqcheck/jgroups/Unicast2Model.java``) as ``spec/unicast2.py``
values, the JGroups properties a spec config stands for, and the releases the spec stands for.

Messages map field for field; UNICAST2 has no timestamps, so SEND_FIRST_SEQNO and STABLE read ts 0,
as the spec sends them without ``fix_timestamps``. State: a send entry's HA is its table's low (every
seqno up to it purged) and its unacked payloads the messages stored above it; ``ack_received`` is
False in a release without it (before 3.2.6, where the spec runs with ``no_first_ack`` and never sets
it); the watermark and last timestamp, which only the spec's fix flags use, read (0, 0) and 0. A
receive entry's ``delivered`` is its table's highest delivered seqno, ``buffered`` the messages it
holds above it, ``last_highest`` and ``stable_count`` the stable task's bookkeeping (JGroups starts
last_highest at -1, the spec at 0: both mean "no STABLE sent yet", and neither equals an hr, which is
at least 1 in every entry). ``xmit_last`` is ``xmit_task_map`` (empty before 3.3), ``next_conn_id``
is ``last_conn_id``.
"""

from __future__ import annotations

from typing import Any

from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from impl.common import payload_number
from spec import unicast2 as u2

FAR = 1 << 40  # ms: a timeout that is never reached in a run (Unicast2Model.FAR)


def message(m: dict[str, Any]) -> u2.Msg:
    kind = m["type"]
    if kind == "DATA":
        return u2.Data(m["seqno"], m["conn_id"], m["first"], payload_number(bytes.fromhex(m["payload"])))
    if kind == "XMIT_REQ":
        return u2.XmitReq(tuple(m["seqnos"]))
    if kind == "SEND_FIRST_SEQNO":
        return u2.SendFirstSeqno(m["seqno"], 0)
    if kind == "STABLE":
        return u2.Stable(m["hd"], m["hr"], m["conn_id"], 0)
    if kind == "ACK":
        return u2.Ack(m["seqno"], m["conn_id"])
    raise ValueError(f"UNICAST2 message of type {kind} has no spec counterpart")


def _send_entry(e: dict[str, Any]) -> u2.SendEntry:
    if e["hd"] != e["low"] or e["next_seqno"] != e["hr"] + 1:  # a send table purges low and hd together
        raise ValueError(f"send table with low {e['low']}, hd {e['hd']}, hr {e['hr']}, next seqno {e['next_seqno']}")
    stored = list(e["stored"])
    acked = e["low"]
    while stored and stored[0] is None:  # purged, though JGRP-1872 lowered low below them (before 3.4.6)
        stored.pop(0)
        acked += 1
    unacked = tuple(payload_number(bytes.fromhex(p)) if p is not None else -1 for p in stored)
    return u2.SendEntry(e["conn_id"], acked, unacked, e.get("ack_received", False), (0, 0), 0)


def _recv_entry(e: dict[str, Any]) -> u2.RecvEntry:
    buffered = tuple(message(m) if m is not None else None for m in e["buffered"])
    last_highest = 0 if e["last_highest"] == -1 else e["last_highest"]
    return u2.RecvEntry(e["conn_id"], e["delivered"], buffered, last_highest, e["num_stable_msgs"])  # type: ignore[arg-type]


def node(state: dict[str, Any], me: int, n: int) -> u2.Node:
    """The spec node a JGroups member's state stands for."""
    send = tuple(_send_entry(state["send"][str(p)]) if str(p) in state["send"] else None for p in range(n))
    recv = tuple(_recv_entry(state["recv"][str(p)]) if str(p) in state["recv"] else None for p in range(n))
    xmit = tuple(int(state["xmit_last"].get(str(p), 0)) for p in range(n))
    return u2.Node(me, frozenset(state["members"]), send, recv, xmit, 0, state["next_conn_id"])


def timer(t: u2.Timer) -> tuple[str, int | None]:
    return u2.TIMER_NAMES[t.kind], None if t.peer < 0 else t.peer


def props(cfg: u2.Config) -> dict[str, Any]:
    """UNICAST2's properties for the spec's config: max_stable_msgs as the spec's, and the reaper on
    (its timeout far away: the world fires it) only where the spec has it."""
    return {"max_stable_msgs": cfg.max_stable_msgs, "conn_expiry_timeout": FAR if cfg.conn_expiry else 0}


# Each profile covers the releases whose UNICAST2.java, util/Table.java and util/SeqnoList.java are
# byte for byte those of the release the lockstep runs on (JGroups' tags, read in its repository);
# the releases between have other code and no profile until a lockstep has run on one (3.2.6 to
# 3.4.5 resend the first message, JGRP-1563, from a table whose forced purge can still lower low,
# JGRP-1872, fixed in 3.4.6: while it is lowered no first message is resent, which the spec has no
# flag for; 3.5.0 to 3.6.14 changed UNICAST2 or Table in ways not read).
BINDING = JGroupsBinding(
    "unicast2", "unicast2", message, node, timer,
    (ReleaseProfile((3, 2, 0), (3, 2, 6), ("no_first_ack", "xmit_all_gaps"),
                    "3.2.0 to 3.2.5: before JGRP-1563 (no ACK of a first DATA, no first-message resend) and "
                    "JGRP-1539 (every gap asked for on every run)"),
     ReleaseProfile((3, 4, 6), (3, 5, 0), (), "3.4.6 to 3.4.8: UNICAST2 with JGRP-1539, -1563 and Table's JGRP-1872"),
     ReleaseProfile((3, 6, 15), (4, 0, 0), ("stale_xmit_record_asks_all",),
                    "3.6.15 to 3.6.20, the last UNICAST2: SeqnoList a bitset (JGRP-1868, 3.6.0) whose "
                    "removeHigherThan clears nothing below its offset (JGRP-2573, fixed in 5.2.0)")),
    props=props)
