"""What the network runtime needs to know about each engine: one ``Driver`` per protocol.

This module owns the differences between the four sans-IO engines as the endpoint
(``impl/runtime/endpoint.py``) sees them, so that the endpoint knows no protocol:

- how the engine is made (unicast engines take the initial view; multicast ones also ``me``);
- how an application message goes in (``send(dst, ...)`` or ``multicast(...)``) and what the
  engine answers: a seqno, back-pressure (``SendWindowFull``: try again after the next input that
  may have made room), or, NAKACK4, a send held with its seqno until ACKs make room
  (``SendStatus.BLOCKED``, resolved later through ``send_events``);
- which datagrams carry application data (their type byte, for the endpoint's counts);
- which engine counters mean "a limit against hostile input bit" (the log reports them, so a
  validator knows where the engine departed from the spec on purpose).

``loopback_config(protocol)`` is the engine configuration the demo, the benchmark and the tests
use on loopback: the engines' defaults except shorter periodic tasks (tens of ms instead of
JGroups' 0.5 to 60 s, so that ACKs and STABLEs keep send windows small at loopback rates), send
windows small enough that a burst fits the receiver's socket buffer (NAKACK4: capacity 2048), a
SEND_FIRST_SEQNO rate limit of 100 ms instead of 2 s (UNICAST3: a lost first message costs one
limit's time), retransmissions answered to the member that asked (``use_mcast_xmit`` off: with 20%
loss, re-multicasting every answer to the whole group made NAKACK4 resend 14 times what it sent),
and UNICAST2 as its spec has it (no byte-triggered STABLE, no rate limit), so that ``seqcheck
validate`` can follow every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from impl import nakack2, nakack4, unicast2, unicast3
from impl.common import LocalProtocolError, SendWindowFull
from impl.nakack2 import codec as n2codec
from impl.nakack4 import codec as n4codec
from impl.unicast2 import codec as u2codec
from impl.unicast3 import codec as u3codec

PROTOCOLS = ("unicast2", "unicast3", "nakack2", "nakack4")
_MAGIC = {"unicast2": 0x32, "unicast3": 0x55, "nakack2": 0x4E, "nakack4": 0x34}
_COMMON_LIMITS = ("malformed", "bad_seqno", "beyond_window", "receive_table_full", "held_bytes_full",
                  "receive_evicted", "xmit_scans_deferred", "resends_throttled", "xmit_seqnos_ignored")
_LIMITS = {
    "unicast3": (*_COMMON_LIMITS, "sync_table_full", "replace_refused", "cache_full", "cache_evicted",
                 "cache_drained_dropped"),
    "unicast2": (*_COMMON_LIMITS, "sync_table_full", "syncs_rate_limited"),
    "nakack2": ("malformed", "xmit_req_foreign", "xmit_rsp_foreign", "queue_dropped", "oversized_control",
                "join_rsp_ignored", "resends_throttled", "xmit_seqnos_ignored", "beyond_window",
                "held_bytes_full", "send_without_window", "stability_foreign"),
    "nakack4": ("malformed", "xmit_req_foreign", "xmit_rsp_foreign", "queue_dropped", "oversized_control",
                "join_rsp_ignored", "resends_throttled", "xmit_seqnos_ignored", "send_without_window"),
}


class SendFailed(LocalProtocolError):
    """A send the engine took no seqno for, or dropped after taking one (one line: which and why)."""


@dataclass(frozen=True)
class Submitted:
    """What the engine did with one application message: its seqno, and whether it is held
    (NAKACK4: blocked on a full own window; it goes out with a later input)."""

    seqno: int
    held: bool = False
    status: str = "sent"


class Driver:
    """One engine as the endpoint drives it. ``engine`` is the sans-IO engine itself.

    ``ack_after``: deliveries after which the endpoint runs the engine's retransmit task early
    (0: never). UNICAST3 acknowledges only from that task (the spec's decision 2), so without it a
    sender's window drains once per ``xmit_interval``; running it after ``ack_threshold``
    deliveries sends the ACKs when JGroups would (its ack_threshold). The run is the spec's XMIT
    timer, which may fire at any time; it also sends the XMIT_REQs and highest-sent resends that
    run always sends."""

    protocol: str
    multicast: bool = False
    engine: Any
    ack_after = 0
    data_types: frozenset[int] = frozenset({0})  # type bytes of the datagrams that carry application data

    def __init__(self, protocol: str, config: Any, *, me: int, members: Iterable[int], now: int) -> None:
        self.protocol = protocol
        self.magic = _MAGIC[protocol]
        self.me = me
        present = [name for name in _LIMITS[protocol] if hasattr(config_stats(protocol), name)]
        self.limit_names: tuple[str, ...] = tuple(present)

    def submit(self, dst: int | None, payload: bytes, now: int) -> Submitted | int | None:
        """Hand one application message to the engine: its seqno if it went out, what the engine
        did if it holds it, or None for back-pressure (nothing changed; try again after the next
        input)."""
        raise NotImplementedError

    def send_events(self) -> list[tuple[int, str]]:
        """Held sends resolved since the last call, as (seqno, "sent" | "dropped")."""
        return []

    def run_retransmit_task(self, now: int) -> None:
        """The retransmit task now, out of its period (only where ``ack_after`` is set)."""
        raise NotImplementedError

    def is_data(self, datagram: bytes) -> bool:
        """Does ``datagram`` carry application data (DATA, MSG, XMIT_RSP)?"""
        return len(datagram) > 1 and datagram[1] in self.data_types

    def limit_counts(self) -> tuple[int, ...]:
        stats = self.engine.stats
        return tuple(getattr(stats, name) for name in self.limit_names)

    def describe(self, datagram: bytes) -> str:
        """``datagram`` decoded for people (the log's ``msg``), or why it does not decode."""
        try:
            return repr(_CODECS[self.protocol](datagram))
        except ValueError as error:  # DecodeError
            return f"malformed ({error})"


class UnicastDriver(Driver):
    def __init__(self, protocol: str, config: Any, *, me: int, members: Iterable[int], now: int) -> None:
        super().__init__(protocol, config, me=me, members=members, now=now)
        cls = unicast3.Unicast3Engine if protocol == "unicast3" else unicast2.Unicast2Engine
        self.engine = cls(config, members=members, now=now)
        if protocol == "unicast3":
            self.ack_after = config.ack_threshold

    def run_retransmit_task(self, now: int) -> None:
        """The retransmit task now (the spec's XMIT timer), without moving ``get_timer()``."""
        self.engine.fire_timer(0, now=now)  # spec.unicast3.XMIT

    def submit(self, dst: int | None, payload: bytes, now: int) -> Submitted | int | None:
        if dst is None:
            raise SendFailed(f"send: {self.protocol} is a unicast protocol: name a destination")
        try:
            seqno: int = self.engine.send(dst, payload, now=now)
            return seqno
        except SendWindowFull:
            return None


class Nakack2Driver(Driver):
    multicast = True

    def __init__(self, protocol: str, config: Any, *, me: int, members: Iterable[int], now: int) -> None:
        super().__init__(protocol, config, me=me, members=members, now=now)
        self.engine = nakack2.Nakack2Engine(config, me=me, members=members, now=now)

    def submit(self, dst: int | None, payload: bytes, now: int) -> Submitted | int | None:
        try:
            seqno: int | None = self.engine.multicast(payload, now=now)
        except SendWindowFull:
            return None
        if seqno is None:
            raise SendFailed("multicast: no own window yet (a joiner before its JOIN_RSP): nothing was sent")
        return seqno

    data_types = frozenset({0, 2})  # MSG, XMIT_RSP


class Nakack4Driver(Nakack2Driver):
    def __init__(self, protocol: str, config: Any, *, me: int, members: Iterable[int], now: int) -> None:
        Driver.__init__(self, protocol, config, me=me, members=members, now=now)
        if not config.resume_blocked_sends:
            raise LocalProtocolError("Config.resume_blocked_sends: the endpoint needs the engine to pass held "
                                     "sends down by itself (True)")
        self.engine = nakack4.Nakack4Engine(config, me=me, members=members, now=now)

    def submit(self, dst: int | None, payload: bytes, now: int) -> Submitted | int | None:
        try:
            seqno, status = self.engine.multicast(payload, now=now)
        except SendWindowFull:
            return None
        if status is nakack4.SendStatus.SENT:
            return int(seqno)
        if status in (nakack4.SendStatus.BLOCKED, nakack4.SendStatus.HELD):
            return Submitted(seqno, held=True, status=status.value)
        if status is nakack4.SendStatus.NO_WINDOW:
            raise SendFailed("multicast: no own window yet (a joiner before its JOIN_RSP): nothing was sent")
        raise SendFailed(f"multicast: seqno {seqno} dropped by the engine ({status.value})")

    def send_events(self) -> list[tuple[int, str]]:
        return [(seqno, status.value) for seqno, status in self.engine.send_events()]


_DRIVERS: dict[str, type[Driver]] = {"unicast2": UnicastDriver, "unicast3": UnicastDriver,
                                     "nakack2": Nakack2Driver, "nakack4": Nakack4Driver}
_CODECS: dict[str, Any] = {"unicast2": u2codec.decode, "unicast3": u3codec.decode, "nakack2": n2codec.decode,
                           "nakack4": n4codec.decode}
_CONFIGS: dict[str, Any] = {"unicast2": unicast2.Config, "unicast3": unicast3.Config,
                            "nakack2": nakack2.Config, "nakack4": nakack4.Config}


def check_protocol(protocol: str) -> str:
    if protocol not in _DRIVERS:
        raise ValueError(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    return protocol


def make_driver(protocol: str, config: Any, *, me: int, members: Iterable[int], now: int) -> Driver:
    """The driver of ``protocol``'s engine with ``config`` (None: ``loopback_config``)."""
    check_protocol(protocol)
    if config is None:
        config = loopback_config(protocol)
    if not isinstance(config, _CONFIGS[protocol]):
        raise ValueError(f"config: expected an impl.{protocol}.Config, got {type(config).__name__}")
    return _DRIVERS[protocol](protocol, config, me=me, members=members, now=now)


def config_class(protocol: str) -> Any:
    return _CONFIGS[check_protocol(protocol)]


def config_stats(protocol: str) -> Any:
    """An engine ``Stats`` of ``protocol`` (to know its counter names)."""
    return {"unicast2": unicast2.Stats, "unicast3": unicast3.Stats, "nakack2": nakack2.Stats,
            "nakack4": nakack4.Stats}[protocol]()


def loopback_config(protocol: str, **changes: Any) -> Any:
    """The configuration the demo, the benchmark and the tests run ``protocol`` with on loopback
    (module docstring), with ``changes`` on top."""
    check_protocol(protocol)
    base: dict[str, Any] = {
        "unicast3": {"xmit_interval": 50, "max_send_window": 4096, "sync_min_interval": 100},
        "unicast2": {"xmit_interval": 50, "stable_interval": 100, "max_send_window": 4096, "max_bytes": 0,
                     "sync_min_interval": 0},
        "nakack2": {"xmit_interval": 50, "stable_interval": 100, "max_send_window": 4096, "use_mcast_xmit": False},
        "nakack4": {"xmit_interval": 50, "capacity": 2048, "use_mcast_xmit": False},
    }[protocol]
    return _CONFIGS[protocol](**{**base, **changes})
