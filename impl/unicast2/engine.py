"""``Unicast2Engine``: the sans-IO UNICAST2 member, the only public entry point of the package.

This module owns the API (inputs, outputs, time) and the trust boundary for bytes; the protocol
itself is in ``receive.py`` (messages) and ``tasks.py`` (the periodic tasks, views, the hook), over
the state of ``state.py``. The engine behaves like ``spec/unicast2.py`` message for message; see the
package docstring for where (and why) it departs.

Time: every input that may depend on time takes ``now``, an ``int`` in milliseconds on any
monotonic clock the caller likes (the engine only ever subtracts two of them); durations in
``Config`` are in the same unit. ``now`` must never decrease (``LocalProtocolError``).

Inputs are method calls: ``send``, ``received``, ``handle_timer``, ``install_view``,
``remove_receive_connection`` (and ``fire_timer`` for the lockstep harness). Outputs are pulled:
``datagrams_to_send()``, ``deliveries()``, ``get_timer()``, ``snapshot()``, ``stats``. Nothing here
reads a clock, opens a socket, starts a thread or draws a random number.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic

from impl.common import LocalProtocolError, P, SendWindowFull, check_time, next_conn_id, stored_payloads
from impl.unicast2 import receive, tasks
from impl.unicast2.codec import NO_CONN, DataMsg, DecodeError, decode, encode_data
from impl.unicast2.config import Config
from impl.unicast2.snapshot import EngineView, RecvView, SendView
from impl.unicast2.state import Member, SendEntry, Stats
from impl.window import Table

_BYTES_LIKE = (bytes, bytearray, memoryview)


class Unicast2Engine(Generic[P]):
    """One member's UNICAST2, driven by three kinds of sources: application calls (``send``,
    ``install_view``, the hook), datagrams (``received``) and its timers (``handle_timer`` at
    ``get_timer()``: the retransmit task every xmit_interval, the stable task every
    stable_interval, the connection reaper every conn_expiry_timeout if enabled).

    Peers are opaque, hashable, ordered addresses; the engine never needs its own address. After
    every input, drain ``datagrams_to_send`` and ``deliveries`` and re-arm the timer from
    ``get_timer``.
    """

    def __init__(self, config: Config | None = None, *, members: Iterable[P] = (), now: int) -> None:
        self._config = cfg = config if config is not None else Config()
        self._now = check_time(now, None)
        self._m: Member[P] = Member(cfg, frozenset(members))
        # JGroups starts each task one period in (with no entries a run would do nothing).
        self._next_xmit = now + cfg.xmit_interval
        self._next_stable = now + cfg.stable_interval
        self._next_reap = now + cfg.conn_expiry_timeout if cfg.conn_expiry_timeout > 0 else None

    # ------------------------------------------------------------------ inputs

    def send(self, dst: P, payload: bytes, *, now: int) -> int:
        """The application sends ``payload`` to ``dst``; returns the seqno it got.

        No entry: opens a connection (fresh conn_id). The message is stored before it is sent, so
        a lost datagram can be resent later; it is marked first iff its seqno is 1. Raises
        ``SendWindowFull`` (max_send_window unacked) or ``LocalProtocolError`` (payload too big
        for the codec) without changing any state.
        """
        self._advance(now)
        if type(payload) is not bytes:
            raise LocalProtocolError(f"send: payload must be bytes, got {type(payload).__name__}")
        m, cfg = self._m, self._config
        entry = m.send.get(dst)
        if entry is None:
            seqno, conn_id = 1, NO_CONN if m.variant.no_conn_ids else m.next_conn_id
        else:
            seqno, conn_id = entry.highest_sent + 1, entry.conn_id
            if seqno - 1 - entry.acked >= cfg.max_send_window:
                raise SendWindowFull(f"send to {dst!r}: {cfg.max_send_window} messages unacknowledged"
                                     " (max_send_window)")
        header_conn_id = conn_id if seqno == 1 or not m.variant.conn_id_first_only else NO_CONN
        try:
            data = encode_data(seqno, header_conn_id, seqno == 1, payload, cfg.codec_limits)
        except ValueError as exc:  # EncodeError (too big for codec_limits), or seqno > 2**63 - 1
            raise LocalProtocolError(f"send to {dst!r}: {exc}") from exc
        if entry is None:
            entry = self._open_send_entry(dst, conn_id, now=now)
        entry.touched = now
        entry.window.add(seqno, payload)
        m.outbox.append((dst, data))
        m.stats.datagrams_sent += 1
        return seqno

    def _open_send_entry(self, dst: P, conn_id: int, *, now: int) -> SendEntry:
        m, cfg = self._m, self._config
        window: Table[bytes] = Table(0, msgs_per_row=cfg.xmit_table_msgs_per_row,
                                     initial_rows=cfg.xmit_table_num_rows, max_span=cfg.max_send_window)
        entry = m.send[dst] = SendEntry(conn_id, window, now=now)
        if not m.variant.no_conn_ids:
            m.next_conn_id = next_conn_id(m.next_conn_id)
        if cfg.max_retransmit_time > 0 and dst not in m.members:
            m.age_out.setdefault(dst, now + cfg.max_retransmit_time)
        return entry

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
        if type(msg) is DataMsg:  # the common case, without on_message's dispatch
            receive.on_data(m, src, msg, now=now)
        else:
            m.answering = (len(data), now)  # what an answer may resend (resend_factor)
            receive.on_message(m, src, msg, now=now)

    def handle_timer(self, *, now: int) -> None:
        """Run every task that is due (``now >= get_timer()``), in this order: the retransmit task
        (the spec's XMIT, then the SEND_FIRST_SEQNOs the rate limit deferred or that went
        unanswered: ``Member.resync``) and AgeOutCache expiry, the stable task (STABLE), the connection reaper
        (IDLE_SEND / IDLE_RECV for idle entries). Each next run is one period after this one."""
        self._advance(now)
        m, cfg = self._m, self._config
        if now >= self._next_xmit:
            tasks.retransmit(m)
            if m.sync_wanted:
                m.resync(now=now)
            if cfg.max_retransmit_time > 0:
                tasks.age_out(m, now=now)
            self._next_xmit = now + cfg.xmit_interval
        if now >= self._next_stable:
            tasks.stable(m)
            self._next_stable = now + cfg.stable_interval
        if self._next_reap is not None and now >= self._next_reap:
            tasks.reap(m, now=now)
            self._next_reap = now + cfg.conn_expiry_timeout

    def install_view(self, members: Iterable[P], *, now: int) -> None:
        """A new view: both connections of every peer that left are removed at once."""
        self._advance(now)
        tasks.install_view(self._m, members)

    def remove_receive_connection(self, peer: P) -> None:
        """The test hook of JGroups (removeReceiveConnection): final STABLE, then drop the receive
        entry of ``peer`` (nothing if there is none)."""
        self._m.remove_receiver(peer)

    def fire_timer(self, kind: int, peer: P | None = None, *, now: int) -> None:
        """For the lockstep harness: fire the spec's timer ``kind`` (``spec.unicast2.XMIT``,
        ``STABLE``, ``IDLE_SEND``, ``IDLE_RECV``) for ``peer`` now, whatever the ages say. It does
        not move ``get_timer()``."""
        self._advance(now)
        tasks.fire_timer(self._m, kind, peer)

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
        due = min(self._next_xmit, self._next_stable)
        return due if self._next_reap is None else min(due, self._next_reap)

    @property
    def config(self) -> Config:
        return self._config

    @property
    def stats(self) -> Stats:
        return self._m.stats

    def snapshot(self, *, now: int | None = None) -> EngineView[P]:
        """The abstract state (``snapshot.EngineView``), comparable with a spec ``Node`` through
        ``checks/conform/unicast2.py``. ``now`` is accepted for symmetry with UNICAST3 (nothing in
        the view depends on time). Costs O(window spans)."""
        m = self._m
        send = tuple(
            (peer, SendView(e.conn_id, e.acked, stored_payloads(e.window, e.acked, e.highest_sent), e.ack_received,
                            e.watermark, e.last_ts))
            for peer, e in sorted(m.send.items())
        )
        recv = tuple(
            (peer, RecvView(e.conn_id, e.delivered,
                            tuple((d.seqno, d.conn_id, d.first) for s in range(e.delivered + 1, e.window.hr + 1)
                                  if (d := e.window.get(s)) is not None),
                            e.last_highest, e.stable_count))
            for peer, e in sorted(m.recv.items())
        )
        return EngineView(m.members, send, recv, tuple(sorted(m.xmit_last.items())), m.timestamper.last,
                          m.next_conn_id)

    def allocated_slots(self) -> int:
        """Window slots currently allocated over all entries (memory follows live spans)."""
        m = self._m
        return sum(e.window.allocated_slots for e in m.send.values()) + sum(
            e.window.allocated_slots for e in m.recv.values())

    def check_invariants(self) -> None:
        """Raise AssertionError unless the state is well formed (O(memory); a testing aid)."""
        m, cfg = self._m, self._config
        for peer, s in m.send.items():
            s.window.check_invariants()
            assert s.window.offset == 0 and s.window.low == s.window.hd, (peer, s.window)
            assert s.watermark[0] <= s.watermark[1] <= s.highest_sent, (peer, s.watermark)
            assert s.highest_sent - s.acked <= cfg.max_send_window, peer
            assert 0 <= s.resend_spent <= cfg.max_resend_bytes, (peer, s.resend_spent)
        for peer, r in m.recv.items():
            r.window.check_invariants()
            assert r.window.hr == r.delivered or r.window.get(r.delivered + 1) is None, (peer, r.window)
        assert len(m.recv) <= cfg.max_receive_entries and len(m.sync_wanted) <= cfg.max_receive_entries
        assert all(0 <= left <= cfg.sync_retries for _, left in m.sync_wanted.values())
        assert 0 <= m.timestamper.last < 2**31 and 0 <= m.next_conn_id < 2**15

    # ------------------------------------------------------------------ time

    def _advance(self, now: int) -> None:
        if type(now) is int and now >= self._now:  # check_time, inlined (per-message path)
            self._now = now
        else:
            self._now = check_time(now, self._now)

