"""``Link``: a fault-injecting UDP relay between endpoints, seeded, switchable while it runs.

This module owns the network the runtime's tests and ``seqcheck demo`` put between endpoints.
The link has one *front* socket per member: member i's endpoint sends to the front of member j;
the link receives it there from i's socket, so it knows the channel (i, j), and forwards it out
of the front of i to j's socket, so j sees it coming from i's front, which is what j's directory
names i (``Link.fronts`` is the directory every endpoint gets). A datagram from an address that
is no member's socket is counted and dropped.

Per datagram, in this order: a blocked channel (a partition, or one direction of one) drops it;
then loss; then duplication (a second copy); then each copy is held back with probability
``reorder`` for a delay drawn from ``Delay``, so later datagrams overtake it. Every random choice
comes from one ``random.Random(seed)``; the choices are a function of the seed and of the order
in which datagrams arrive (which the operating system decides), so a run is seeded, not replayable.
``set_faults``, ``block``, ``partition`` and ``heal`` change the link while it runs.

The link holds at most ``max_delayed`` datagrams back at once (a datagram beyond goes at once),
so its memory is bounded whatever the rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

Address = tuple[str, int]
MAX_UDP = 65_535


@dataclass(frozen=True)
class Delay:
    """How long a held-back datagram waits (ms): ``uniform`` between ``low`` and ``high``, or
    ``exponential`` with mean ``low``, cut at ``high``."""

    kind: str = "uniform"
    low: float = 1.0
    high: float = 10.0

    def __post_init__(self) -> None:
        if self.kind not in ("uniform", "exponential"):
            raise ValueError(f"delay: expected uniform or exponential, got {self.kind!r}")
        if not (isinstance(self.low, (int, float)) and isinstance(self.high, (int, float))
                and 0 <= self.low <= self.high <= 60_000):
            raise ValueError(f"delay: expected 0 <= low <= high <= 60000 (ms), got {self.low!r}, {self.high!r}")

    @staticmethod
    def parse(text: str) -> Delay:
        """``uniform:LOW-HIGH`` or ``exp:MEAN[-CAP]`` (ms); a one-line ``ValueError`` otherwise."""
        kind, _, values = text.partition(":")
        try:
            low_text, _, high_text = values.partition("-")
            low = float(low_text)
            if kind == "uniform":
                return Delay("uniform", low, float(high_text) if high_text else low)
            if kind in ("exp", "exponential"):
                return Delay("exponential", low, float(high_text) if high_text else 10 * low)
        except ValueError as error:
            if "delay:" in str(error):
                raise
        raise ValueError(f"delay: expected uniform:LOW-HIGH or exp:MEAN[-CAP] (ms), got {text!r}")

    def draw(self, rng: random.Random) -> float:
        """One delay, in seconds."""
        if self.kind == "uniform":
            ms = rng.uniform(self.low, self.high)
        else:
            ms = min(rng.expovariate(1 / self.low), self.high) if self.low > 0 else 0.0
        return ms / 1000

    def __str__(self) -> str:
        return f"uniform:{self.low:g}-{self.high:g}" if self.kind == "uniform" else f"exp:{self.low:g}-{self.high:g}"


@dataclass(frozen=True)
class Faults:
    """What the link does to each datagram (probabilities in [0, 1]; loss below 1)."""

    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    delay: Delay = field(default_factory=Delay)

    def __post_init__(self) -> None:
        for name in ("loss", "duplicate", "reorder"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value <= 1 or (name == "loss" and value == 1):
                raise ValueError(f"faults: {name}: expected a probability in [0, 1{')' if name == 'loss' else ']'},"
                                 f" got {value!r}")


@dataclass
class LinkStats:
    received: int = 0
    forwarded: int = 0  # copies sent on (duplicates and held-back ones included)
    lost: int = 0
    duplicated: int = 0
    delayed: int = 0
    blocked: int = 0  # dropped by a partition
    unknown_source: int = 0
    send_errors: int = 0


class Link:
    """The relay (module docstring). ``members`` maps each member to its endpoint's socket address."""

    def __init__(self, members: Mapping[int, Address], *, faults: Faults | None = None, seed: int = 0,
                 host: str = "127.0.0.1", max_delayed: int = 1 << 16) -> None:
        self.members = {int(m): (socket.gethostbyname(a[0]), int(a[1])) for m, a in members.items()}
        self.faults = faults or Faults()
        self.seed = seed
        self.rng = random.Random(seed)
        self.host = host
        self.max_delayed = max_delayed
        self.stats = LinkStats()
        self._by_real = {a: m for m, a in self.members.items()}
        self._blocked: set[tuple[int, int]] = set()
        self._socks: dict[int, socket.socket] = {}
        self._delayed = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self.fronts: dict[int, Address] = {}

    async def __aenter__(self) -> Link:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def open(self, sockets: Mapping[int, socket.socket] | None = None) -> dict[int, Address]:
        """Bind a front per member (or take ``sockets``, already bound) and start relaying; returns
        the fronts, the directory every endpoint gets."""
        self._loop = asyncio.get_running_loop()
        for member in sorted(self.members):
            sock = sockets[member] if sockets is not None else socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            if sockets is None:
                sock.bind((self.host, 0))
            sock.setblocking(False)
            for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, option, 4 << 20)
            self._socks[member] = sock
            host, port = sock.getsockname()[:2]
            self.fronts[member] = (str(host), int(port))
            self._loop.add_reader(sock.fileno(), self._readable, member)
        return dict(self.fronts)

    def close(self) -> None:
        for sock in self._socks.values():
            if self._loop is not None:
                self._loop.remove_reader(sock.fileno())
            sock.close()
        self._socks.clear()

    # ------------------------------------------------------------------ switching while running
    def set_faults(self, faults: Faults) -> None:
        self.faults = faults

    def block(self, src: int, dst: int) -> None:
        """Drop everything from ``src`` to ``dst`` (one direction: an asymmetric partition)."""
        self._check(src, dst)
        self._blocked.add((src, dst))

    def unblock(self, src: int, dst: int) -> None:
        self._blocked.discard((src, dst))

    def partition(self, *groups: Iterable[int]) -> None:
        """Block every channel between members of different ``groups`` (both directions); members
        in no group are cut off from all."""
        side = {m: i for i, group in enumerate(groups) for m in group}
        for m in side:
            self._check(m, m)
        for src in self.members:
            for dst in self.members:
                if src != dst and (src not in side or dst not in side or side[src] != side[dst]):
                    self._blocked.add((src, dst))

    def heal(self) -> None:
        """Unblock every channel."""
        self._blocked.clear()

    @property
    def blocked(self) -> frozenset[tuple[int, int]]:
        return frozenset(self._blocked)

    def _check(self, *members: int) -> None:
        for m in members:
            if m not in self.members:
                raise ValueError(f"link: no member {m!r} (members: {sorted(self.members)})")

    # ------------------------------------------------------------------ relaying
    def _readable(self, dst: int) -> None:
        sock = self._socks.get(dst)
        if sock is None:
            return
        by_real, stats = self._by_real, self.stats
        for _ in range(256):
            try:
                data, addr = sock.recvfrom(MAX_UDP)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            src = by_real.get(addr)
            if src is None or src == dst:
                stats.unknown_source += 1
                continue
            stats.received += 1
            self._forward(src, dst, data)

    def _forward(self, src: int, dst: int, data: bytes) -> None:
        stats, faults, rng = self.stats, self.faults, self.rng
        if (src, dst) in self._blocked:
            stats.blocked += 1
            return
        if faults.loss and rng.random() < faults.loss:
            stats.lost += 1
            return
        copies = 1
        if faults.duplicate and rng.random() < faults.duplicate:
            copies = 2
            stats.duplicated += 1
        for _ in range(copies):
            if faults.reorder and self._delayed < self.max_delayed and rng.random() < faults.reorder:
                self._delayed += 1
                stats.delayed += 1
                assert self._loop is not None
                self._loop.call_later(faults.delay.draw(rng), self._send_late, src, dst, data)
            else:
                self._send(src, dst, data)

    def _send_late(self, src: int, dst: int, data: bytes) -> None:
        self._delayed -= 1
        self._send(src, dst, data)

    def _send(self, src: int, dst: int, data: bytes) -> None:
        sock = self._socks.get(src)
        if sock is None:
            return
        try:
            sock.sendto(data, self.members[dst])
            self.stats.forwarded += 1
        except OSError:
            self.stats.send_errors += 1
