"""Test helper: NAKACK2 engines joined by an in-memory network, on a virtual clock.

Loss is modelled by omission (a ``drop`` predicate, or ``hold`` to delay a datagram and
``release`` it later); every datagram that gets through is delivered in FIFO order, the sender's
own multicast copy included (the loopback). Loops are bounded ("too many rounds") so a livelocked
protocol fails the test instead of hanging it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from impl.nakack2 import Config, Nakack2Engine, payload_number, spec_payload
from impl.nakack2.codec import WireMsg, decode

Drop = Callable[[str, str, WireMsg], bool]
M = TypeVar("M", bound=WireMsg)


@dataclass
class Group:
    config: Config = field(default_factory=Config)
    names: tuple[str, ...] = ("A", "B", "C")
    founders: tuple[str, ...] | None = None  # None: every name is a founder
    now: int = 0
    engines: dict[str, Nakack2Engine[str]] = field(init=False)
    log: list[tuple[int, str, str, WireMsg]] = field(default_factory=list)  # every datagram sent
    delivered: dict[str, list[tuple[str, int]]] = field(init=False)
    held: list[tuple[str, str, bytes]] = field(default_factory=list)
    drop: Drop | None = None  # datagrams for which this is true are lost
    hold: Drop | None = None  # ... or kept aside until ``release``

    def __post_init__(self) -> None:
        founders = self.names if self.founders is None else self.founders
        self.engines = {n: Nakack2Engine(self.config, me=n, members=founders, now=0) for n in self.names}
        self.delivered = {n: [] for n in self.names}

    def __getitem__(self, name: str) -> Nakack2Engine[str]:
        return self.engines[name]

    def mcast(self, src: str, *payloads: int, transfer: bool = True) -> None:
        for p in payloads:
            self.engines[src].multicast(spec_payload(p), now=self.now)
        if transfer:
            self.transfer()

    def transfer(self) -> None:
        """Move datagrams until no engine has anything to send."""
        for _ in range(10_000):
            moved = False
            for src, engine in self.engines.items():
                for dst, data in engine.datagrams_to_send():
                    moved = True
                    msg = decode(data, self.config.codec_limits)
                    self.log.append((self.now, src, dst, msg))
                    if dst not in self.engines or (self.drop is not None and self.drop(src, dst, msg)):
                        continue  # to an outsider (an address a hostile peer used), or lost
                    if self.hold is not None and self.hold(src, dst, msg):
                        self.held.append((src, dst, data))
                        continue
                    self.engines[dst].received(src, data, now=self.now)
            self.collect()
            if not moved:
                return
        raise AssertionError("too many rounds: the engines never went quiet")

    def collect(self) -> None:
        for name, engine in self.engines.items():
            self.delivered[name].extend((src, payload_number(p)) for src, p in engine.deliveries())

    def release(self) -> None:
        """Deliver the held datagrams now (in the order they were held)."""
        held, self.held = self.held, []
        for src, dst, data in held:
            self.engines[dst].received(src, data, now=self.now)
        self.transfer()

    def run_until(self, t: int) -> None:
        """Advance the clock to ``t``, running every timer that falls due on the way."""
        for _ in range(100_000):
            due = min(e.get_timer() for e in self.engines.values())
            if due > t:
                break
            self.now = due
            for engine in self.engines.values():
                engine.handle_timer(now=self.now)
            self.transfer()
        else:
            raise AssertionError("too many timer runs")
        self.now = t

    def got(self, dst: str, src: str = "A") -> list[int]:
        """Payload numbers ``dst`` delivered from ``src``."""
        return [p for s, p in self.delivered[dst] if s == src]

    def sent(self, kind: type[M], src: str | None = None, dst: str | None = None, since: int = 0) -> list[M]:
        """Messages of type ``kind`` sent (by ``src``, to ``dst``) at or after time ``since``."""
        return [m for t, s, d, m in self.log
                if isinstance(m, kind) and (src is None or s == src) and (dst is None or d == dst) and t >= since]

    def check(self, names: Iterable[str] | None = None) -> None:
        for name in self.names if names is None else names:
            self.engines[name].check_invariants()
