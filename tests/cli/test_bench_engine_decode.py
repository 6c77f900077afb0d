"""`seqcheck bench --engine` times the decode of the worst-case datagram of each message type of
every codec (issue 18, item 7; views and digests of NAKACK2 and NAKACK4: issue 28, item 4) against
a normal DATA timed in the same run: every type is there,
each worst case is what it claims (the largest datagram its type allows, or rejected only by the
last check), and every figure is a median per datagram and per byte. No timing is asserted."""

from __future__ import annotations

import json

import pytest

from checks.bench.engine import worst_datagrams
from checks.cli import main
from impl.unicast2 import codec as u2_codec
from impl.unicast3 import codec as u3_codec
from impl.wire import DEFAULT_LIMITS, DecodeError, XmitReqMsg


def test_the_engine_bench_reports_decode_cost_per_type(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--engine", "--messages", "300"]) == 0
    report = json.loads(capsys.readouterr().out)["decode"]
    assert report["baseline"]["bytes"] == 18 and report["baseline"]["us_per_datagram"] > 0
    assert set(report["unicast3"]) == {"DATA", "ACK", "SEND_FIRST_SEQNO", "CLOSE", "XMIT_REQ spread",
                                       "XMIT_REQ dense", "XMIT_REQ rejected last"}
    assert set(report["unicast2"]) == {"DATA", "ACK", "SEND_FIRST_SEQNO", "STABLE", "XMIT_REQ spread",
                                       "XMIT_REQ dense", "XMIT_REQ rejected last"}
    views = {f"{kind} {case}" for case in ("4,096 members", "65 kB", "count beyond its bytes")
             for kind in ("STABLE", "STABILITY", "JOIN_RSP")}
    assert set(report["nakack2"]) == views  # issue 28, item 4: views and digests too
    assert set(report["nakack4"]) == {name for name in views if name.startswith("JOIN_RSP")}
    for protocol in ("unicast3", "unicast2", "nakack2", "nakack4"):
        for row in report[protocol].values():
            assert row["us_per_datagram"] > 0 and row["ns_per_byte"] > 0
            assert row["ratio_per_datagram"] > 0 and row["ratio_per_byte"] > 0


@pytest.mark.parametrize(("protocol", "codec"), [("unicast3", u3_codec), ("unicast2", u2_codec)])
def test_the_worst_cases_are_the_worst(protocol: str, codec: object) -> None:
    cases = worst_datagrams()[protocol]
    decode = codec.decode  # type: ignore[attr-defined]
    data = decode(cases["DATA"])
    assert len(data.payload) == DEFAULT_LIMITS.max_payload
    spread, dense = decode(cases["XMIT_REQ spread"]), decode(cases["XMIT_REQ dense"])
    assert isinstance(spread, XmitReqMsg) and isinstance(dense, XmitReqMsg)
    assert spread.count == dense.count == DEFAULT_LIMITS.max_xmit_seqnos
    assert spread.seqnos[-1] - spread.seqnos[0] + 8 == DEFAULT_LIMITS.max_xmit_span
    with pytest.raises(DecodeError, match="bits set"):
        decode(cases["XMIT_REQ rejected last"])


@pytest.mark.parametrize("protocol", ["nakack2", "nakack4"])
def test_the_worst_views_and_digests_are_the_worst(protocol: str) -> None:
    from impl.nakack2 import codec as n2_codec
    from impl.nakack4 import codec as n4_codec

    decode = (n2_codec if protocol == "nakack2" else n4_codec).decode
    for name, data in worst_datagrams()[protocol].items():
        if name.endswith("count beyond its bytes"):
            with pytest.raises(DecodeError, match="4096 entries of at least 2 bytes cannot fit"):
                decode(data)
            continue
        msg = decode(data)
        assert len(data) <= DEFAULT_LIMITS.max_datagram
        if name.endswith("4,096 members"):
            assert len(msg.view) == len(msg.digest) == 4_096
        else:
            assert len(data) > 65_000
