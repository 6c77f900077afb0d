"""NAKACK4's batch input: what a member does with the MSGs of one batch (``Nakack4Engine.received_batch``).

This module owns the engine's side of spec ``on_batch``'s ``handleMessageBatch``
(``spec/nakack4_batch.py``, decision 17): the batch's MSGs all added to the sender's window, then one
removal, which counts once towards the ACK (``deliverBatch``); ``engine.py`` decodes the batch and
handles its control messages (its ACKs as the highest one) before. The limits of ``receive.py``
apply to each MSG as it is added (a MSG the removal would deliver at once, the window's next seqno,
is never counted as held).
"""

from __future__ import annotations

from impl.common import held_size
from impl.fixed_window import AddStatus
from impl.nakack4.acks import count_acks, send_ack
from impl.nakack4.codec import McastMsg
from impl.nakack4.receive import failed_delivery, on_data, will_hold_entry
from impl.nakack4.state import ARMED, READY, STUCK, Member, P


def on_batch(m: Member[P], sender: P, batch: list[McastMsg]) -> None:
    """Spec ``_message_batch``: a non-member's MSGs dropped; the loopback batch delivers the own
    window (as one own copy does); with the deliverer armed or stuck every MSG is added and nothing
    delivered; otherwise all added, one removal, one ACK decision for what it delivered."""
    entry = m.entries.get(sender)
    if entry is None:
        m.stats.data_without_window += len(batch)
        return
    if sender == m.me:
        on_data(m, sender, batch[0])
        return
    if entry.deliverer in (ARMED, STUCK):
        for msg in batch:
            failed_delivery(m, sender, msg)
        return
    window = entry.window
    first: McastMsg | None = None  # the batch's MSG at hd + 1: stored, not held (the removal takes it)
    for msg in batch:
        held = will_hold_entry(entry, msg.seqno, busy=False)
        if held and not m.held.admits(entry.held_bytes, held_size(msg)):
            m.stats.held_bytes_full += 1
            continue
        status = window.add(msg.seqno, msg)
        if status is not AddStatus.ADDED:
            m.stats.old_or_duplicate += 1
        elif held:
            m.held.account(entry, msg, [], held=True)
        else:
            first = msg
    items = window.remove_many(True)
    m.held.account(entry, first, items, held=False)
    entry.deliverer = READY
    if items:
        if count_acks(m, sender, len(items)):
            send_ack(m, sender, window.hd)
        m.deliver_all(sender, items)
