"""What a fuzz run of the multicast world covered: its faults met in the multicast protocol's phases.

The point-to-point world's scheme is ``checks/fuzz/coverage.py``'s ``UNICAST``; this module owns
``MULTICAST``, the same table for ``models/multicast_world.py`` (NAKACK2, NAKACK4, and any protocol
whose adapter keeps the multicast world's node shape: ``members``, ``windows``, ``is_server``,
``become_server_pending``, ``seqno``; NAKACK2's ``votes`` and NAKACK4's ``sending`` where present).

Rules
-----
1. A pure function of world states and actions, like ``coverage.py``.
2. Faults (the columns): a copy lost on the network (``loss``), duplicated (``duplicate``), dropped
   below the protocol (``below``), a view installed or a join answered (``view``), a member that
   leaves or crashes (``stop``).
3. Phases (the rows) are read from the state just before the fault, at the member the fault
   concerns: a packet's destination, the member that installs a view, the coordinator and the
   joiner of a join, the member that stops. Packet faults also look at the packet (which
   sender's message it carries, whether it is the last one sent, whether it is a digest).
   Phases overlap; ``PHASES`` says what each means. (STABLE suspended for a join is no phase: the
   world answers a join and installs the coordinator's view in one step, rule 5, so no state
   shows it.)
4. The action kinds of ``KINDS`` (the ``--weights`` and the per-run counts) stand for: ``send`` an
   application multicast; ``loss`` a network loss or a drop below the protocol; ``xmit`` the
   retransmit task, STABLE's gossip and BECOME_SERVER; ``view`` a view installed or a join
   answered; ``reap`` a leave or a crash; ``sync`` and ``remove`` nothing (no such action here).
   NAKACK4's timers: a held send's SEND (a blocked application thread passing its message down)
   is ``send``; the DELIVER_FAULT fault (JGRP-3034) is ``loss`` (what it costs is deliveries).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from checks.fuzz.scheme import Scheme
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, McastEnv, MergeView, Stop, stopped
from models.world import DeliverBatch, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, WorldView

FAULTS = ("loss", "duplicate", "below", "view", "stop")
FAULT_DOCS = {"loss": "a copy lost on the network", "duplicate": "a copy duplicated",
              "below": "a copy dropped below the protocol (DropBelow)",
              "view": "a view installed (a merge view too) or a join answered", "stop": "a member leaves or crashes"}
KIND_DOCS = {
    "send": "an application multicast (AppMcast), or a held send passed down (NAKACK4's FireTimer send)",
    "deliver": "a copy in flight arrives (DeliverPacket), or copies of one channel and bundle arrive as a batch "
               "(DeliverBatch, with [faults] max_batch)",
    "duplicate": "a copy arrives and a duplicate stays in flight (DuplicatePacket)",
    "loss": "a copy is lost on the network (LosePacket) or dropped below the protocol (DropBelow), or a "
            "delivery fault (NAKACK4's FireTimer deliver_fault)",
    "xmit": "the retransmit task, STABLE's gossip or BECOME_SERVER (FireTimer)",
    "sync": "(no such action in the multicast world)",
    "reap": "a member leaves or crashes (Stop)",
    "view": "a member installs its next view (or a merge view), or a coordinator answers a join",
    "remove": "(no such action in the multicast world)",
}

Test = Callable[[WorldView, int, Any], bool]  # (state, member concerned, the packet or None)


def _fault_of(action: Any) -> str | None:
    if isinstance(action, LosePacket):
        return "loss"
    if isinstance(action, DuplicatePacket):
        return "duplicate"
    if isinstance(action, DropBelow):
        return "below"
    if isinstance(action, (InstallView, AnswerJoin, MergeView)):
        return "view"
    if isinstance(action, Stop):
        return "stop"
    return None


def _concerned(action: Any) -> list[int]:
    """Rule 3: the members whose state the phases read."""
    if isinstance(action, (LosePacket, DuplicatePacket, DropBelow)):
        return [action.packet.dst]
    if isinstance(action, AnswerJoin):
        return [action.coordinator, action.joiner]
    return [action.member]


def _origin(packet: Any) -> int | None:
    """The original sender of the message a packet carries, if it carries one."""
    msg = packet.msg
    kind = type(msg).__name__
    if kind == "Data":
        return int(packet.src)
    if kind in ("XmitRsp", "XmitReq"):
        return int(msg.sender)
    return None


def _running(view: WorldView, member: int) -> bool:
    env: McastEnv = cast(McastEnv, view.env)  # a multicast world's view holds its McastEnv
    return not stopped(env, member)


def _joining(view: WorldView, m: int, packet: Any) -> bool:
    return not view.nodes[m].members


def _queueing(view: WorldView, m: int, packet: Any) -> bool:
    node = view.nodes[m]
    return bool(node.members) and not node.is_server


def _gap(view: WorldView, m: int, packet: Any) -> bool:
    node = view.nodes[m]
    sender = _origin(packet) if packet is not None else None
    windows = [node.windows[sender]] if sender is not None else list(node.windows)
    return any(w is not None and w.missing() for w in windows)


def _last_message(view: WorldView, m: int, packet: Any) -> bool:
    if packet is None or type(packet.msg).__name__ != "Data":
        return False
    return bool(packet.msg.seqno == view.nodes[packet.src].seqno)


def _retransmission(view: WorldView, m: int, packet: Any) -> bool:
    kinds = ("XmitReq", "XmitRsp", "HighestSeqno")
    if packet is not None:
        return type(packet.msg).__name__ in kinds
    return any(type(p.msg).__name__ in kinds for p in view.network)


def _stable_round(view: WorldView, m: int, packet: Any) -> bool:
    kinds = ("StableVote", "Stability")
    if packet is not None and type(packet.msg).__name__ in kinds:
        return True
    return any(getattr(node, "votes", ()) for node in view.nodes) or any(type(p.msg).__name__ in kinds
                                                                         for p in view.network)


def _sender_blocked(view: WorldView, m: int, packet: Any) -> bool:
    """NAKACK4: some member's application thread holds a seqno it has not passed down yet."""
    return any(getattr(node, "sending", ()) for node in view.nodes)


def _views_differ(view: WorldView, m: int, packet: Any) -> bool:
    running = [node.members for i, node in enumerate(view.nodes) if node.members and _running(view, i)]
    return len(set(running)) > 1


def _settled(view: WorldView, m: int, packet: Any) -> bool:
    """Every running member delivered everything of every member it has a window for."""
    nodes = view.nodes
    return all(w is None or w.delivered >= nodes[s].seqno
               for i, node in enumerate(nodes) if _running(view, i)
               for s, w in enumerate(node.windows))


PHASES: tuple[tuple[str, str, Test], ...] = (
    ("joining", "the member is a joiner without its JoinRsp (no view, no windows)", _joining),
    ("become-server", "the member has its view but is not a server yet: it queues what it receives", _queueing),
    ("gap", "packet faults: the member's window for the packet's sender misses seqnos below its highest "
            "received; others: any of its windows does", _gap),
    ("last message", "the packet is the DATA its sender multicast last (only HIGHEST_SEQNO or STABLE reveal "
                     "its loss)", _last_message),
    ("retransmission", "packet faults: an XMIT_REQ, XMIT_RSP or HIGHEST_SEQNO; others: one in flight",
     _retransmission),
    ("stable round", "a STABLE round is under way (votes merged, or a vote or STABILITY in flight; packet "
                     "faults: the packet is one)", _stable_round),
    ("sender blocked", "some member's application thread holds a seqno it has not passed down (NAKACK4: "
                       "blocked on a full window, or between its seqno and its add)", _sender_blocked),
    ("views differ", "running members have installed different views", _views_differ),
    ("settled", "every running member delivered all it can see was sent", _settled),
)


def _phases_met(view: WorldView, action: Any) -> list[str]:
    packet = getattr(action, "packet", None)
    members = _concerned(action)
    return [name for name, _, test in PHASES if any(test(view, m, packet) for m in members)]


MULTICAST = Scheme(
    "multicast", FAULTS, FAULT_DOCS, tuple((name, doc) for name, doc, _ in PHASES), _fault_of, _phases_met,
    {"send": (AppMcast, FireTimer), "deliver": (DeliverPacket, DeliverBatch), "duplicate": (DuplicatePacket,),
     "loss": (LosePacket, DropBelow, FireTimer), "xmit": (FireTimer,), "sync": (), "reap": (Stop,),
     "view": (InstallView, AnswerJoin, MergeView), "remove": ()},
    KIND_DOCS)
