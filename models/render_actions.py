"""One-line descriptions of world actions and messages, for traces and charts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MESSAGE_NAMES = {"Data": "DATA", "Ack": "ACK", "SendFirstSeqno": "SEND_FIRST_SEQNO", "XmitReq": "XMIT_REQ",
                  "Close": "CLOSE", "Stable": "STABLE", "XmitRsp": "XMIT_RSP", "HighestSeqno": "HIGHEST_SEQNO",
                  "StableVote": "STABLE_GOSSIP", "Stability": "STABILITY", "JoinRsp": "JOIN_RSP"}


def format_message(kind: str, msg: Any) -> str:
    """``DATA(seqno=2, conn_id=0, payload=2)``; boolean flags appear only when set."""
    fields = []
    for field, value in msg._asdict().items():
        if field == "ts" and value == 0:
            continue  # no timestamp (the protocol or variant has none)
        if field == "conn_id" and value == -1:
            fields.append("conn_id=none")  # a header without conn_id (UNICAST2 variants)
            continue
        if isinstance(value, bool):
            if value:
                fields.append(field)
        elif isinstance(value, tuple):
            fields.append(f"{field}=[{', '.join(map(str, value))}]")
        else:
            fields.append(f"{field}={value}")
    return f"{_MESSAGE_NAMES.get(kind, kind)}({', '.join(fields)})"


def format_action(action: Any, name: Callable[[int], str], timer_text: tuple[str, ...]) -> str:
    """One line for a world action; ``timer_text`` describes each timer kind of the protocol."""
    kind = type(action).__name__
    if kind == "AppSend":
        return f"{name(action.src)}: application sends to {name(action.dst)}"
    if kind in ("DeliverPacket", "DuplicatePacket", "LosePacket"):
        p = action.packet
        verb = {"DeliverPacket": "receives", "DuplicatePacket": "receives a duplicate of",
                "LosePacket": "never receives (lost)"}[kind]
        return f"{name(p.dst)} {verb} {format_message(p.kind, p.msg)} from {name(p.src)}"
    if kind == "DeliverBatch":
        first = action.packets[0]
        held = ", ".join(format_message(p.kind, p.msg) for p in action.packets)
        return f"{name(first.dst)} receives a batch [{held}] from {name(first.src)}"
    if kind == "FireTimer":
        timer = action.timer
        peer = name(timer.peer) if timer.peer >= 0 else ""
        for_peer = f" for the connections with {peer}" if peer else ""
        return f"{name(action.member)}: " + timer_text[timer.kind].format(peer=peer, for_peer=for_peer)
    if kind == "InstallView":
        return f"{name(action.member)} installs view [{', '.join(name(m) for m in action.members)}]"
    if kind == "RemoveReceiver":
        return f"{name(action.member)} removes its receive window for {name(action.peer)} (test hook)"
    return repr(action)
