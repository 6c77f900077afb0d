"""Byte-bounded receive windows, both engines (issue 18, item 3): a sender that holds back one seqno
can make a receiver store everything after it; ``max_window_bytes`` (per window) and
``max_receive_bytes`` (all windows) bound what is held undelivered, in bytes, dropping (and
counting) what would pass them. Dropped DATA is like a loss: once the gap is filled, the sender's
retransmissions deliver everything, in order, once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from impl import unicast2 as u2
from impl import unicast3 as u3
from impl.common import HELD_OVERHEAD
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec

PAYLOAD = 1_024
PER_MESSAGE = PAYLOAD + HELD_OVERHEAD
LIMIT = 64 * 1_024

Engine = Callable[[Any, list[str]], Any]
PROTOCOLS: dict[str, tuple[Any, Any, Any]] = {
    "unicast3": (u3.Config, u3.Unicast3Engine, u3_codec),
    "unicast2": (u2.Config, u2.Unicast2Engine, u2_codec),
}


def data(codec: Any, seqno: int, payload_byte: int) -> bytes:
    return bytes(codec.encode(codec.DataMsg(seqno, 0, seqno == 1, bytes([payload_byte % 256]) * PAYLOAD)))


def held(engine: Any) -> int:
    """Bytes the engine's windows hold undelivered, as the limits count them (from the snapshot)."""
    return sum(len(view.buffered) for _, view in engine.snapshot(now=0).recv) * PER_MESSAGE


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_held_back_seqno_cannot_make_a_window_store_more_than_its_bytes(protocol: str) -> None:
    config, engine_class, codec = PROTOCOLS[protocol]
    b = engine_class(config(max_window_bytes=LIMIT), members=["A", "B"], now=0)
    b.received("A", data(codec, 1, 1), now=0)
    for seqno in range(3, 301):  # 2 is held back
        b.received("A", data(codec, seqno, seqno), now=0)
    assert 0 < held(b) <= LIMIT
    assert b.stats.held_bytes_full == 298 - LIMIT // PER_MESSAGE
    b.received("A", data(codec, 2, 2), now=0)  # the gap is filled ...
    for seqno in range(3, 301):  # ... and the sender's retransmissions come again
        b.received("A", data(codec, seqno, seqno), now=0)
    delivered = [payload for _, payload in b.deliveries()]
    assert delivered == [bytes([s % 256]) * PAYLOAD for s in range(1, 301)]  # all, in order, once
    assert held(b) == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_all_windows_together_hold_at_most_max_receive_bytes(protocol: str) -> None:
    config, engine_class, codec = PROTOCOLS[protocol]
    senders = [f"S{i}" for i in range(10)]
    b = engine_class(config(max_receive_bytes=LIMIT), members=["B", *senders], now=0)
    for sender in senders:
        b.received(sender, data(codec, 1, 1), now=0)
        for seqno in range(3, 21):
            b.received(sender, data(codec, seqno, seqno), now=0)
    assert held(b) <= LIMIT and b.stats.held_bytes_full == 10 * 18 - LIMIT // PER_MESSAGE
    last = senders[-1]  # everything it sent was dropped: the others had filled the budget
    full = held(b)
    b.remove_receive_connection(senders[0])  # a removed window gives back what it held ...
    assert held(b) == full - 18 * PER_MESSAGE
    before = b.stats.held_bytes_full
    b.received(last, data(codec, 19, 19), now=0)  # ... so another window may hold it
    assert b.stats.held_bytes_full == before and held(b) == full - 17 * PER_MESSAGE


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("field", ["max_window_bytes", "max_receive_bytes"])
def test_byte_limits_are_validated(protocol: str, field: str) -> None:
    config = PROTOCOLS[protocol][0]
    with pytest.raises(ValueError, match=rf"^Config\.{field}: expected >= 1"):
        config(**{field: 0})
