"""``seqcheck bench --net``: the network runtime against raw asyncio UDP, over loopback.

Two processes (``checks/bench/net_role.py``), a sender and a receiver, each on one UDP socket that
this process binds and hands over, run phases in turn on the same two sockets: raw asyncio UDP
(``DatagramProtocol``, no reliability: what the kernel drops is not counted), then UNICAST3
endpoints (``impl.runtime``, ``loopback_config``) without loss, then with 5% of the datagrams each
side sends dropped (seeded). ``--repeat`` runs the three phases that many times, interleaved, and
reports medians. Per phase: messages/s (delivered, from the first send to the last delivery),
delivery latency p50 and p99 (send call to delivery, one host clock), and the CPU seconds of
each side beside the wall seconds. ``engine_vs_raw`` is the engine's rate without loss over the
raw rate; the issue's bar is 0.5.
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import time
from typing import Any

from checks.demo.children import Child

PAYLOAD = 64
PHASES = (("raw", 0.0), ("engine", 0.0), ("engine", 0.05))


class _Side:
    def __init__(self, child: Child) -> None:
        self.child = child

    async def tell(self, **command: Any) -> None:
        self.child.tell(command)

    async def expect(self, kind: str) -> dict[str, Any]:
        while True:
            found = await asyncio.wait_for(self.child.read(), 600)  # only stops a hung bench
            if found is None:
                raise RuntimeError(f"bench --net: a side exited before saying {kind}")
            if found.get("kind") == kind:
                return found


async def _spawn(role: str, sock: socket.socket, peer: tuple[str, int]) -> _Side:
    args = [role, str(sock.fileno()), peer[0], str(peer[1])]
    return _Side(await Child.start("checks.bench.net_role", args, [sock.fileno()]))


async def _phase(sender: _Side, receiver: _Side, mode: str, loss: float, messages: int,
                 phase: int) -> dict[str, Any]:
    command = {"mode": mode, "loss": loss, "messages": messages, "size": PAYLOAD, "phase": phase, "seed": phase}
    await receiver.tell(**command)
    await sender.tell(**command)
    await receiver.expect("ready")
    await sender.expect("ready")
    started = time.monotonic()
    await sender.tell(go=True)
    if mode == "raw":
        sent = await sender.expect("result")
        await receiver.tell(end=True)
        got = await receiver.expect("result")
    else:
        got = await receiver.expect("result")
        await sender.tell(finish=True)
        sent = await sender.expect("result")
    wall = time.monotonic() - started
    for side in (sender, receiver):
        await side.tell(stop=True)
        await side.expect("stopped")
    seconds = max((got["last_ns"] - got["first_sent_ns"]) / 1e9, 1e-9) if got["delivered"] else float("inf")
    latencies = got["latencies_ns"]
    return {"delivered": got["delivered"], "messages_per_s": got["delivered"] / seconds,
            "p50_ms": latencies[50] / 1e6 if latencies else None,
            "p99_ms": latencies[99] / 1e6 if latencies else None,
            "seconds": seconds, "wall_seconds": wall,
            "per_receiver_cpu_second": got["delivered"] / max(got["cpu_seconds"], 1e-9),
            "cpu_seconds_sender": sent["cpu_seconds"],
            "cpu_seconds_receiver": got["cpu_seconds"], "out_of_order": got.get("out_of_order", 0),
            "retransmitted": sent.get("retransmitted", 0)}


async def _bench(messages: int, repeat: int) -> dict[str, Any]:
    sockets = []
    for _ in range(2):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
            sock.setsockopt(socket.SOL_SOCKET, option, 4 << 20)
        sockets.append(sock)
    addresses = [s.getsockname() for s in sockets]
    sender = await _spawn("sender", sockets[0], addresses[1])
    receiver = await _spawn("receiver", sockets[1], addresses[0])
    for sock in sockets:
        sock.close()
    runs: dict[str, list[dict[str, Any]]] = {"raw": [], "engine": [], "engine_loss_5": []}
    try:
        for round_ in range(repeat):
            for index, (mode, loss) in enumerate(PHASES):
                name = "raw" if mode == "raw" else ("engine" if not loss else "engine_loss_5")
                phase = round_ * len(PHASES) + index + 1
                runs[name].append(await _phase(sender, receiver, mode, loss, messages, phase))
    finally:
        for side in (sender, receiver):
            await side.child.finish(30.0)
    return {name: _median(found) for name, found in runs.items()}


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = round(statistics.median(values), 3) if values else None
    if len(runs) > 1:
        out["messages_per_s_runs"] = [round(r["messages_per_s"]) for r in runs]
    return out


def run_net_bench(messages: int, repeat: int = 1) -> dict[str, Any]:
    """The bench (module docstring) as one JSON-able object."""
    result = asyncio.run(_bench(messages, repeat))
    raw, engine = result["raw"], result["engine"]
    per_cpu = engine["per_receiver_cpu_second"] / raw["per_receiver_cpu_second"]
    return {"bench": "net", "protocol": "unicast3", "messages": messages, "payload_bytes": PAYLOAD, "repeat": repeat,
            **result, "engine_vs_raw": round(engine["messages_per_s"] / raw["messages_per_s"], 3),
            "engine_vs_raw_per_cpu_second": round(per_cpu, 3),
            "raw_delivered_share": round(raw["delivered"] / messages, 3),
            "load": [round(x, 2) for x in os.getloadavg()]}
