"""``Nakack4Engine``: the sans-IO NAKACK4 member, the only public entry point of the package.

This module owns the API (inputs, outputs, time) and the trust boundary for bytes; the protocol
itself is in ``sending.py`` (the application's multicasts and held sends), ``receive.py``
(messages), ``acks.py`` (the ack counter, the AckTable), ``membership.py`` (views, joins, digests, DISCONNECT)
and ``tasks.py`` (the retransmit task, BECOME_SERVER, the spec's timers), over the state of
``state.py``. The engine behaves like ``spec/nakack4.py`` message for message; see the package
docstring for where (and why) it departs.

Time: every input takes ``now``, an ``int`` in milliseconds on any monotonic clock the caller
likes; ``now`` must never decrease (``LocalProtocolError``). Nothing here reads a clock, opens a
socket, starts a thread or blocks.
"""

from __future__ import annotations

from collections.abc import Iterable

from impl.common import LocalProtocolError, MemberOutputs, SendWindowFull, check_time, held_size
from impl.nakack2.codec import check_address
from impl.nakack4 import batch, membership, receive, sending, tasks
from impl.nakack4.acks import on_ack
from impl.nakack4.codec import (
    QUEUED_TYPES,
    AckMsg,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    WireMsg,
    XmitRspMsg,
    address_key,
    decode,
)
from impl.nakack4.config import Config
from impl.nakack4.snapshot import EngineView, WindowView
from impl.nakack4.state import READY, Entry, Member, P, SendStatus, Stats
from impl.wire import MAX_SEQNO, DecodeError

_BYTES_LIKE = (bytes, bytearray, memoryview)
MSG_HEADER_MAX = 16  # a MSG's bytes besides its payload, at most: magic, type, c-long seqno, c-int length


class Nakack4Engine(MemberOutputs[P]):
    """One member's NAKACK4 (ReliableMulticast over FixedBuffer).

    ``me`` is this member's address; ``members`` the group it starts in: if ``me`` is one of them
    it is a founder (a server with a window at 0 and an AckTable entry at 0 for every member),
    otherwise a joiner that waits for its join digest (``received`` JOIN_RSP or
    ``set_join_digest``) and queues what it receives until ``become_server``. Addresses are ints
    (0 .. 2**63-1) or strings (1 .. 255 UTF-8 bytes), all of one kind.

    After every input, drain ``datagrams_to_send`` (a multicast is one datagram per member of the
    view, this member's own copy included unless ``dont_loopback``: hand it back through
    ``received``, as JGroups loops it back), ``deliveries`` and ``send_events`` (held sends that
    were passed down or dropped since), and call ``handle_timer`` at ``get_timer()``.
    """

    def __init__(self, config: Config | None = None, *, me: P, members: Iterable[P] = (), now: int) -> None:
        self._config = config if config is not None else Config()
        self._now = check_time(now, None)
        group = frozenset(members)
        _check_addresses(me, group, self._config)
        self._m: Member[P] = Member(self._config, me, group)
        self._next_xmit = now + self._config.xmit_interval

    # ------------------------------------------------------------------ inputs

    def multicast(self, payload: bytes, *, now: int, oob: bool = False) -> tuple[int, SendStatus]:
        """The application multicasts ``payload``; returns (its seqno, what happened): SENT, or
        BLOCKED (the own window is full: the send is held, with its seqno, and passed down by the
        engine once ACKs make room, reported in ``send_events``; JGroups' thread would block), HELD
        (send_atomically off: passed down at once unless ``resume_blocked_sends`` is off), DROPPED
        (variant drop_dont_block) or NO_WINDOW (seqno 0: no own window yet). ``oob`` flags it OOB
        (spec decision 18: every copy and retransmission carries the flag, receivers deliver it on
        receipt). Raises
        ``LocalProtocolError`` (payload not bytes or too big) or ``SendWindowFull``
        (``max_pending_sends`` held already) without changing any state."""
        self._advance(now)
        if type(payload) is not bytes:
            raise LocalProtocolError(f"multicast: payload must be bytes, got {type(payload).__name__}")
        if type(oob) is not bool:
            raise LocalProtocolError(f"multicast: oob must be a bool, got {type(oob).__name__}")
        m, cfg = self._m, self._config
        if len(m.sending) >= cfg.max_pending_sends:
            raise SendWindowFull(f"multicast: {len(m.sending)} sends held already (max_pending_sends="
                                 f"{cfg.max_pending_sends}); the own window is full until ACKs purge it")
        if m.seqno >= MAX_SEQNO:
            raise LocalProtocolError(f"multicast: the seqno counter reached {MAX_SEQNO}")
        limits = cfg.codec_limits
        if len(payload) > min(limits.max_payload, limits.max_datagram - MSG_HEADER_MAX):
            raise LocalProtocolError(f"multicast: payload is {len(payload)} bytes, more than max_payload="
                                     f"{limits.max_payload} (or max_datagram={limits.max_datagram} less"
                                     f" {MSG_HEADER_MAX} header bytes)")
        # With resumption on, a held send's second step follows at once when there is room (a
        # held older send would have room too, and was resumed at the end of the last input).
        seqno, status = sending.multicast(m, payload, second_step_now=cfg.resume_blocked_sends, oob=oob)
        if status is SendStatus.BLOCKED and cfg.resume_blocked_sends and cfg.drops_when_full:
            sending.resume(m)  # not atomic, DONT_BLOCK before JGRP-2873: the second step drops it
            outcome = next(e for e in m.send_events if e[0] == seqno)
            m.send_events.remove(outcome)
            return outcome
        return seqno, status

    def received(self, src: P, data: bytes, *, now: int) -> None:
        """A datagram from ``src``. Malformed ones are counted (``stats.malformed``) and dropped."""
        if type(now) is int and now >= self._now:  # _advance, inlined (per-message path)
            self._now = now
        else:
            self._advance(now)
        if not isinstance(data, _BYTES_LIKE):
            raise LocalProtocolError(f"received: data must be bytes, got {type(data).__name__}")
        m, cfg = self._m, self._config
        m.stats.datagrams_received += 1
        try:
            msg = decode(data, cfg.codec_limits, cfg.member_limit)
        except DecodeError:
            m.stats.malformed += 1
            return
        m.answering_size, m.answering_now = len(data), self._now
        if type(msg) is McastMsg and m.is_server:
            receive.on_data(m, src, msg)
        else:
            receive.on_message(m, src, msg)
        if m.sending and cfg.resume_blocked_sends:
            sending.resume(m)

    def received_batch(self, src: P, datagrams: Iterable[bytes], *, now: int) -> None:
        """Datagrams from ``src`` that arrived as one batch (a bundle; JGroups' ``up(MessageBatch)``,
        spec ``on_batch``, decision 17). Malformed ones are counted and dropped; while not a server
        every NAKACK4 message is queued, in order; else XMIT_REQs and HIGHEST_SEQNOs are handled at
        once, in order, then the batch's highest ACK, then its MSGs (an XMIT_RSP as the MSG it
        carries) are added in one go and delivered by one removal, which counts once towards the ACK;
        a JOIN_RSP is handled last. Raises ``LocalProtocolError`` before any change if a datagram is
        not bytes."""
        items = list(datagrams)
        for data in items:
            if not isinstance(data, _BYTES_LIKE):
                raise LocalProtocolError(f"received_batch: each datagram must be bytes, got {type(data).__name__}")
        self._advance(now)
        m, cfg = self._m, self._config
        msgs: list[McastMsg] = []
        later: list[WireMsg] = []
        highest_ack = 0
        for data in items:
            m.stats.datagrams_received += 1
            try:
                msg = decode(data, cfg.codec_limits, cfg.member_limit)
            except DecodeError:
                m.stats.malformed += 1
                continue
            m.answering_size, m.answering_now = len(data), self._now
            if not m.is_server and isinstance(msg, QUEUED_TYPES):
                receive.queue(m, src, msg)
            elif type(msg) is McastMsg:
                msgs.append(msg)
            elif type(msg) is XmitRspMsg:  # accepted from its original sender only (receive.py)
                if msg.sender != src:
                    m.stats.xmit_rsp_foreign += 1
                else:
                    msgs.append(McastMsg(msg.seqno, msg.payload))
            elif type(msg) is AckMsg:
                highest_ack = max(highest_ack, msg.seqno)
            elif type(msg) in (NakXmitReqMsg, HighestSeqnoMsg):
                receive.on_message(m, src, msg)
            else:
                later.append(msg)
        if highest_ack > 0:
            on_ack(m, src, highest_ack)
        if msgs:
            batch.on_batch(m, src, msgs)
        for msg in later:
            receive.on_message(m, src, msg)
        if m.sending and cfg.resume_blocked_sends:
            sending.resume(m)

    def handle_timer(self, *, now: int) -> None:
        """Run the retransmit task if it is due (every xmit_interval, once the member has a view)."""
        self._advance(now)
        if now >= self._next_xmit:
            if self._m.members:
                tasks.retransmit(self._m)
            self._next_xmit = now + self._config.xmit_interval

    def get_timer(self) -> int:
        """When ``handle_timer`` should next be called (ms, same clock as ``now``)."""
        return self._next_xmit

    def install_view(self, members: Iterable[P], *, now: int) -> None:
        """VIEW_CHANGE: windows of members that left dropped, a window at 0 for each new one, the
        AckTable adjusted, the own window purged if its minimum rose (held sends may move)."""
        self._advance(now)
        view = frozenset(members)
        _check_addresses(self._m.me, view, self._config)
        membership.on_view(self._m, view)
        self._resume()

    def answer_join(self, joiner: P, view: Iterable[P], *, now: int) -> None:
        """At the coordinator, GMS admits ``joiner`` into ``view``: a JOIN_RSP (``view`` and this
        member's digest, the joiner at (0, 0)) goes to the joiner. (Install the view after it.)"""
        self._advance(now)
        members = frozenset(view)
        _check_addresses(self._m.me, members | {joiner}, self._config)
        membership.answer_join(self._m, joiner, members)

    def set_join_digest(self, view: Iterable[P], digest: Iterable[tuple[P, int, int]], *, now: int) -> None:
        """At a joiner, what a JOIN_RSP does (for a GMS that delivers the join response itself):
        SET_DIGEST(digest: (member, hd, high) triples), VIEW_CHANGE(view), BECOME_SERVER pending."""
        self._advance(now)
        members = frozenset(view)
        entries = tuple(digest)
        _check_addresses(self._m.me, members | {e[0] for e in entries}, self._config)
        if any(type(hd) is not int or type(hr) is not int or not 0 <= hd <= hr <= MAX_SEQNO for _, hd, hr in entries):
            raise LocalProtocolError(f"set_join_digest: digest entries must be (member, hd, high) with"
                                     f" 0 <= hd <= high <= {MAX_SEQNO}, got {entries!r}")
        ordered = tuple(sorted(entries, key=lambda e: address_key(e[0])))
        receive.on_message(self._m, self._m.me, JoinRspMsg(tuple(sorted(members, key=address_key)), ordered))

    def merge_digest(self, digest: Iterable[tuple[P, int, int]], *, now: int) -> None:
        """MERGE_DIGEST (after a merge): windows below the digest's hd replaced at that hd."""
        self._advance(now)
        entries = tuple(digest)
        if any(type(hd) is not int or not 0 <= hd <= MAX_SEQNO for _, hd, _ in entries):
            raise LocalProtocolError(f"merge_digest: digest entries must be (member, hd, high), got {entries!r}")
        membership.merge_digest(self._m, {p: (hd, hr) for p, hd, hr in entries})

    def become_server(self, *, now: int) -> None:
        """BECOME_SERVER: a server from now on; the become_server_queue is replayed in order."""
        self._advance(now)
        tasks.become_server(self._m)
        self._resume()

    def disconnect(self, *, now: int) -> None:
        """DISCONNECT: the own window closes, every held send fails (``send_events``: DROPPED, its
        seqno spent), the counter returns to 0, windows and the AckTable are cleared."""
        self._advance(now)
        membership.disconnect(self._m)

    def fire_timer(self, kind: int | str, peer: P | int | None = None, *, now: int) -> None:
        """For the lockstep harness: fire the spec's timer ``kind`` (``XMIT``, ``BECOME_SERVER``,
        ``SEND`` with the held seqno as ``peer``, ``DELIVER_FAULT`` with the sender as ``peer``;
        or its name) now. Does not move ``get_timer()``. ``LocalProtocolError`` where the spec's
        timer is not enabled."""
        self._advance(now)
        tasks.fire_timer(self._m, kind, peer)
        self._resume()

    def inject_delivery_fault(self, sender: P, *, now: int) -> None:
        """A fault for tests (JGRP-3034, ``deliver_exceptions``): the next batch of ``sender``'s
        messages throws while being built (nothing delivered; see the package docstring)."""
        self.fire_timer(tasks.DELIVER_FAULT, sender, now=now)

    # ------------------------------------------------------------------ outputs

    def send_events(self) -> list[tuple[int, SendStatus]]:
        """Held sends resolved since the last call, in order: (seqno, SENT or DROPPED)."""
        out, self._m.send_events = self._m.send_events, []
        return out

    @property
    def config(self) -> Config:
        return self._config

    @property
    def stats(self) -> Stats:
        return self._m.stats

    @property
    def held_sends(self) -> tuple[int, ...]:
        """The seqnos of the sends held (blocked, or waiting for their second step), ascending."""
        return tuple(sorted(self._m.sending))

    @property
    def blocked_sends(self) -> tuple[int, ...]:
        """The held sends the own window has no room for now (blocked on a full window), ascending."""
        own = self._m.own
        return tuple(s for s in sorted(self._m.sending) if own is None or own.window.full_for(s))

    def enabled_timers(self) -> tuple[tuple[int, P | int], ...]:
        """The spec's timers that may fire now, as (kind, peer) (``fire_timer`` accepts these)."""
        return tasks.enabled_timers(self._m)

    def snapshot(self, *, now: int | None = None) -> EngineView[P]:
        """The abstract state (``snapshot.EngineView``), field for field the spec's ``Node``.
        ``now`` is accepted for the harness' sake and ignored. Costs O(window spans)."""
        m = self._m
        entries = m.sorted_entries()
        return EngineView(
            m.me, m.members, m.seqno, tuple((p, _window_view(p == m.me, e)) for p, e in entries),
            tuple((p, e.counted) for p, e in entries if e.counted),
            frozenset(p for p, e in entries if e.pending),
            tuple(sorted(m.ack_table.items(), key=lambda e: address_key(e[0]))), m.ack_min, m.is_server,
            m.become_server_pending, tuple((src, msg) for src, msg, _ in m.queue),
            tuple(sorted(m.xmit_last.items(), key=lambda e: address_key(e[0]))), m.skip_next_resend,
            tuple(sorted(m.sending.items())), tuple((p, e.deliverer) for p, e in entries if e.deliverer != READY))

    def check_invariants(self) -> None:
        """Raise AssertionError unless the state is well formed (O(memory); a testing aid)."""
        m = self._m
        for peer, entry in m.entries.items():
            w = entry.window
            w.check_invariants()
            if peer != m.me:
                assert w.low == w.hd, (peer, w)
                held = sum(held_size(item) for s in range(w.hd + 1, w.high + 1) if (item := w.get(s)) is not None)
                assert entry.held_bytes == held <= self._config.max_held_bytes, (peer, entry.held_bytes, held)
        assert m.held.total == sum(e.held_bytes for p, e in m.entries.items() if p != m.me), m.held.total
        assert m.held.total <= self._config.max_receive_bytes, m.held.total
        own = m.own
        if own is not None:
            assert own.window.high <= m.seqno, (own.window, m.seqno)
            assert all(s > own.window.high or own.window.get(s) is None for s in m.sending), m.sending
        assert len(m.queue) <= self._config.queue_bound
        assert m.queue_bytes == sum(size for _, _, size in m.queue) <= self._config.max_queue_bytes

    # ------------------------------------------------------------------ time, resumption

    def _advance(self, now: int) -> None:
        self._now = check_time(now, self._now)

    def _resume(self) -> None:
        if self._config.resume_blocked_sends and self._m.sending:
            sending.resume(self._m)


def _window_view(own: bool, entry: Entry) -> WindowView:
    w = entry.window
    kept = tuple(_payload(w.get(s)) for s in range(w.low + 1, w.hd + 1)) if own else ()
    above = tuple((s, item.payload) for s in range(w.hd + 1, w.high + 1) if (item := w.get(s)) is not None)
    return WindowView(w.low, w.hd, kept, above)


def _payload(item: McastMsg | None) -> bytes:
    assert item is not None
    return item.payload


def _check_addresses(me: object, members: frozenset[object], config: Config) -> None:
    """Every address encodable and of ``me``'s kind, and no more than ``member_limit`` of them."""
    try:
        check_address("Nakack4Engine", me)
        for member in members:
            check_address("Nakack4Engine", member)
    except ValueError as exc:
        raise LocalProtocolError(str(exc)) from None
    if any(type(member) is not type(me) for member in members):
        raise LocalProtocolError(f"members must all be addresses of one kind (like me={me!r}),"
                                 f" got {sorted(map(repr, members))}")
    if len(members) > config.member_limit:
        raise LocalProtocolError(f"{len(members)} members, more than the member limit {config.member_limit}"
                                 f" (max_members={config.max_members}, max_window_bytes={config.max_window_bytes}"
                                 f" at capacity={config.capacity})")
