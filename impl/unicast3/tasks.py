"""Time- and membership-driven work: the retransmit task, idle closing, expiry, views, hooks.

This module owns everything a member does that is not the reaction to one message: the parts
of JGroups' retransmit task (``RetransmitTask.run`` -> ``triggerXmit``), the AgeOutCache, view
installation and the two connection hooks. ``retransmit`` is the spec's XMIT timer; the
time-driven parts (``close_idle``, ``remove_expired``, ``age_out``) fire the spec's IDLE_* and
CLOSE_* timers for exactly the entries whose age has run out, and ``fire_timer`` fires any one of
the spec's timers on demand (for the lockstep harness).
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.common import request_missing as common_request_missing
from impl.unicast3.codec import CloseMsg, DataMsg, XmitReqMsg
from impl.unicast3.entries import CLOSING, OPEN, Event, LocalProtocolError
from impl.unicast3.state import Member, P


# ---------------------------------------------------------------------------------------------
# The retransmit task (spec ``_retransmit_task``), then the age-driven parts.
def retransmit(m: Member[P]) -> None:
    """One run, in the spec's order: pending ACKs, previous-batch XMIT_REQs, HS resends."""
    m.send_pending_acks()
    request_missing(m)
    resend_highest(m)


def request_missing(m: Member[P]) -> None:
    """Previous-batch XMIT_REQs, work bounded by ``max_xmit_scan`` (``impl.common.request_missing``)."""
    common_request_missing(m, XmitReqMsg, stale_asks_all=m.variant.stale_xmit_record_asks_all)


def resend_highest(m: Member[P]) -> None:
    """HS resend (JGRP-1548): while (HA, HS) is unchanged since the last run and HA < HS, resend
    message HS with its original header; otherwise remember (HA, HS) as the watermark."""
    for peer in sorted(m.send):
        entry = m.send[peer]
        mark = (entry.acked, entry.highest_sent)
        if mark[0] < mark[1] and entry.watermark == mark:
            if not m.variant.no_hs_resend and mark[1] not in entry.dont_loopback:  # decision 27: never looped back
                hs = mark[1]
                payload = entry.window.get(hs)
                assert payload is not None
                m.emit(peer, DataMsg(hs, entry.conn_id, hs == 1, payload, hs in entry.oob))
        elif entry.watermark != mark:
            entry.watermark = mark


def age_out(m: Member[P], *, now: int) -> None:
    """AgeOutCache expiry: closeConnection for destinations still outside the view."""
    for peer in sorted(p for p, deadline in m.age_out.items() if now >= deadline):
        del m.age_out[peer]
        close_connection(m, peer, now=now)


def close_idle(m: Member[P], *, now: int) -> None:
    """OPEN entries idle for conn_expiry_timeout become CLOSING (spec IDLE_SEND / IDLE_RECV):
    send entries first, then receive entries, as JGroups' closeIdleConnections does."""
    timeout = m.config.conn_expiry_timeout
    for table in (m.send, m.recv):
        for peer in sorted(table):
            entry = table[peer]
            if entry.state is OPEN and entry.age(now=now) >= timeout:
                entry.fire(Event.IDLE, now=now)


def remove_expired(m: Member[P], *, now: int) -> None:
    """CLOSING entries for conn_close_timeout are removed (spec CLOSE_SEND / CLOSE_RECV).

    An entry made CLOSING in this run has age 0, so it is never closed and removed in one run.
    """
    timeout = m.config.conn_close_timeout
    for peer in sorted(p for p, e in m.send.items() if e.state is CLOSING and e.age(now=now) >= timeout):
        _close_send_entry(m, peer, now=now)
    for peer in sorted(p for p, e in m.recv.items() if e.state is CLOSING and e.age(now=now) >= timeout):
        remove_receive_connection(m, peer, event=Event.EXPIRED, now=now)


def _close_send_entry(m: Member[P], peer: P, *, now: int) -> None:
    """Spec ``_close_send_entry``: CLOSE(conn_id) if the peer is a member (or, variant
    close_to_non_members, whether or not), then remove."""
    if peer in m.members or m.variant.close_to_non_members:
        m.emit(peer, CloseMsg(m.send[peer].conn_id))
    m.remove_send(peer, Event.EXPIRED, now=now)


# ---------------------------------------------------------------------------------------------
# Membership and hooks.
def install_view(m: Member[P], members: Iterable[P], *, now: int) -> None:
    """Spec ``on_view``: entries of peers that left become CLOSING, CLOSING entries of members
    reopen; xmit_task_map is trimmed to members. Variant remove_on_view_change (JGRP-1586):
    entries of peers that left are removed at once, discarding unacknowledged messages."""
    view = frozenset(members)
    for peer in sorted(m.send.keys() | m.recv.keys() | m.xmit_last.keys()):
        member = peer in view
        if not member:
            m.xmit_last.pop(peer, None)
        if m.variant.remove_on_view_change and not member:
            if peer in m.send:
                m.remove_send(peer, Event.REMOVE, now=now)
            if peer in m.recv:
                m.remove_recv(peer, Event.REMOVE, now=now)
            continue
        event = Event.VIEW_MEMBER if member else Event.VIEW_LEFT
        for table in (m.send, m.recv):
            entry = table.get(peer)
            if entry is not None:
                entry.fire(event, now=now)
    m.members = view
    for peer in view & m.age_out.keys():
        del m.age_out[peer]
    m.purge_expired_syncs(now=now)


def close_connection(m: Member[P], peer: P, *, now: int) -> None:
    """closeConnection: both entries of ``peer`` become CLOSING (nothing is discarded)."""
    for table in (m.send, m.recv):
        entry = table.get(peer)
        if entry is not None:
            entry.fire(Event.CLOSE_CONNECTION, now=now)


def remove_receive_connection(m: Member[P], peer: P, *, event: Event = Event.REMOVE, now: int) -> None:
    """Spec ``on_remove_receiver``: flush every pending ACK (not under the variant
    remove_without_ack_flush), then drop the receive entry."""
    if not m.variant.remove_without_ack_flush:
        m.send_pending_acks()
    if peer in m.recv:
        m.remove_recv(peer, event, now=now)


# ---------------------------------------------------------------------------------------------
# The spec's timers, one at a time.
# The spec's timers by kind: the numbering of ``spec/unicast3.py`` (kept equal by a test).
XMIT, IDLE_SEND, IDLE_RECV, CLOSE_SEND, CLOSE_RECV, SYNC_EXPIRED = range(6)
TIMER_NAMES = ("xmit", "idle_send", "idle_recv", "close_send", "close_recv", "sync_expired")


def fire_timer(m: Member[P], kind: int, peer: P | None, *, now: int) -> None:
    """Apply the spec's timer ``kind`` (``XMIT`` ... ``SYNC_EXPIRED`` above) to ``peer``,
    regardless of ages. Raises ``LocalProtocolError`` where the spec's timer is not enabled."""
    if kind == XMIT:
        retransmit(m)
        return
    if peer is None:
        raise LocalProtocolError(f"timer {_timer_name(kind)} needs a peer")
    if kind == SYNC_EXPIRED:
        if not m.sync_active(peer, now=now):
            raise LocalProtocolError(f"timer sync_expired: no SEND_FIRST_SEQNO pending for {peer!r}")
        del m.sync_sent[peer]
        return
    table = m.send if kind in (IDLE_SEND, CLOSE_SEND) else m.recv
    if kind not in (IDLE_SEND, IDLE_RECV, CLOSE_SEND, CLOSE_RECV):
        raise LocalProtocolError(f"unknown timer kind {kind!r}")
    entry = table.get(peer)
    if entry is None:
        raise LocalProtocolError(f"timer {_timer_name(kind)}: no entry for {peer!r}")
    if kind in (IDLE_SEND, IDLE_RECV):
        entry.fire(Event.IDLE, now=now)  # raises unless OPEN
    elif entry.state is not CLOSING:
        raise LocalProtocolError(f"timer {_timer_name(kind)}: entry for {peer!r} is {entry.state.name}")
    elif kind == CLOSE_SEND:
        _close_send_entry(m, peer, now=now)
    else:
        remove_receive_connection(m, peer, event=Event.EXPIRED, now=now)


def _timer_name(kind: int) -> str:
    return TIMER_NAMES[kind] if 0 <= kind < len(TIMER_NAMES) else str(kind)
