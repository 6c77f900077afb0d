"""One member of ``seqcheck demo``, in a process of its own: an endpoint, a stream, a checker.

This module owns what a demo member does: it opens an ``impl.runtime.Endpoint`` on the socket the
demo hands it (an inherited file descriptor), sends its stream (``messages`` messages: to the other
members in turn for a unicast protocol, multicast otherwise), checks every delivery against what
each sender's stream must look like (message k of sender s is the k-th that s sent to this member,
so each sender's deliveries must be numbered 0, 1, 2, ... exactly), and reports to the demo on stdout, one
JSON object a line: progress every ``report_ms``, ``done`` once its stream is out and every message
meant for it arrived, and its final counts when the demo says ``stop`` on stdin. Other commands on
stdin: ``{"view": [...]}`` installs a view. Run as ``python -m checks.demo.member CONFIG_JSON``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from impl.runtime import Endpoint, EndpointClosed, loopback_config

HEAD = struct.Struct(">IQ")  # sender, message number


@dataclass
class Checker:
    """Per sender: the next message number due, and what arrived out of line."""

    expected: dict[int, int]  # sender -> messages meant for this member
    next_due: dict[int, int] = field(default_factory=dict)
    delivered: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    foreign: int = 0  # deliveries that are no demo message

    def take(self, src: int, payload: bytes) -> None:
        self.delivered += 1
        if len(payload) < HEAD.size:
            self.foreign += 1
            return
        sender, number = HEAD.unpack_from(payload)
        if sender != src or src not in self.expected:
            self.foreign += 1
            return
        due = self.next_due.get(src, 0)
        if number == due:
            self.next_due[src] = due + 1
        elif number < due:
            self.duplicates += 1
        else:
            self.out_of_order += 1
            self.next_due[src] = number + 1

    @property
    def complete(self) -> bool:
        return all(self.next_due.get(s, 0) >= n for s, n in self.expected.items())

    @property
    def ok(self) -> bool:
        return self.complete and not (self.duplicates or self.out_of_order or self.foreign) and \
            self.delivered == sum(self.expected.values())


def destinations(me: int, n: int) -> list[int]:
    return [m for m in range(n) if m != me]


def expected_from(me: int, n: int, messages: int, multicast: bool) -> dict[int, int]:
    """How many messages each sender's stream has for ``me``."""
    if multicast:
        return dict.fromkeys(range(n), messages)
    out = {}
    for sender in destinations(me, n):
        others = destinations(sender, n)
        slot = others.index(me)
        out[sender] = len(range(slot, messages, len(others)))
    return out


async def send_stream(endpoint: Endpoint, n: int, messages: int, *, size: int = 64) -> None:
    """Send this member's stream: message k multicast, or, unicast, to the other members in turn
    (numbered per destination, so each receiver sees 0, 1, 2, ... from each sender)."""
    me, multicast = endpoint.me, endpoint.protocol.startswith("nakack")
    padding = bytes(max(HEAD.size, size) - HEAD.size)
    others = destinations(me, n)
    numbers = dict.fromkeys(others, 0)
    for k in range(messages):
        if multicast:
            await endpoint.multicast(HEAD.pack(me, k) + padding)
        else:
            dst = others[k % len(others)]
            await endpoint.send(dst, HEAD.pack(me, numbers[dst]) + padding)
            numbers[dst] += 1


async def receive_stream(endpoint: Endpoint, checker: Checker) -> None:
    """Take deliveries into ``checker`` until every message meant for this member arrived."""
    while not checker.complete:
        for src, payload in [await endpoint.receive(), *endpoint.receive_nowait()]:
            checker.take(src, payload)


async def run(config: dict[str, Any]) -> None:
    me, n, messages = int(config["me"]), int(config["members"]), int(config["messages"])
    protocol, size = str(config["protocol"]), max(HEAD.size, int(config["size"]))
    sock = socket.socket(fileno=int(config["fd"]))
    directory = {int(k): (str(v[0]), int(v[1])) for k, v in config["directory"].items()}
    endpoint = Endpoint(protocol, me=me, directory=directory, config=loopback_config(protocol), sock=sock,
                        log=config.get("log"))
    multicast = protocol.startswith("nakack")
    checker = Checker(expected_from(me, n, messages, multicast))
    started = time.monotonic()
    done = asyncio.Event()

    def report(kind: str, **extra: Any) -> None:
        s, e = endpoint.stats, endpoint.engine_stats()
        line = {"kind": kind, "me": me, "sent": s.sent, "delivered": checker.delivered,
                "data_out": s.data_out, "data_in": s.data_in, "datagrams_out": s.datagrams_out,
                "duplicates": checker.duplicates, "out_of_order": checker.out_of_order, "foreign": checker.foreign,
                "complete": checker.complete, "ok": checker.ok, "seconds": round(time.monotonic() - started, 3),
                "cpu_seconds": round(time.process_time(), 3), "malformed": e.get("malformed", 0), **extra}
        print(json.dumps(line), flush=True)

    async def commands() -> None:
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                return
            command = json.loads(line)
            if "view" in command:
                endpoint.install_view([int(m) for m in command["view"]])
            if command.get("stop"):
                return

    async def progress() -> None:
        while True:
            await asyncio.sleep(int(config.get("report_ms", 250)) / 1000)
            report("progress")

    async with endpoint:
        ticker = asyncio.create_task(progress())
        control = asyncio.create_task(commands())
        work: asyncio.Future[Any] = asyncio.gather(send_stream(endpoint, n, messages, size=size),
                                                   receive_stream(endpoint, checker))
        try:
            await asyncio.wait([work, control], return_when=asyncio.FIRST_COMPLETED)
            if work.done():
                work.result()
                report("done")
                done.set()
                await control
        except EndpointClosed:
            pass
        finally:
            ticker.cancel()
            work.cancel()
            report("final", engine=endpoint.engine_stats())


def main() -> None:
    asyncio.run(run(json.loads(sys.argv[1])))


if __name__ == "__main__":
    main()
