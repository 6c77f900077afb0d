"""No single datagram makes an engine send much more than its own size (issue 18, item 6), both
engines: the answer to one XMIT_REQ (and in UNICAST2 one SEND_FIRST_SEQNO or STABLE) resends at
most the larger of ``resend_factor`` times the datagram's size and one maximal datagram
(``max_datagram``, 65,507 bytes); a flood of requests at most ``max_resend_bytes`` per peer and
``xmit_interval``; honest recovery still delivers everything; and the lockstep harness's
configuration answers in full, like the spec.

The factor is measured as bytes sent / bytes received for one hostile datagram against a sender
holding 8,000 unacknowledged messages of 1,000 bytes; before the bound it was 7,814x for the
XMIT_REQ and 673,333x / 1,154,286x for UNICAST2's SEND_FIRST_SEQNO / STABLE."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.conform import unicast2 as conform_u2
from checks.conform import unicast3 as conform_u3
from impl import unicast2 as u2
from impl import unicast3 as u3
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec
from impl.wire import MAX_SEQNO

PROTOCOLS: dict[str, tuple[Any, Any, Any]] = {
    "unicast3": (u3.Config, u3.Unicast3Engine, u3_codec),
    "unicast2": (u2.Config, u2.Unicast2Engine, u2_codec),
}
STORED, PAYLOAD = 8_000, 1_000


def hostile(protocol: str, kind: str) -> bytes:
    """One well-formed datagram from "B" that asks for as much as its type can."""
    codec = PROTOCOLS[protocol][2]
    if kind == "XMIT_REQ":  # every stored seqno, 1,034 bytes
        return bytes(codec.encode(codec.XmitReqMsg(tuple(range(1, 8_193)))))
    if kind == "SEND_FIRST_SEQNO":  # UNICAST2: "resend everything up to 2**63 - 1"
        msg = codec.SendFirstSeqnoMsg(MAX_SEQNO, 0) if protocol == "unicast2" else codec.SendFirstSeqnoMsg(7)
        return bytes(codec.encode(msg))
    assert kind == "STABLE"  # "I received nothing": resend the whole window
    return bytes(u2_codec.encode(u2_codec.StableMsg(0, 0, 0, 0)))


def sender(protocol: str, config: Any) -> Any:
    """A holding ``STORED`` unacknowledged messages to B (outputs drained)."""
    engine_class = PROTOCOLS[protocol][1]
    a = engine_class(config, members=["A", "B"], now=0)
    for i in range(STORED):
        a.send("B", i.to_bytes(4, "big") * (PAYLOAD // 4), now=0)
    a.datagrams_to_send()
    return a


def answer(a: Any, data: bytes, *, now: int = 0) -> list[bytes]:
    a.received("B", data, now=now)
    return [d for _dst, d in a.datagrams_to_send()]


CASES = [("unicast3", "XMIT_REQ"), ("unicast2", "XMIT_REQ"), ("unicast2", "SEND_FIRST_SEQNO"),
         ("unicast2", "STABLE")]


FACTOR, FLOOR = 64, 65_507  # the documented defaults: resend_factor, codec_limits.max_datagram


def bound(size: int) -> int:
    """The documented most bytes resent for one datagram of ``size`` bytes (default Config)."""
    return max(FACTOR * size, FLOOR)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_documented_defaults(protocol: str) -> None:
    config = PROTOCOLS[protocol][0]()
    assert (config.resend_factor, config.codec_limits.max_datagram, config.max_resend_bytes) == (FACTOR, FLOOR, 1 << 20)


@pytest.mark.parametrize(("protocol", "kind"), CASES)
def test_one_hostile_datagram_is_answered_with_at_most_the_bound(protocol: str, kind: str) -> None:
    config = PROTOCOLS[protocol][0]()
    a = sender(protocol, config)
    data = hostile(protocol, kind)
    out = answer(a, data)
    sent = sum(map(len, out))
    assert sent <= bound(len(data)), (
        f"{kind}: {sent} bytes sent for {len(data)} received ({sent / len(data):,.0f}x; bound: the larger of"
        f" {FACTOR}x and {FLOOR} bytes)")
    assert sent > bound(len(data)) - (PAYLOAD + 20)  # as many whole messages as fit
    assert a.stats.resends_throttled == STORED - len(out)  # the rest of the answer counted, not sent


def test_the_factor_itself_bounds_a_large_request() -> None:
    """An XMIT_REQ of 1,034 bytes: 64 x 1,034 = 66,176 bytes (65 messages), the factor, not the
    floor, is what binds."""
    a = sender("unicast3", u3.Config())
    data = hostile("unicast3", "XMIT_REQ")
    out = answer(a, data)
    assert FACTOR * len(data) > FLOOR
    assert sum(map(len, out)) / len(data) <= FACTOR and len(out) == 65


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_request_of_a_few_bytes_gets_one_maximal_datagram_worth(protocol: str) -> None:
    """The floor: a SEND_FIRST_SEQNO of a few bytes is answered with the lowest unacknowledged
    message marked first (UNICAST3: only that; UNICAST2: the messages after it as far as 65,507
    bytes go)."""
    config, _engine, codec = PROTOCOLS[protocol]
    a = sender(protocol, config())
    out = [codec.decode(d) for d in answer(a, hostile(protocol, "SEND_FIRST_SEQNO"))]
    assert (out[0].seqno, out[0].first) == (1, True)
    assert [m.seqno for m in out] == list(range(1, 2 if protocol == "unicast3" else 65))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_flood_of_requests_gets_at_most_max_resend_bytes_per_interval(protocol: str) -> None:
    config_class, _engine, codec = PROTOCOLS[protocol]
    config = config_class(max_resend_bytes=100_000)
    a = sender(protocol, config)
    xmit = config.xmit_interval

    def flood(now: int) -> int:
        """1,000 XMIT_REQs of one seqno each (each alone would be answered)."""
        return sum(len(d) for i in range(1, 1_001)
                   for d in answer(a, bytes(codec.encode(codec.XmitReqMsg((i,)))), now=now))

    first = flood(0)
    assert 100_000 - (PAYLOAD + 20) < first <= 100_000  # as many whole messages as fit
    assert flood(xmit - 1) == 0  # the same interval: nothing more
    assert 0 < flood(xmit) <= 100_000  # the next interval: a fresh budget


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_lockstep_harness_answers_in_full_like_the_spec(protocol: str) -> None:
    """The harness (checks/conform) turns the bound off, as the spec has none: an XMIT_REQ for
    every stored seqno is answered with all of them."""
    config: Any = (conform_u3.harness_config(u3.Variant()) if protocol == "unicast3"
                   else conform_u2.harness_config(u2.Variant(), 5))
    a = sender(protocol, config)
    codec = PROTOCOLS[protocol][2]
    out = answer(a, hostile(protocol, "XMIT_REQ"))
    assert [m.seqno for m in map(codec.decode, out)] == list(range(1, STORED + 1))


def test_recovery_from_a_lost_burst_with_the_bound_on() -> None:
    """Honest traffic under the bound: B loses 2,000 messages of 1,000 bytes in a row; A's answers
    are throttled (``resends_throttled`` > 0), yet every message is delivered once and in order,
    within 40 retransmit runs (64 messages of 1,010 bytes fit 65,507: measured, 33 runs)."""
    config = u3.Config()
    a = u3.Unicast3Engine[str](config, members=["A", "B"], now=0)
    b = u3.Unicast3Engine[str](config, members=["A", "B"], now=0)
    for i in range(1, 2_002):
        a.send("B", i.to_bytes(4, "big") * 250, now=0)
    for n, (_dst, data) in enumerate(a.datagrams_to_send()):
        if n == 0 or n == 2_000:  # the first and the last get through
            b.received("A", data, now=0)
    delivered = [d for _src, d in b.deliveries()]
    now, runs = 0, 0
    while len(delivered) < 2_001 and runs < 40:
        runs += 1
        now += config.xmit_interval
        for engine in (a, b):
            engine.handle_timer(now=now)
        for _dst, data in b.datagrams_to_send():
            a.received("B", data, now=now)
        for _dst, data in a.datagrams_to_send():
            b.received("A", data, now=now)
        delivered += [d for _src, d in b.deliveries()]
    assert [int.from_bytes(d[:4], "big") for d in delivered] == list(range(1, 2_002))
    assert a.stats.resends_throttled > 0 and runs > 2  # throttled: without the bound it takes 2 runs


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_bound_is_validated(protocol: str) -> None:
    config_class = PROTOCOLS[protocol][0]
    with pytest.raises(ValueError, match=r"Config\.resend_factor: expected >= 0"):
        config_class(resend_factor=-1)
    with pytest.raises(ValueError, match=r"Config\.max_resend_bytes: expected >= codec_limits.max_datagram"):
        config_class(max_resend_bytes=65_506)


@st.composite
def hostile_datagrams(draw: st.DrawFn, protocol: str) -> bytes:
    """A well-formed request of any kind the protocol answers with resends, any content."""
    codec = PROTOCOLS[protocol][2]
    seqnos = draw(st.sets(st.integers(0, 400), max_size=300))
    kinds = ["XMIT_REQ", "SEND_FIRST_SEQNO"] + (["STABLE"] if protocol == "unicast2" else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "XMIT_REQ":
        return bytes(codec.encode(codec.XmitReqMsg.of(seqnos)))
    if kind == "SEND_FIRST_SEQNO":
        ts = draw(st.integers(0, 2**31 - 1))
        msg = codec.SendFirstSeqnoMsg(draw(st.integers(0, MAX_SEQNO)), 0) if protocol == "unicast2" \
            else codec.SendFirstSeqnoMsg(ts)
        return bytes(codec.encode(msg))
    hd = draw(st.integers(0, 400))
    return bytes(u2_codec.encode(u2_codec.StableMsg(hd, hd + draw(st.integers(0, 50)), 0, 0)))


@settings(max_examples=60, database=None, deadline=None)
@given(st.sampled_from(list(PROTOCOLS)), st.data())
def test_every_answer_to_any_request_sequence_is_within_the_bound(protocol: str, data: st.DataObject) -> None:
    """Any sequence of requests against a window of 300 messages of 0 to 2,000 bytes: each answer
    within max(64 x the request, one maximal datagram), all answers of an interval within
    max_resend_bytes (here 200,000)."""
    config_class, engine_class, _codec = PROTOCOLS[protocol]
    config = config_class(max_resend_bytes=200_000)
    a = engine_class(config, members=["A", "B"], now=0)
    sizes = data.draw(st.lists(st.integers(0, 2_000), min_size=300, max_size=300))
    for size in sizes:
        a.send("B", bytes(size), now=0)
    a.datagrams_to_send()
    now, spent = 0, 0
    for _ in range(data.draw(st.integers(1, 12))):
        later = data.draw(st.sampled_from([0, 0, 1, config.xmit_interval]))
        if later == config.xmit_interval:
            spent = 0
        now += later
        request = data.draw(hostile_datagrams(protocol))
        sent = sum(map(len, answer(a, request, now=now)))
        spent += sent
        assert sent <= bound(len(request)) and spent <= 200_000, (sent, len(request), spent)
        a.check_invariants()
