"""``Nakack2Engine``: the sans-IO NAKACK2 member, the only public entry point of the package.

This module owns the API (inputs, outputs, time) and the trust boundary for bytes; the protocol
itself is in ``receive.py`` (messages), ``stable.py`` (STABLE's round), ``membership.py`` (views,
joins, digests) and ``tasks.py`` (the retransmit task, BECOME_SERVER, the spec's timers), over the
state of ``state.py``. The engine behaves like ``spec/nakack2.py`` message for message; see the
package docstring for where (and why) it departs.

Time: every input takes ``now``, an ``int`` in milliseconds on any monotonic clock the caller
likes (the engine only ever subtracts two of them); ``now`` must never decrease
(``LocalProtocolError``). Nothing here reads a clock, opens a socket, starts a thread or draws a
random number.
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.common import LocalProtocolError, MemberOutputs, SendWindowFull, check_time
from impl.nakack2 import batch, membership, receive, stable, tasks
from impl.nakack2.codec import (
    QUEUED_TYPES,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    WireMsg,
    XmitRspMsg,
    address_key,
    check_address,
    decode,
    encode_mcast,
)
from impl.nakack2.config import Config
from impl.nakack2.snapshot import EngineView, WindowView
from impl.nakack2.state import Member, P, Stats
from impl.window import Table
from impl.wire import DecodeError

_BYTES_LIKE = (bytes, bytearray, memoryview)


class Nakack2Engine(MemberOutputs[P]):
    """One member's NAKACK2 (with STABLE's round as far as NAKACK2 needs it).

    ``me`` is this member's address; ``members`` the group it starts in: if ``me`` is one of them
    it is a founder (a server with a window at 0 for every member), otherwise a joiner that waits
    for its join digest (``received`` JOIN_RSP or ``set_join_digest``) and queues what it receives
    until ``become_server``. Addresses are ints (0 .. 2**63-1) or strings (1 .. 255 UTF-8 bytes),
    all of one kind; they go on the wire in XMIT_REQs, views and digests.

    After every input, drain ``datagrams_to_send`` (a multicast is one datagram per member of the
    view, this member's own copy included: hand it back through ``received``, as JGroups loops it
    back; with ``dont_loopback`` there is no own copy) and ``deliveries``, and call ``handle_timer`` at ``get_timer()``.
    """

    def __init__(self, config: Config | None = None, *, me: P, members: Iterable[P] = (), now: int) -> None:
        self._config = config if config is not None else Config()
        self._now = check_time(now, None)
        group = frozenset(members)
        _check_addresses(me, group, self._config)
        self._m: Member[P] = Member(self._config, me, group)
        cfg = self._config
        self._next_xmit = now + cfg.xmit_interval if cfg.retransmission else None
        self._next_stable = now + cfg.stable_interval

    # ------------------------------------------------------------------ inputs

    def multicast(self, payload: bytes, *, now: int, dont_loopback: bool = False, oob: bool = False) -> int | None:
        """The application multicasts ``payload``; returns its seqno, or None when the member has
        no own window yet (a joiner before its digest: dropped, as JGroups drops it).
        ``dont_loopback`` (or ``Config.dont_loopback``) flags it DONT_LOOPBACK (spec decision 15):
        no copy to this member, which never delivers it. ``oob`` flags it OOB (spec decision 17):
        every copy and retransmission carries the flag, and receivers deliver it on receipt. Raises
        ``LocalProtocolError`` (payload not bytes or too big) or ``SendWindowFull``
        (``max_send_window`` own messages not purged by STABLE yet) without changing any state."""
        self._advance(now)
        if type(payload) is not bytes:
            raise LocalProtocolError(f"multicast: payload must be bytes, got {type(payload).__name__}")
        if type(dont_loopback) is not bool:
            raise LocalProtocolError(f"multicast: dont_loopback must be a bool, got {type(dont_loopback).__name__}")
        if type(oob) is not bool:
            raise LocalProtocolError(f"multicast: oob must be a bool, got {type(oob).__name__}")
        m, cfg = self._m, self._config
        own = m.own
        if own is None:
            m.stats.send_without_window += 1
            return None
        seqno = m.seqno + 1
        if seqno - own.low > cfg.max_send_window or own.bytes + len(payload) > cfg.max_send_bytes:
            m.stats.send_window_full += 1
            raise SendWindowFull(f"multicast: {seqno - 1 - own.low} own messages ({own.bytes} bytes) not purged"
                                 f" by STABLE (max_send_window={cfg.max_send_window},"
                                 f" max_send_bytes={cfg.max_send_bytes})")
        try:
            data = encode_mcast(seqno, payload, cfg.codec_limits, oob)
        except ValueError as exc:  # EncodeError (too big for codec_limits), or seqno > 2**63 - 1
            raise LocalProtocolError(f"multicast: {exc}") from exc
        own.add(McastMsg(seqno, payload, oob) if oob else McastMsg(seqno, payload))
        m.seqno = seqno
        m.skip_next_resend = m.skip_next_resend or cfg.resend_last_seqno  # JGroups: no resender when off
        m.stats.multicasts += 1
        if cfg.dont_loopback or dont_loopback:  # spec decision 15: no copy to this member
            own.dont_loopback.add(seqno)
            if own.hd == seqno - 1:  # the add's remove filter walks hd from hd+1 over it
                own.hd = seqno
            m.multicast(data, tuple(p for p in m.view if p != m.me))
        else:
            m.multicast(data, m.view)
        return seqno

    def received(self, src: P, data: bytes, *, now: int) -> None:
        """A datagram from ``src``. Malformed ones are counted (``stats.malformed``) and dropped."""
        if type(now) is int and now >= self._now:  # _advance, inlined (per-message path)
            self._now = now
        else:
            self._advance(now)
        if type(data) is not bytes and not isinstance(data, _BYTES_LIKE):
            raise LocalProtocolError(f"received: data must be bytes, got {type(data).__name__}")
        m, cfg = self._m, self._config
        m.stats.datagrams_received += 1
        try:
            msg = decode(data, cfg.codec_limits, cfg.max_members)
        except DecodeError:
            m.stats.malformed += 1
            return
        m.answering = (len(data), now)
        if type(msg) is McastMsg and m.is_server:  # the common case, without the dispatch
            receive.on_data(m, src, msg)
        else:
            receive.on_message(m, src, msg)

    def received_batch(self, src: P, datagrams: Iterable[bytes], *, now: int) -> None:
        """Datagrams from ``src`` that arrived as one batch (a bundle; JGroups' ``up(MessageBatch)``,
        spec ``on_batch``, decision 16). Malformed ones are counted and dropped; while not a server
        every NAKACK2 message is queued, in order; else XMIT_REQs and HIGHEST_SEQNOs are handled at
        once, in order, and the MSGs (an XMIT_RSP as the MSG it carries) are added in one go and
        delivered by one removal; other messages (STABLE's, a JOIN_RSP) are handled last, as the
        layers above NAKACK2 get them. Raises ``LocalProtocolError`` before any change if a datagram
        is not bytes."""
        items = list(datagrams)
        for data in items:
            if type(data) is not bytes and not isinstance(data, _BYTES_LIKE):
                raise LocalProtocolError(f"received_batch: each datagram must be bytes, got {type(data).__name__}")
        self._advance(now)
        m, cfg = self._m, self._config
        msgs: list[McastMsg] = []
        later: list[WireMsg] = []
        for data in items:
            m.stats.datagrams_received += 1
            try:
                msg = decode(data, cfg.codec_limits, cfg.max_members)
            except DecodeError:
                m.stats.malformed += 1
                continue
            m.answering = (len(data), now)
            if not m.is_server and isinstance(msg, QUEUED_TYPES):
                receive.queue(m, src, msg)
            elif type(msg) is McastMsg:
                msgs.append(msg)
            elif type(msg) is XmitRspMsg:  # accepted from its original sender only (receive.py)
                if msg.sender != src:
                    m.stats.xmit_rsp_foreign += 1
                else:
                    msgs.append(McastMsg(msg.seqno, msg.payload))
            elif type(msg) in (NakXmitReqMsg, HighestSeqnoMsg):
                receive.on_message(m, src, msg)
            else:
                later.append(msg)
        if msgs:
            batch.on_batch(m, src, msgs)
        for msg in later:
            receive.on_message(m, src, msg)

    def handle_timer(self, *, now: int) -> None:
        """Run what is due: the retransmit task every xmit_interval (with retransmission on), then
        STABLE's gossip every stable_interval (once the member is in its own view)."""
        self._advance(now)
        m, cfg = self._m, self._config
        if self._next_xmit is not None and now >= self._next_xmit:
            tasks.retransmit(m)
            self._next_xmit = now + cfg.xmit_interval
        if now >= self._next_stable:
            if m.me in m.members:
                stable.stable_task(m)
            self._next_stable = now + cfg.stable_interval

    def get_timer(self) -> int:
        """When ``handle_timer`` should next be called (ms, same clock as ``now``)."""
        return self._next_stable if self._next_xmit is None else min(self._next_xmit, self._next_stable)

    def install_view(self, members: Iterable[P], *, now: int) -> None:
        """VIEW_CHANGE: windows of members that left dropped, a window at 0 for each new one."""
        self._advance(now)
        view = frozenset(members)
        _check_addresses(self._m.me, view, self._config)
        membership.on_view(self._m, view)

    def answer_join(self, joiner: P, view: Iterable[P], *, now: int) -> None:
        """At the coordinator, GMS admits ``joiner`` into ``view``: STABLE is suspended until the
        next ``install_view`` and a JOIN_RSP (``view`` and this member's digest, the joiner at
        (0, 0)) goes to the joiner."""
        self._advance(now)
        members = frozenset(view)
        _check_addresses(self._m.me, members | {joiner}, self._config)
        membership.answer_join(self._m, joiner, members)

    def set_join_digest(self, view: Iterable[P], digest: Iterable[tuple[P, int, int]], *, now: int) -> None:
        """At a joiner, what a JOIN_RSP does (for a GMS that delivers the join response itself):
        SET_DIGEST(digest: (member, hd, hr) triples), VIEW_CHANGE(view), BECOME_SERVER pending."""
        self._advance(now)
        members = frozenset(view)
        entries = tuple(digest)
        _check_addresses(self._m.me, members | {e[0] for e in entries}, self._config)
        if any(type(hd) is not int or type(hr) is not int or not 0 <= hd <= hr for _, hd, hr in entries):
            raise LocalProtocolError(f"set_join_digest: digest entries must be (member, hd, hr) with"
                                     f" 0 <= hd <= hr, got {entries!r}")
        ordered = tuple(sorted(entries, key=lambda e: address_key(e[0])))
        receive.on_message(self._m, self._m.me, JoinRspMsg(tuple(sorted(members, key=address_key)), ordered))

    def merge_digest(self, digest: Iterable[tuple[P, int, int]], *, now: int) -> None:
        """MERGE_DIGEST (after a merge): windows below the digest's hd replaced at that hd."""
        self._advance(now)
        membership.merge_digest(self._m, {p: (hd, hr) for p, hd, hr in digest})

    def become_server(self, *, now: int) -> None:
        """BECOME_SERVER: a server from now on; the become_server_queue is replayed in order."""
        self._advance(now)
        tasks.become_server(self._m)

    def fire_timer(self, kind: int | str, peer: P | None = None, *, now: int) -> None:
        """For the lockstep harness: fire the spec's timer ``kind`` (``XMIT``/``STABLE``/
        ``BECOME_SERVER`` of ``spec.nakack2``, or its name) now; ``peer`` is ignored (every NAKACK2
        timer covers all members). Does not move ``get_timer()``. ``LocalProtocolError`` where the
        spec's timer is not enabled."""
        self._advance(now)
        tasks.fire_timer(self._m, kind)

    # ------------------------------------------------------------------ outputs

    @property
    def config(self) -> Config:
        return self._config

    @property
    def stats(self) -> Stats:
        return self._m.stats

    def enabled_timers(self) -> tuple[int, ...]:
        """The spec's timers that may fire now (``fire_timer`` accepts exactly these)."""
        return tasks.enabled_timers(self._m)

    def snapshot(self, *, now: int | None = None) -> EngineView[P]:
        """The abstract state (``snapshot.EngineView``), field for field the spec's ``Node``.
        ``now`` is accepted for the harness' sake and ignored. Costs O(window spans)."""
        m = self._m
        windows: list[tuple[P, WindowView]] = []
        if m.own is not None:
            own = m.own
            kept = tuple(_payload(own.table, s) for s in range(own.low + 1, own.hd + 1))
            above = tuple((s, _payload(own.table, s)) for s in range(own.hd + 1, own.hr + 1))
            windows.append((m.me, WindowView(own.low, own.hd, kept, above)))
        for peer, entry in m.recv.items():
            w = entry.window
            held = tuple((s, item.payload) for s in range(w.hd + 1, w.hr + 1) if (item := w.get(s)) is not None)
            windows.append((peer, WindowView(w.low, w.hd, (), held)))
        windows.sort(key=lambda e: address_key(e[0]))
        return EngineView(
            m.me, m.members, m.seqno, tuple(windows), m.is_server, m.become_server_pending,
            tuple((src, msg) for src, msg, _ in m.queue), _sorted_pairs(m.xmit_last), _sorted_pairs(m.stable_xmit),
            m.last_seqno_resent, m.num_resends, m.skip_next_resend, frozenset(m.votes),
            stable.wire_digest(m.merged), m.stable_suspended)

    def check_invariants(self) -> None:
        """Raise AssertionError unless the state is well formed (O(memory); a testing aid)."""
        m = self._m
        if m.own is not None:
            m.own.table.check_invariants()
            assert m.own.low <= m.own.hd <= m.own.hr == m.seqno, (m.own.table, m.own.hd, m.seqno)
            assert m.own.table.size == m.own.hr - max(m.own.low, m.own.table.hd), m.own.table
            assert m.own.bytes == sum(len(_payload(m.own.table, s)) for s in range(m.own.low + 1, m.own.hr + 1))
        for peer, entry in m.recv.items():
            entry.window.check_invariants()
            w = entry.window
            assert w.low == w.hd and (w.hr == w.hd or w.get(w.hd + 1) is None), (peer, w)
        bound = self._config.queue_bound()
        assert bound is None or len(m.queue) <= bound, len(m.queue)
        assert m.queue_bytes == sum(size for _, _, size in m.queue) <= self._config.max_queue_bytes

    # ------------------------------------------------------------------ time

    def _advance(self, now: int) -> None:
        self._now = check_time(now, self._now)


def _payload(table: Table[McastMsg], seqno: int) -> bytes:
    item = table.get(seqno)
    assert item is not None, seqno
    return item.payload


def _sorted_pairs(entries: dict[P, int]) -> tuple[tuple[P, int], ...]:
    return tuple(sorted(entries.items(), key=lambda e: address_key(e[0])))


def _check_addresses(me: object, members: frozenset[object], config: Config) -> None:
    """Every address encodable and of ``me``'s kind, and no more than ``max_members`` of them."""
    try:
        check_address("Nakack2Engine", me)
        for member in members:
            check_address("Nakack2Engine", member)
    except ValueError as exc:
        raise LocalProtocolError(str(exc)) from None
    if any(type(member) is not type(me) for member in members):
        raise LocalProtocolError(f"members must all be addresses of one kind (like me={me!r}),"
                                 f" got {sorted(map(repr, members))}")
    if len(members) > config.max_members:
        raise LocalProtocolError(f"{len(members)} members, more than max_members={config.max_members}")

