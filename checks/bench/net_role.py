"""One side of ``seqcheck bench --net`` in a process of its own (``checks/bench/net.py`` runs two).

This module owns what the sender and the receiver do in each phase the bench asks for on stdin
(one JSON object a line), on the socket handed over as a file descriptor (the same socket in
every phase):

- ``raw``: plain asyncio UDP (``create_datagram_endpoint`` on a duplicate of the socket, a
  ``DatagramProtocol``): the sender sends ``messages`` datagrams as fast as it can (yielding to
  the loop every 64), the receiver counts what arrives until the sender is done and the socket has
  been quiet for 200 ms (what the kernel dropped is simply not counted);
- ``engine``: an ``impl.runtime.Endpoint`` of UNICAST3 (``loopback_config``) on the socket, the
  sender's ``await send`` in a loop, the receiver's ``receive`` until every message arrived, in
  order (checked); with ``loss``, both sockets drop that share of what they send (seeded);

Every payload starts with the sending time (``time.monotonic_ns``, one clock for both processes)
and the message number, so the receiver measures delivery latency (send call to delivery) per
message and throughput from the first send to the last delivery. Each side reports its CPU
seconds in the phase. Between phases both sides drain their sockets, so nothing of a phase
reaches the next. Run as ``python -m checks.bench.net_role sender|receiver FD``.
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import struct
import sys
import time
from typing import Any

from impl.runtime import Endpoint, loopback_config

HEAD = struct.Struct(">QQI")  # send time (ns), message number, phase
PEER = 1  # the other side's member number (0 is the sender, 1 the receiver)


class LossySocket:
    """A socket whose ``sendto`` drops a seeded share of datagrams (the rest of the socket's API as is)."""

    def __init__(self, sock: socket.socket, loss: float, seed: int) -> None:
        self.sock, self.loss, self.rng = sock, loss, random.Random(seed)
        self.dropped = 0

    def sendto(self, data: bytes, address: Any) -> int:
        if self.rng.random() < self.loss:
            self.dropped += 1
            return len(data)
        return self.sock.sendto(data, address)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class _Raw(asyncio.DatagramProtocol):
    """The least a receiver does: count, and keep each datagram's latency."""

    def __init__(self, phase: int) -> None:
        self.phase = phase
        self.latencies: list[int] = []
        self.first = self.last = 0

    def datagram_received(self, data: bytes, addr: Any) -> None:
        now = time.monotonic_ns()
        sent, _number, phase = HEAD.unpack_from(data)
        if phase == self.phase:
            self.latencies.append(now - sent)
            self.first = self.first or sent
            self.last = now


def _drain(sock: socket.socket) -> int:
    sock.setblocking(False)
    drained = 0
    while True:
        try:
            sock.recvfrom(65_535)
            drained += 1
        except (BlockingIOError, InterruptedError):
            return drained


class Side:
    def __init__(self, role: str, sock: socket.socket, peer: tuple[str, int]) -> None:
        self.role, self.sock, self.peer = role, sock, peer
        self.commands: asyncio.StreamReader | None = None

    def say(self, **fields: Any) -> None:
        print(json.dumps(fields), flush=True)

    async def next_command(self) -> dict[str, Any]:
        assert self.commands is not None
        line = await self.commands.readline()
        if not line:
            raise EOFError
        command: dict[str, Any] = json.loads(line)
        return command

    async def phase(self, command: dict[str, Any]) -> None:
        cpu = time.process_time()
        if command["mode"] == "raw":
            result = await (self.raw_send(command) if self.role == "sender" else self.raw_receive(command))
        else:
            result = await (self.engine_send(command) if self.role == "sender" else self.engine_receive(command))
        result["cpu_seconds"] = round(time.process_time() - cpu, 3)
        self.say(kind="result", **result)
        await self.next_command()  # stop
        await asyncio.sleep(0.05)
        self.say(kind="stopped", drained=_drain(self.sock))

    def payloads(self, command: dict[str, Any]) -> tuple[int, bytes]:
        size = max(HEAD.size, int(command["size"]))
        return int(command["messages"]), bytes(size - HEAD.size)

    async def raw_send(self, command: dict[str, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol, sock=self.sock.dup())
        messages, padding = self.payloads(command)
        self.say(kind="ready")
        await self.next_command()  # go
        phase = int(command["phase"])
        for k in range(messages):
            transport.sendto(HEAD.pack(time.monotonic_ns(), k, phase) + padding, self.peer)
            if k % 64 == 63:
                await asyncio.sleep(0)
        transport.close()
        return {"sent": messages}

    async def raw_receive(self, command: dict[str, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        proto = _Raw(int(command["phase"]))
        transport, _ = await loop.create_datagram_endpoint(lambda: proto, sock=self.sock.dup())
        self.say(kind="ready")
        await self.next_command()  # the sender is done
        seen = -1
        while seen != len(proto.latencies):  # until 200 ms pass without a datagram
            seen = len(proto.latencies)
            await asyncio.sleep(0.2)
        transport.close()
        return {"delivered": len(proto.latencies), "first_sent_ns": proto.first, "last_ns": proto.last,
                "latencies_ns": _sample(proto.latencies)}

    def endpoint(self, command: dict[str, Any]) -> Endpoint:
        me = 0 if self.role == "sender" else 1
        loss = float(command.get("loss", 0))
        sock: Any = LossySocket(self.sock, loss, int(command["seed"]) + me) if loss else self.sock
        directory = {1 - me: self.peer, me: self.sock.getsockname()}
        return Endpoint("unicast3", me=me, directory=directory, config=loopback_config("unicast3"), sock=sock)

    async def engine_send(self, command: dict[str, Any]) -> dict[str, Any]:
        messages, padding = self.payloads(command)
        phase = int(command["phase"])
        async with self.endpoint(command) as endpoint:
            self.say(kind="ready")
            await self.next_command()  # go
            for k in range(messages):
                await endpoint.send(PEER, HEAD.pack(time.monotonic_ns(), k, phase) + padding)
            self.say(kind="sent")
            await self.next_command()  # the receiver has everything: stop sending resends
            return {"sent": messages, "datagrams_out": endpoint.stats.datagrams_out,
                    "retransmitted": endpoint.stats.data_out - messages}

    async def engine_receive(self, command: dict[str, Any]) -> dict[str, Any]:
        messages, _ = self.payloads(command)
        phase, wrong = int(command["phase"]), 0
        latencies: list[int] = []
        first = last = 0
        async with self.endpoint(command) as endpoint:
            self.say(kind="ready")
            while len(latencies) < messages:
                for _src, payload in [await endpoint.receive(), *endpoint.receive_nowait()]:
                    now = time.monotonic_ns()
                    sent, number, got_phase = HEAD.unpack_from(payload)
                    wrong += number != len(latencies) or got_phase != phase
                    latencies.append(now - sent)
                    first = first or sent
                    last = now
            return {"delivered": len(latencies), "out_of_order": wrong, "first_sent_ns": first, "last_ns": last,
                    "latencies_ns": _sample(latencies), "datagrams_in": endpoint.stats.datagrams_in}


def _sample(latencies: list[int]) -> list[int]:
    """The latencies' percentiles 0..100 (101 values): what the bench needs of them."""
    if not latencies:
        return []
    ordered = sorted(latencies)
    return [ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1) / 100))] for p in range(101)]


async def main(role: str, fd: int, peer: tuple[str, int]) -> None:
    side = Side(role, socket.socket(fileno=fd), peer)
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    side.commands = reader
    while True:
        try:
            command = await side.next_command()
        except EOFError:
            return
        await side.phase(command)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), (sys.argv[3], int(sys.argv[4]))))
