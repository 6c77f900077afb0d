"""Time- and membership-driven work: the retransmit task, the stable task, the connection reaper,
the AgeOutCache, views and the receiver-removal hook.

This module owns everything a member does that is not the reaction to one message. ``retransmit``
is the spec's XMIT timer, ``stable`` its STABLE timer; the reaper fires the spec's IDLE_SEND /
IDLE_RECV for exactly the entries idle for conn_expiry_timeout, and ``fire_timer`` fires any one of
the spec's timers on demand (for the lockstep harness).
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.common import LocalProtocolError, P
from impl.common import request_missing as common_request_missing
from impl.unicast2.codec import XmitReqMsg
from impl.unicast2.state import Member


# ---------------------------------------------------------------------------------------------
# The two periodic tasks.
def retransmit(m: Member[P]) -> None:
    """One run of the retransmit task (spec ``_retransmit_task``): previous-batch XMIT_REQs, then
    per send entry with unacknowledged messages the first-message resend (until ACKed, JGRP-1563)
    and, with fix_resend_highest, the resend of HS while (HA, HS) is unchanged since the last run."""
    request_missing(m)
    variant = m.variant
    for peer in sorted(m.send):
        entry = m.send[peer]
        acked, highest = entry.acked, entry.highest_sent
        if acked == highest:
            continue
        if not entry.ack_received and not variant.no_first_ack:
            m.emit_data(peer, entry, acked + 1, first=True)
        if variant.fix_resend_highest:
            mark = (acked, highest)
            if entry.watermark == mark:
                m.emit_data(peer, entry, highest, first=highest == 1)
            else:
                entry.watermark = mark


def request_missing(m: Member[P]) -> None:
    """Previous-batch XMIT_REQs, work bounded by ``max_xmit_scan`` (``impl.common.request_missing``).
    ``xmit_all_gaps`` (before JGRP-1539): every gap of every window, no record kept."""
    if m.variant.xmit_all_gaps:
        for peer in sorted(m.recv):
            missing = m.recv[peer].window.missing(m.config.max_xmit_req_size)
            if missing:
                m.emit(peer, XmitReqMsg(tuple(missing)))
        return
    common_request_missing(m, XmitReqMsg, stale_asks_all=m.variant.stale_xmit_record_asks_all)


def stable(m: Member[P]) -> None:
    """One run of the stable task (spec ``_stable_task``): STABLE(hd, hr) to every sender with a
    receive entry, except after max_stable_msgs STABLEs in a row for the same hr (JGRP-1548)."""
    cap = m.config.max_stable_msgs
    for peer in sorted(m.recv):
        entry = m.recv[peer]
        hr = entry.window.hr
        if hr == entry.last_highest:
            if entry.stable_count >= cap:
                continue
            entry.stable_count += 1
        else:
            entry.last_highest, entry.stable_count = hr, 1
        m.send_stable(peer, entry)


# ---------------------------------------------------------------------------------------------
# Age-driven removal.
def reap(m: Member[P], *, now: int) -> None:
    """The connection reaper: send entries idle for conn_expiry_timeout are removed (spec
    IDLE_SEND), then receive entries (spec IDLE_RECV: final STABLE first)."""
    timeout = m.config.conn_expiry_timeout
    for peer in sorted(p for p, e in m.send.items() if now - e.touched >= timeout):
        m.remove_sender(peer)
    for peer in sorted(p for p, e in m.recv.items() if now - e.touched >= timeout):
        m.remove_receiver(peer)


def age_out(m: Member[P], *, now: int) -> None:
    """AgeOutCache expiry: removeConnection (both entries) for destinations still outside the view."""
    for peer in sorted(p for p, deadline in m.age_out.items() if now >= deadline):
        m.stats.aged_out += 1
        m.remove_sender(peer)
        m.remove_receiver(peer)


# ---------------------------------------------------------------------------------------------
# Membership and the hook.
def install_view(m: Member[P], members: Iterable[P]) -> None:
    """Spec ``on_view``: both entries of every peer that left are removed at once (the send
    entry's unacknowledged messages discarded, the receive entry after a final STABLE), and its
    xmit_task_map entry with them."""
    view = frozenset(members)
    for peer in sorted((m.send.keys() | m.recv.keys() | m.xmit_last.keys()) - view):
        m.remove_sender(peer)
        m.remove_receiver(peer)
        m.xmit_last.pop(peer, None)
    for peer in m.sync_wanted.keys() - view:
        del m.sync_wanted[peer]  # asks no peer that left for its first seqno again
    m.members = view
    for peer in view & m.age_out.keys():
        del m.age_out[peer]


# The spec's timers by kind: the numbering of ``spec/unicast2.py`` (kept equal by a test).
XMIT, STABLE, IDLE_SEND, IDLE_RECV = range(4)
TIMER_NAMES = ("xmit", "stable", "idle_send", "idle_recv")


def fire_timer(m: Member[P], kind: int, peer: P | None) -> None:
    """Apply the spec's timer ``kind`` (``XMIT`` ... ``IDLE_RECV`` above) to ``peer``, whatever
    the ages say. Raises ``LocalProtocolError`` where the spec's timer is not enabled."""
    if kind == XMIT:
        retransmit(m)
    elif kind == STABLE:
        stable(m)
    elif kind not in (IDLE_SEND, IDLE_RECV):
        raise LocalProtocolError(f"unknown timer kind {kind!r}")
    elif peer is None:
        raise LocalProtocolError(f"timer {TIMER_NAMES[kind]} needs a peer")
    elif peer not in (m.send if kind == IDLE_SEND else m.recv):
        raise LocalProtocolError(f"timer {TIMER_NAMES[kind]}: no entry for {peer!r}")
    elif kind == IDLE_SEND:
        m.remove_sender(peer)
    else:
        m.remove_receiver(peer)
