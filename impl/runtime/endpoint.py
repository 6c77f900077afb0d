"""``Endpoint``: one sans-IO engine carrying real traffic over an asyncio UDP socket.

This module owns the binding of an engine (``impl/runtime/drivers.py``) to a socket, a clock and
an application, as aioquic's ``QuicConnectionProtocol`` binds its connection: datagrams in
(``received``), timers from the engine's next deadline (``handle_timer`` at ``get_timer()``),
datagrams out after every input, deliveries to the application. The engine stays sans-IO.

Rules
-----
1. Members are ints (0, 1, ...): the engines' addresses, on the wire too for the multicast
   protocols. ``directory`` maps each member to the UDP address its datagrams go to (its socket,
   or a ``Link``'s front for it); a datagram is accepted only from one of those addresses, as the
   member it names. Anything else is counted (``stats.unknown_source``) and dropped before the
   engine sees it.
2. Time is the event loop's clock: ``now`` is the integer milliseconds since the endpoint
   opened, never decreasing. The engine's timer is one ``call_at`` at ``get_timer()``, re-armed
   after every input. UNICAST3's retransmit task also runs after ``Config.ack_threshold``
   deliveries (``Driver.ack_after``), so ACKs keep pace with the traffic as JGroups' do.
3. Back-pressure is an ``await``: ``send`` waits while the engine refuses more unacknowledged
   messages (``SendWindowFull``), NAKACK4's blocked sender waits until ACKs let its held message
   go out, and every send waits while the application has more undelivered messages waiting
   than ``EndpointLimits`` allow. Then the endpoint also stops reading its socket (the kernel
   drops what arrives, as a loss the protocol recovers), so no queue of the endpoint grows
   without bound: the engine's own limits bound the rest.
4. A multicast is one datagram per member of the view; the member's own copy never touches the
   network: it goes back into the engine as the next input (JGroups' loopback).
5. With ``log``, every engine input is one step of an event log (``impl/runtime/eventlog.py``)
   with what it sent, delivered and which limit counters moved; ``checks/validate`` replays such
   logs against the spec.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from impl.common import LocalProtocolError
from impl.runtime.drivers import Driver, SendFailed, Submitted, make_driver
from impl.runtime.eventlog import DEFAULT_MAX_BYTES, EventLog, config_json

Address = tuple[str, int]
MAX_UDP = 65_535


class EndpointClosed(LocalProtocolError):
    """The endpoint was closed while (or before) the call waited."""


@dataclass(frozen=True)
class EndpointLimits:
    """What the endpoint itself may hold (the engine's ``Config`` bounds the engine)."""

    max_pending_deliveries: int = 1 << 16  # delivered messages the application has not taken yet ...
    max_pending_delivery_bytes: int = 64 << 20  # ... and their payload bytes: beyond, reading pauses
    recv_batch: int = 256  # datagrams read per wake-up before outputs are flushed
    send_burst: int = 64  # sends that did not wait before ``send`` yields to the loop once (fairness)
    socket_buffer: int = 4 << 20  # SO_RCVBUF and SO_SNDBUF asked for (the kernel may give less)
    max_log_bytes: int = DEFAULT_MAX_BYTES

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if type(value) is not int or value < 1:
                raise ValueError(f"EndpointLimits.{name}: expected an int >= 1, got {value!r}")


@dataclass
class EndpointStats:
    """What the endpoint counted (the engine's own counters are ``Endpoint.engine_stats``)."""

    sent: int = 0  # application messages the engine took
    delivered: int = 0  # messages handed to the application's queue
    datagrams_in: int = 0  # from known members, given to the engine
    datagrams_out: int = 0  # handed to the socket (own copies not counted)
    data_in: int = 0  # ... of which carried application data (DATA, MSG, XMIT_RSP)
    data_out: int = 0
    loopback: int = 0  # own multicast copies handed back to the engine
    unknown_source: int = 0  # datagrams from no member's address: dropped
    send_errors: int = 0  # datagrams the socket refused (buffer full, ...): dropped like a loss
    receive_errors: int = 0
    backpressure_waits: int = 0  # sends that waited for the engine to make room
    reads_paused: int = 0  # times reading stopped because the application fell behind
    timer_runs: int = 0
    early_xmits: int = 0  # retransmit runs after ``Driver.ack_after`` deliveries (UNICAST3's ACKs)
    bytes_in: int = 0
    bytes_out: int = 0
    extra: dict[str, int] = field(default_factory=dict)


class Endpoint:
    """One member: an engine of ``protocol`` on a UDP socket (module docstring).

    ``async with Endpoint(...) as ep:`` opens it; ``await ep.send(dst, payload)`` (unicast) or
    ``await ep.multicast(payload)`` sends; ``async for src, payload in ep`` receives;
    ``install_view``, ``answer_join``, ``become_server``, ``merge`` change membership.
    """

    def __init__(self, protocol: str, *, me: int, directory: Mapping[int, Address],
                 members: Iterable[int] | None = None, config: Any = None, sock: socket.socket | None = None,
                 bind: Address | None = None, log: str | Path | None = None, log_decoded: bool = True,
                 limits: EndpointLimits | None = None) -> None:
        self.protocol, self.me = protocol, me
        if type(me) is not int or me < 0:
            raise ValueError(f"me: expected a member number (int >= 0), got {me!r}")
        self.directory = {int(m): _address(f"directory[{m}]", a) for m, a in directory.items()}
        if me not in self.directory and sock is None and bind is None:
            raise ValueError(f"directory: no address for me={me} (or pass bind= or sock=)")
        self.initial_members = tuple(sorted(self.directory if members is None else set(members)))
        self.limits = limits or EndpointLimits()
        self._config, self._sock, self._bind = config, sock, bind
        self._own_sock = sock is None
        self._log_path, self._log_decoded = log, log_decoded
        self._by_addr = {a: m for m, a in self.directory.items() if m != me}
        self.stats = EndpointStats()
        self.driver: Driver | None = None
        self._log: EventLog | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._t0 = 0.0
        self._last_now = 0
        self._timer: asyncio.TimerHandle | None = None
        self._armed = -1
        self._closed = False
        self._reading = False
        self._deliveries: deque[tuple[int, bytes]] = deque()
        self._delivery_bytes = 0
        self._reader: asyncio.Future[None] | None = None
        self._progress: asyncio.Future[None] | None = None
        self._held: dict[int, asyncio.Future[int]] = {}
        self._loopback: deque[bytes] = deque()
        self._since_xmit = 0  # deliveries since the retransmit task last ran early (Driver.ack_after)
        self._burst = 0  # sends since the last time ``send`` yielded to the loop

    # ------------------------------------------------------------------ opening and closing
    async def __aenter__(self) -> Endpoint:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Bind the socket, make the engine (its time 0 is now) and start reading and the timer."""
        loop = self._loop = asyncio.get_running_loop()
        sock = self._sock
        if sock is None:
            sock = self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(self._bind or self.directory[self.me])
        sock.setblocking(False)
        for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
            with contextlib.suppress(OSError):  # the kernel's limit stands
                sock.setsockopt(socket.SOL_SOCKET, option, self.limits.socket_buffer)
        self._t0 = loop.time()
        clock_ns = time.monotonic_ns()
        self.driver = make_driver(self.protocol, self._config, me=self.me, members=self.initial_members, now=0)
        if self._log_path is not None:
            self._log = EventLog(self._log_path, {
                "protocol": self.protocol, "me": self.me, "members": list(self.initial_members),
                "directory": {str(m): list(a) for m, a in sorted(self.directory.items())},
                "config": config_json(self.driver.engine.config), "clock_ns": clock_ns,
                "limits": list(self.driver.limit_names), "decoded": self._log_decoded,
            }, max_bytes=self.limits.max_log_bytes)
        self._resume_reading()
        self._arm()

    def close(self) -> None:
        """Stop reading and timers, close the socket (if the endpoint opened it) and the log; every
        waiting call raises ``EndpointClosed``, ``async for`` ends once the queue is empty."""
        if self._closed:
            return
        self._closed = True
        self._pause_reading(count=False)
        if self._timer is not None:
            self._timer.cancel()
        if self._own_sock and self._sock is not None:
            self._sock.close()
        for future in [self._reader, self._progress, *self._held.values()]:
            if future is not None and not future.done():
                future.set_exception(EndpointClosed("endpoint closed"))
        self._held.clear()
        if self._log is not None:
            self._log.close({"stats": {k: v for k, v in vars(self.stats).items() if k != "extra"},
                             "engine_stats": self.engine_stats()})

    @property
    def address(self) -> Address:
        """Where the socket is bound."""
        assert self._sock is not None
        host, port = self._sock.getsockname()[:2]
        return str(host), int(port)

    @property
    def engine(self) -> Any:
        """The sans-IO engine (read its ``stats``, ``snapshot``; do not call its inputs)."""
        assert self.driver is not None, "the endpoint is not open"
        return self.driver.engine

    def engine_stats(self) -> dict[str, int]:
        if self.driver is None:
            return {}
        stats = self.engine.stats
        return {f.name: getattr(stats, f.name) for f in fields(stats)}

    @property
    def closed(self) -> bool:
        return self._closed

    # ------------------------------------------------------------------ the application's calls
    async def send(self, dst: int, payload: bytes) -> int:
        """Send ``payload`` to member ``dst`` (unicast protocols); returns its seqno once the
        engine took it (waiting while the engine applies back-pressure)."""
        if dst not in self.directory or dst == self.me:
            raise ValueError(f"send: dst: expected another member of the directory, got {dst!r}")
        return await self._submit(dst, payload)

    async def multicast(self, payload: bytes) -> int:
        """Multicast ``payload`` to the view (multicast protocols); returns its seqno once it went
        out (NAKACK4: waiting while the own window is full)."""
        return await self._submit(None, payload)

    async def _submit(self, dst: int | None, payload: bytes) -> int:
        driver = self._driver()
        if driver.multicast != (dst is None):
            raise SendFailed(f"{'send' if dst is not None else 'multicast'}: {self.protocol} is a "
                             f"{'multicast' if driver.multicast else 'unicast'} protocol: use "
                             f"{'multicast(payload)' if driver.multicast else 'send(dst, payload)'}")
        while True:
            if self._closed:
                raise EndpointClosed("endpoint closed")
            if not self._reading and len(self._deliveries) > 0:  # the application fell behind (rule 3)
                self.stats.backpressure_waits += 1
                await self._wait_progress()
                continue
            now = self._now()
            before = self._log_before() if self._log is not None else None
            submitted = driver.submit(dst, payload, now)
            if submitted is None:
                self.stats.backpressure_waits += 1
                self._burst = 0
                await self._wait_progress()
                continue
            self.stats.sent += 1
            held = not isinstance(submitted, int)
            seqno = submitted.seqno if isinstance(submitted, Submitted) else submitted
            if self._log is not None:
                record: dict[str, Any] = {"t": now, "payload": payload.hex(), "seqno": seqno}
                status = submitted.status if isinstance(submitted, Submitted) else "sent"
                record.update({"ev": "mcast", "status": status} if dst is None else {"ev": "send", "to": dst})
                self._flush(record, before)
            elif self._loopback or driver.multicast:
                self._flush()
            else:
                self._emit_sends()
            self._after_inputs()
            if not held:
                self._burst += 1
                if self._burst >= self.limits.send_burst:  # let the loop read the socket (ACKs) now and then
                    self._burst = 0
                    await asyncio.sleep(0)
                return seqno
            future = self._held[seqno] = self._loop_().create_future()
            return await future

    async def receive(self) -> tuple[int, bytes]:
        """The next delivered message as (sender, payload); ``EndpointClosed`` once closed and empty."""
        while not self._deliveries:
            if self._closed:
                raise EndpointClosed("endpoint closed")
            if self._reader is None:
                self._reader = self._loop_().create_future()
            await self._reader
        return self._take()

    def receive_nowait(self) -> list[tuple[int, bytes]]:
        """Every delivered message waiting, oldest first (may be empty)."""
        out = []
        while self._deliveries:
            out.append(self._take())
        return out

    def __aiter__(self) -> Endpoint:
        return self

    async def __anext__(self) -> tuple[int, bytes]:
        try:
            return await self.receive()
        except EndpointClosed:
            raise StopAsyncIteration from None

    def install_view(self, members: Iterable[int]) -> None:
        """Install a view (explicit membership: the application or its GMS decides it)."""
        view = sorted(set(members))
        self._call({"ev": "view", "members": view}, lambda now: self.engine.install_view(view, now=now))

    def answer_join(self, joiner: int, view: Iterable[int]) -> None:
        """At the coordinator (multicast protocols): admit ``joiner`` (a JOIN_RSP with this
        member's digest goes to it) and install ``view``, in one step."""
        members = sorted(set(view))

        def both(now: int) -> None:
            self.engine.answer_join(joiner, members, now=now)
            self.engine.install_view(members, now=now)

        self._call({"ev": "join", "joiner": joiner, "view": members}, both)

    async def joined(self) -> None:
        """At a joiner: wait for the JOIN_RSP (the engine then has a view), then become a server."""
        while not self.engine.members:
            await self._wait_progress()
        self._call({"ev": "become_server"}, lambda now: self.engine.become_server(now=now))

    def become_server(self) -> None:
        self._call({"ev": "become_server"}, lambda now: self.engine.become_server(now=now))

    def merge(self, digest: Iterable[tuple[int, int, int]], view: Iterable[int]) -> None:
        """After a partition heals (multicast protocols): MERGE_DIGEST (``(member, hd, high)``
        triples) then the merged view, in one step."""
        entries = sorted(tuple(e) for e in digest)
        members = sorted(set(view))

        def both(now: int) -> None:
            self.engine.merge_digest(entries, now=now)
            self.engine.install_view(members, now=now)

        self._call({"ev": "merge", "digest": [list(e) for e in entries], "view": members}, both)

    def digest(self) -> list[tuple[int, int, int]]:
        """This member's (member, hd, highest received) per window (multicast protocols): what a
        merge hands the other side."""
        view = self.engine.snapshot()
        out = []
        for sender, window in view.windows:
            high = max([window.delivered, *(s for s, _ in window.buffered)])
            out.append((sender, window.delivered, high))
        return out

    def _call(self, record: dict[str, Any], call: Callable[[int], None]) -> None:
        self._driver()
        if self._closed:
            raise EndpointClosed("endpoint closed")
        now = self._now()
        before = self._log_before()
        call(now)
        record["t"] = now
        self._flush(record, before)
        self._after_inputs()

    # ------------------------------------------------------------------ inputs from the loop
    def _readable(self) -> None:
        sock, by_addr, stats = self._sock, self._by_addr, self.stats
        assert sock is not None and self.driver is not None
        engine, data_types, logging = self.driver.engine, self.driver.data_types, self._log is not None
        received, now_of, recvfrom = engine.received, self._now, sock.recvfrom
        got = data = size = 0
        for _ in range(self.limits.recv_batch):
            try:
                datagram, addr = recvfrom(MAX_UDP)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                stats.receive_errors += 1
                break
            src = by_addr.get(addr)
            if src is None:
                stats.unknown_source += 1
                continue
            got += 1
            size += len(datagram)
            if len(datagram) > 1 and datagram[1] in data_types:
                data += 1
            now = now_of()
            if logging:
                before = self._log_before()
                received(src, datagram, now=now)
                self._flush(self._in_record(now, src, datagram), before)
            else:
                received(src, datagram, now=now)
        if got:
            stats.datagrams_in += got
            stats.bytes_in += size
            stats.data_in += data
            if not logging:
                self._flush()
            self._after_inputs()

    def _in_record(self, now: int, src: int, data: bytes) -> dict[str, Any]:
        record: dict[str, Any] = {"t": now, "ev": "in", "from": src, "data": data.hex()}
        if self._log_decoded:
            record["msg"] = self._driver().describe(data)
        return record

    def _on_timer(self) -> None:
        self._timer, deadline = None, self._armed
        self._armed = -1
        if self._closed:
            return
        now = max(self._now(), deadline)  # call_at may wake a little early: the engine's deadline is now
        self._last_now = now
        before = self._log_before()
        self.engine.handle_timer(now=now)
        self.stats.timer_runs += 1
        self._since_xmit = 0
        self._flush({"t": now, "ev": "timer"} if self._log is not None else None, before)
        self._after_inputs()

    def _flush(self, record: dict[str, Any] | None = None, before: tuple[int, ...] | None = None) -> None:
        """Send what the engine queued, take its deliveries and resolved held sends (with a log
        ``record``: write it with all of that); then feed own copies back, each its own step."""
        self._emit(record, before)
        engine, me, logging = self._driver().engine, self.me, self._log is not None
        while self._loopback:
            data = self._loopback.popleft()
            now = self._now()
            before = self._log_before()
            engine.received(me, data, now=now)
            self._emit(self._in_record(now, me, data) if logging else None, before)

    def _emit_sends(self) -> list[tuple[int, bytes]]:
        """Send what the engine queued (own copies kept for ``_flush``); what it queued."""
        driver = self.driver
        assert driver is not None and self._sock is not None
        sendto, directory, me, stats, data_types = self._sock.sendto, self.directory, self.me, self.stats, \
            driver.data_types
        out: list[tuple[int, bytes]] = driver.engine.datagrams_to_send()
        sent = data = size = 0
        for dst, datagram in out:
            if dst == me:
                self._loopback.append(datagram)
                stats.loopback += 1
                continue
            address = directory.get(dst)
            if address is None:  # a view naming a member the directory does not know
                stats.send_errors += 1
                continue
            try:
                sendto(datagram, address)
            except OSError:
                stats.send_errors += 1
                continue
            sent += 1
            size += len(datagram)
            if len(datagram) > 1 and datagram[1] in data_types:
                data += 1
        stats.datagrams_out += sent
        stats.bytes_out += size
        stats.data_out += data
        return out

    def _emit(self, record: dict[str, Any] | None, before: tuple[int, ...] | None) -> None:
        driver = self._driver()
        engine = driver.engine
        out = self._emit_sends()
        up = engine.deliveries()
        if up:
            self._deliver(up)
        events = driver.send_events()
        for seqno, status in events:
            future = self._held.pop(seqno, None)
            if future is not None and not future.done():
                if status == "sent":
                    future.set_result(seqno)
                else:
                    future.set_exception(SendFailed(f"multicast: seqno {seqno} dropped by the engine ({status})"))
        if record is not None and self._log is not None:
            self._write(record, before, out, up, events)

    def _write(self, record: dict[str, Any], before: tuple[int, ...] | None, out: list[tuple[int, bytes]],
               up: list[tuple[int, bytes]], events: list[tuple[int, str]]) -> None:
        assert self._log is not None
        driver = self._driver()
        if out:
            record["out"] = ([[d, x.hex(), driver.describe(x)] for d, x in out] if self._log_decoded
                             else [[d, x.hex()] for d, x in out])
        if up:
            record["up"] = [[s, p.hex()] for s, p in up]
        if events:
            record["resumed"] = [[s, status] for s, status in events]
        if before is not None:
            after = driver.limit_counts()
            moved = {n: a - b for n, a, b in zip(driver.limit_names, after, before) if a != b}
            if moved:
                record["limits"] = moved
        self._log.step(record)

    def _log_before(self) -> tuple[int, ...] | None:
        return self._driver().limit_counts() if self._log is not None else None

    def _deliver(self, up: list[tuple[int, bytes]]) -> None:
        self._since_xmit += len(up)
        self._deliveries.extend(up)
        self.stats.delivered += len(up)
        self._delivery_bytes += sum(len(p) for _, p in up)
        limits = self.limits
        if len(self._deliveries) > limits.max_pending_deliveries or \
                self._delivery_bytes > limits.max_pending_delivery_bytes:
            self._pause_reading()
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)
        self._reader = None

    def _take(self) -> tuple[int, bytes]:
        src, payload = self._deliveries.popleft()
        self._delivery_bytes -= len(payload)
        if not self._reading and not self._closed:
            limits = self.limits
            if len(self._deliveries) <= limits.max_pending_deliveries // 2 and \
                    self._delivery_bytes <= limits.max_pending_delivery_bytes // 2:
                self._resume_reading()
                self._signal_progress()
        return src, payload

    def _after_inputs(self) -> None:
        driver = self.driver
        assert driver is not None
        if driver.ack_after and self._since_xmit >= driver.ack_after and not self._closed:
            self._since_xmit = 0
            now = self._now()
            before = self._log_before()
            driver.run_retransmit_task(now)
            self.stats.early_xmits += 1
            self._flush({"t": now, "ev": "xmit"} if self._log is not None else None, before)
        self._arm()
        self._signal_progress()

    # ------------------------------------------------------------------ plumbing
    def _arm(self) -> None:
        if self._closed:
            return
        deadline = self.engine.get_timer()
        if deadline == self._armed:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._armed = deadline
        self._timer = self._loop_().call_at(self._t0 + deadline / 1000, self._on_timer)

    def _now(self) -> int:
        now = int((self._loop_().time() - self._t0) * 1000)
        if now < self._last_now:
            return self._last_now
        self._last_now = now
        return now

    def _wait_progress(self) -> asyncio.Future[None]:
        if self._progress is None:
            self._progress = self._loop_().create_future()
        return self._progress

    def _signal_progress(self) -> None:
        progress, self._progress = self._progress, None
        if progress is not None and not progress.done():
            progress.set_result(None)

    def _pause_reading(self, *, count: bool = True) -> None:
        if self._reading and self._sock is not None:
            with contextlib.suppress(ValueError, OSError):  # a socket the caller closed already
                self._loop_().remove_reader(self._sock.fileno())
            self._reading = False
            if count:
                self.stats.reads_paused += 1

    def _resume_reading(self) -> None:
        if not self._reading and self._sock is not None:
            self._loop_().add_reader(self._sock.fileno(), self._readable)
            self._reading = True

    def _driver(self) -> Driver:
        if self.driver is None:
            raise LocalProtocolError("the endpoint is not open (use `async with` or open())")
        return self.driver

    def _loop_(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop


def _address(what: str, value: object) -> Address:
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str)
            and type(value[1]) is int and 0 <= value[1] <= 65535):
        raise ValueError(f"{what}: expected (host, port), got {value!r}")
    host = value[0]
    try:
        host = socket.gethostbyname(host)
    except OSError as error:
        raise ValueError(f"{what}: cannot resolve host {value[0]!r}: {error}") from None
    return host, int(value[1])
