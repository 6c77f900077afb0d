"""UNICAST4 read from the harness (``java/seqcheck/jgroups/Unicast4Model.java``) as ``spec/unicast4.py``
values, the settings the harness gives JGroups, and the releases the spec stands for.

Messages are UNICAST3's (``checks/jgroups/unicast3.message``, read as UNICAST4's types). State: a send
entry's ``acked`` is its FixedBuffer's low and its slots those above it up to high (a slot a blocked
thread has not filled reads None), ``seqno`` the entry's counter less one, ``blocked`` the harness's
threads blocked on that window with their seqnos; a receive entry's ``delivered`` is its window's hd,
``buffered`` the DATA held above it, ``acks_counted`` the entry's ``acks_sent`` counter; ``msg_cache``
is the spec's ``cache`` (one copy of each DATA: spec/unicast4.py decision 8; a drain of several copies
is the known difference ``message-cache-copies``). OOB (decision 10): a DATA's ``oob`` is its
Message.Flag.OOB, a send entry's ``oob`` the seqnos of its OOB messages (stored, or held by a blocked
thread), and a window slot holding JGroups' DUMMY_OOB_MSG is the spec's placeholder (payload 0, not
first, the window's conn_id).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from checks.jgroups import unicast3 as jg3
from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.explained import Difference
from impl.common import payload_number
from models.world import LosePacket
from spec import unicast4 as u4
from spec import unicast4_batch as u4_batch
from spec.effects import Deliver, Send
from spec.unicast_common import cache_drain

if TYPE_CHECKING:
    from checks.jgroups.lockstep import Divergence

_STATES = {"OPEN": u4.OPEN, "CLOSING": u4.CLOSING}


def message(m: dict[str, Any]) -> u4.Msg:
    """A harness message as the spec's (UnicastHeader: UNICAST3's fields)."""
    msg = jg3.message(m)
    kind = getattr(u4, type(msg).__name__)
    return kind(*msg)  # the same fields, DATA's OOB flag among them


def _payload(hexed: str | None) -> int | None:
    return None if hexed is None else payload_number(bytes.fromhex(hexed))


def _send_entry(e: dict[str, Any]) -> u4.SendEntry:
    unacked = tuple(_payload(p) for p in e["unacked"])
    blocked = tuple(sorted((int(s), payload_number(bytes.fromhex(p))) for s, p in e["blocked"]))
    return u4.SendEntry(e["conn_id"], _STATES[e["state"]], e["acked"], unacked, tuple(e["watermark"]),
                        e["last_ts"], e["seqno"], blocked, frozenset(int(s) for s in e.get("oob", ())),
                        frozenset(int(s) for s in e.get("dont_loopback", ())),
                        frozenset(int(s) for s in e.get("oob_delivered", ())), int(e.get("acks_counted", 0)))


def _recv_entry(e: dict[str, Any]) -> u4.RecvEntry:
    buffered = tuple(None if m is None else _placeholder(e, i) if m["type"] == "OOB_PLACEHOLDER" else message(m)
                     for i, m in enumerate(e["buffered"]))
    return u4.RecvEntry(e["conn_id"], _STATES[e["state"]], e["delivered"], buffered, e["ack_pending"],  # type: ignore[arg-type]
                        int(e["acks_counted"]))


def _placeholder(e: dict[str, Any], index: int) -> u4.Data:
    """The spec's placeholder for DUMMY_OOB_MSG in slot ``index`` above the window's hd (decision 10)."""
    return u4.Data(e["delivered"] + 1 + index, e["conn_id"], False, 0, True)


def node(state: dict[str, Any], me: int, n: int) -> u4.Node:
    """The spec node a JGroups member's state stands for (its msg_cache as a set per sender, the
    spec keeping one copy of each DATA, and the first arrivals of its OOB DATA in queue order:
    decision 8)."""
    send = tuple(_send_entry(state["send"][str(p)]) if str(p) in state["send"] else None for p in range(n))
    recv = tuple(_recv_entry(state["recv"][str(p)]) if str(p) in state["recv"] else None for p in range(n))
    xmit = tuple(int(state["xmit_last"].get(str(p), 0)) for p in range(n))
    cached = state.get("cached", {})
    queues = [[_cached_data(m) for m in cached.get(str(p), [])] for p in range(n)]
    cache = tuple(frozenset(queue) for queue in queues)
    order = tuple(tuple(dict.fromkeys(m for m in queue if m.oob)) for queue in queues)  # first arrivals
    return u4.Node(me, frozenset(state["members"]), send, recv, frozenset(state["sync_sent"]), xmit,
                   state["timestamper"], state["next_conn_id"], cache, order if any(order) else ())


def _cached_data(m: dict[str, Any]) -> u4.Data:
    msg = message(m)
    if not isinstance(msg, u4.Data):
        raise ValueError(f"msg_cache holds a {type(msg).__name__}: JGroups caches only DATA")
    return msg


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
    the ACK and may send one), the spec one (decision 8). The step delivered DATA (one, or a batch) to
    a member whose spec cache for the sender was not empty; the spec's step redone with every cached
    DATA added as many times as JGroups' queue held it (the copies that arrived since the cache was
    last drained, ``_copies``) sends exactly JGroups' packets, delivers what JGroups delivered and
    leaves JGroups' state."""
    member = divergence.member
    action = run.path[-1][0]
    msgs = [p.msg for p in getattr(action, "packets", ())] or [getattr(getattr(action, "packet", None), "msg", None)]
    if member < 0 or not all(isinstance(m, u4.Data) for m in msgs):
        return False
    src = (getattr(action, "packet", None) or action.packets[0]).src
    before = run.world.view(run.before).nodes[member]
    copies = _copies(run, member, src)
    if not before.cache[src] or not any(n > 1 for n in copies.values()):
        return False
    cfg = run.world.cfg
    node, effects = _drained_with_copies(cfg, before, src, tuple(msgs), copies)
    packets = Counter((e.dst, e.msg) for e in effects if isinstance(e, Send))
    jgroups = divergence.jgroups_packets if divergence.kind == "packets" else \
        run.world.step_effects(run.before, action)[1]  # the packets agreed
    if packets != Counter((p.dst, p.msg) for p in jgroups):
        return False
    if divergence.kind == "packets":
        return True
    delivered = [(src, e.payload) for e in effects if isinstance(e, Deliver)]
    if divergence.kind == "deliveries":
        return delivered == list(divergence.jgroups_delivered)
    state = run.harness.command("state", m=member)["state"]
    return divergence.kind == "state" and BINDING.node(state, member, run.world.n) == node


def _copies(run: Any, member: int, src: int) -> Counter[u4.Data]:
    """How many copies of each DATA from ``src`` JGroups' msg_cache at ``member`` held before the last
    step: every DATA that reached ``member`` after the spec's cache for ``src`` was last empty and
    that the spec then held in that cache (JGroups caches exactly when the spec does; it keeps each
    copy, the spec one)."""
    held: Counter[u4.Data] = Counter()
    for action, after in run.path[:-1]:
        packets = getattr(action, "packets", ()) or ((action.packet,) if hasattr(action, "packet") else ())
        cache = run.world.view(after).nodes[member].cache[src]
        if not cache:
            held.clear()
        elif not isinstance(action, LosePacket):
            for p in packets:
                if p.dst == member and p.src == src and p.msg in cache:
                    held[p.msg] += 1
    return held


def _drained_with_copies(cfg: u4.Config, node: u4.Node, src: int, msgs: tuple[u4.Data, ...],
                         copies: Counter[u4.Data]) -> tuple[u4.Node, list[Any]]:
    """The spec's ``_on_data`` (one DATA) or ``on_batch`` with each cached DATA added ``copies`` times."""
    ours: tuple[u4.Data, ...] = msgs
    lowest = msgs[0]
    if len(msgs) > 1:
        highest = max(m.conn_id for m in msgs)
        ours = tuple(m for m in msgs if m.conn_id == highest)
        lowest = min(ours, key=lambda m: m.seqno)
    node, entry, effects = u4.receive_entry(cfg, node, src, lowest)
    if entry is None:
        return node, effects
    node, queued = cache_drain(node, src, entry.conn_id)
    for m in queued:
        for _ in range(max(copies[m], 1)):
            node, entry, added = u4.add_message(cfg, node, src, entry, m)
            effects += added
    if len(msgs) == 1:
        node, entry, added = u4.add_message(cfg, node, src, entry, lowest)
    else:
        node, entry, added = u4_batch.batch_received(cfg, node, src, entry, ours)
    effects += added
    node, entry, added = u4.remove_and_deliver(cfg, node, src, entry)
    return u4.with_recv(node, src, entry), effects + added


DIFFERENCES = (
    Difference(
        "message-cache-copies", "unicast4", "abstraction", "5.4.0 and later",
        "ReliableUnicast's msg_cache is a queue that keeps every copy of a DATA that found no usable receive "
        "entry (a retransmission, a duplicate); its drain adds each copy, and each add counts towards the ACK "
        "and may send one. The spec keeps one copy of each DATA (decision 8: the queue is unbounded, which "
        "would make the model infinite), so at that drain JGroups counts more and its ACKs go at other times "
        "(with other hd values, below ack_threshold as a pending flag and a counter): the spec's step redone "
        "with every copy added gives JGroups' packets, deliveries and state exactly. The schedule ends there.",
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
