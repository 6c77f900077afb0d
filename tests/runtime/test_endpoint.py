"""The endpoint's API and its own limits (``impl/runtime/endpoint.py``): ``async with``, ``await
send`` and ``multicast`` with back-pressure (UNICAST3's send window, NAKACK4's blocked sender),
``async for``, a slow application pausing the socket without losing anything, unknown sources,
closing, and the one-line errors of misuse. Counts decide; no test reads the clock."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from runtime_helpers import run

from impl.runtime import Endpoint, EndpointClosed, EndpointLimits, SendFailed, loopback_config
from impl.runtime.group import LocalGroup, loopback_socket


def test_async_with_send_and_async_for() -> None:
    async def go() -> list[tuple[int, bytes]]:
        async with LocalGroup("unicast3", 2, link=False) as group:
            a, b = group.endpoints
            for k in range(5):
                assert await a.send(1, f"hello {k}".encode()) == k + 1  # the seqno
            got = []
            async for src, payload in b:
                got.append((src, payload))
                if len(got) == 5:
                    break
            return got

    assert run(go()) == [(0, f"hello {k}".encode()) for k in range(5)]


def test_a_full_send_window_makes_send_wait_until_acks_come() -> None:
    async def go() -> tuple[int, int]:
        config = loopback_config("unicast3", max_send_window=8)
        async with LocalGroup("unicast3", 2, config=config, link=False) as group:
            a, b = group.endpoints
            sends = asyncio.gather(*(a.send(1, bytes([k])) for k in range(40)))
            got = [await b.receive() for _ in range(40)]
            await sends
            assert [p for _, p in got] == [bytes([k]) for k in range(40)]
            return a.stats.backpressure_waits, a.stats.sent

    waits, sent = run(go())
    assert sent == 40 and waits > 0


def test_nakack4_blocked_sender_awaits_in_multicast() -> None:
    async def go() -> tuple[int, int]:
        config = loopback_config("nakack4", capacity=8)
        async with LocalGroup("nakack4", 3, config=config, link=False) as group:
            a = group.endpoints[0]
            seqnos = [await a.multicast(bytes([k])) for k in range(50)]
            assert seqnos == list(range(1, 51))
            for endpoint in group.endpoints:
                got = [await endpoint.receive() for _ in range(50)]
                assert got == [(0, bytes([k])) for k in range(50)]
            return a.engine.stats.sends_blocked, a.engine.stats.sends_resumed

    blocked, resumed = run(go())
    assert blocked > 0 and resumed > 0


def test_a_slow_application_pauses_reading_and_loses_nothing() -> None:
    async def go() -> tuple[int, list[bytes]]:
        limits = EndpointLimits(max_pending_deliveries=16)
        async with LocalGroup("unicast3", 2, link=False, limits=limits) as group:
            a, b = group.endpoints
            sending = asyncio.gather(*(a.send(1, k.to_bytes(2, "big")) for k in range(400)))
            while b.stats.reads_paused == 0:  # the application has not read anything yet
                await asyncio.sleep(0.001)
            got = [(await b.receive())[1] for _ in range(400)]
            await sending
            return b.stats.reads_paused, got

    paused, got = run(go())
    assert paused > 0 and got == [k.to_bytes(2, "big") for k in range(400)]


def test_unknown_sources_never_reach_the_engine() -> None:
    async def go() -> tuple[int, int]:
        async with LocalGroup("unicast3", 2, link=False) as group:
            a, b = group.endpoints
            stranger = loopback_socket()
            for k in range(100):
                stranger.sendto(b"\x55\x00" + bytes(k % 30), b.address)
            await a.send(1, b"after")
            assert await b.receive() == (0, b"after")
            stranger.close()
            return b.stats.unknown_source, b.engine.stats.datagrams_received

    unknown, received = run(go())
    assert unknown == 100 and received == 1


def test_misuse_is_one_line_errors() -> None:
    async def go() -> None:
        async with LocalGroup("nakack4", 2, link=False) as group:
            with pytest.raises(SendFailed, match="multicast protocol: use multicast"):
                await group.endpoints[0].send(1, b"x")
        async with LocalGroup("unicast3", 2, link=False) as group:
            with pytest.raises(SendFailed, match="unicast protocol: use send"):
                await group.endpoints[0].multicast(b"x")
            with pytest.raises(ValueError, match="dst: expected another member"):
                await group.endpoints[0].send(7, b"x")

    run(go())
    with pytest.raises(ValueError, match="protocol: expected one of"):
        run(_open("unicast9"))
    with pytest.raises(ValueError, match=r"directory\[1\]: expected \(host, port\)"):
        Endpoint("unicast3", me=0, directory={0: ("127.0.0.1", 1), 1: ("127.0.0.1", "x")})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"config: expected an impl\.unicast3\.Config"):
        run(_open("unicast3", config=loopback_config("nakack4")))


async def _open(protocol: str, **kwargs: object) -> None:
    sock = loopback_socket()
    try:
        async with Endpoint(protocol, me=0, directory={0: sock.getsockname()}, sock=sock, **kwargs):  # type: ignore[arg-type]
            pass
    finally:
        sock.close()


def test_closing_wakes_every_waiter() -> None:
    async def go() -> None:
        config = loopback_config("unicast3", max_send_window=1)
        async with LocalGroup("unicast3", 2, link=False, config=config) as group:
            a, b = group.endpoints
            b.close()
            receiving = asyncio.ensure_future(b.receive())
            await a.send(1, b"1")  # the window is full now, and b will never ack
            sending = asyncio.ensure_future(a.send(1, b"2"))
            await asyncio.sleep(0)
            a.close()
            with pytest.raises(EndpointClosed):
                await sending
            with pytest.raises(EndpointClosed):
                await receiving
            assert [x async for x in b] == []

    run(go())


def test_the_log_names_every_step(tmp_path: Path) -> None:
    async def go() -> None:
        async with LocalGroup("unicast3", 2, link=False, log_dir=tmp_path) as group:
            a, b = group.endpoints
            await a.send(1, b"hi")
            assert await b.receive() == (0, b"hi")
            b.install_view([0, 1])

    run(go())
    lines = [json.loads(x) for x in (tmp_path / "member-1.jsonl").read_text().splitlines()]
    header, steps, end = lines[0], lines[1:-1], lines[-1]
    assert header["format"] == "seqcheck-netlog/1" and header["me"] == 1 and header["config"]["xmit_interval"] == 50
    assert [s["n"] for s in steps] == list(range(1, len(steps) + 1))
    arrival = next(s for s in steps if s["ev"] == "in")
    assert arrival["from"] == 0 and arrival["up"] == [[0, b"hi".hex()]] and "DataMsg" in arrival["msg"]
    assert steps[-1]["ev"] == "view" and end["ev"] == "end" and end["stats"]["delivered"] == 1


def test_socket_errors_drop_like_a_loss() -> None:
    """A datagram the socket refuses (here: to port 0, EINVAL) is counted and dropped, as a loss."""
    async def go() -> int:
        sock = loopback_socket()
        directory = {0: sock.getsockname(), 1: ("127.0.0.1", 0)}
        async with Endpoint("unicast3", me=0, directory=directory, sock=sock) as a:
            await a.send(1, b"x")
            errors = a.stats.send_errors
        sock.close()
        return errors

    assert run(go()) == 1
