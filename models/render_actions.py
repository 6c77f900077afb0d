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
        from spec.unicast3 import TIMER_NAMES

        peer = "" if timer.peer < 0 else f" for {name(timer.peer)}"
        return f"{name(action.member)}: timer {TIMER_NAMES[timer.kind]}{peer}"
    if kind == "InstallView":
        return f"{name(action.member)} installs view [{', '.join(name(m) for m in action.members)}]"
    if kind == "RemoveReceiver":
        return f"{name(action.member)} removes its receive window for {name(action.peer)} (test hook)"
    return repr(action)
