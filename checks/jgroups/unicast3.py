"""UNICAST3 read from the harness (``java/seqcheck/jgroups/Unicast3Model.java``) as ``spec/unicast3.py``
values, and the releases the spec stands for.

Messages map field for field (a release without timestamps, 3.4.x, reads ts 0, as the spec's
``no_timestamps`` variant sends them). State: a send entry's HA and HS are its table's highest
delivered and highest received seqnos and its unacked payloads the messages stored above HA; a
receive entry's ``delivered`` is its table's highest delivered seqno and ``buffered`` the messages
it holds above it; ``sync_sent`` is the key set of ``last_sync_sent``; ``xmit_last`` the
``xmit_task_map``; ``next_conn_id`` is ``last_conn_id`` (the id the next send entry gets).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.explained import Difference
from impl.common import payload_number
from models.world import FireTimer
from spec import unicast3 as u3

if TYPE_CHECKING:
    from checks.jgroups.lockstep import Divergence

_STATES = {"OPEN": u3.OPEN, "CLOSING": u3.CLOSING}


def message(m: dict[str, Any]) -> u3.Msg:
    kind = m["type"]
    if kind == "DATA":
        return u3.Data(m["seqno"], m["conn_id"], m["first"], payload_number(bytes.fromhex(m["payload"])))
    if kind == "ACK":
        return u3.Ack(m["seqno"], m["conn_id"], m["ts"])
    if kind == "SEND_FIRST_SEQNO":
        return u3.SendFirstSeqno(m["ts"])
    if kind == "XMIT_REQ":
        return u3.XmitReq(tuple(m["seqnos"]))
    if kind == "CLOSE":
        return u3.Close(m["conn_id"])
    raise ValueError(f"UNICAST3 message of type {kind} has no spec counterpart")


def _send_entry(e: dict[str, Any]) -> u3.SendEntry:
    unacked = tuple(payload_number(bytes.fromhex(p)) if p is not None else -1 for p in e["unacked"])
    return u3.SendEntry(e["conn_id"], _STATES[e["state"]], e["acked"], unacked, tuple(e["watermark"]),
                        e["last_ts"])


def _recv_entry(e: dict[str, Any]) -> u3.RecvEntry:
    buffered = tuple(message(m) if m is not None else None for m in e["buffered"])
    return u3.RecvEntry(e["conn_id"], _STATES[e["state"]], e["delivered"], buffered, e["ack_pending"])  # type: ignore[arg-type]


def node(state: dict[str, Any], me: int, n: int) -> u3.Node:
    """The spec node a JGroups member's state stands for."""
    send = tuple(_send_entry(state["send"][str(p)]) if str(p) in state["send"] else None for p in range(n))
    recv = tuple(_recv_entry(state["recv"][str(p)]) if str(p) in state["recv"] else None for p in range(n))
    xmit = tuple(int(state["xmit_last"].get(str(p), 0)) for p in range(n))
    return u3.Node(me, frozenset(state["members"]), send, recv, frozenset(state["sync_sent"]), xmit,
                   state["timestamper"], state["next_conn_id"])


def timer(t: u3.Timer) -> tuple[str, int | None]:
    return u3.TIMER_NAMES[t.kind], None if t.peer < 0 else t.peer


def _jgroups_3_early_xmit_req(divergence: Divergence, run: Any) -> bool:
    """JGroups 3.x's ``SeqnoList.removeHigherThan(max)`` clears nothing when ``max`` is below the list's
    first seqno, so the retransmit task's previous-batch filter (JGRP-1539) lets every current gap
    through when all of them lie above the record of the previous run: the only difference is one
    XMIT_REQ per such window, asking for all of its gaps one run early (the records agree)."""
    if divergence.kind != "packets" or run.harness.release.numbers >= (5, 0, 0):
        return False
    action = run.path[-1][0]
    if not isinstance(action, FireTimer) or action.timer.kind != u3.XMIT:
        return False
    extra = Counter(divergence.jgroups_packets) - Counter(divergence.spec_packets)
    if Counter(divergence.spec_packets) - Counter(divergence.jgroups_packets) or not extra:
        return False
    node = run.world.view(run.before).nodes[action.member]
    for packet in extra.elements():
        entry, record = node.recv[packet.dst], node.xmit_last[packet.dst]
        if not isinstance(packet.msg, u3.XmitReq) or entry is None or record == 0:
            return False
        if packet.msg.seqnos != entry.missing() or min(entry.missing()) <= record:
            return False
    return True


DIFFERENCES = (
    Difference(
        "seqnolist-remove-higher-than", "unicast3", "jgroups-finding", "3.x (3.4.8, 3.6.20); fixed by 5.2.12",
        "JGroups 3.x's SeqnoList.removeHigherThan(max) clears nothing when max+1 is below the list's offset, so "
        "when every gap of a window lies above the previous run's record, the retransmit task asks for all of them "
        "at once instead of waiting one run (JGRP-1539's previous batch); a retransmission one run early, no "
        "safety or liveness consequence. The spec does what the code means (and what 5.x does).",
        "spec/unicast_common.py: missing_requests (wanted = seqnos <= the previous record)",
        "SeqnoList.java (3.6.20) removeHigherThan: `if(from <= to && from >= 0)` with from=index(max+1) < 0; "
        "5.2.12 adds `if(from < 0) from=0`; called from UNICAST3.triggerXmit",
        _jgroups_3_early_xmit_req),
)

BINDING = JGroupsBinding(
    "unicast3", "unicast3", message, node, timer,
    (ReleaseProfile((3, 3, 0), (3, 5, 0),
                    ("close_to_non_members", "no_sync_rate_limit", "no_timestamps", "remove_without_ack_flush"),
                    "before JGRP-1875 (3.5.0): no timestamps on ACK/SEND_FIRST_SEQNO, no sync rate limit (and no "
                    "last_sync_sent), a receiver removal that does not flush pending ACKs, CLOSE sent to non-members"),
     ReleaseProfile((3, 5, 0), None, (), "UNICAST3 with JGRP-1875")),
    DIFFERENCES)
