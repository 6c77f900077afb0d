"""``Unicast4Engine``: the sans-IO UNICAST4 member, the only public entry point of the package.

This module owns the API (inputs, outputs, time) and the trust boundary for bytes; the protocol is
in ``receive.py`` (messages, the application's send) and ``tasks.py`` (retransmit task, views,
hooks), over the state of ``state.py``. It behaves like ``spec/unicast4.py`` message for message.

A send never blocks the caller: on a full window it returns ``SendStatus.BLOCKED`` and the engine
holds the message (the spec's blocked thread), adds and sends it as soon as ACKs make room (in
seqno order, within the call that made room), or fails it when its connection closes
(``failed_sends()``). Time: every input takes ``now`` (int ms, never decreasing); the retransmit
task runs at ``get_timer()``, and the idle and close sweeps run with it, by the entries' ages.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic

from impl.common import BYTES_LIKE as _BYTES_LIKE
from impl.common import LocalProtocolError, MemberOutputs, bundle_items, check_time, receive_bundle
from impl.fixed_window import FixedBuffer
from impl.unicast4 import receive, tasks
from impl.unicast4.codec import DataMsg, DecodeError, decode
from impl.unicast4.config import Config
from impl.unicast4.snapshot import EngineView, RecvView, SendView
from impl.unicast4.state import Member, P, SendStatus, Stats


class Unicast4Engine(MemberOutputs[P], Generic[P]):
    """One member's UNICAST4: application calls (``send``, ``install_view``, the hooks), datagrams
    (``received``) and the retransmit timer (``handle_timer`` at ``get_timer()``). Peers are
    opaque, hashable, ordered addresses. After every input, drain ``datagrams_to_send``,
    ``deliveries`` and ``failed_sends`` and re-arm the timer from ``get_timer``."""

    def __init__(self, config: Config | None = None, *, members: Iterable[P] = (), now: int,
                 me: P | None = None) -> None:
        self._config = config if config is not None else Config()
        self._now = check_time(now, None)
        # ``me``: the local address, if the caller sends to itself (spec decision 12: a DATA from ``me``
        # is delivered from the send window for ``me``); None: no such path
        self._m: Member[P] = Member(self._config, frozenset(members), me)
        self._next_xmit = now + self._config.xmit_interval

    # ------------------------------------------------------------------ inputs
    def send(self, dst: P, payload: bytes, *, now: int, oob: bool = False,
             dont_loopback: bool = False) -> tuple[int, SendStatus]:
        """The application sends ``payload`` to ``dst``, flagged OOB or not: (its seqno, SENT /
        BLOCKED / DROPPED). An OOB message blocks on a full window like any other; the receiver
        delivers it on receipt, and every resend carries the flag. ``dont_loopback`` on a send to
        ``me`` (the constructor's): stored, never sent nor delivered (spec decision 13); on a send
        to another member it changes nothing. Raises ``SendWindowFull`` (max_blocked_sends,
        max_blocked_bytes) or ``LocalProtocolError`` (payload not bytes, a flag not a bool, or too
        big for the codec) without changing any state."""
        self._advance(now)
        if type(payload) is not bytes:
            raise LocalProtocolError(f"send: payload must be bytes, got {type(payload).__name__}")
        for flag, value in (("oob", oob), ("dont_loopback", dont_loopback)):
            if type(value) is not bool:
                raise LocalProtocolError(f"send: {flag} must be a bool, got {type(value).__name__}")
        return receive.send(self._m, dst, payload, now=now, oob=oob, dont_loopback=dont_loopback)

    def received(self, src: P, data: bytes, *, now: int) -> None:
        """A datagram from ``src``. Malformed ones are counted (``stats.malformed``) and dropped."""
        self._advance(now)
        if not isinstance(data, _BYTES_LIKE):
            raise LocalProtocolError(f"received: data must be bytes, got {type(data).__name__}")
        m = self._m
        m.stats.datagrams_received += 1
        try:
            msg = decode(data, self._config.codec_limits)
        except DecodeError:
            m.stats.malformed += 1
            return
        m.answering = (len(data), now)
        receive.on_message(m, src, msg, now=now)

    def received_batch(self, src: P, datagrams: Iterable[bytes], *, now: int) -> None:
        """Datagrams from ``src`` that arrived as one batch (a bundle; JGroups' ``up(MessageBatch)``,
        spec ``on_batch``). Malformed ones are counted and dropped; control messages are handled at
        once, in order, as single ones; the DATA are received as at most two batches, the OOB ones
        first, then the regular ones (the transport's split): the highest conn_id's DATA kept, all
        added in one go and not counted, the ACK left pending, an OOB batch delivered and counted
        at once, the in-order run delivered and counted."""
        items = bundle_items(datagrams)  # refused before anything changes
        self._advance(now)
        limits = self._config.codec_limits
        receive_bundle(self._m, src, items, now=now, decode=lambda data: decode(data, limits), data_type=DataMsg,
                       on_message=receive.on_message, on_batch=receive.on_batch)

    def handle_timer(self, *, now: int) -> None:
        """Run the retransmit task if due (``now >= get_timer()``): pending ACKs, XMIT_REQs, HS
        resends, then AgeOutCache expiry, idle closing and removal of expired CLOSING entries (their
        blocked sends fail)."""
        self._advance(now)
        if now < self._next_xmit:
            return
        m, cfg = self._m, self._config
        tasks.retransmit(m)
        if cfg.max_retransmit_time > 0:
            tasks.age_out(m, now=now)
        if cfg.expiry > 0:
            tasks.close_idle(m, now=now)
        if cfg.closing > 0:
            tasks.remove_expired(m, now=now)
        m.purge_expired_syncs(now=now)
        self._next_xmit = now + cfg.xmit_interval

    def install_view(self, members: Iterable[P], *, now: int) -> None:
        """A new view: entries of peers not in ``members`` become CLOSING, members' reopen."""
        self._advance(now)
        tasks.install_view(self._m, members, now=now)

    def remove_receive_connection(self, peer: P) -> None:
        """JGroups' test hook: flush every pending ACK, then drop the receive entry of ``peer``."""
        tasks.remove_receive_connection(self._m, peer)

    def close_connection(self, peer: P, *, now: int) -> None:
        """closeConnection: both entries of ``peer`` become CLOSING."""
        self._advance(now)
        tasks.close_connection(self._m, peer, now=now)

    def stop(self) -> None:
        """removeAllConnections (the channel stops): every blocked send fails, every entry goes."""
        tasks.remove_all_connections(self._m)

    def fire_timer(self, kind: int, peer: P | None = None, seqno: int = 0, *, now: int) -> None:
        """For the lockstep harness: fire the spec's timer ``kind`` (``tasks.XMIT`` ...
        ``tasks.CLOSE_BLOCKED``) for ``peer`` (and, SEND, the blocked ``seqno``), whatever the ages say."""
        self._advance(now)
        tasks.fire_timer(self._m, kind, peer, seqno, now=now)

    # ------------------------------------------------------------------ outputs
    def failed_sends(self) -> list[tuple[P, int, bytes]]:
        """Blocked sends failed since the last call (their connection closed), as (dst, seqno, payload)."""
        out, self._m.failed = self._m.failed, []
        return out

    def blocked_sends(self) -> list[tuple[P, int]]:
        """(dst, seqno) of every send blocked now."""
        return [(peer, s) for peer, e in sorted(self._m.send.items()) for s in sorted(e.blocked)]

    def get_timer(self) -> int:
        return self._next_xmit

    @property
    def config(self) -> Config:
        return self._config

    @property
    def stats(self) -> Stats:
        return self._m.stats

    def snapshot(self, *, now: int) -> EngineView[P]:
        """The abstract state (``snapshot.EngineView``); ``now`` decides which SEND_FIRST_SEQNOs
        are still within sync_min_interval (it does not advance the clock)."""
        m = self._m
        send = tuple(
            (peer, SendView(e.conn_id, e.state, e.acked,
                            tuple(e.window.get(s) for s in range(e.acked + 1, e.highest_sent + 1)),
                            e.watermark, e.last_ts, e.seqno, tuple(sorted(e.blocked.items())), tuple(sorted(e.oob)),
                            tuple(sorted(e.dont_loopback)), tuple(sorted(e.oob_delivered)), e.acks_counted))
            for peer, e in sorted(m.send.items()))
        recv = tuple(
            (peer, RecvView(e.conn_id, e.state, e.delivered, tuple(e.window.seqnos()), e.ack_pending,
                            e.acks_counted, tuple(s for s in e.window.seqnos() if _oob_at(e.window, s))))
            for peer, e in sorted(m.recv.items()))
        sync = frozenset(p for p in m.sync_sent if m.sync_active(p, now=now))
        cache = tuple((peer, tuple(sorted((d.seqno, d.conn_id, d.first, d.payload, d.oob) for d in q.values())))
                      for peer, q in sorted(m.cache.items()) if q)
        return EngineView(m.members, send, recv, sync, tuple(sorted(m.xmit_last.items())), m.timestamper.last,
                          m.next_conn_id, cache)

    def check_invariants(self) -> None:
        """Raise AssertionError unless the state is well formed (a testing aid)."""
        m, cfg = self._m, self._config
        blocked = 0
        for peer, s in m.send.items():
            s.window.check_invariants()
            assert s.window.hd == s.window.low and s.window.offset == 0, (peer, s.window)
            assert s.watermark[0] <= s.watermark[1] <= s.highest_sent <= s.seqno, (peer, s.watermark)
            assert all(s.acked < q <= s.seqno and s.window.get(q) is None for q in s.blocked), (peer, s.blocked)
            assert all(s.acked < q <= s.seqno for q in (*s.oob, *s.dont_loopback)), (peer, s.oob)
            assert s.oob_delivered <= s.oob and (peer == m.me or not (s.dont_loopback or s.acks_counted)), peer
            blocked += sum(len(p) for p in s.blocked.values())
        for peer, r in m.recv.items():
            r.window.check_invariants()
            assert r.window.low == r.window.hd and 0 <= r.acks_counted < max(cfg.threshold, 1), (peer, r.window)
        assert blocked == m.blocked_bytes <= cfg.max_blocked_bytes
        assert m.cache_count == sum(map(len, m.cache.values())) <= cfg.max_cached_messages
        assert m.cache_bytes <= cfg.max_cache_bytes and all(m.cache.values())
        held = sum(r.held_bytes for r in m.recv.values())
        assert held == m.held.total, (held, m.held.total)
        assert len(m.recv) <= cfg.max_receive_entries and 0 <= m.next_conn_id < 2**15

    def _advance(self, now: int) -> None:
        self._now = check_time(now, self._now)


def _oob_at(window: FixedBuffer[DataMsg], seqno: int) -> bool:
    held = window.get(seqno)
    return held is not None and held.oob


__all__ = ["Unicast4Engine"]
