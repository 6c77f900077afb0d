"""NAKACK4 read from the harness (``java/seqcheck/jgroups/Nakack4Model.java``) as ``spec/nakack4.py``
values, and the releases the spec stands for.

Messages: NAKACK's MSG, XMIT_REQ, XMIT_RSP, HIGHEST_SEQNO and GMS's JoinRsp (``mcast_lockstep``),
and NAKACK4's ACK. State: a FixedBuffer is the spec's ``Window`` (low, hd, the messages kept from
low+1 to hd, the messages and gaps from hd+1 to high); a member's ``Entry`` gives the ACK counter
and pending flag; the AckTable its entries (NO_ENTRY for a member without one) and its minimum;
``sending`` is the application thread holding a seqno (``AppThreads``); a window's deliverer is
STUCK while its ``adders`` counter is set, STRANDED when the harness's injected fault left messages
behind (``DeliverFault.java``), ARMED while a fault waits for its next batch.

Release profiles (the first tag holding each fix, from JGroups' history): JGRP-3034 (an exception
building a batch leaves the deliverer set) is fixed on master only, so 5.4.x is the spec with
``deliverer_stuck``; JGRP-2873, -2874 and commit 370770ab9 came in 5.4.6, JGRP-2904 in 5.4.9, so
5.4.5 is also ``drop_dont_block``, ``highest_seqno_no_ack``, ``ack_from_non_members`` and
``lock_after_seqno``.
"""

from __future__ import annotations

from typing import Any

from checks.jgroups import mcast_lockstep as mc
from checks.jgroups.bindings import JGroupsBinding, ReleaseProfile
from checks.jgroups.explained import Difference
from checks.jgroups.locate import JGroupsUnavailable, Release
from spec import nakack4 as nak

_DELIVERER = {"READY": nak.READY, "ARMED": nak.ARMED, "STUCK": nak.STUCK, "STRANDED": nak.STRANDED}
BLOCKED_RECEIVE = "JGroups blocked a receiving thread in FixedBuffer.add on a message beyond the window"
PROPS = ("capacity", "ack_threshold", "send_atomically", "become_server_queue_size", "use_mcast_xmit")


def message(m: dict[str, Any], n: int = 0) -> nak.Msg:
    if m["type"] == "ACK":
        return nak.Ack(m["seqno"])
    found = mc.common_message(m, n)
    if found is None:
        raise ValueError(f"NAKACK4 message of type {m['type']} has no spec counterpart")
    return found


def _window(w: dict[str, Any] | None) -> nak.Window | None:
    if w is None:
        return None
    kept = mc.data_items(w["kept"])
    if any(m is None for m in kept):
        raise ValueError(f"a delivered slot is empty in window {w}")
    return nak.Window(w["low"], w["hd"], kept, mc.data_items(w["buffered"], w["hd"] + 1))


def node(state: dict[str, Any], me: int, n: int) -> nak.Node:
    """The spec node a JGroups member's state stands for. A receiving thread JGroups blocked on a full
    window has no counterpart (the spec drops such a message): the state is then unreadable, and the
    divergence says so (``explained.py``: ``jgrp2906-receive-add-blocks``)."""
    if state.get("receiving"):
        raise ValueError(f"{BLOCKED_RECEIVE}: {state['receiving']}")
    windows = tuple(_window(w) for w in mc.per_member(state["windows"], n, None))
    queue = tuple((item["src"], message(item["msg"], n)) for item in state["queue"])
    sending = tuple((entry[0], mc.payload(entry[1])) for entry in state["sending"])
    oob_sending = frozenset(entry[0] for entry in state["sending"] if len(entry) > 2 and entry[2])
    return nak.Node(me, frozenset(state["members"]), state["seqno"], windows,
                    mc.per_member(state["acks_counted"], n, 0), mc.per_member(state["ack_pending"], n, False),
                    mc.per_member(state["ack_table"], n, nak.NO_ENTRY), state["ack_min"], state["is_server"],
                    state["become_server_pending"], queue, mc.per_member(state["xmit_last"], n, 0),
                    state["skip_next_resend"], sending,
                    tuple(_DELIVERER[d] for d in mc.per_member(state["deliverer"], n, "READY")),
                    oob_sending, frozenset(state.get("oob_delivered", ())))


def timer(t: nak.Timer) -> tuple[str, int | None]:
    """The harness's timer: ``send`` names the seqno the thread holds (the harness reads it as a number)."""
    return nak.TIMER_NAMES[t.kind], None if t.peer < 0 else t.peer


def check(cfg: nak.Config, release: Release) -> None:
    """What the harness cannot run is one line: two application threads of one member."""
    if cfg.sender_threads > 1:
        raise JGroupsUnavailable(f"sender_threads = {cfg.sender_threads}: the JGroups harness runs one application "
                                 "thread per member (checks/jgroups/java/.../AppThreads.java); the finding that needs "
                                 "two has a standalone reproduction (tests/jgroups/repro/SendAtomicallyOvertaken.java)")


def props(cfg: nak.Config) -> dict[str, Any]:
    """The model's settings the harness passes on (capacity, ack_threshold, send_atomically, ...)."""
    return {"capacity": cfg.capacity, "ack_threshold": cfg.ack_threshold, "send_atomically": cfg.send_atomically,
            "become_server_queue_size": cfg.become_server_queue_size, "use_mcast_xmit": cfg.use_mcast_xmit,
            "dont_block": cfg.dont_block, "dont_loopback": cfg.dont_loopback}


def _receive_blocks(divergence: Any, run: Any) -> bool:
    """JGroups blocked the receiving thread on a message beyond the receive window (the state says so)."""
    return divergence.kind == "state" and BLOCKED_RECEIVE in divergence.jgroups


DIFFERENCES = (
    Difference(
        "jgrp2906-receive-add-blocks", "nakack4", "decision", "5.4.x (before JGRP-2906, fixed in 5.5.0)",
        "A message more than capacity above a receive window's low is dropped by the spec (decision 1: the code "
        "since JGRP-2906), but before that fix FixedBuffer.add blocked the receiving thread until the window had "
        "room, for receive windows as for the send window. A blocked receiving thread is not state the spec has, "
        "so the lockstep stops there. It is reachable only once a sender purged past what this receiver's window "
        "holds (the join purge race, models/nakack4/join-purge-race.toml), and then nothing ever makes room: the "
        "thread waits for ever (tests/jgroups/repro/JoinPurgeRace.java shows both on 5.4.12; master only the race).",
        "spec/nakack4_state.py: add_and_deliver (beyond -> the window unchanged)",
        "FixedBuffer.java (5.4.12) add: `if(dist > capacity() && !block(seqno))`, reached from "
        "ReliableMulticast.handleMessage's win.add(seqno, msg); master: add(seqno, msg, null, false) (2653f80f6)",
        _receive_blocks),
)

BINDING = JGroupsBinding(
    "nakack4", "nakack4", message, node, timer,
    (ReleaseProfile((5, 4, 0), (5, 4, 6), ("deliverer_stuck", "drop_dont_block", "highest_seqno_no_ack",
                                           "ack_from_non_members", "lock_after_seqno"),
                    "5.4.0-5.4.5: before JGRP-2873, -2874, -2904, commit 370770ab9 and JGRP-3034"),
     ReleaseProfile((5, 4, 6), (5, 4, 9), ("deliverer_stuck", "ack_from_non_members"),
                    "5.4.6-5.4.8: JGRP-2873, -2874 and 370770ab9 fixed; before JGRP-2904 (5.4.9) and JGRP-3034"),
     ReleaseProfile((5, 4, 9), (5, 5, 0), ("deliverer_stuck",), "5.4.9 on: before JGRP-3034"),
     ReleaseProfile((5, 5, 0), None, (), "master (5.6.0-SNAPSHOT): JGRP-3034 fixed")),
    DIFFERENCES, props=props, check=check, drive=mc.drive)
