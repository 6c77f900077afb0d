"""``seqcheck bench --engine``, NAKACK2 part: messages per second delivered at every member of a
3-member group of in-process NAKACK2 engines, through the codec, with and without loss.

A multicasts in bursts; every datagram goes through the codec (``encode`` inside the engine,
``received`` decodes) and a seeded lossy network that loses each copy to another member
independently (the loopback copy is never lost: JGroups loops it back in process). Time advances
one ``xmit_interval`` per burst, so XMIT_REQs, re-multicasts, HIGHEST_SEQNOs and STABLE's rounds
(every ``stable_interval``, purging A's window) run as in production. A run ends when B and C (and
A, through its loopback) have delivered every message, in order (checked). Figures are
messages/s delivered at every member: messages divided by the seconds until the last member had
them all, by wall clock and by CPU time (``cpu_messages_per_s``).
"""

from __future__ import annotations

import random

from checks.stopwatch import Stopwatch
from impl.common import payload_number, spec_payload
from impl.nakack2 import Config, Nakack2Engine

BURST = 200
MEMBERS = ("A", "B", "C")


def nakack2_run(messages: int, loss: float, seed: int) -> dict[str, float]:
    """One run: A multicasts ``messages`` to A, B, C; each copy to B or C lost with ``loss``."""
    rng = random.Random(seed)
    config = Config()
    engines = {name: Nakack2Engine[str](config, me=name, members=MEMBERS, now=0) for name in MEMBERS}
    sender = engines["A"]
    delivered = dict.fromkeys(MEMBERS, 0)
    now, sent, datagrams, rounds = 0, 0, 0, 0
    watch = Stopwatch()
    while min(delivered.values()) < messages:
        rounds += 1
        if rounds > 100 * (messages // BURST + 10):
            raise AssertionError(f"no progress: delivered {delivered} of {messages} after {rounds} rounds")
        for _ in range(min(BURST, messages - sent)):
            sent += 1
            sender.multicast(spec_payload(sent), now=now)
        for _ in range(3):  # a request and its answer, and the loopback of the answer
            for src, engine in engines.items():
                for dst, data in engine.datagrams_to_send():
                    datagrams += 1
                    if dst == src or rng.random() >= loss:
                        engines[dst].received(src, data, now=now)
            for name, engine in engines.items():
                for _src, payload in engine.deliveries():
                    delivered[name] += 1
                    if payload_number(payload) != delivered[name]:
                        raise AssertionError(f"{name}: got {payload_number(payload)}, expected {delivered[name]}")
        now += config.xmit_interval
        for engine in engines.values():
            engine.handle_timer(now=now)
    return {"messages": messages, **watch.figures(messages, "messages"), "datagrams": datagrams,
            "purged": sender.stats.stable_purged}
