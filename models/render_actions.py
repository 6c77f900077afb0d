"""One-line descriptions of world actions and messages, for traces and charts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MESSAGE_NAMES = {"Data": "DATA", "Ack": "ACK", "SendFirstSeqno": "SEND_FIRST_SEQNO", "XmitReq": "XMIT_REQ",
                  "Close": "CLOSE", "Stable": "STABLE"}


def format_message(kind: str, msg: Any) -> str:
    """``DATA(seqno=2, conn_id=0, payload=2)``; boolean flags appear only when set."""
    fields = []
    for field, value in msg._asdict().items():
        if isinstance(value, bool):
            if value:
                fields.append(field)
        elif isinstance(value, tuple):
            fields.append(f"{field}=[{', '.join(map(str, value))}]")
        else:
            fields.append(f"{field}={value}")
    return f"{_MESSAGE_NAMES.get(kind, kind)}({', '.join(fields)})"


_TIMER_TEXT = (
    "retransmit task runs (pending ACKs, XMIT_REQs, highest-sent resend)",
    "send entry to {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
    "receive entry for {peer} idle for conn_expiry_timeout: OPEN -> CLOSING",
    "conn_close_timeout expires on the CLOSING send entry to {peer}",
    "conn_close_timeout expires on the CLOSING receive entry for {peer}",
    "sync_min_interval elapses: {peer} may be asked for its first seqno again",
)


def format_action(action: Any, name: Callable[[int], str]) -> str:
    kind = type(action).__name__
    if kind == "AppSend":
        return f"{name(action.src)}: application sends to {name(action.dst)}"
    if kind in ("DeliverPacket", "DuplicatePacket", "LosePacket"):
        p = action.packet
        verb = {"DeliverPacket": "receives", "DuplicatePacket": "receives a duplicate of",
                "LosePacket": "never receives (lost)"}[kind]
        return f"{name(p.dst)} {verb} {format_message(p.kind, p.msg)} from {name(p.src)}"
    if kind == "FireTimer":
        timer = action.timer
        peer = name(timer.peer) if timer.peer >= 0 else ""
        return f"{name(action.member)}: " + _TIMER_TEXT[timer.kind].format(peer=peer)
    if kind == "InstallView":
        return f"{name(action.member)} installs view [{', '.join(name(m) for m in action.members)}]"
    if kind == "RemoveReceiver":
        return f"{name(action.member)} removes its receive window for {name(action.peer)} (test hook)"
    return repr(action)
