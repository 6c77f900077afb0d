"""UNICAST4 read from the harness (``java/seqcheck/jgroups/Unicast4Model.java``) as ``spec/unicast4.py``
values, the settings the harness gives JGroups, and the releases the spec stands for.

Messages are UNICAST3's (``checks/jgroups/unicast3.message``, read as UNICAST4's types). State: a send
entry's ``acked`` is its FixedBuffer's low and its slots those above it up to high (a slot a blocked
thread has not filled reads None), ``seqno`` the entry's counter less one, ``blocked`` the harness's
threads blocked on that window with their seqnos; a receive entry's ``delivered`` is its window's hd,
``buffered`` the DATA held above it, ``acks_counted`` the entry's ``acks_sent`` counter; ``msg_cache``
is the spec's ``cache`` (one copy of each DATA: spec/unicast4.py decision 8; a drain of several copies
is the known difference ``message-cache-copies``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from checks.jgroups import unicast3 as jg3
from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.explained import Difference
from impl.common import payload_number
from spec import unicast4 as u4

if TYPE_CHECKING:
    from checks.jgroups.lockstep import Divergence

_STATES = {"OPEN": u4.OPEN, "CLOSING": u4.CLOSING}


def message(m: dict[str, Any]) -> u4.Msg:
    """A harness message as the spec's (UnicastHeader: UNICAST3's fields)."""
    msg = jg3.message(m)
    if getattr(msg, "oob", False):
        raise ValueError("a UNICAST4 DATA flagged OOB: the spec has no OOB flag")
    kind = getattr(u4, type(msg).__name__)
    return kind(*msg[:len(kind._fields)])  # UNICAST3's DATA has the OOB flag besides


def _payload(hexed: str | None) -> int | None:
    return None if hexed is None else payload_number(bytes.fromhex(hexed))


def _send_entry(e: dict[str, Any]) -> u4.SendEntry:
    unacked = tuple(_payload(p) for p in e["unacked"])
    blocked = tuple(sorted((int(s), payload_number(bytes.fromhex(p))) for s, p in e["blocked"]))
    return u4.SendEntry(e["conn_id"], _STATES[e["state"]], e["acked"], unacked, tuple(e["watermark"]),
                        e["last_ts"], e["seqno"], blocked)


def _recv_entry(e: dict[str, Any]) -> u4.RecvEntry:
    buffered = tuple(message(m) if m is not None else None for m in e["buffered"])
    return u4.RecvEntry(e["conn_id"], _STATES[e["state"]], e["delivered"], buffered, e["ack_pending"],  # type: ignore[arg-type]
                        int(e["acks_counted"]))


def node(state: dict[str, Any], me: int, n: int) -> u4.Node:
    """The spec node a JGroups member's state stands for (its msg_cache as a set per sender: the
    spec keeps one copy of each DATA, decision 8)."""
    send = tuple(_send_entry(state["send"][str(p)]) if str(p) in state["send"] else None for p in range(n))
    recv = tuple(_recv_entry(state["recv"][str(p)]) if str(p) in state["recv"] else None for p in range(n))
    xmit = tuple(int(state["xmit_last"].get(str(p), 0)) for p in range(n))
    cached = state.get("cached", {})
    cache = tuple(frozenset(message(m) for m in cached.get(str(p), [])) for p in range(n))
    return u4.Node(me, frozenset(state["members"]), send, recv, frozenset(state["sync_sent"]), xmit,
                   state["timestamper"], state["next_conn_id"], cache)  # type: ignore[arg-type]


def timer(t: u4.Timer) -> tuple[str, int | None]:
    """The harness's timer for a spec timer; a blocked thread's SEND names its seqno (``send#S``)."""
    if t.kind == u4.SEND:
        return f"send#{t.seqno}", t.peer
    return u4.TIMER_NAMES[t.kind], None if t.peer < 0 else t.peer


def props(cfg: u4.Config) -> dict[str, Any]:
    """UNICAST4's settings from the model's spec config (the timeouts the harness sets far away)."""
    out: dict[str, Any] = {"capacity": cfg.capacity, "dont_block": cfg.dont_block}
    if cfg.ack_threshold > 0:
        out["ack_threshold"] = cfg.ack_threshold
    if cfg.first_conn_id:
        out["first_conn_id"] = cfg.first_conn_id
    if cfg.variant.zero_conn_timeouts:  # JGRP-2929's configuration (the spec then fires no expiry timer)
        out["conn_expiry_timeout"] = out["conn_close_timeout"] = 0
    return out


def _cache_copies(divergence: Divergence, run: Any) -> bool:
    """A drain of a cache that held copies of one DATA: JGroups adds every copy (each counts towards
    the ACK and may send one), the spec one (decision 8). The step delivered a DATA to a member whose
    spec cache for the sender was not empty, the two sides agree on everything else that step, and
    JGroups sent only more ACKs, each equal to one the spec sent but for its timestamp."""
    if divergence.kind != "packets" or divergence.member < 0:
        return False
    action = run.path[-1][0]
    packet = getattr(action, "packet", None)
    if packet is None or not isinstance(packet.msg, u4.Data):
        return False
    before = run.world.view(run.before).nodes[divergence.member]
    if not before.cache[packet.src]:
        return False
    def shape(p: Any) -> Any:
        return (p.dst, "ACK", p.msg.seqno, p.msg.conn_id) if isinstance(p.msg, u4.Ack) else p

    spec = Counter(map(shape, divergence.spec_packets))
    jgroups = Counter(map(shape, divergence.jgroups_packets))
    extra = jgroups - spec
    return not spec - jgroups and all(isinstance(e, tuple) and e[1] == "ACK" and e in spec for e in extra)


DIFFERENCES = (
    Difference(
        "message-cache-copies", "unicast4", "abstraction", "5.4.0 and later",
        "ReliableUnicast's msg_cache is a queue that keeps every copy of a DATA that found no usable receive "
        "entry (a retransmission, a duplicate); its drain adds each copy, and each add counts towards the ACK "
        "and may send one. The spec keeps one copy of each DATA (decision 8: the queue is unbounded, which "
        "would make the model infinite), so JGroups sends more ACKs at that drain, equal but for their "
        "timestamps. The schedule ends there.",
        "spec/unicast4.py: decision 8, _cached (a frozenset per sender), _on_data (the drain)",
        "ReliableUnicast.java handleDataReceived: msg_cache.add(sender, msg); addQueuedMessages -> addMessage "
        "-> needToSendAck(entry, 1) per copy; MessageCache.add keeps duplicates",
        _cache_copies),
)

BINDING = JGroupsBinding(
    "unicast4", "unicast4", message, node, timer,
    (ReleaseProfile((5, 4, 0), (5, 4, 6), ("drop_dont_block",),
                    "before JGRP-2873 (5.4.6): a DONT_BLOCK send on a full window is dropped, its seqno spent"),
     ReleaseProfile((5, 4, 6), None, (), "UNICAST4 with JGRP-2873's fix (5.4.12, master; JGRP-2929 changed only "
                                         "the timeouts' defaults and warns about 0)")),
    DIFFERENCES, props, frozenset({"zero_conn_timeouts"}))
