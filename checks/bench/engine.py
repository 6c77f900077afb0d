"""``seqcheck bench --engine``: messages per second between two in-process UNICAST3 engines.

A sends to B in bursts; every datagram goes through the codec (``encode`` inside the engine,
``received`` decodes) and a seeded lossy link; time advances one ``xmit_interval`` per burst, so
ACKs, XMIT_REQs and highest-sent resends run as in production. A run ends when B has delivered
every message, in order (checked). The baseline, run in the same process, is the codec alone:
encoding and decoding the same number of DATA datagrams.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from impl.unicast3 import Config, Unicast3Engine, payload_number, spec_payload
from impl.unicast3.codec import DataMsg, decode, encode

BURST = 200


def engine_run(messages: int, loss: float, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    config = Config()
    a = Unicast3Engine[str](config, members=["A", "B"], now=0)
    b = Unicast3Engine[str](config, members=["A", "B"], now=0)
    now, sent, delivered, datagrams = 0, 0, 0, 0
    started = time.perf_counter()
    while delivered < messages:
        for _ in range(min(BURST, messages - sent)):
            sent += 1
            a.send("B", spec_payload(sent), now=now)
        for _ in range(2):  # a round trip per burst
            for _dst, data in a.datagrams_to_send():
                datagrams += 1
                if rng.random() >= loss:
                    b.received("A", data, now=now)
            for _src, payload in b.deliveries():
                delivered += 1
                if payload_number(payload) != delivered:
                    raise AssertionError(f"out of order: got {payload_number(payload)}, expected {delivered}")
            for _dst, data in b.datagrams_to_send():
                datagrams += 1
                if rng.random() >= loss:
                    a.received("B", data, now=now)
            now += config.xmit_interval
            a.handle_timer(now=now)
            b.handle_timer(now=now)
    seconds = time.perf_counter() - started
    return {"messages": messages, "seconds": seconds, "messages_per_s": messages / seconds,
            "datagrams": datagrams}


def codec_run(messages: int) -> float:
    started = time.perf_counter()
    for seqno in range(1, messages + 1):
        decode(encode(DataMsg(seqno, 0, seqno == 1, spec_payload(seqno))))
    return messages / (time.perf_counter() - started)


def run_engine_bench(messages: int = 100_000, repeat: int = 3, seed: int = 1) -> dict[str, Any]:
    lossless = [engine_run(messages, 0.0, seed + i) for i in range(repeat)]
    lossy = [engine_run(messages, 0.05, seed + i) for i in range(repeat)]
    codec = [codec_run(messages) for _ in range(repeat)]
    no_loss = statistics.median(r["messages_per_s"] for r in lossless)
    with_loss = statistics.median(r["messages_per_s"] for r in lossy)
    codec_rate = statistics.median(codec)
    return {"bench": "engine", "messages": messages, "repeat": repeat, "seed": seed,
            "messages_per_s": round(no_loss), "messages_per_s_5pct_loss": round(with_loss),
            "baseline_codec_roundtrips_per_s": round(codec_rate),
            "ratio_vs_codec": round(no_loss / codec_rate, 3),
            "ratio_5pct_loss_vs_no_loss": round(with_loss / no_loss, 3)}
