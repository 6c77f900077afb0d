"""UNICAST3 read from the harness (``java/seqcheck/jgroups/Unicast3Model.java``) as ``spec/unicast3.py``
values, and the releases the spec stands for.

Messages map field for field (a release without timestamps, 3.4.x, reads ts 0, as the spec's
``no_timestamps`` variant sends them). State: a send entry's HA and HS are its table's highest
delivered and highest received seqnos and its unacked payloads the messages stored above HA; a
receive entry's ``delivered`` is its table's highest delivered seqno and ``buffered`` the messages
it holds above it; ``sync_sent`` is the key set of ``last_sync_sent``; ``xmit_last`` the
``xmit_task_map``; ``next_conn_id`` is ``last_conn_id`` (the id the next send entry gets); the
message cache is ``msg_cache``'s queue per sender as a set, with its OOB DATA in queue order (first
copies; 5.2 on; the spec's decision 7 says why that is the queue), empty for the releases without one.
OOB (decision 12): a DATA's ``oob`` is its Message.Flag.OOB, a send entry's ``oob`` the seqnos of its
OOB messages, and a window slot holding JGroups' DUMMY_OOB_MSG is the spec's placeholder (payload 0,
not first, the window's conn_id).
"""

from __future__ import annotations

from typing import Any

from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.explained import Difference
from impl.common import payload_number
from spec import unicast3 as u3

_STATES = {"OPEN": u3.OPEN, "CLOSING": u3.CLOSING}


def message(m: dict[str, Any]) -> u3.Msg:
    kind = m["type"]
    if kind == "DATA":
        return u3.Data(m["seqno"], m["conn_id"], m["first"], payload_number(bytes.fromhex(m["payload"])),
                       bool(m.get("oob", False)))
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
                        e["last_ts"], frozenset(e.get("oob", ())), frozenset(e.get("dont_loopback", ())))


def _recv_entry(e: dict[str, Any]) -> u3.RecvEntry:
    buffered = tuple(None if m is None else _placeholder(e, i) if m["type"] == "OOB_PLACEHOLDER" else message(m)
                     for i, m in enumerate(e["buffered"]))
    return u3.RecvEntry(e["conn_id"], _STATES[e["state"]], e["delivered"], buffered, e["ack_pending"])  # type: ignore[arg-type]


def _placeholder(e: dict[str, Any], index: int) -> u3.Data:
    """The spec's placeholder for DUMMY_OOB_MSG in slot ``index`` above the window's hd (decision 12)."""
    return u3.Data(e["delivered"] + 1 + index, e["conn_id"], False, 0, True)


def node(state: dict[str, Any], me: int, n: int) -> u3.Node:
    """The spec node a JGroups member's state stands for."""
    send = tuple(_send_entry(state["send"][str(p)]) if str(p) in state["send"] else None for p in range(n))
    recv = tuple(_recv_entry(state["recv"][str(p)]) if str(p) in state["recv"] else None for p in range(n))
    xmit = tuple(int(state["xmit_last"].get(str(p), 0)) for p in range(n))
    cached = state.get("cached", {})  # msg_cache (5.2 on): a queue per sender (decision 7)
    queues = [[_cached_data(m) for m in cached.get(str(p), ())] for p in range(n)]
    cache = tuple(frozenset(queue) for queue in queues)
    order = tuple(tuple(dict.fromkeys(m for m in queue if m.oob)) for queue in queues)  # first arrivals
    return u3.Node(me, frozenset(state["members"]), send, recv, cache, frozenset(state["sync_sent"]), xmit,
                   state["timestamper"], state["next_conn_id"], order if any(order) else ())


def _cached_data(m: dict[str, Any]) -> u3.Data:
    msg = message(m)
    if not isinstance(msg, u3.Data):
        raise ValueError(f"msg_cache holds a {type(msg).__name__}: JGroups caches only DATA")
    return msg


def timer(t: u3.Timer) -> tuple[str, int | None]:
    return u3.TIMER_NAMES[t.kind], None if t.peer < 0 else t.peer


DIFFERENCES: tuple[Difference, ...] = ()  # none left: oob-cache-order was fixed (the spec keeps the queue's order)

BINDING = JGroupsBinding(
    "unicast3", "unicast3", message, node, timer,
    (ReleaseProfile((3, 3, 0), (3, 5, 0),
                    ("close_to_non_members", "no_message_cache", "no_sync_rate_limit", "no_timestamps",
                     "remove_without_ack_flush", "self_as_peer", "oob_keeps_message"),
                    "before JGRP-1875 (3.5.0): no timestamps on ACK/SEND_FIRST_SEQNO, no sync rate limit (and no "
                    "last_sync_sent), a receiver removal that does not flush pending ACKs, CLOSE sent to non-members; "
                    "no message cache (JGRP-2327); messages to self through a receive entry and ACKed (no "
                    "handleDataReceivedFromSelf, which 3.6.20 has); an OOB DATA held in the window as itself, not "
                    "a placeholder (run on 3.4.8)"),
     ReleaseProfile((3, 6, 0), (5, 0, 0), ("no_message_cache", "stale_xmit_record_asks_all"),
                    "JGRP-1875's timestamps; JGRP-2573: SeqnoList (a bitset from 3.6.0, JGRP-1868) ignores a "
                    "previous-batch record below hd, fixed in 5.2.0; no message cache (JGRP-2327) (run on 3.6.20)"),
     ReleaseProfile((5, 2, 12), None, (), "UNICAST3 as shipped (run on 5.2.12, 5.4.x, master)")),
    DIFFERENCES, props=lambda cfg: {"ack_threshold": cfg.ack_threshold})
