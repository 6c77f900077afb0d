"""``seqcheck bench --engine``, NAKACK4 part (multicast with blocking senders): messages per second
delivered at every member of a 3-member group of in-process NAKACK4 engines, through the codec,
with and without loss, and how the figure changes with the window's capacity.

As the NAKACK2 part (``checks/bench/multicast.py``): A multicasts in bursts of ``BURST``; every
datagram goes through the codec and a seeded lossy network that loses each copy to another member
independently (the loopback copy is never lost); time advances one ``xmit_interval`` per burst, so
pending ACKs, XMIT_REQs, re-multicasts and HIGHEST_SEQNOs run as in production. The difference is
flow control: A's window holds ``capacity`` unacknowledged messages, a send beyond it is held
(``SendStatus.BLOCKED``) and passed down by the engine when B's and C's ACKs purge the window. A
run ends when every member has delivered every message, in order (checked). Figures are
messages/s delivered at every member.
"""

from __future__ import annotations

import random
from typing import Any

from checks.bench import median
from checks.stopwatch import Stopwatch
from impl.common import payload_number, spec_payload
from impl.nakack4 import Config, Nakack4Engine, SendStatus

BURST = 200
MEMBERS = ("A", "B", "C")
CAPACITIES = (64, 1024, 16384)


def nakack4_run(messages: int, loss: float, seed: int, capacity: int = 16384) -> dict[str, float]:
    """One run: A multicasts ``messages`` to A, B, C; each copy to B or C lost with ``loss``."""
    rng = random.Random(seed)
    config = Config(capacity=capacity)
    engines = {name: Nakack4Engine[str](config, me=name, members=MEMBERS, now=0) for name in MEMBERS}
    sender = engines["A"]
    delivered = dict.fromkeys(MEMBERS, 0)
    now, sent, datagrams, rounds, blocked = 0, 0, 0, 0, 0
    watch = Stopwatch()
    while min(delivered.values()) < messages:
        rounds += 1
        if rounds > 100 * (messages // BURST + 10):
            raise AssertionError(f"no progress: delivered {delivered} of {messages} after {rounds} rounds")
        # the application thread: a send that blocks stops the burst, and no send goes while one is held
        # (without it the held sends grew past max_blocked_sends at 100,000 messages: SendWindowFull)
        for _ in range(min(BURST, messages - sent) if not sender.held_sends else 0):
            sent += 1
            if sender.multicast(spec_payload(sent), now=now)[1] is SendStatus.BLOCKED:
                blocked += 1
                break
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
    figures = watch.figures(messages, "messages")
    sender.send_events()
    return {"messages": messages, **figures, "datagrams": datagrams, "purged": sender.stats.ack_purged,
            "blocked": blocked}


def nakack4_bench(messages: int, repeat: int, seed: int, n2_no_loss: float, n2_loss: float) -> dict[str, Any]:
    """NAKACK4, 3 members: medians of ``repeat`` runs with and without 5% loss at JGroups' capacity
    (16384) and their ratios to NAKACK2's figures of the same command (same seeds), then the
    lossless and lossy medians at each capacity of ``CAPACITIES`` (sends held per run, too); runs with
    and without loss interleaved, ratios of CPU rates."""
    by_capacity: dict[str, Any] = {}
    for capacity in CAPACITIES:
        runs = [(nakack4_run(messages, 0.0, seed + i, capacity), nakack4_run(messages, 0.05, seed + i, capacity))
                for i in range(repeat)]
        lossless, lossy = [r for r, _ in runs], [r for _, r in runs]
        by_capacity[str(capacity)] = {
            "messages_per_s_at_every_member": round(median(lossless, "messages_per_s")),
            "cpu_messages_per_s_at_every_member": round(median(lossless, "cpu_messages_per_s")),
            "messages_per_s_at_every_member_5pct_loss": round(median(lossy, "messages_per_s")),
            "cpu_messages_per_s_at_every_member_5pct_loss": round(median(lossy, "cpu_messages_per_s")),
            "sends_blocked": round(median(lossless, "blocked")),
            "sends_blocked_5pct_loss": round(median(lossy, "blocked"))}
    default = by_capacity[str(CAPACITIES[-1])]
    no_loss = default["cpu_messages_per_s_at_every_member"]
    with_loss = default["cpu_messages_per_s_at_every_member_5pct_loss"]
    return {"members": 3, "capacity": CAPACITIES[-1], **{key: value for key, value in default.items()
                                                         if key.startswith(("messages", "cpu_messages"))},
            "ratio_vs_nakack2": round(no_loss / n2_no_loss, 3),
            "ratio_5pct_loss_vs_nakack2_5pct_loss": round(with_loss / n2_loss, 3),
            "ratio_5pct_loss_vs_no_loss": round(with_loss / no_loss, 3), "by_capacity": by_capacity}
