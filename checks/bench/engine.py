"""``seqcheck bench --engine``: messages per second between two in-process UNICAST3 engines, the
same for a 3-member NAKACK2 group (``checks/bench/multicast.py``) against them, for a 3-member
NAKACK4 group (``checks/bench/blocking.py``) against NAKACK2 and by window capacity, and what the
worst-case datagram of each message type costs to decode.

A sends to B in bursts; every datagram goes through the codec (``encode`` inside the engine,
``received`` decodes) and a seeded lossy link; time advances one ``xmit_interval`` per burst, so
ACKs, XMIT_REQs and highest-sent resends run as in production. A run ends when B has delivered
every message, in order (checked). The baseline, run in the same process, is the codec alone:
encoding and decoding the same number of DATA datagrams.

Decode cost (``decode`` in the JSON, issue 18 item 7): for both codecs, the largest or slowest
datagram of each type (a DATA of max_payload, an XMIT_REQ of max_xmit_seqnos seqnos spread over
max_xmit_span or packed together, one rejected only by its last check, every integer at its
largest) is decoded in batches; the median time per datagram and per byte is given against a
normal datagram (a DATA of 8 payload bytes) timed the same way in the same run, by CPU time.

Rates are given by wall clock (``messages_per_s``) and by CPU time (``cpu_messages_per_s``); the
ratios are those of the CPU rates, and the runs they compare are interleaved.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import time
from typing import Any

from checks.bench import median
from checks.bench.blocking import nakack4_bench
from checks.bench.multicast import nakack2_run
from checks.stopwatch import Stopwatch
from impl.nakack2 import codec as n2_codec
from impl.nakack4 import codec as n4_codec
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import Config, Unicast3Engine, payload_number, spec_payload
from impl.unicast3 import codec as u3_codec
from impl.unicast3.codec import DataMsg, decode, encode
from impl.wire import DEFAULT_LIMITS, MAX_CONN_ID, MAX_SEQNO, MAX_TIMESTAMP, DecodeError, XmitReqMsg

BURST = 200


def engine_run(messages: int, loss: float, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    config = Config()
    a = Unicast3Engine[str](config, members=["A", "B"], now=0)
    b = Unicast3Engine[str](config, members=["A", "B"], now=0)
    now, sent, delivered, datagrams = 0, 0, 0, 0
    watch = Stopwatch()
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
    return {"messages": messages, **watch.figures(messages, "messages"), "datagrams": datagrams}


def codec_run(messages: int) -> dict[str, float]:
    watch = Stopwatch()
    for seqno in range(1, messages + 1):
        decode(encode(DataMsg(seqno, 0, seqno == 1, spec_payload(seqno))))
    return watch.figures(messages, "roundtrips")


# ---------------------------------------------------------------------------------------------
# Decode cost of the worst-case datagram of each type.
DECODES_PER_SAMPLE = 200  # at most; fewer for a dear datagram (SAMPLE_CPU)
SAMPLE_CPU = 0.05  # CPU seconds a sample aims at
SAMPLES = 7


def _xmit_reqs() -> dict[str, XmitReqMsg]:
    top = MAX_SEQNO - DEFAULT_LIMITS.max_xmit_span  # the largest seqnos: the longest integers
    step = DEFAULT_LIMITS.max_xmit_span // DEFAULT_LIMITS.max_xmit_seqnos
    return {"XMIT_REQ spread": XmitReqMsg(tuple(range(top, top + DEFAULT_LIMITS.max_xmit_span, step))),
            "XMIT_REQ dense": XmitReqMsg(tuple(range(top, top + DEFAULT_LIMITS.max_xmit_seqnos)))}


def _rejected_late(data: bytes) -> bytes:
    """``data`` (an encoded spread XMIT_REQ) with one more bit set in its last bitset byte: its
    count no longer matches, which only the last check over the whole bitset finds."""
    changed = bytearray(data)
    changed[-1] |= 2
    return bytes(changed)


def _views_and_digests(codec: Any, names: tuple[str, ...]) -> dict[str, bytes]:
    """The worst views and digests of a multicast codec, per type in ``names``: the most members
    (``max_members``, 4,096, the cheapest addresses: the most Python steps a datagram can cost),
    the most bytes (the largest addresses and seqnos, as many members as fit in 65,507 bytes), and
    a count no datagram can hold (refused by its count alone)."""
    top = MAX_SEQNO
    most = tuple(range(4_096))
    largest = tuple(range(top - 1_760, top))  # 10-byte addresses, 28-byte digest entries: 65,390 bytes

    def cases(cls: Any) -> dict[str, bytes]:
        many = codec.encode(cls(most, tuple((m, m, m + 1) for m in most)))
        big = codec.encode(cls(largest, tuple((m, 2**62, top) for m in largest)))
        refused = bytearray(codec.encode(cls((), ())))
        refused[2:3] = bytes((2,)) + (4_096).to_bytes(2, "little")  # 4,096 members in no bytes
        return {"4,096 members": many, "65 kB": big, "count beyond its bytes": bytes(refused)}

    return {f"{name} {case}": data for name in names
            for case, data in cases(getattr(codec, {"STABLE": "StableMsg", "STABILITY": "StabilityMsg",
                                                     "JOIN_RSP": "JoinRspMsg"}[name])).items()}


def worst_datagrams() -> dict[str, dict[str, bytes]]:
    """Per codec, the worst-case datagram of each message type."""
    payload = bytes(DEFAULT_LIMITS.max_payload)
    xmit = _xmit_reqs()
    u3 = {"DATA": u3_codec.encode(u3_codec.DataMsg(MAX_SEQNO, MAX_CONN_ID, True, payload)),
          "ACK": u3_codec.encode(u3_codec.AckMsg(MAX_SEQNO, MAX_CONN_ID, MAX_TIMESTAMP)),
          "SEND_FIRST_SEQNO": u3_codec.encode(u3_codec.SendFirstSeqnoMsg(MAX_TIMESTAMP)),
          "CLOSE": u3_codec.encode(u3_codec.CloseMsg(MAX_CONN_ID)),
          **{name: u3_codec.encode(msg) for name, msg in xmit.items()}}
    u3["XMIT_REQ rejected last"] = _rejected_late(u3["XMIT_REQ spread"])
    u2 = {"DATA": u2_codec.encode(u2_codec.DataMsg(MAX_SEQNO, MAX_CONN_ID, True, payload)),
          "ACK": u2_codec.encode(u2_codec.AckMsg(MAX_SEQNO, MAX_CONN_ID)),
          "SEND_FIRST_SEQNO": u2_codec.encode(u2_codec.SendFirstSeqnoMsg(MAX_SEQNO, MAX_TIMESTAMP)),
          "STABLE": u2_codec.encode(u2_codec.StableMsg(MAX_SEQNO - 1, MAX_SEQNO, MAX_CONN_ID, MAX_TIMESTAMP)),
          **{name: u2_codec.encode(msg) for name, msg in xmit.items()}}
    u2["XMIT_REQ rejected last"] = _rejected_late(u2["XMIT_REQ spread"])
    n2 = _views_and_digests(n2_codec, ("STABLE", "STABILITY", "JOIN_RSP"))
    n4 = _views_and_digests(n4_codec, ("JOIN_RSP",))
    return {"unicast3": u3, "unicast2": u2, "nakack2": n2, "nakack4": n4}


def _decode_seconds(decoder: Any, data: bytes) -> float:
    """Median CPU seconds for one decode of ``data`` (a DecodeError counts as a decode): ``SAMPLES``
    samples of up to ``DECODES_PER_SAMPLE`` decodes each, fewer for a datagram whose first decodes
    cost more than ``SAMPLE_CPU`` (a 4,096-member view takes milliseconds: 200 of them a sample made
    the bench two minutes long)."""
    started = time.process_time()
    for _ in range(3):
        with contextlib.suppress(DecodeError):
            decoder(data)
    each = max((time.process_time() - started) / 3, 1e-9)
    count = max(3, min(DECODES_PER_SAMPLE, int(SAMPLE_CPU / each)))
    samples = []
    for _ in range(SAMPLES):
        started = time.process_time()
        for _ in range(count):
            with contextlib.suppress(DecodeError):
                decoder(data)
        samples.append((time.process_time() - started) / count)
    return statistics.median(samples)


def _figure(value: float) -> float:
    """``value`` to 4 significant digits (a ratio of 0.0004 stays non-zero)."""
    return float(f"{value:.4g}")


def decode_bench() -> dict[str, Any]:
    """Decode time per datagram (us) and per byte (ns) of each worst case, medians, and their
    ratios to a normal datagram's timed alongside."""
    normal = encode(DataMsg(1_000, 1, False, spec_payload(1_000)))
    base = _decode_seconds(decode, normal)
    out: dict[str, Any] = {"baseline": {"datagram": "unicast3 DATA, 8 payload bytes", "bytes": len(normal),
                                        "us_per_datagram": round(base * 1e6, 3),
                                        "ns_per_byte": round(base * 1e9 / len(normal), 2)},
                           "decodes_per_sample": DECODES_PER_SAMPLE, "sample_cpu_seconds": SAMPLE_CPU,
                           "samples": SAMPLES}
    decoders = {"unicast3": u3_codec.decode, "unicast2": u2_codec.decode, "nakack2": n2_codec.decode,
                "nakack4": n4_codec.decode}
    for protocol, cases in worst_datagrams().items():
        rows = out[protocol] = {}
        for name, data in cases.items():
            seconds = _decode_seconds(decoders[protocol], data)
            rows[name] = {"bytes": len(data), "us_per_datagram": round(seconds * 1e6, 3),
                          "ns_per_byte": _figure(seconds * 1e9 / len(data)),
                          "ratio_per_datagram": _figure(seconds / base),
                          "ratio_per_byte": _figure(seconds / len(data) / (base / len(normal)))}
    return out


def run_engine_bench(messages: int = 100_000, repeat: int = 3, seed: int = 1) -> dict[str, Any]:
    """UNICAST3 with and without 5% loss and the codec alone, interleaved run by run; medians of
    wall and CPU rates; ratios of CPU rates (``checks/bench/__init__.py``)."""
    lossless, lossy, codec = [], [], []
    for i in range(repeat):
        lossless.append(engine_run(messages, 0.0, seed + i))
        lossy.append(engine_run(messages, 0.05, seed + i))
        codec.append(codec_run(messages))
    no_loss, with_loss = median(lossless, "cpu_messages_per_s"), median(lossy, "cpu_messages_per_s")
    codec_rate = median(codec, "cpu_roundtrips_per_s")
    return {"bench": "engine", "messages": messages, "repeat": repeat, "seed": seed,
            "messages_per_s": round(median(lossless, "messages_per_s")), "cpu_messages_per_s": round(no_loss),
            "messages_per_s_5pct_loss": round(median(lossy, "messages_per_s")),
            "cpu_messages_per_s_5pct_loss": round(with_loss),
            "baseline_codec_roundtrips_per_s": round(median(codec, "roundtrips_per_s")),
            "cpu_baseline_codec_roundtrips_per_s": round(codec_rate),
            "ratio_vs_codec": round(no_loss / codec_rate, 3),
            "ratio_5pct_loss_vs_no_loss": round(with_loss / no_loss, 3),
            "nakack2": (n2 := nakack2_bench(messages, repeat, seed, no_loss, with_loss)),
            "nakack4": nakack4_bench(messages, repeat, seed, n2["cpu_messages_per_s_at_every_member"],
                                     n2["cpu_messages_per_s_at_every_member_5pct_loss"]),
            "decode": decode_bench()}


def nakack2_bench(messages: int, repeat: int, seed: int, u3_no_loss: float, u3_loss: float) -> dict[str, Any]:
    """NAKACK2, 3 members (``checks/bench/multicast.py``): medians of ``repeat`` runs with and
    without 5% loss (interleaved), and the ratios of their CPU rates to UNICAST3's CPU rates of the
    same command (same seeds)."""
    runs = [(nakack2_run(messages, 0.0, seed + i), nakack2_run(messages, 0.05, seed + i)) for i in range(repeat)]
    lossless, lossy = [r for r, _ in runs], [r for _, r in runs]
    cpu_lossless, cpu_lossy = median(lossless, "cpu_messages_per_s"), median(lossy, "cpu_messages_per_s")
    return {"members": 3, "messages_per_s_at_every_member": round(median(lossless, "messages_per_s")),
            "cpu_messages_per_s_at_every_member": round(cpu_lossless),
            "messages_per_s_at_every_member_5pct_loss": round(median(lossy, "messages_per_s")),
            "cpu_messages_per_s_at_every_member_5pct_loss": round(cpu_lossy),
            "ratio_vs_unicast3": round(cpu_lossless / u3_no_loss, 3),
            "ratio_5pct_loss_vs_unicast3_5pct_loss": round(cpu_lossy / u3_loss, 3),
            "ratio_5pct_loss_vs_no_loss": round(cpu_lossy / cpu_lossless, 3)}
