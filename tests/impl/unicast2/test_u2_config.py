"""UNICAST2 Config: JGroups' defaults (digest 1.1 (d)), and validation errors of one line that name
the field and what was expected."""

from __future__ import annotations

import dataclasses
import re

import pytest

from impl.unicast2 import Config, Variant
from impl.wire import CodecLimits


def test_defaults_are_jgroups_unicast2() -> None:
    cfg = Config()
    assert (cfg.xmit_interval, cfg.stable_interval, cfg.max_bytes, cfg.max_stable_msgs) == (1_000, 60_000,
                                                                                             10_000_000, 5)
    assert cfg.conn_expiry_timeout == 0  # the reaper is off
    assert (cfg.xmit_table_num_rows, cfg.xmit_table_msgs_per_row) == (100, 2_000)
    assert cfg.max_retransmit_time == 0  # JGroups: 60000; off here like the spec
    assert cfg.variant == Variant()


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().stable_interval = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("xmit_interval", 0, "> 0"),
        ("stable_interval", -1, "> 0"),
        ("stable_interval", 1.5, "an int"),
        ("max_bytes", -1, ">= 0"),
        ("max_bytes", True, "an int"),
        ("max_stable_msgs", 0, ">= 1"),
        ("conn_expiry_timeout", -1, ">= 0"),
        ("max_retransmit_time", -1, ">= 0"),
        ("xmit_table_num_rows", 0, ">= 1"),
        ("xmit_table_msgs_per_row", 0, ">= 1"),
        ("max_receive_span", 0, ">= 1"),
        ("max_send_window", 0, ">= 1"),
        ("max_xmit_served", 0, ">= 1"),
        ("max_receive_entries", 0, ">= 1"),
        ("max_xmit_req_size", 8193, "in 1..8192"),
        ("variant", None, "an impl.unicast2.Variant"),
        ("codec_limits", {}, "an impl.wire.CodecLimits"),
    ],
)
def test_invalid_values_are_rejected_by_name(field: str, value: object, expected: str) -> None:
    pattern = rf"^Config\.{field}: expected .*{re.escape(expected)}.*got {re.escape(repr(value))}$"
    with pytest.raises(ValueError, match=pattern) as info:
        Config(**{field: value})  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_an_xmit_req_must_fit_one_datagram() -> None:
    limits = CodecLimits(max_datagram=100, max_payload=50, max_xmit_seqnos=8192, max_xmit_span=65_536)
    with pytest.raises(ValueError, match=r"^Config\.codec_limits: expected max_datagram >= 1045"):
        Config(codec_limits=limits)
    assert Config(codec_limits=limits, max_xmit_req_size=600).max_xmit_req_size == 600
