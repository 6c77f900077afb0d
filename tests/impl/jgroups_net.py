"""Test helper: the stacks of JGroups' own unit tests, rebuilt around seqcheck's engines (issue 30, item 4).

JGroups tests its reliable-delivery protocols by putting small protocols into a real stack:
``DISCARD`` / ``DISCARD_PAYLOAD`` / a ``Drop`` that lose chosen messages, ``REVERSE`` that holds the
first n messages and passes them up in reverse, a protocol that rewrites an ACK. ``Net`` is that
stack for the engines: members by name, one virtual clock, and an ordered list of ``Filter``s that
see every datagram (decoded, so a filter can pick "DATA carrying payload 3" or "the next ACK") and
pass, drop or hold it. Nothing here reads the wall clock or draws a random number it was not given;
the work of a run is bounded by counts (rounds, timer runs), never by time.

Payloads are numbered as JGroups' tests number them (``ObjectMessage(dest, i)``): the first 8 bytes
are ``i`` big-endian, padded to the test's message size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from one_loss import until_quiet

from impl import nakack2 as n2
from impl import nakack4 as n4
from impl import unicast3 as u3
from impl import unicast4 as u4
from impl.nakack2 import codec as n2_codec
from impl.nakack4 import codec as n4_codec
from impl.unicast3 import codec as u3_codec
from impl.unicast4 import codec as u4_codec

MAX_ROUNDS = 100_000  # transfer rounds per input: a livelocked protocol fails instead of hanging
MAX_TIMER_RUNS = 200_000  # timer runs per wait

PASS, DROP, HOLD = "pass", "drop", "hold"
Filter = Callable[[str, str, Any], str]  # (src, dst, decoded message) -> PASS / DROP / HOLD

UNICAST = {
    "unicast3": (u3.Config, u3.Unicast3Engine, u3_codec.decode),
    "unicast4": (u4.Config, u4.Unicast4Engine, u4_codec.decode),
}
MULTICAST = {
    "nakack2": (n2.Config, n2.Nakack2Engine, n2_codec.decode),
    "nakack4": (n4.Config, n4.Nakack4Engine, n4_codec.decode),
}


def payload(n: int, size: int = 8) -> bytes:
    """The payload of JGroups' message number ``n`` (``size`` bytes, at least 8)."""
    return n.to_bytes(8, "big") + bytes(max(0, size - 8))


def number(data: bytes) -> int:
    return int.from_bytes(data[:8], "big")


@dataclass
class Net:
    """Engines joined by a filtered network on a virtual clock (``now``, ms)."""

    engines: dict[str, Any]
    decode: Callable[[bytes], Any]
    filters: list[Filter] = field(default_factory=list)
    now: int = 0
    held: list[tuple[str, str, bytes]] = field(default_factory=list)
    delivered: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (dst, src) -> numbers
    delivery_times: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    datagrams: int = 0  # datagrams sent (dropped ones included)
    largest: int = 0  # the largest datagram sent, in bytes
    failed: list[tuple[str, str, int]] = field(default_factory=list)  # UNICAST4: (src, dst, seqno) of failed sends

    def send(self, src: str, dst: str, n: int, *, size: int = 8, **flags: Any) -> Any:
        """The application at ``src`` sends message ``n`` to ``dst``; the datagrams go out at once."""
        status = self.engines[src].send(dst, payload(n, size), now=self.now, **flags)
        self.transfer()
        return status

    def mcast(self, src: str, n: int, *, size: int = 8) -> Any:
        """The application at ``src`` multicasts message ``n`` (NAKACK2 / NAKACK4)."""
        status = self.engines[src].multicast(payload(n, size), now=self.now)
        self.transfer()
        return status

    def transfer(self) -> None:
        """Move datagrams (through the filters) until no engine has anything to send."""
        until_quiet(self.engines, self._route, self._collect, MAX_ROUNDS)

    def _route(self, src: str, dst: str, data: bytes) -> None:
        self.datagrams += 1
        self.largest = max(self.largest, len(data))
        msg = self.decode(data)
        for keep in self.filters:
            verdict = keep(src, dst, msg)
            if verdict == DROP:
                return
            if verdict == HOLD:
                self.held.append((src, dst, data))
                return
        if dst in self.engines:  # a datagram to an address nobody has is lost
            self.engines[dst].received(src, data, now=self.now)

    def release(self, *, reverse: bool) -> None:
        """Pass the held datagrams up, in reverse order if asked (JGroups' REVERSE)."""
        held, self.held = self.held, []
        for src, dst, data in reversed(held) if reverse else held:
            self.engines[dst].received(src, data, now=self.now)
        self.transfer()

    def release_batch(self, *, reverse: bool) -> None:
        """Pass the held datagrams up as one batch per (src, dst), in reverse order if asked (JGroups'
        REVERSE with MAKE_BATCH below it: one MessageBatch of the reversed messages; UNICAST3's
        ``received_batch``)."""
        held, self.held = self.held, []
        channels: dict[tuple[str, str], list[bytes]] = {}
        for src, dst, data in reversed(held) if reverse else held:
            channels.setdefault((src, dst), []).append(data)
        for (src, dst), datagrams in channels.items():
            self.engines[dst].received_batch(src, datagrams, now=self.now)
        self.transfer()

    def _collect(self) -> None:
        for name, engine in self.engines.items():
            for src, data in engine.deliveries():
                self.delivered.setdefault((name, src), []).append(number(data))
                self.delivery_times.setdefault((name, src), []).append(self.now)
            failed = getattr(engine, "failed_sends", None)
            if failed is not None:
                self.failed.extend((name, dst, seqno) for dst, seqno, _ in failed())

    def wait_until(self, done: Callable[[], bool], *, limit: int) -> int | None:
        """Run timers (each at its due time) until ``done()`` or virtual time passes ``now + limit``:
        the virtual time it took, or None if it never happened (the clock is then at the limit)."""
        start = self.now
        for _ in range(MAX_TIMER_RUNS):
            if done():
                return self.now - start
            due = min(e.get_timer() for e in self.engines.values())
            if due > start + limit:
                self.now = start + limit
                return 0 if done() else None
            self.now = max(self.now, due)
            for engine in self.engines.values():
                if engine.get_timer() <= self.now:
                    engine.handle_timer(now=self.now)
            self.transfer()
        raise AssertionError("too many timer runs")

    def sleep(self, ms: int) -> None:
        """Let ``ms`` of virtual time pass, timers running."""
        self.wait_until(lambda: False, limit=ms)

    def got(self, dst: str, src: str) -> list[int]:
        return self.delivered.get((dst, src), [])


def unicast(protocol: str, members: tuple[str, ...] = ("A", "B"), **fields: Any) -> Net:
    """A UNICAST3 or UNICAST4 pair (or group) with the Config ``fields`` JGroups' test sets."""
    config_class, engine_class, decode = UNICAST[protocol]
    config = config_class(**fields)
    engines = {m: engine_class(config, members=members, now=0, me=m) for m in members}  # to self: the self path
    return Net(engines, decode)


def group(protocol: str, members: tuple[str, ...] = ("A", "B", "C"), **fields: Any) -> Net:
    """A NAKACK2 or NAKACK4 group of founders with the Config ``fields`` JGroups' test sets. A
    multicast is one datagram per member, the sender's own copy (JGroups' loopback) included."""
    config_class, engine_class, decode = MULTICAST[protocol]
    config = config_class(**fields)
    engines = {m: engine_class(config, me=m, members=members, now=0) for m in members}
    return Net(engines, decode)


# --- JGroups' test protocols, as filters -------------------------------------------------------


def is_data(msg: Any) -> bool:
    """A unicast DATA or a multicast MSG (not a retransmission)."""
    return type(msg) is u3_codec.DataMsg or type(msg) is n2_codec.McastMsg


def is_ack(msg: Any) -> bool:
    return type(msg) is u3_codec.AckMsg


def discard_payload(src: str, n: int, times: int) -> Filter:
    """DISCARD_PAYLOAD: drop DATA from ``src`` carrying message ``n``, ``times`` times."""
    left = [times]

    def keep(s: str, d: str, msg: Any) -> str:
        if left[0] and s == src and is_data(msg) and number(msg.payload) == n:
            left[0] -= 1
            return DROP
        return PASS
    return keep


def drop_next(src: str, count: int = 1, kind: Callable[[Any], bool] = lambda msg: True) -> Filter:
    """DISCARD.dropDownUnicasts(count) / the ``Drop`` protocol: drop the next ``count`` unicasts
    ``src`` sends (of ``kind``)."""
    left = [count]

    def keep(s: str, d: str, msg: Any) -> str:
        if left[0] and s == src and kind(msg):
            left[0] -= 1
            return DROP
        return PASS
    return keep


def reverse(src: str, dst: str, count: int, kind: Callable[[Any], bool] = is_data) -> tuple[Filter, Callable[[], bool]]:
    """REVERSE.numMessagesToReverse(count) below ``dst``'s unicast protocol: hold the first ``count``
    messages of ``kind`` from ``src``; the second value says when all are held (then ``Net.release``)."""
    held = [0]

    def keep(s: str, d: str, msg: Any) -> str:
        if held[0] < count and s == src and d == dst and kind(msg):
            held[0] += 1
            return HOLD
        return PASS
    return keep, lambda: held[0] == count
