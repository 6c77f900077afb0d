"""``LocalGroup``: n endpoints of one protocol and a ``Link`` between them, in one event loop.

This module owns the wiring that tests and benchmarks repeat: a socket per member on loopback,
the link's fronts as every endpoint's directory (or the sockets themselves without a link), an
event log per member if asked, and closing it all. ``seqcheck demo`` wires the same pieces across
processes (``checks/demo/``).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from impl.runtime.endpoint import Endpoint, EndpointLimits
from impl.runtime.link import Faults, Link


def loopback_socket(host: str = "127.0.0.1") -> socket.socket:
    """A UDP socket bound to a free port of ``host``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((host, 0))
    return sock


class LocalGroup:
    """``async with LocalGroup("unicast3", 3, faults=Faults(loss=0.2), seed=7) as group:`` gives
    ``group.endpoints`` (member i is ``endpoints[i]``) and ``group.link`` (None with ``link=False``).
    ``views`` gives each member's initial view (default: all members)."""

    def __init__(self, protocol: str, n: int, *, faults: Faults | None = None, seed: int = 0, config: Any = None,
                 configs: Sequence[Any] | None = None, log_dir: str | Path | None = None,
                 log_decoded: bool = True, limits: EndpointLimits | None = None,
                 views: Sequence[Sequence[int]] | None = None, link: bool = True) -> None:
        if type(n) is not int or n < 1:
            raise ValueError(f"members: expected an int >= 1, got {n!r}")
        self.protocol, self.n, self.faults, self.seed = protocol, n, faults, seed
        self.configs = list(configs) if configs is not None else [config] * n
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.log_decoded, self.limits, self.views = log_decoded, limits, views
        self.with_link = link
        self.link: Link | None = None
        self.endpoints: list[Endpoint] = []
        self.sockets: list[socket.socket] = []

    def log_path(self, member: int) -> Path | None:
        return None if self.log_dir is None else self.log_dir / f"member-{member}.jsonl"

    async def __aenter__(self) -> LocalGroup:
        self.sockets = [loopback_socket() for _ in range(self.n)]
        real = {i: _address(s) for i, s in enumerate(self.sockets)}
        directory = real
        if self.with_link:
            self.link = Link(real, faults=self.faults, seed=self.seed)
            directory = self.link.open()
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        for i, sock in enumerate(self.sockets):
            view = None if self.views is None else self.views[i]
            endpoint = Endpoint(self.protocol, me=i, directory=directory, members=view, config=self.configs[i],
                                sock=sock, log=self.log_path(i), log_decoded=self.log_decoded, limits=self.limits)
            endpoint.open()
            self.endpoints.append(endpoint)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for endpoint in self.endpoints:
            endpoint.close()
        if self.link is not None:
            self.link.close()
        for sock in self.sockets:
            sock.close()


def _address(sock: socket.socket) -> tuple[str, int]:
    host, port = sock.getsockname()[:2]
    return str(host), int(port)
