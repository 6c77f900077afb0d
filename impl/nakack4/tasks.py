"""Time-driven work: the retransmit task (pending ACKs, previous-batch XMIT_REQs, then
HIGHEST_SEQNO), BECOME_SERVER, and the spec's timers fired one by one (the retransmit task,
BECOME_SERVER, a held send's SEND, the DELIVER_FAULT fault).

This module mirrors ``spec/nakack4.py``'s ``enabled_timers``, ``on_timer``, ``_retransmit_task``
and ``_become_server``. When each runs in real time is ``engine.py``'s.
"""

from __future__ import annotations

from bisect import bisect_right

from impl.common import LocalProtocolError
from impl.nakack4.acks import send_ack
from impl.nakack4.codec import HighestSeqnoMsg, NakXmitReqMsg, XmitReqMsg, encode
from impl.nakack4.receive import on_message
from impl.nakack4.sending import may_pass_down, pass_down
from impl.nakack4.state import ARMED, READY, Member, P

# The spec's timers by kind (``spec/nakack4.py``'s numbering, kept equal by a test).
XMIT, BECOME_SERVER, SEND, DELIVER_FAULT = range(4)
TIMER_NAMES = ("xmit", "become_server", "send", "deliver_fault")


def retransmit(m: Member[P]) -> None:
    """Spec ``_retransmit_task``: for every window in member order a pending ACK(hd); then the
    previous-batch XMIT_REQ for every window (the own one included); then HIGHEST_SEQNO(high) to
    the whole view while the own window holds anything unacknowledged, unless an application send
    came since the last run (skipped once)."""
    entries = m.sorted_entries()
    for peer, entry in entries:
        if entry.pending:
            entry.pending = False
            send_ack(m, peer, entry.window.hd)
    scan = m.config.max_xmit_req_size
    for peer, entry in entries:
        _request_previous_batch(m, peer, entry.window.missing(scan))
    own = m.own
    if m.skip_next_resend:
        m.skip_next_resend = False
    elif own is not None and own.window.high != 0 and own.window.low != own.window.high:
        m.stats.highest_seqno_sent += 1
        data = encode(HighestSeqnoMsg(own.window.high), m.config.codec_limits)
        skip_me = m.variant.highest_seqno_no_ack
        m.multicast(data, (p for p in m.view if p != m.me or not skip_me))


def _request_previous_batch(m: Member[P], peer: P, missing: list[int]) -> None:
    """``spec/unicast_common.missing_requests`` for one window (JGRP-1539): ask only for the gaps
    already there on the previous run."""
    if not missing:
        m.xmit_last.pop(peer, None)
        return
    highest, last = missing[-1], m.xmit_last.get(peer)
    if last is None:
        m.xmit_last[peer] = highest
        return
    wanted = missing[: bisect_right(missing, last)]
    m.xmit_last[peer] = max(last, highest)
    if wanted:
        m.stats.xmit_reqs_sent += 1
        m.emit(peer, NakXmitReqMsg(peer, XmitReqMsg(tuple(wanted))))


def become_server(m: Member[P]) -> None:
    """Spec ``_become_server``: a server from now on; the queue replayed in arrival order."""
    queued = m.queue
    m.is_server, m.become_server_pending = True, False
    m.queue = type(queued)()
    m.queue_bytes = 0
    size = m.answering_size
    for src, msg, msg_size in queued:
        m.answering_size = msg_size
        on_message(m, src, msg)
    m.answering_size = size


def enabled_timers(m: Member[P]) -> tuple[tuple[int, P | int], ...]:
    """Spec ``enabled_timers`` as (kind, peer): the retransmit task once the member has a view;
    BECOME_SERVER while pending; SEND for each held send that may move (peer: its seqno);
    DELIVER_FAULT for each other sender's ready deliverer when faults are allowed. Peer -1: none."""
    timers: list[tuple[int, P | int]] = []
    if m.members:
        timers.append((XMIT, -1))
    if m.become_server_pending:
        timers.append((BECOME_SERVER, -1))
    timers.extend((SEND, seqno) for seqno in sorted(m.sending) if may_pass_down(m, seqno))
    if m.config.deliver_exceptions:
        timers.extend((DELIVER_FAULT, p) for p, e in m.sorted_entries() if p != m.me and e.deliverer == READY)
    return tuple(timers)


def fire_timer(m: Member[P], kind: int | str, peer: object) -> None:
    """Fire the spec's timer ``kind`` (a number or a name of ``TIMER_NAMES``) for ``peer`` (SEND: a
    seqno; DELIVER_FAULT: a sender); ``LocalProtocolError`` if it is unknown or not enabled."""
    if isinstance(kind, str):
        if kind not in TIMER_NAMES:
            raise LocalProtocolError(f"unknown timer {kind!r}; expected one of {', '.join(TIMER_NAMES)}")
        kind = TIMER_NAMES.index(kind)
    if kind not in (XMIT, BECOME_SERVER, SEND, DELIVER_FAULT):
        raise LocalProtocolError(f"unknown timer kind {kind!r}; expected 0..3 ({', '.join(TIMER_NAMES)})")
    key = peer if kind in (SEND, DELIVER_FAULT) else -1
    if (kind, key) not in enabled_timers(m):
        raise LocalProtocolError(f"timer {TIMER_NAMES[kind]} ({key!r}) is not enabled at this member now")
    if kind == XMIT:
        retransmit(m)
    elif kind == BECOME_SERVER:
        become_server(m)
    elif kind == SEND:
        assert type(peer) is int
        m.send_events.append((peer, pass_down(m, peer)))
    else:
        m.entries[peer].deliverer = ARMED  # type: ignore[index]
