"""The application's side of NAKACK4: taking a seqno, the add (which blocks on a full window) and
the send, and the held sends that wait for room.

This module mirrors ``spec/nakack4.py``'s ``on_send``, ``_add_and_send`` and ``_on_send_thread``.
JGroups' sender thread *blocks* inside ``FixedBuffer.add`` while its seqno is more than
``capacity`` above the own window's low. The engine is sans-IO and never blocks: a send that
cannot be added is *held* (``Member.sending``: seqno -> payload), exactly the spec's blocked
application thread (``Node.sending``, whose ``Timer(SEND, seqno)`` is enabled once the window has
room). ``pass_down(seqno)`` is that timer; the engine calls it itself after each input that made
room (``resume``), unless ``Config.resume_blocked_sends`` is off (the lockstep harness fires the
spec's timers instead).
"""

from __future__ import annotations

from impl.nakack4.acks import count_acks, on_ack
from impl.nakack4.codec import McastMsg, encode_mcast
from impl.nakack4.state import Member, P, SendStatus


def multicast(m: Member[P], payload: bytes, *, second_step_now: bool = False, oob: bool = False
              ) -> tuple[int, SendStatus]:
    """Spec ``on_send``: an application thread takes the next seqno. Atomic (send_atomically,
    fixed): the add and the send follow at once if the own window has room, else the send is held
    (BLOCKED), or dropped (variant drop_dont_block with DONT_BLOCK). Otherwise the send is HELD
    until ``pass_down``, unless ``second_step_now`` and the window has room: then the thread's
    second step (the spec's SEND timer) follows at once (SENT). Without an own window nothing
    happens (NO_WINDOW, seqno 0). ``oob``: the message is OOB (spec decision 18), held sends too."""
    own = m.own
    if own is None:
        m.stats.send_without_window += 1
        return 0, SendStatus.NO_WINDOW
    cfg = m.config
    seqno = m.seqno = m.seqno + 1
    m.stats.multicasts += 1
    full = own.window.full_for(seqno)
    if not full and (cfg.atomic or second_step_now):
        add_and_send(m, seqno, payload, oob)
        return seqno, SendStatus.SENT
    if cfg.atomic and cfg.drops_when_full:
        m.skip_next_resend = True
        m.stats.sends_dropped += 1
        return seqno, SendStatus.DROPPED
    m.sending[seqno] = payload
    if oob:
        m.oob_sending.add(seqno)
    if full:
        m.stats.sends_blocked += 1
    return seqno, SendStatus.BLOCKED if full else SendStatus.HELD


def may_pass_down(m: Member[P], seqno: int) -> bool:
    """Is the held send ``seqno`` able to move (room in the own window, or it would be dropped)?"""
    own = m.own
    return own is not None and (not own.window.full_for(seqno) or m.config.drops_when_full)


def pass_down(m: Member[P], seqno: int) -> SendStatus:
    """Spec ``_on_send_thread``: the held send ``seqno`` is added and sent (the caller checked
    ``may_pass_down``), or, variant drop_dont_block, dropped on a full window."""
    payload = m.sending.pop(seqno)
    oob = seqno in m.oob_sending
    m.oob_sending.discard(seqno)
    own = m.own
    assert own is not None
    if own.window.full_for(seqno):
        m.skip_next_resend = True
        m.stats.sends_dropped += 1
        return SendStatus.DROPPED
    add_and_send(m, seqno, payload, oob)
    return SendStatus.SENT


def add_and_send(m: Member[P], seqno: int, payload: bytes, oob: bool = False) -> None:
    """Spec ``_add_and_send``: the own window takes the message (there is room), one copy goes to
    every member of the view, and the next HIGHEST_SEQNO run is skipped. DONT_LOOPBACK: no copy
    to the member itself; the add's filter walks the own hd over it, and the send counts 1 towards
    the own ACK, which, when due, is handled at once (JGRP-2829)."""
    own = m.own
    assert own is not None
    cfg = m.config
    msg = McastMsg(seqno, payload, oob) if oob else McastMsg(seqno, payload)
    data = encode_mcast(seqno, payload, cfg.codec_limits, oob)
    m.skip_next_resend = True
    if not cfg.dont_loopback:
        own.window.add(seqno, msg, block=True)
        m.multicast(data, m.view)
        return
    own.window.add(seqno, msg, block=True, skip_if=_always)
    m.multicast(data, (p for p in m.view if p != m.me))
    if cfg.variant.no_dont_loopback_self_ack:
        return
    if count_acks(m, m.me, 1):
        on_ack(m, m.me, own.window.hd)


def _always(_: McastMsg) -> bool:
    return True


def resume(m: Member[P]) -> None:
    """Pass down every held send that may move now, in seqno order (blocked threads waking after
    a purge; what the spec reaches by firing their SEND timers one by one). ``Member.sending`` is
    in ascending seqno order (seqnos are taken in order; the harness only removes), and room for
    a seqno means room for every lower one, so the first held send that may not move ends it:
    O(1) per input without room, O(sends passed down) otherwise."""
    held = m.sending
    while held:
        seqno = next(iter(held))
        if not may_pass_down(m, seqno):
            return
        m.stats.sends_resumed += 1
        m.send_events.append((seqno, pass_down(m, seqno)))


def fail_held(m: Member[P]) -> None:
    """DISCONNECT: every held send fails (its message dropped, its seqno spent)."""
    for seqno in sorted(m.sending):
        m.send_events.append((seqno, SendStatus.DROPPED))
        m.stats.sends_dropped += 1
    m.sending.clear()
    m.oob_sending.clear()
