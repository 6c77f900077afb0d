"""A decoded XMIT_REQ keeps its bitset (issue 18, item 7): ``decode`` validates it without a Python
step per seqno, and ``XmitReqMsg.between`` serves a range from it. Whatever way a request was made
(from a tuple, or decoded), it equals, hashes and serves the same, and ``between`` answers as a
bisection of the tuple would. Decode speed is measured by ``seqcheck bench --engine``, not here."""

from __future__ import annotations

import copy
import pickle
from bisect import bisect_right
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec
from impl.wire import MAX_SEQNO, XmitReqMsg


def reference(seqnos: tuple[int, ...], low: int, high: int, cap: int) -> tuple[list[int], int]:
    lo = bisect_right(seqnos, low)
    hi = bisect_right(seqnos, high, lo)
    return list(seqnos[lo : min(hi, lo + cap)]), hi - lo


@st.composite
def requests(draw: st.DrawFn) -> XmitReqMsg:
    lowest = draw(st.one_of(st.integers(0, 100), st.integers(0, MAX_SEQNO - 70_000)))
    offsets = draw(st.sets(st.one_of(st.integers(0, 40), st.integers(0, 65_535)), max_size=200))
    return XmitReqMsg.of(lowest + o for o in offsets)


@settings(max_examples=300, database=None)
@given(requests(), st.data(), st.sampled_from([u3_codec, u2_codec]))
def test_a_decoded_request_serves_like_its_tuple(msg: XmitReqMsg, data: st.DataObject, codec: object) -> None:
    decoded = codec.decode(codec.encode(msg))  # type: ignore[attr-defined]
    base = msg.seqnos[0] if msg.seqnos else 0
    for _ in range(5):
        low = data.draw(st.integers(max(base - 3, 0), base + 65_540))
        high = data.draw(st.integers(max(low - 2, 0), low + 70_000))
        cap = data.draw(st.integers(0, 300))
        want = reference(msg.seqnos, low, high, cap)
        got = decoded.between(low, high, cap)
        assert (list(got[0]), got[1]) == want
        assert (list(msg.between(low, high, cap)[0]), msg.between(low, high, cap)[1]) == want
    assert decoded == msg and hash(decoded) == hash(msg) and decoded.seqnos == msg.seqnos
    assert decoded.count == len(msg.seqnos) and repr(decoded) == repr(msg)


def test_the_worst_case_request_is_served_without_reading_the_rest() -> None:
    """8,192 seqnos over 65,536: asking for the two stored at the start of the range returns only
    those (and how many the range holds), without the tuple of all 8,192 being made."""
    msg = u3_codec.decode(u3_codec.encode(XmitReqMsg(tuple(range(1, 65_537, 8)))))
    assert isinstance(msg, XmitReqMsg)
    assert msg.between(0, 9, 8_192) == ([1, 9], 2)
    assert msg.between(0, 65_536, 3) == ([1, 9, 17], 8_192)
    assert msg.between(65_536, 70_000, 10) == ([], 0)


@pytest.mark.parametrize("copy_of", [lambda m: pickle.loads(pickle.dumps(m)), copy.copy, copy.deepcopy])
def test_a_decoded_request_pickles_and_copies(copy_of: Any) -> None:
    msg = u2_codec.decode(u2_codec.encode(XmitReqMsg((3, 4, 900))))
    assert copy_of(msg) == msg and copy_of(msg).seqnos == (3, 4, 900)


def test_a_request_is_immutable() -> None:
    msg = u3_codec.decode(u3_codec.encode(XmitReqMsg((3, 4))))
    assert isinstance(msg, XmitReqMsg)
    with pytest.raises(AttributeError, match="immutable"):
        msg.seqnos = (1,)  # type: ignore[misc]
    assert msg.seqnos == (3, 4) and msg != (3, 4) and msg != XmitReqMsg((3,))
