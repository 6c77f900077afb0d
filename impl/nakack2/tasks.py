"""Time-driven work: the retransmit task (previous-batch XMIT_REQs, then LastSeqnoResender),
STABLE's gossip round, BECOME_SERVER, and the spec's timers fired one by one.

This module mirrors ``spec/nakack2.py``'s ``enabled_timers``, ``on_timer``, ``_retransmit_task``,
``_resend_last_seqno`` and ``_become_server``. When each runs in real time is ``engine.py``'s.
"""

from __future__ import annotations

from impl.common import LocalProtocolError
from impl.common import request_missing as common_request_missing
from impl.nakack2.codec import HighestSeqnoMsg, XmitReqMsg, address_key, encode
from impl.nakack2.receive import on_message
from impl.nakack2.stable import stable_task
from impl.nakack2.state import Member, P

# The spec's timers by kind (``spec/nakack2.py``'s numbering, kept equal by a test).
XMIT, STABLE, BECOME_SERVER = range(3)
TIMER_NAMES = ("xmit", "stable", "become_server")


def retransmit(m: Member[P]) -> None:
    """Spec ``_retransmit_task``: XMIT_REQs for the gaps of every window, then LastSeqnoResender."""
    if m.variant.xmit_all_gaps:
        size = m.config.max_xmit_req_size
        for peer in sorted(m.recv, key=address_key):
            missing = m.recv[peer].window.missing(size)
            if missing:
                m.emit(peer, XmitReqMsg(tuple(missing)))
    else:
        common_request_missing(m, XmitReqMsg, stale_asks_all=m.variant.stale_xmit_record_asks_all)
    if m.config.resend_last_seqno:
        resend_last_seqno(m)


def resend_last_seqno(m: Member[P]) -> None:
    """Spec ``_resend_last_seqno`` (LastSeqnoResender.execute(counter), decision 6): HIGHEST_SEQNO
    of the counter to every other member of the view, unless the counter is 0, an application
    multicast came since the last run (skipped once), or this value was announced
    resend_last_seqno_max_times already."""
    counter = m.seqno
    if counter == 0:
        return
    if m.skip_next_resend:
        m.skip_next_resend = False
        return
    if counter == m.last_seqno_resent and m.num_resends >= m.config.resend_last_seqno_max_times:
        return
    if counter > m.last_seqno_resent:
        m.last_seqno_resent, m.num_resends = counter, 1
    else:
        m.num_resends += 1
    m.stats.highest_seqno_sent += 1
    data = encode(HighestSeqnoMsg(counter), m.config.codec_limits)
    m.multicast(data, (p for p in m.view if p != m.me))


def become_server(m: Member[P]) -> None:
    """Spec ``_become_server``: a server from now on; the queue replayed in arrival order through
    the receive handler (each with its own size for the resend bound)."""
    queued = m.queue
    m.is_server, m.become_server_pending = True, False
    m.queue = type(queued)()
    m.queue_bytes = 0
    answering = m.answering
    for src, msg, size in queued:
        m.answering = (size, answering[1])
        on_message(m, src, msg)
    m.answering = answering


def enabled_timers(m: Member[P]) -> tuple[int, ...]:
    """Spec ``enabled_timers``: the retransmit task with retransmission on; STABLE's gossip once
    the member is in its own view; BECOME_SERVER while pending."""
    timers = []
    if m.config.retransmission:
        timers.append(XMIT)
    if m.me in m.members:
        timers.append(STABLE)
    if m.become_server_pending:
        timers.append(BECOME_SERVER)
    return tuple(timers)


def fire_timer(m: Member[P], kind: int | str) -> None:
    """Fire the spec's timer ``kind`` (a number or a name of ``TIMER_NAMES``) now; raises
    ``LocalProtocolError`` if it is unknown or not enabled (as in the spec)."""
    if isinstance(kind, str):
        if kind not in TIMER_NAMES:
            raise LocalProtocolError(f"unknown timer {kind!r}; expected one of {', '.join(TIMER_NAMES)}")
        kind = TIMER_NAMES.index(kind)
    if kind not in (XMIT, STABLE, BECOME_SERVER):
        raise LocalProtocolError(f"unknown timer kind {kind!r}; expected 0..2 ({', '.join(TIMER_NAMES)})")
    if kind not in enabled_timers(m):
        raise LocalProtocolError(f"timer {TIMER_NAMES[kind]} is not enabled at this member now")
    if kind == XMIT:
        retransmit(m)
    elif kind == STABLE:
        stable_task(m)
    else:
        become_server(m)
