"""The NAKACK4 engine under hostile or broken peers: arbitrary datagrams, and well-formed ones with
any field values, never crash it, never make it deliver a message twice or out of order, and keep
its windows well formed; an XMIT_REQ's answer is bounded; a foreign XMIT_RSP or a late JOIN_RSP
changes nothing.

Invariant tested: after any sequence of datagrams from any member, ``check_invariants`` holds,
every sender's deliveries are 1, 2, 3, ... without repeats (payload n carries seqno n), and the
sends the engine itself made are unaffected.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from impl.common import payload_number, spec_payload
from impl.nakack4 import Config, Nakack4Engine
from impl.nakack4.codec import (
    AckMsg,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    WireMsg,
    XmitReqMsg,
    XmitRspMsg,
    encode,
)

MAX = 2**63 - 1
SEQNO = st.one_of(st.integers(0, 40), st.integers(MAX - 40, MAX))
MEMBER = st.integers(0, 3)  # 3 is no member
MESSAGES: st.SearchStrategy[WireMsg] = st.one_of(
    st.builds(lambda s: McastMsg(s, spec_payload(s)), SEQNO),
    st.builds(AckMsg, SEQNO),
    st.builds(HighestSeqnoMsg, SEQNO),
    st.builds(lambda m, ss: NakXmitReqMsg(m, XmitReqMsg(tuple(sorted(set(ss))))), MEMBER,
              st.lists(st.integers(1, 40), min_size=1, max_size=5)),
    st.builds(lambda m, s: XmitRspMsg(m, s, spec_payload(s)), MEMBER, SEQNO),
    st.builds(lambda hd: JoinRspMsg((0, 1), ((0, hd, hd), (1, 0, 0))), st.integers(0, 5)),
)
DATAGRAMS = st.one_of(MESSAGES.map(encode), st.binary(max_size=24))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(MEMBER, DATAGRAMS, st.booleans()), max_size=40), st.sampled_from([1, 2, 4, 16]))
def test_any_datagrams_keep_the_engine_sound(inputs: list[tuple[int, bytes, bool]], capacity: int) -> None:
    engine = Nakack4Engine(Config(capacity=capacity, send_atomically=True), me=0, members=[0, 1, 2], now=0)
    delivered: dict[int, int] = {}
    own_seqnos = []
    for src, data, multicast in inputs:
        if multicast:
            own_seqnos.append(engine.multicast(b"mine", now=0)[0])
        engine.received(src, data, now=0)
        engine.datagrams_to_send()
        for sender, payload in engine.deliveries():
            if sender == 0:
                assert payload == b"mine"
                continue
            number = payload_number(payload)
            assert number == delivered.get(sender, 0) + 1, (sender, number, delivered)
            delivered[sender] = number
        engine.check_invariants()
    assert own_seqnos == list(range(1, len(own_seqnos) + 1))


def test_xmit_req_answer_is_bounded_and_foreign_ones_are_dropped() -> None:
    a = Nakack4Engine(Config(capacity=64, max_xmit_served=3), me=0, members=[0, 1], now=0)
    for n in range(10):
        a.multicast(spec_payload(n), now=0)
    a.datagrams_to_send()
    a.received(1, encode(NakXmitReqMsg(0, XmitReqMsg(tuple(range(1, 11))))), now=0)
    assert len(a.datagrams_to_send()) == 3 * 2 and a.stats.xmit_seqnos_ignored == 7  # re-multicast to A and B
    a.received(1, encode(NakXmitReqMsg(1, XmitReqMsg((1,)))), now=0)  # B's messages, from A: not ours to resend
    assert a.datagrams_to_send() == [] and a.stats.xmit_req_foreign == 1


def test_foreign_xmit_rsp_and_late_join_rsp_change_nothing() -> None:
    a = Nakack4Engine(Config(), me=0, members=[0, 1, 2], now=0)
    before = a.snapshot()
    a.received(2, encode(XmitRspMsg(1, 1, spec_payload(1))), now=0)  # C injecting a message in B's name
    a.received(1, encode(JoinRspMsg((0, 1), ((0, 5, 5), (1, 5, 5)))), now=0)
    assert a.snapshot() == before and a.deliveries() == []
    assert a.stats.xmit_rsp_foreign == 1 and a.stats.join_rsp_ignored == 1


def test_resends_for_one_datagram_are_bounded_in_bytes() -> None:
    """resend_factor: one XMIT_REQ of a few bytes makes the engine resend at most one maximal
    datagram's worth (every copy of a re-multicast counted); the rest is counted as throttled."""
    from impl.wire import CodecLimits

    limits = CodecLimits(max_datagram=2000, max_payload=1900, max_xmit_seqnos=64, max_xmit_span=64)
    a = Nakack4Engine(Config(capacity=64, codec_limits=limits, max_xmit_req_size=64, max_resend_bytes=1 << 20),
                      me=0, members=[0, 1, 2], now=0)
    for _ in range(10):
        a.multicast(bytes(300), now=0)
    a.datagrams_to_send()
    a.received(1, encode(NakXmitReqMsg(0, XmitReqMsg(tuple(range(1, 11))))), now=0)
    sent = a.datagrams_to_send()
    assert 0 < sum(len(d) for _, d in sent) <= 2000  # three copies of 300 bytes each per message
    assert len(sent) == 3 * 2 and a.stats.resends_throttled == 8


def join_rsp(members: int) -> bytes:
    """A JOIN_RSP naming ``members`` members (view and digest, every window at (0, 0))."""
    view = tuple(range(members))
    return encode(JoinRspMsg(view, tuple((m, 0, 0) for m in view)), max_members=members)


def test_a_join_rsp_may_not_allocate_more_window_bytes_than_max_window_bytes() -> None:
    """Every window is capacity slots allocated up front, so members x capacity x 8 bytes is what a
    JOIN_RSP asks a joiner to allocate: beyond max_window_bytes it is refused like a malformed one."""
    import tracemalloc

    assert Config().member_limit == 1024  # 128 MiB of windows at the default capacity 16384
    joiner = Nakack4Engine(Config(), me=5000, now=0)
    tracemalloc.start()
    joiner.received(0, join_rsp(4096), now=0)  # would be 4096 x 16384 slots: 512 MiB
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert joiner.stats.malformed == 1 and joiner.snapshot() == Nakack4Engine(Config(), me=5000, now=0).snapshot()
    assert peak < 4 << 20
    small = Config(capacity=1024, max_window_bytes=8 * 1024 * 4)
    assert small.member_limit == 4
    refused, taken = Nakack4Engine(small, me=9, now=0), Nakack4Engine(small, me=3, now=0)
    refused.received(0, join_rsp(5), now=0)
    taken.received(0, join_rsp(4), now=0)
    assert refused.stats.malformed == 1 and taken.stats.malformed == 0 and taken.members == frozenset({0, 1, 2, 3})


def test_max_window_bytes_must_hold_one_window() -> None:
    import pytest

    with pytest.raises(ValueError, match="max_window_bytes"):
        Config(capacity=1024, max_window_bytes=8 * 1023)
