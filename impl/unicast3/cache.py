"""The message cache (JGRP-2327, ``spec/unicast3.py`` decision 7): per sender, the non-first DATA that
arrived before a usable receive entry, until a DATA of that sender finds or creates one.

This module owns the cache's storage and its limits; ``receive.py`` decides when to add and drain.
Like the spec, it keeps a *set* per sender, keyed by (conn_id, seqno): a copy of a DATA already
cached changes nothing (JGroups queues every copy, which changes nothing a drain does; the spec's
header says why). Nothing but a drain removes a sender's DATA below the limits: views, CLOSE,
receiver removal and expiry leave the cache alone, as JGroups does (only its start and stop clear it).

Limits (not in JGroups, whose ``MessageCache`` is an unbounded queue per sender, duplicates and
all): ``max_cached_messages`` DATA and ``max_cache_bytes`` bytes in all, each DATA counted as its
payload plus ``CACHE_OVERHEAD`` and each sender with DATA cached as ``QUEUE_OVERHEAD`` more (what
tracemalloc measures them at, rounded up: the bytes bound the memory, not only the payloads). A
DATA that would pass either is not cached (``cache_full``): it is dropped as the 3.x releases drop
it, and the SEND_FIRST_SEQNO it triggered, the highest-sent resend and the XMIT_REQs still bring it
back, so a full cache costs latency, never a message. Before refusing, a full cache evicts the DATA
of senders that have added none for ``cache_evict_idle`` (idlest first, ``cache_evicted``), so DATA
left by senders that never came back (a crashed peer, a stale connection) do not fill it for good.
"""

from __future__ import annotations

from typing import Any, Generic

from impl.common import P
from impl.unicast3.codec import DataMsg

CACHE_OVERHEAD = 256  # bytes a cached DATA costs beyond its payload (object, key, dict slot; measured ~218)
QUEUE_OVERHEAD = 384  # bytes a sender's queue costs (its object, dict, slot in the cache; measured ~300)
CachedView = tuple[int, int, bytes]  # (seqno, conn_id, payload) of a cached DATA, as snapshots show it


class _Queue:
    """One sender's cached DATA, by (conn_id, seqno); ``touched``: when it last added one."""

    __slots__ = ("held", "msgs", "touched")

    def __init__(self, now: int) -> None:
        self.msgs: dict[tuple[int, int], DataMsg] = {}
        self.held = 0
        self.touched = now


def cached_size(msg: DataMsg) -> int:
    """What a cached DATA counts against ``max_cache_bytes``."""
    return len(msg.payload) + CACHE_OVERHEAD


class MessageCache(Generic[P]):
    """``msg_cache``: senders in the order they last added a DATA (the idlest first), with the
    totals the limits bound. ``stats`` counts ``cached``, ``cache_full``, ``cache_evicted``."""

    __slots__ = ("_queues", "count", "evict_idle", "held", "max_bytes", "max_messages", "stats")

    def __init__(self, max_messages: int, max_bytes: int, evict_idle: int, stats: Any) -> None:
        self._queues: dict[P, _Queue] = {}
        self.max_messages, self.max_bytes, self.evict_idle = max_messages, max_bytes, evict_idle
        self.count = self.held = 0
        self.stats = stats

    def __contains__(self, peer: object) -> bool:
        """Does ``peer`` have DATA in the cache? (JGroups' quick ``isEmpty`` check, per sender.)"""
        return peer in self._queues

    def add(self, peer: P, msg: DataMsg, *, now: int) -> None:
        """``msg_cache.add(peer, msg)``, within the limits (see the module docstring)."""
        queue = self._queues.pop(peer, None)  # re-inserted last: the sender is now the least idle
        if queue is None:
            queue = _Queue(now)
        self._queues[peer] = queue
        queue.touched = now
        key = (msg.conn_id, msg.seqno)
        if key in queue.msgs:
            return  # a copy of a DATA cached already: nothing changes
        size = cached_size(msg)
        need = size if queue.msgs else size + QUEUE_OVERHEAD
        if not self._room(peer, need, now=now):
            self.stats.cache_full += 1
            if not queue.msgs:
                del self._queues[peer]
            return
        queue.msgs[key] = msg
        queue.held += size
        self.count += 1
        self.held += need
        self.stats.cached += 1

    def drain(self, peer: P) -> list[DataMsg]:
        """``msg_cache.drain(peer)``: every DATA cached for ``peer``, now gone: the regular ones in seqno
        order, then the OOB ones in the order they arrived (the queue's; spec ``cache_drain``)."""
        queue = self._queues.pop(peer, None)
        if queue is None:
            return []
        self.count -= len(queue.msgs)
        self.held -= queue.held + QUEUE_OVERHEAD
        regular = sorted((m for m in queue.msgs.values() if not m.oob), key=lambda m: (m.seqno, m.conn_id))
        return regular + [m for m in queue.msgs.values() if m.oob]  # a dict keeps the first arrival's place

    def view(self) -> tuple[tuple[P, frozenset[CachedView]], ...]:
        """Per sender with DATA cached, sorted by sender: what the spec's ``Node.cache`` holds."""
        return tuple((peer, frozenset((m.seqno, m.conn_id, m.payload) for m in queue.msgs.values()))
                     for peer, queue in sorted(self._queues.items(), key=lambda item: item[0]))

    def _room(self, peer: P, size: int, *, now: int) -> bool:
        """Is there room for one more DATA costing ``size``, after evicting the DATA of senders idle for
        ``evict_idle`` (idlest first; never ``peer``'s own) if there was none?"""
        if self.count < self.max_messages and self.held + size <= self.max_bytes:
            return True
        if self.evict_idle == 0:
            return False
        for other in list(self._queues):
            if self.count < self.max_messages and self.held + size <= self.max_bytes:
                return True
            if other == peer:
                continue
            if now - self._queues[other].touched < self.evict_idle:
                return False  # the others were touched later still
            self.stats.cache_evicted += len(self._queues[other].msgs)
            self.drain(other)
        return self.count < self.max_messages and self.held + size <= self.max_bytes

    def check_invariants(self) -> None:
        """Raise AssertionError unless the totals are the queues' and within the limits."""
        assert self.count == sum(len(q.msgs) for q in self._queues.values()) <= self.max_messages
        assert self.held == sum(q.held + QUEUE_OVERHEAD for q in self._queues.values()) <= self.max_bytes
        for queue in self._queues.values():
            assert queue.msgs and queue.held == sum(cached_size(m) for m in queue.msgs.values())
            assert all(key == (m.conn_id, m.seqno) and not m.first for key, m in queue.msgs.items())
