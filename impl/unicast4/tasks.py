"""Time- and membership-driven work: the retransmit task, idle closing, expiry, views, hooks.

This module owns everything a member does that is not the reaction to one message or send: the
parts of ReliableUnicast's retransmit task (``triggerXmit``), view installation and the connection
hooks. ``retransmit`` is the spec's XMIT timer; ``close_idle`` and ``remove_expired`` fire the
spec's IDLE_* and CLOSE_* timers for the entries whose age has run out; ``fire_timer`` fires any
one of the spec's timers on demand (the lockstep harness).
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.common import LocalProtocolError
from impl.unicast4.codec import CloseMsg, DataMsg, XmitReqMsg
from impl.unicast4.receive import send_blocked
from impl.unicast4.state import CLOSING, OPEN, Member, P

# The spec's timers by kind: the numbering of ``spec/unicast4.py`` (kept equal by a test).
XMIT, IDLE_SEND, IDLE_RECV, CLOSE_SEND, CLOSE_RECV, SYNC_EXPIRED, SEND, IDLE_BLOCKED, CLOSE_BLOCKED = range(9)
TIMER_NAMES = ("xmit", "idle_send", "idle_recv", "close_send", "close_recv", "sync_expired", "send",
               "idle_blocked", "close_blocked")


def retransmit(m: Member[P], only: P | None = None) -> None:
    """One run (spec ``_retransmit_task``): pending ACKs, previous-batch XMIT_REQs, HS resends; for
    the connections with ``only`` alone if given."""
    m.send_pending_acks(only)
    request_missing(m, only)
    resend_highest(m, only)


def request_missing(m: Member[P], only: P | None = None) -> None:
    """Previous-batch retransmission (``spec/unicast_common.missing_requests``): ask only for gaps
    already there on the last run, among the first ``max_xmit_req_size`` seqnos above the highest
    deliverable one (getMissing). A window holds at most ``capacity`` seqnos, so a run's work is
    bounded by capacity x receive entries."""
    for peer in sorted(m.recv) if only is None else [only] if only in m.recv else []:
        missing = m.recv[peer].window.missing(m.config.max_xmit_req_size)
        if not missing:
            m.xmit_last.pop(peer, None)
            continue
        highest, last = missing[-1], m.xmit_last.get(peer, 0)
        if last == 0:
            m.xmit_last[peer] = highest
            continue
        wanted = tuple(s for s in missing if s <= last)
        m.xmit_last[peer] = max(last, highest)
        if wanted:
            m.emit(peer, XmitReqMsg(wanted))


def resend_highest(m: Member[P], only: P | None = None) -> None:
    """HS resend: while HA < HS and (HA, HS) is unchanged since the last run, resend message HS
    (if stored) with its original header; otherwise remember (HA, HS)."""
    for peer in sorted(m.send) if only is None else [only] if only in m.send else []:
        entry = m.send[peer]
        mark = (entry.acked, entry.highest_sent)
        if mark[0] < mark[1] and entry.watermark == mark:
            payload = entry.window.get(mark[1])
            if payload is not None and mark[1] not in entry.dont_loopback:  # never looped back (decision 13)
                m.emit(peer, DataMsg(mark[1], entry.conn_id, mark[1] == 1, payload, mark[1] in entry.oob))
        elif entry.watermark != mark:
            entry.watermark = mark


def close_idle(m: Member[P], *, now: int) -> None:
    """closeIdleConnections: OPEN entries idle for conn_expiry_timeout become CLOSING, send entries
    first (the spec's IDLE_SEND / IDLE_BLOCKED, IDLE_RECV)."""
    timeout = m.config.expiry
    for table in (m.send, m.recv):
        for peer in sorted(table):
            entry = table[peer]
            if entry.state == OPEN and now - entry.touched >= timeout:
                m.set_state(entry, CLOSING, now=now)


def age_out(m: Member[P], *, now: int) -> None:
    """AgeOutCache expiry: closeConnection for destinations still outside the view."""
    for peer in sorted(p for p, deadline in m.age_out.items() if now >= deadline):
        del m.age_out[peer]
        close_connection(m, peer, now=now)


def remove_expired(m: Member[P], *, now: int) -> None:
    """removeExpiredConnections: entries CLOSING for conn_close_timeout are removed (CLOSE_SEND /
    CLOSE_BLOCKED, CLOSE_RECV); an entry made CLOSING in this run has age 0."""
    timeout = m.config.closing
    for peer in sorted(p for p, e in m.send.items() if e.state == CLOSING and now - e.touched >= timeout):
        close_send_entry(m, peer)
    for peer in sorted(p for p, e in m.recv.items() if e.state == CLOSING and now - e.touched >= timeout):
        remove_receive_connection(m, peer)


def close_send_entry(m: Member[P], peer: P) -> None:
    """Spec ``_close_send_entry``: CLOSE(conn_id) if the peer is a member; the entry is CLOSED,
    removed, its buffer closed: its blocked sends fail."""
    if peer in m.members:
        m.emit(peer, CloseMsg(m.send[peer].conn_id))
    m.remove_send(peer)


def install_view(m: Member[P], members: Iterable[P], *, now: int) -> None:
    """Spec ``on_view``: entries of peers that left become CLOSING (nothing discarded, buffers
    open), CLOSING entries of members reopen; xmit_task_map keeps members only."""
    view = frozenset(members)
    for peer in sorted(m.send.keys() | m.recv.keys() | m.xmit_last.keys()):
        if peer not in view:
            m.xmit_last.pop(peer, None)
        state = OPEN if peer in view else CLOSING
        for table in (m.send, m.recv):
            entry = table.get(peer)
            if entry is not None:
                m.set_state(entry, state, now=now)
    m.members = view
    for peer in view & m.age_out.keys():
        del m.age_out[peer]
    m.purge_expired_syncs(now=now)


def close_connection(m: Member[P], peer: P, *, now: int) -> None:
    """closeConnection: both entries of ``peer`` become CLOSING (nothing is discarded)."""
    for table in (m.send, m.recv):
        entry = table.get(peer)
        if entry is not None:
            m.set_state(entry, CLOSING, now=now)


def remove_receive_connection(m: Member[P], peer: P) -> None:
    """Spec ``on_remove_receiver``: flush every pending ACK, then drop the receive entry."""
    m.send_pending_acks()
    if peer in m.recv:
        m.remove_recv(peer)


def remove_all_connections(m: Member[P]) -> None:
    """removeAllConnections (stop): every send entry CLOSED (its blocked sends fail), every entry gone."""
    for peer in sorted(m.send):
        m.remove_send(peer)
    for peer in sorted(m.recv):
        m.remove_recv(peer)


def fire_timer(m: Member[P], kind: int, peer: P | None, seqno: int = 0, *, now: int) -> None:
    """Apply the spec's timer ``kind`` to ``peer`` regardless of ages; ``LocalProtocolError`` where
    the spec's timer is not enabled."""
    if kind == XMIT:
        retransmit(m, peer)
        return
    if peer is None:
        raise LocalProtocolError(f"timer {_name(kind)} needs a peer")
    if kind == SYNC_EXPIRED:
        if peer not in m.sync_sent:
            raise LocalProtocolError(f"timer sync_expired: no SEND_FIRST_SEQNO pending for {peer!r}")
        del m.sync_sent[peer]
        return
    if (kind in (IDLE_SEND, IDLE_RECV, IDLE_BLOCKED) and m.config.expiry == 0) or (
            kind in (CLOSE_SEND, CLOSE_RECV, CLOSE_BLOCKED) and m.config.closing == 0):
        raise LocalProtocolError(f"timer {_name(kind)}: its timeout is 0 (disabled)")
    if kind in (IDLE_RECV, CLOSE_RECV):
        entry = m.recv.get(peer)
        if entry is None or entry.state != (OPEN if kind == IDLE_RECV else CLOSING):
            raise LocalProtocolError(f"timer {_name(kind)}: no such receive entry for {peer!r}")
        if kind == IDLE_RECV:
            m.set_state(entry, CLOSING, now=now)
        else:
            remove_receive_connection(m, peer)
        return
    sender = m.send.get(peer)
    if kind not in (IDLE_SEND, CLOSE_SEND, SEND, IDLE_BLOCKED, CLOSE_BLOCKED) or sender is None:
        raise LocalProtocolError(f"timer {_name(kind)}: no send entry for {peer!r}, or an unknown kind")
    if kind == SEND:
        if seqno not in sender.blocked or sender.window.full_for(seqno):
            raise LocalProtocolError(f"timer send: no send blocked with #{seqno} to {peer!r} that has room")
        send_blocked(m, peer, seqno, now=now)
        return
    if (kind in (IDLE_BLOCKED, CLOSE_BLOCKED)) != bool(sender.blocked):
        raise LocalProtocolError(f"timer {_name(kind)}: the send entry to {peer!r} has "
                                 f"{len(sender.blocked)} blocked sends")
    if kind in (IDLE_SEND, IDLE_BLOCKED):
        if sender.state != OPEN:
            raise LocalProtocolError(f"timer {_name(kind)}: the send entry to {peer!r} is not OPEN")
        m.set_state(sender, CLOSING, now=now)
    elif sender.state != CLOSING:
        raise LocalProtocolError(f"timer {_name(kind)}: the send entry to {peer!r} is not CLOSING")
    else:
        close_send_entry(m, peer)


def _name(kind: int) -> str:
    return TIMER_NAMES[kind] if 0 <= kind < len(TIMER_NAMES) else str(kind)
