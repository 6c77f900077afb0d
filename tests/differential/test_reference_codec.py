"""The reference encoding (checks/conform/reference_codec.py) as the harness's oracle for the codecs.

Invariants tested: for every spec message of UNICAST2, UNICAST3, NAKACK2 and NAKACK4, with field values anywhere in
their ranges (Hypothesis), the layout written from the documentation gives the engine codec's bytes,
and the engine decodes them back to the message; ``enlarged`` keeps every message valid and makes
every numeric field multi-byte; and two defects planted symmetrically in the UNICAST2 codec's
encoder *and* decoder (so that the engine agrees with itself) are caught by the lockstep harness
through the reference, and by nothing else (the same walks without the reference do not diverge).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks.cli import MODELS_DIR
from checks.conform import nakack2, nakack4, reference_codec, unicast2, unicast3
from checks.conform.differential import random_walk
from impl.nakack2 import codec as n2codec
from impl.nakack4 import codec as n4codec
from impl.unicast2 import codec as u2codec
from impl.unicast3 import codec as u3codec
from impl.wire import Reader
from models.modelfile import load
from spec import nakack2 as n2spec
from spec import nakack4 as n4spec
from spec import unicast2 as u2
from spec import unicast3 as u3

SEQNO = st.integers(0, 2**63 - 1)
TS = st.integers(0, 2**31 - 1)
CONN = st.integers(0, 2**15 - 1)
PAYLOAD = st.integers(0, 2**64 - 1)
SEQNOS = st.lists(st.integers(0, 2**63 - 1 - 60_000), min_size=1, max_size=1).flatmap(
    lambda low: st.lists(st.integers(0, 50_000), max_size=40).map(
        lambda offsets: tuple(sorted({low[0] + o for o in offsets}))))

U3_MESSAGES = st.one_of(
    st.builds(u3.Data, SEQNO, CONN, st.booleans(), PAYLOAD), st.builds(u3.Ack, SEQNO, CONN, TS),
    st.builds(u3.SendFirstSeqno, TS), st.builds(u3.XmitReq, SEQNOS), st.builds(u3.Close, CONN))
U2_MESSAGES = st.one_of(
    st.builds(u2.Data, SEQNO, st.one_of(CONN, st.just(-1)), st.booleans(), PAYLOAD),
    st.builds(u2.XmitReq, SEQNOS), st.builds(u2.SendFirstSeqno, SEQNO, TS),
    st.tuples(SEQNO, SEQNO, st.one_of(CONN, st.just(-1)), TS).map(
        lambda t: u2.Stable(min(t[0], t[1]), max(t[0], t[1]), t[2], t[3])),
    st.builds(u2.Ack, SEQNO, st.one_of(CONN, st.just(-1))))


def _agrees(msg: Any, reference: Callable[[Any], bytes], wire_message: Callable[[Any], Any],
            encode: Callable[[Any], bytes], decode: Callable[[bytes], Any]) -> None:
    data = reference(msg)
    assert encode(wire_message(msg)) == data
    assert decode(data) == wire_message(msg)


@given(U3_MESSAGES)
def test_unicast3_layout_is_the_engine_codec(msg: Any) -> None:
    _agrees(msg, reference_codec.unicast3, unicast3.wire_message, u3codec.encode, u3codec.decode)


@given(U2_MESSAGES)
def test_unicast2_layout_is_the_engine_codec(msg: Any) -> None:
    _agrees(msg, reference_codec.unicast2, unicast2.wire_message, u2codec.encode, u2codec.decode)


@pytest.mark.parametrize("msg", [u3.Data(1, 0, True, 1), u3.Ack(2, 3, 4), u3.SendFirstSeqno(1), u3.XmitReq((1, 3)),
                                 u3.Close(2), u2.Stable(0, 2, 1, 0), u2.Ack(1, -1), u2.SendFirstSeqno(1, 0)])
def test_enlarged_messages_are_valid_and_multi_byte(msg: Any) -> None:
    big = reference_codec.enlarged(msg)
    for name, value in big._asdict().items():
        small = getattr(msg, name)
        if name == "seqnos":
            assert all(s >= 2**40 for s in value) and len(value) == len(small)
        elif type(value) is int and small >= 0:  # not a bool, not UNICAST2's "no conn_id" (-1)
            assert value >= 256, (name, value)
    encode = reference_codec.unicast3 if type(msg).__module__.startswith(u3.__name__) else reference_codec.unicast2
    assert encode(big)  # valid: the layout encodes it


# -- defects planted symmetrically in the UNICAST2 codec -------------------------------------------
def big_endian_long_sequence(a: int, b: int) -> bytes:
    delta = b - a
    n, k = (a.bit_length() + 7) // 8, (delta.bit_length() + 7) // 8
    return bytes((n << 4 | k,)) + a.to_bytes(n, "big") + delta.to_bytes(k, "big")


def read_big_endian_long_sequence(self: Reader, field: str) -> tuple[int, int]:
    lengths = self.byte(field)
    a = int.from_bytes(self.take(lengths >> 4, field), "big")
    return a, a + int.from_bytes(self.take(lengths & 15, field), "big")


def little_endian_short(conn_id: int) -> bytes:
    return (conn_id & 0xFFFF).to_bytes(2, "little")


def read_little_endian_short(self: Reader, field: str) -> int:
    return int.from_bytes(self.take(2, field), "little", signed=True)


SYMMETRIC = {
    "STABLE's (hd, hr) big-endian both ways": ((u2codec, "long_sequence", big_endian_long_sequence),
                                               (Reader, "long_sequence", read_big_endian_long_sequence)),
    "conn_id little-endian both ways": ((u2codec, "_short", little_endian_short),
                                        (Reader, "short", read_little_endian_short)),
}


def _first_divergence() -> str | None:
    model = load(MODELS_DIR / "fuzz" / "unicast2-lockstep.toml")
    for seed in range(20):
        result = random_walk(model, seed, 200, check_properties=False)
        if result.divergence is not None:
            return str(result.divergence)
    return None


@pytest.mark.parametrize("defect", sorted(SYMMETRIC))
def test_a_symmetric_codec_defect_is_caught_only_through_the_reference(defect: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for owner, name, replacement in SYMMETRIC[defect]:
        monkeypatch.setattr(owner, name, replacement)
    data = u2codec.encode(unicast2.wire_message(reference_codec.enlarged(u2.Stable(1, 2, 3, 4))))
    assert u2codec.decode(data) == unicast2.wire_message(reference_codec.enlarged(u2.Stable(1, 2, 3, 4)))
    found = _first_divergence()
    assert found is not None and ("codec of" in found or "datagrams of" in found), found
    monkeypatch.setattr(unicast2.Unicast2Engines, "reference_bytes", None)
    monkeypatch.setattr(unicast2.Unicast2Engines, "codec_disagreement", staticmethod(lambda packet: None))
    assert _first_divergence() is None  # the engine agrees with itself: only the reference sees it


# -- the multicast codecs ---------------------------------------------------------------------------
MEMBER = st.integers(0, 5)
DIGEST = st.lists(st.one_of(st.none(), st.tuples(SEQNO, SEQNO).map(lambda t: (min(t), max(t)))),
                  min_size=1, max_size=5).map(tuple)
VIEW = st.frozensets(MEMBER, min_size=1, max_size=4).map(lambda v: tuple(sorted(v)))


def _multicast_messages(spec: Any, kinds: tuple[str, ...]) -> st.SearchStrategy[Any]:
    makers = {"Data": st.builds(spec.Data, SEQNO, PAYLOAD),
              "XmitReq": st.builds(spec.XmitReq, MEMBER, SEQNOS),
              "XmitRsp": st.builds(spec.XmitRsp, MEMBER, SEQNO, PAYLOAD),
              "HighestSeqno": st.builds(spec.HighestSeqno, SEQNO),
              "StableVote": st.builds(getattr(spec, "StableVote", None) or spec.JoinRsp, VIEW, DIGEST),
              "Stability": st.builds(getattr(spec, "Stability", None) or spec.JoinRsp, VIEW, DIGEST),
              "JoinRsp": st.builds(spec.JoinRsp, VIEW, DIGEST),
              "Ack": st.builds(getattr(spec, "Ack", None) or spec.HighestSeqno, SEQNO)}
    return st.one_of(*(makers[k] for k in kinds))


@given(_multicast_messages(n2spec, ("Data", "XmitReq", "XmitRsp", "HighestSeqno", "StableVote", "Stability",
                                    "JoinRsp")))
def test_nakack2_layout_is_the_engine_codec(msg: Any) -> None:
    _agrees(msg, reference_codec.nakack2, nakack2.wire_message, n2codec.encode, n2codec.decode)


@given(_multicast_messages(n4spec, ("Data", "XmitReq", "XmitRsp", "HighestSeqno", "JoinRsp", "Ack")))
def test_nakack4_layout_is_the_engine_codec(msg: Any) -> None:
    _agrees(msg, reference_codec.nakack4, nakack4.wire_message, n4codec.encode, n4codec.decode)
