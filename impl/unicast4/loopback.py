"""UNICAST4's messages to self (spec ``spec/unicast4_self.py``, decisions 12 and 13): the send entry
for oneself as the delivery window.

This module owns what a member does with a DATA from itself (``on_data_from_self``: no receive
entry, the send window for oneself is drained), the drain's ACK to itself on the send entry, and
the remove filter and purge of a DONT_LOOPBACK message added to that window
(``dont_loopback_added``). Sending, blocking and waking are ``receive.py``'s; it calls these.
"""

from __future__ import annotations

from impl.unicast4.codec import AckMsg, DataMsg
from impl.unicast4.state import OPEN, Member, P, SendEntry


def on_data_from_self(m: Member[P], me: P, msg: DataMsg, *, now: int) -> SendEntry | None:
    """Spec ``on_data_from_self``: no send entry for oneself, dropped; else touched (CLOSING ->
    OPEN), an OOB message still stored and not yet delivered goes up at once, then the drain.
    Returns the entry (its blocked sends may now have room) or None."""
    entry = m.send.get(me)
    if entry is None:
        m.stats.data_without_window += 1
        return None
    m.set_state(entry, OPEN, now=now)
    entry.touched = now
    seqno = msg.seqno
    if msg.oob and seqno in entry.oob and seqno not in entry.oob_delivered:
        payload = entry.window.get(seqno)
        if payload is not None:
            m.deliver(me, payload)
            entry.oob_delivered.add(seqno)
    drain_self(m, me, entry)
    return entry


def drain_self(m: Member[P], me: P, entry: SendEntry) -> None:
    """Spec ``drain_self`` (removeAndDeliver on the window for oneself): the run up to the first
    empty slot removed (low := hd); its regular messages and its OOB ones not yet delivered go up
    as one batch, counted on the send entry (the ACK to oneself, if due, first)."""
    first = entry.window.hd + 1
    items = entry.window.remove_many(True)
    if not items:
        return
    keep_dont_loopback = m.variant.dont_loopback_delivered
    batch = [payload for seqno, payload in enumerate(items, first)
             if (keep_dont_loopback or seqno not in entry.dont_loopback)
             and not (seqno in entry.oob and seqno in entry.oob_delivered)]
    forget_below(entry)
    if not batch:
        return
    if m.ack_due(entry, len(batch)):  # below the threshold JGroups sets a flag nothing reads
        m.emit(me, AckMsg(entry.acked, entry.conn_id, m.timestamper.next()))
        m.stats.acks_sent += 1
    m.deliveries += [(me, payload) for payload in batch]
    m.stats.delivered += len(batch)


def dont_loopback_added(entry: SendEntry) -> bool:
    """Spec ``dont_loopback_added``: after a DONT_LOOPBACK add, low moves over the stored
    DONT_LOOPBACK and OOB-delivered messages from acked + 1 on. Returns whether it moved."""
    upto = entry.acked
    while True:
        seqno = upto + 1
        if entry.window.get(seqno) is None:
            break
        if seqno not in entry.dont_loopback and not (seqno in entry.oob and seqno in entry.oob_delivered):
            break
        upto = seqno
    if not entry.window.purge(upto, force=True):
        return False
    forget_below(entry)
    return True


def forget_below(entry: SendEntry) -> None:
    """The marks of seqnos at or below the window's low are gone with their messages."""
    low = entry.acked
    for marks in (entry.oob, entry.dont_loopback, entry.oob_delivered):
        if marks:
            marks.difference_update([s for s in marks if s <= low])
