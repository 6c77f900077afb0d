"""NAKACK2's batch input: what a member does with the MSGs of one batch (``Nakack2Engine.received_batch``).

This module owns the engine's side of spec ``on_batch``'s ``handleMessageBatch``
(``spec/nakack2_batch.py``, decision 16): the batch's MSGs all added to the sender's window, then one
removal; ``engine.py`` decodes the batch and handles its control messages, in order, before. The
limits of ``receive.py`` apply to each MSG as it is added (a MSG the removal would deliver at once,
the window's next seqno, is never counted as held).
"""

from __future__ import annotations

from impl.common import held_size, will_hold
from impl.nakack2.codec import McastMsg
from impl.nakack2.receive import on_data
from impl.nakack2.state import Member, P
from impl.window import WindowSpanError


def on_batch(m: Member[P], sender: P, batch: list[McastMsg]) -> None:
    """Spec ``_message_batch``: a non-member's MSGs dropped; the loopback batch delivers the own
    window (as one own copy does); another sender's MSGs all added, then one removal."""
    if sender == m.me:
        on_data(m, sender, batch[0])
        return
    entry = m.recv.get(sender)
    if entry is None:
        m.stats.data_without_window += len(batch)
        return
    window = entry.window
    first: McastMsg | None = None  # the batch's MSG at hd + 1: stored, not held (the removal takes it)
    for msg in batch:
        held = will_hold(window, msg.seqno)
        if held and not m.held.admits(entry.held_bytes, held_size(msg)):
            m.stats.held_bytes_full += 1
            continue
        try:
            added = window.add(msg.seqno, msg)
        except WindowSpanError:
            m.stats.beyond_window += 1
            continue
        if not added:
            m.stats.old_or_duplicate += 1
        elif held:
            m.held.account(entry, msg, [], held=True)
        else:
            first = msg
    items = window.remove_many()
    if items:
        m.held.account(entry, first, items, held=False)
        m.deliver_all(sender, items)
