"""NAKACK4's positive acknowledgement: the ack counter of every entry (when an ACK goes), and the
sender's AckTable (the highest ACK per current member, its minimum, and the purge of the own window
it drives).

This module mirrors ``spec/nakack4.py``'s ``_count_acks``, ``on_ack`` and ``_purge_to_min`` over the
engine's ``Member``; the message handlers (``receive.py``), the application's sends
(``sending.py``, DONT_LOOPBACK's self-ack), views (``membership.py``) and the retransmit task
(``tasks.py``) call it.
"""

from __future__ import annotations

from impl.nakack4.codec import AckMsg
from impl.nakack4.state import Member, P


def count_acks(m: Member[P], sender: P, count: int) -> bool:
    """Spec ``_count_acks`` (Entry.update): True (counter reset) means send an ACK now; otherwise
    the counter grows and the pending flag is set."""
    entry = m.entries[sender]
    total = entry.counted + count
    if total >= m.config.threshold:
        entry.counted = 0
        return True
    entry.counted = total
    entry.pending = True
    return False


def send_ack(m: Member[P], dst: P, seqno: int) -> None:
    m.stats.acks_sent += 1
    m.emit(dst, AckMsg(seqno))


def on_ack(m: Member[P], src: P, seqno: int) -> None:
    """Spec ``on_ack``: the AckTable takes ACK(seqno) from ``src`` (a current member's entry only,
    JGRP-2904); if its minimum rose, the own window purges to it, clamped to the own hd."""
    current = m.ack_table.get(src)
    if m.own is None or (current is None and not m.variant.ack_from_non_members):
        m.stats.acks_ignored += 1
        return
    if current is not None and seqno <= current:
        m.stats.acks_ignored += 1
        return
    m.ack_table[src] = seqno
    purge_to_min(m, table_min(m))


def table_min(m: Member[P]) -> int:
    """AckTable.computeMin: the lowest ACK of the members with an entry; the previous one if none."""
    return min(m.ack_table.values()) if m.ack_table else m.ack_min


def purge_to_min(m: Member[P], new_min: int) -> None:
    """Spec ``_purge_to_min``: record the AckTable's new minimum; if it rose, purge the own window
    to it (a purge that moves low is what wakes blocked senders: ``engine.py`` resumes them)."""
    old_min, m.ack_min = m.ack_min, new_min
    own = m.own
    if new_min <= old_min or own is None:
        return
    before = own.window.low
    if own.window.purge(new_min):
        m.stats.ack_purged += own.window.low - before
