"""Test helper: UNICAST4 engines joined by a network the test controls, on a virtual clock.

``Link.run`` moves every datagram in flight (FIFO per run), optionally losing the ``lose``-th
datagram ever sent, then advances the clock one ``xmit_interval`` and fires every engine's timer,
until nothing is in flight and nothing is left to send, or ``rounds`` run out. Everything is
deterministic: no randomness, no wall clock.
"""

from __future__ import annotations

from collections.abc import Callable

from impl.common import spec_payload
from impl.unicast4 import Config, Unicast4Engine


class Link:
    def __init__(self, config: Config | None = None, members: tuple[str, ...] = ("A", "B"),
                 configs: dict[str, Config] | None = None) -> None:
        self.now = 0
        self.engines = {m: Unicast4Engine((configs or {}).get(m, config), members=members, now=0) for m in members}
        self.flight: list[tuple[str, str, bytes]] = []
        self.sent = 0
        self.delivered: dict[tuple[str, str], list[bytes]] = {}
        self.failed: list[tuple[str, str, int, bytes]] = []

    def send(self, src: str, dst: str, payload: bytes) -> None:
        self.engines[src].send(dst, payload, now=self.now)
        self._collect()

    def send_numbered(self, src: str, dst: str, count: int) -> None:
        for n in range(1, count + 1):
            self.send(src, dst, spec_payload(n))

    def _collect(self) -> None:
        for name, engine in self.engines.items():
            for dst, data in engine.datagrams_to_send():
                self.flight.append((name, dst, data))
            for src, payload in engine.deliveries():
                self.delivered.setdefault((src, name), []).append(payload)
            for dst, seqno, payload in engine.failed_sends():
                self.failed.append((name, dst, seqno, payload))

    def run(self, rounds: int = 50, lose: int | None = None,
            tamper: Callable[[str, str, bytes], bytes | None] | None = None) -> None:
        for _ in range(rounds):
            while self.flight:
                src, dst, data = self.flight.pop(0)
                self.sent += 1
                if self.sent == lose:
                    continue
                if tamper is not None:
                    changed = tamper(src, dst, data)
                    if changed is None:
                        continue
                    data = changed
                self.engines[dst].received(src, data, now=self.now)
                self._collect()
            self.now += max(e.config.xmit_interval for e in self.engines.values())
            for engine in self.engines.values():
                engine.handle_timer(now=self.now)
            self._collect()
            for engine in self.engines.values():
                engine.check_invariants()

    def got(self, src: str, dst: str) -> list[bytes]:
        return self.delivered.get((src, dst), [])
