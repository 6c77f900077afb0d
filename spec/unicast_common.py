"""What UNICAST2 and UNICAST3 share: the receive window's add-and-deliver, the previous-batch
retransmission request (digest 1.0.1, 1.0.2), and the properties of window state (digest 2.1, P6);
and what UNICAST3 and UNICAST4 share: the message cache's add and drain (JGRP-2327).

Both specs keep per-peer tuples ``send`` and ``recv`` of entries shaped alike: a send entry has
``conn_id``, ``acked`` (HA, everything up to it purged), ``unacked`` (payloads of HA+1 .. HS),
``watermark`` and ``last_ts``; a receive entry has ``conn_id``, ``delivered`` (hd) and ``buffered``
(the slots hd+1 .. hr, None for a gap). Everything here reads only those fields, so one statement
serves both protocols; ``spec/unicast2.py`` and ``spec/unicast3.py`` re-export the properties.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

if TYPE_CHECKING:
    from dataclasses import Field


# ---------------------------------------------------------------------------------------------
# Receive window (Table.add, then removeMany).
def add_and_deliver(delivered: int, buffered: tuple[Any, ...], msg: Any, *, redeliver_oob: bool = False
                    ) -> tuple[int, tuple[Any, ...], list[int]]:
    """Add DATA ``msg`` to the window (hd = ``delivered``, slots ``buffered``), rejecting a seqno
    already delivered or held, then deliver in order from hd+1 up to the first gap.

    An OOB DATA (UNICAST3's and NAKACK2's ``Data.oob``; UNICAST2 has none) is delivered when the add takes it,
    and the in-order drain removes it without delivering it again (``redeliver_oob``: a defect,
    it does). Returns the new hd, the new slots and the payloads delivered, in order."""
    buffered, payloads = add_to_window(delivered, buffered, msg, keep_oob_payload=redeliver_oob)
    delivered, buffered, drained = drain_window(delivered, buffered, redeliver_oob=redeliver_oob)
    return delivered, buffered, payloads + drained


def add_to_window(delivered: int, buffered: tuple[Any, ...], msg: Any, *, keep_oob_payload: bool = False
                  ) -> tuple[tuple[Any, ...], list[int]]:
    """Table.add of DATA ``msg`` (refused at or below hd or where a slot is held): the new slots,
    and the payload the add delivers at once (an OOB DATA the add took, else none). An OOB DATA
    is held as a placeholder, itself without payload (0) and first mark (JGroups' DUMMY_OOB_MSG
    has neither), unless ``keep_oob_payload``."""
    index = msg.seqno - delivered - 1
    if index < 0 or (index < len(buffered) and buffered[index] is not None):
        return buffered, []
    oob = getattr(msg, "oob", False)
    if oob and not keep_oob_payload:  # NAKACK2's Data has no first mark
        held = msg._replace(first=False, payload=0) if "first" in msg._fields else msg._replace(payload=0)
    else:
        held = msg
    padded = buffered + (None,) * (index - len(buffered) + 1)
    return padded[:index] + (held,) + padded[index + 1 :], [msg.payload] if oob else []


def drain_window(delivered: int, buffered: tuple[Any, ...], *, redeliver_oob: bool = False
                 ) -> tuple[int, tuple[Any, ...], list[int]]:
    """removeMany from hd+1 up to the first gap: the new hd and slots and the payloads delivered,
    OOB ones passed over (delivered when added) unless ``redeliver_oob``."""
    payloads = []
    while buffered and buffered[0] is not None:
        if redeliver_oob or not getattr(buffered[0], "oob", False):
            payloads.append(buffered[0].payload)
        buffered = buffered[1:]
        delivered += 1
    return delivered, buffered, payloads


def missing_requests(recv: tuple[Any, ...], xmit_last: tuple[int, ...], only: int | None = None, *,
                     stale_asks_all: bool = False) -> tuple[tuple[int, ...], list[tuple[int, tuple[int, ...]]]]:
    """Previous-batch retransmission (JGRP-1539): ask only for gaps already seen on the last run.

    ``xmit_last[peer]`` is the highest missing seqno the previous run saw (0: none). Only peers
    with a receive entry are visited (triggerXmit): a peer's record survives the removal of its
    window and is dropped by a view without the peer or by a gap-free run. Returns the new
    records and the (peer, seqnos) to request, in peer order; with ``only``, that peer's alone.

    ``stale_asks_all`` (JGRP-2573, JGroups 3.6 to 5.1): a record below the window's hd filters
    nothing, so every gap is asked for at once. getMissing's SeqnoList starts at hd+1 and its
    removeHigherThan(record) clears nothing when record+1 is below that offset."""
    records = list(xmit_last)
    requests = []
    for peer, entry in enumerate(recv):
        if entry is None or (only is not None and peer != only):
            continue
        missing = entry.missing()
        if not missing:
            records[peer] = 0
            continue
        highest, last = missing[-1], records[peer]
        if last == 0:
            records[peer] = highest
            continue
        wanted = missing if stale_asks_all and last < entry.delivered else tuple(s for s in missing if s <= last)
        records[peer] = max(last, highest)
        if wanted:
            requests.append((peer, wanted))
    return tuple(records), requests


# ---------------------------------------------------------------------------------------------
# Properties of window state (digest section 2). The delivery properties (FIFO, no duplicate,
# nothing unsent) are stated once for every protocol in ``spec/reliable_fifo.py``.
def window_order(node: Any) -> bool:
    """I1: windows are well formed: low <= hd <= hr.

    Receive side: the slot after the last delivered one is a gap (else it would have been
    delivered) and the highest received slot is present. Send side: the watermark never runs
    ahead of (HA, HS).
    """
    for entry in node.recv:
        if entry is not None and entry.buffered:
            if entry.buffered[0] is not None or entry.buffered[-1] is None:
                return False
    for sender in node.send:
        if sender is not None and not (sender.acked >= 0 and sender.watermark[1] <= sender.highest_sent):
            return False
    return True


def conn_id_purity(node: Any, *, unnamed: int | None = None) -> bool:
    """I4: a receive window holds only messages of its own connection, each in its own slot.
    (``unnamed``: a conn_id meaning "none", accepted in any window; UNICAST2's design draft.)"""
    for entry in node.recv:
        if entry is None:
            continue
        for index, msg in enumerate(entry.buffered):
            if msg is None:
                continue
            if msg.conn_id not in (entry.conn_id, unnamed) or msg.seqno != entry.delivered + 1 + index:
                return False
    return True


def timestamps_issued(sender: Any, receiver: Any) -> bool:
    """I7: the sender's last accepted timestamp from the receiver was issued by the receiver."""
    entry = sender.send[receiver.me]
    return entry is None or entry.last_ts <= receiver.timestamper


def acks_monotone(before: Any, after: Any) -> bool:
    """I3: HA never decreases on a connection (same conn_id), and HA <= HS."""
    for old, new in zip(before.send, after.send):
        if old is not None and new is not None and old.conn_id == new.conn_id:
            if new.acked < old.acked or new.acked > new.highest_sent:
                return False
    return True


def purge_is_safe(receiver: Any, sender: int, purged: Any) -> bool:
    """P6 (checked at the purge): if the receiver's window is on the purged connection, it has
    already delivered every purged seqno. (With no window, a resync restarts above the purge.)"""
    entry = receiver.recv[sender]
    return entry is None or entry.conn_id != purged.conn_id or entry.delivered >= purged.upto


def purge_covered(sender: Any, receiver: Any) -> bool:
    """P6/P7 as a state invariant: when the receiver's window for the sender is on the sender's
    current connection, it has delivered every seqno the sender has purged. Otherwise the window
    waits for a seqno that no longer exists anywhere: it can never deliver again."""
    entry = sender.send[receiver.me]
    window = receiver.recv[sender.me]
    return entry is None or window is None or window.conn_id != entry.conn_id or window.delivered >= entry.acked


def nothing_unacked(node: Any, peer: int) -> bool:
    """Liveness goal clause: the send entry to ``peer`` (if any) has every message acknowledged."""
    entry = node.send[peer]
    return entry is None or not entry.unacked


# ---------------------------------------------------------------------------------------------
# The message cache (JGRP-2327; UNICAST3's decision 7, UNICAST4's decision 8): per sender, the set
# of DATA cached (``Node.cache``) and the arrival order of its OOB DATA (``Node.cache_order``, ()
# while no OOB DATA is cached anywhere, so that models without OOB keep their states).
class CachingNode(Protocol):
    """A UNICAST3 or UNICAST4 member: a frozen dataclass with a message cache."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def cache(self) -> tuple[frozenset[Any], ...]: ...

    @property
    def cache_order(self) -> tuple[tuple[Any, ...], ...]: ...


N = TypeVar("N", bound=CachingNode)


def _set_peer(entries: tuple[Any, ...], peer: int, value: Any) -> tuple[Any, ...]:
    return entries[:peer] + (value,) + entries[peer + 1 :]


def cache_add(node: N, src: int, msg: Any) -> N:
    """``msg_cache.add(src, msg)``: a copy of a DATA already cached changes nothing (its adds would
    be refused); an OOB one joins the arrival order."""
    if msg in node.cache[src]:
        return node
    order = node.cache_order
    if msg.oob:
        order = order or ((),) * len(node.cache)
        order = _set_peer(order, src, order[src] + (msg,))
    return replace(node, cache=_set_peer(node.cache, src, node.cache[src] | {msg}), cache_order=order)


def cache_drain(node: N, src: int, conn_id: int) -> tuple[N, list[Any]]:
    """``msg_cache.drain(src)`` and ``addQueuedMessages``' filter: the node with ``src``'s queue
    emptied, and its DATA of connection ``conn_id`` in an order of adds that delivers as the queue's
    does: the regular ones in seqno order (adding them delivers nothing; UNICAST4 counts each add
    towards its ACK, and every add counts alike, so their order changes neither the packets nor
    the state), then the OOB ones in arrival order (each is delivered when added)."""
    regular = sorted(m for m in node.cache[src] if m.conn_id == conn_id and not m.oob)
    order = node.cache_order
    queued = regular + [m for m in (order[src] if order else ()) if m.conn_id == conn_id]
    if order and order[src]:
        order = _set_peer(order, src, ())
        order = order if any(order) else ()
    return replace(node, cache=_set_peer(node.cache, src, frozenset()), cache_order=order), queued
