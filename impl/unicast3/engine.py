"""``Unicast3Engine``: the sans-IO UNICAST3 member, the only public entry point of the package.

This module owns the API (inputs, outputs, time) and the trust boundary for bytes; the protocol
itself is in ``receive.py`` (messages) and ``tasks.py`` (retransmit task, views, hooks), over the
state of ``state.py``. The engine behaves like ``spec/unicast3.py`` message for message; see the
package docstring for where (and why) it departs.

Time: every input that may depend on time takes ``now``, an ``int`` in milliseconds on any
monotonic clock the caller likes (the engine only ever subtracts two of them); durations in
``Config`` are in the same unit. ``now`` must never decrease (``LocalProtocolError``).

Inputs are method calls: ``send``, ``received`` (``received_batch`` for a bundle), ``handle_timer``,
``install_view``,
``remove_receive_connection``, ``close_connection`` (and ``fire_timer`` for the lockstep harness).
Outputs are pulled: ``datagrams_to_send()``, ``deliveries()``, ``get_timer()``, ``snapshot()``,
``stats``. Nothing here reads a clock, opens a socket, starts a thread or draws a random number.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic

from impl.common import BYTES_LIKE as _BYTES_LIKE
from impl.common import bundle_items, check_time, receive_bundle, stored_payloads
from impl.unicast3 import receive, tasks
from impl.unicast3.codec import DataMsg, DecodeError, decode, encode_data
from impl.unicast3.config import Config
from impl.unicast3.entries import LocalProtocolError, SendEntry, SendWindowFull, next_conn_id
from impl.unicast3.snapshot import EngineView, RecvView, SendView
from impl.unicast3.state import Member, P, Stats
from impl.window import Table


class Unicast3Engine(Generic[P]):
    """One member's UNICAST3, driven by three kinds of sources (as aioquic's QuicConnection):
    application calls (``send``, ``install_view``, the hooks), datagrams (``received``) and the
    retransmit timer (``handle_timer`` at ``get_timer()``).

    Peers are opaque, hashable, ordered addresses (ints, strings, (host, port) tuples, ...); the
    engine never needs its own address. After every input, drain ``datagrams_to_send`` and
    ``deliveries`` and re-arm the timer from ``get_timer``.
    """

    def __init__(self, config: Config | None = None, *, members: Iterable[P] = (), now: int,
                 me: P | None = None) -> None:
        self._config = config if config is not None else Config()
        self._now = check_time(now, None)
        # ``me``: the local address, if the caller sends to itself (spec decision 26: a DATA from ``me``
        # is delivered from the send window for ``me``, and never acknowledged); None: no such path
        self._m: Member[P] = Member(self._config, frozenset(members), me)
        # JGroups runs the task at once and then every xmit_interval; with no entries yet the
        # first run does nothing, so we start one interval in.
        self._next_xmit = now + self._config.xmit_interval

    # ------------------------------------------------------------------ inputs

    def send(self, dst: P, payload: bytes, *, now: int, oob: bool = False, dont_loopback: bool = False) -> int:
        """The application sends ``payload`` to ``dst``, flagged OOB or not; returns the seqno it got.
        (An OOB message is delivered by the receiver on receipt, ahead of earlier ones, and is
        acknowledged and retransmitted like any other; every resend carries the flag.)
        ``dont_loopback`` on a send to ``me`` (the constructor's): stored, never sent nor delivered
        (spec decision 27); on a send to another member it changes nothing.

        No entry: opens a connection (fresh conn_id); CLOSING: reopens it. The message is stored
        before it is sent, so a lost datagram is retransmitted later. Raises ``SendWindowFull``
        (max_send_window unacked) or ``LocalProtocolError`` (payload too big for the codec)
        without changing any state.
        """
        if type(now) is int and now >= self._now:  # _advance, inlined (per-message path)
            self._now = now
        else:
            self._advance(now)
        if type(payload) is not bytes:
            raise LocalProtocolError(f"send: payload must be bytes, got {type(payload).__name__}")
        for flag, value in (("oob", oob), ("dont_loopback", dont_loopback)):
            if type(value) is not bool:
                raise LocalProtocolError(f"send: {flag} must be a bool, got {type(value).__name__}")
        m, cfg = self._m, self._config
        entry = m.send.get(dst)
        if entry is None:
            seqno, conn_id = 1, m.next_conn_id
        else:
            window = entry.window
            seqno, conn_id = window.hr + 1, entry.conn_id  # highest_sent + 1
            if seqno - 1 - window.hd >= cfg.max_send_window:
                raise SendWindowFull(
                    f"send to {dst!r}: {cfg.max_send_window} messages unacknowledged"
                    " (max_send_window)"
                )
        try:
            data = encode_data(seqno, conn_id, seqno == 1, payload, cfg.codec_limits, oob)
        except ValueError as exc:  # EncodeError (too big for codec_limits), or seqno > 2**63 - 1
            raise LocalProtocolError(f"send to {dst!r}: {exc}") from exc
        if entry is None:
            entry = self._open_send_entry(dst, now=now)
        else:
            entry.touch(now=now)
        entry.window.add(seqno, payload)
        if oob:
            entry.oob.add(seqno)
        if dont_loopback and dst == m.me and not m.variant.self_as_peer:  # decision 27: never looped back
            entry.dont_loopback.add(seqno)
            receive.dont_loopback_added(entry)
            return seqno
        m.outbox.append((dst, data))
        m.stats.datagrams_sent += 1
        return seqno

    def _open_send_entry(self, dst: P, *, now: int) -> SendEntry:
        m, cfg = self._m, self._config
        window: Table[bytes] = Table(
            0,
            msgs_per_row=cfg.xmit_table_msgs_per_row,
            initial_rows=cfg.xmit_table_num_rows,
            max_span=cfg.max_send_window,
        )
        entry = SendEntry(m.next_conn_id, window, now=now)
        m.send[dst] = entry
        m.next_conn_id = next_conn_id(m.next_conn_id)
        if cfg.max_retransmit_time > 0 and dst not in m.members:
            m.age_out.setdefault(dst, now + cfg.max_retransmit_time)
        return entry

    def received(self, src: P, data: bytes, *, now: int) -> None:
        """A datagram from ``src``. Malformed ones are counted (``stats.malformed``) and dropped."""
        if type(now) is int and now >= self._now:  # _advance, inlined (per-message path)
            self._now = now
        else:
            self._advance(now)
        if type(data) is not bytes and not isinstance(data, _BYTES_LIKE):
            raise LocalProtocolError(f"received: data must be bytes, got {type(data).__name__}")
        m = self._m
        m.stats.datagrams_received += 1
        try:
            msg = decode(data, self._config.codec_limits)
        except DecodeError:
            m.stats.malformed += 1
            return
        if type(msg) is DataMsg:  # the common case, without on_message's dispatch
            receive.on_data(m, src, msg, now=now)
        else:
            m.answering = (len(data), now)  # what an answer may resend (resend_factor)
            receive.on_message(m, src, msg, now=now)

    def received_batch(self, src: P, datagrams: Iterable[bytes], *, now: int) -> None:
        """Datagrams from ``src`` that arrived as one batch (a bundle; JGroups' ``up(MessageBatch)``,
        spec ``on_batch``). Malformed ones are counted and dropped; control messages are handled at
        once, in order, as single ones (JGroups handles them while it walks the batch); the DATA are
        received as at most two batches, the OOB ones first, then the regular ones (the transport's
        split, ``TP.handleMessageBatch``): all added in one go, acknowledged at once if a batch holds
        at least ``ack_threshold`` DATA of the receive entry's connection (else by the retransmit
        task), the in-order run delivered in order."""
        items = bundle_items(datagrams)  # refused before anything changes
        self._advance(now)
        limits = self._config.codec_limits
        receive_bundle(self._m, src, items, now=now, decode=lambda data: decode(data, limits), data_type=DataMsg,
                       on_message=receive.on_message, on_batch=receive.on_batch)

    def handle_timer(self, *, now: int) -> None:
        """Run the retransmit task if it is due (``now >= get_timer()``), else do nothing.

        In order: pending ACKs, previous-batch XMIT_REQs, HS resends (the spec's XMIT timer), then
        AgeOutCache expiry, idle closing (conn_expiry_timeout) and removal of entries CLOSING for
        conn_close_timeout. The next run is one xmit_interval after this one (fixed delay).
        """
        self._advance(now)
        if now < self._next_xmit:
            return
        m, cfg = self._m, self._config
        tasks.retransmit(m)
        if cfg.max_retransmit_time > 0:
            tasks.age_out(m, now=now)
        if cfg.conn_expiry_timeout > 0:
            tasks.close_idle(m, now=now)
        if cfg.conn_close_timeout > 0:
            tasks.remove_expired(m, now=now)
        m.purge_expired_syncs(now=now)
        self._next_xmit = now + cfg.xmit_interval

    def install_view(self, members: Iterable[P], *, now: int) -> None:
        """A new view: entries of peers not in ``members`` become CLOSING, members' reopen."""
        self._advance(now)
        tasks.install_view(self._m, members, now=now)

    def remove_receive_connection(self, peer: P) -> None:
        """The test hook of JGroups (removeReceiveConnection): flush all pending ACKs, then drop
        the receive entry of ``peer`` (no CLOSE is sent)."""
        tasks.remove_receive_connection(self._m, peer, now=self._now)

    def close_connection(self, peer: P, *, now: int) -> None:
        """closeConnection: both entries of ``peer`` become CLOSING (and are removed after
        conn_close_timeout without traffic). ``now`` because a state change resets the age."""
        self._advance(now)
        tasks.close_connection(self._m, peer, now=now)

    def fire_timer(self, kind: int, peer: P | None = None, *, now: int) -> None:
        """For the lockstep harness: fire the spec's timer ``kind`` (``spec.unicast3.XMIT``,
        ``IDLE_SEND``, ... ``SYNC_EXPIRED``) for ``peer`` now, whatever the ages say. XMIT is the
        first half of ``handle_timer`` and does not move ``get_timer()``."""
        self._advance(now)
        tasks.fire_timer(self._m, kind, peer, now=now)

    # ------------------------------------------------------------------ outputs

    def datagrams_to_send(self) -> list[tuple[P, bytes]]:
        """Datagrams queued since the last call, oldest first, as (destination, bytes)."""
        out, self._m.outbox = self._m.outbox, []
        return out

    def deliveries(self) -> list[tuple[P, bytes]]:
        """Messages for the application since the last call, in delivery order, as (src, payload)."""
        out, self._m.deliveries = self._m.deliveries, []
        return out

    def get_timer(self) -> int:
        """When ``handle_timer`` should next be called (ms, same clock as ``now``)."""
        return self._next_xmit

    @property
    def config(self) -> Config:
        return self._config

    @property
    def stats(self) -> Stats:
        return self._m.stats

    def snapshot(self, *, now: int) -> EngineView[P]:
        """The abstract state (``snapshot.EngineView``), comparable with a spec ``Node`` through
        ``checks/conform/unicast3.py``. ``now`` decides which SEND_FIRST_SEQNOs are still within
        sync_min_interval; it does not advance the engine's clock. Costs O(window spans)."""
        m = self._m
        send = tuple(
            (peer, SendView(e.conn_id, int(e.state), e.acked, stored_payloads(e.window, e.acked, e.highest_sent),
                            e.watermark, e.last_ts, tuple(sorted(e.oob)), tuple(sorted(e.dont_loopback))))
            for peer, e in sorted(m.send.items())
        )
        recv = tuple(
            (peer, RecvView(e.conn_id, int(e.state), e.delivered,
                            tuple(s for s in range(e.delivered + 1, e.window.hr + 1) if e.window.get(s) is not None),
                            e.ack_pending))
            for peer, e in sorted(m.recv.items())
        )
        sync = frozenset(p for p in m.sync_sent if m.sync_active(p, now=now))
        return EngineView(m.members, send, recv, m.cache.view(), sync, tuple(sorted(m.xmit_last.items())),
                          m.timestamper.last, m.next_conn_id)

    def allocated_slots(self) -> int:
        """Window slots currently allocated over all entries (memory follows live spans)."""
        m = self._m
        return sum(e.window.allocated_slots for e in m.send.values()) + sum(
            e.window.allocated_slots for e in m.recv.values()
        )

    def check_invariants(self) -> None:
        """Raise AssertionError unless the state is well formed (O(memory); a testing aid)."""
        m, cfg = self._m, self._config
        for peer, s in m.send.items():
            s.window.check_invariants()
            assert s.window.offset == 0 and s.acked == s.window.low, (peer, s.window)
            assert s.watermark[0] <= s.watermark[1] <= s.highest_sent, (peer, s.watermark)
            assert s.highest_sent - s.acked <= cfg.max_send_window, peer
            assert 0 <= s.resend_spent <= cfg.max_resend_bytes, (peer, s.resend_spent)
            assert all(s.acked < seqno <= s.highest_sent for seqno in s.oob), (peer, s.oob)
        for peer, r in m.recv.items():
            r.window.check_invariants()
            assert r.window.hr == r.delivered or r.window.get(r.delivered + 1) is None, (peer, r.window)
        assert len(m.recv) <= cfg.max_receive_entries and len(m.sync_sent) <= cfg.max_receive_entries
        m.cache.check_invariants()
        assert 0 <= m.timestamper.last < 2**31 and 0 <= m.next_conn_id < 2**15

    # ------------------------------------------------------------------ time

    def _advance(self, now: int) -> None:
        self._now = check_time(now, self._now)

