"""Config: JGroups' defaults, and validation errors that name the field and what was expected."""

from __future__ import annotations

import dataclasses
import re

import pytest

from impl.unicast3 import Config, LocalProtocolError, ProtocolError, SendWindowFull, Unicast3Engine, Variant
from impl.unicast3.codec import CodecLimits


def test_defaults_are_jgroups_unicast3() -> None:
    cfg = Config()
    assert (cfg.xmit_interval, cfg.conn_expiry_timeout, cfg.conn_close_timeout) == (500, 120_000, 240_000)
    assert (cfg.sync_min_interval, cfg.ack_threshold) == (2_000, 100)
    assert (cfg.xmit_table_num_rows, cfg.xmit_table_msgs_per_row) == (100, 1_024)
    assert cfg.max_retransmit_time == 0  # JGroups: 60000; off here like the spec
    assert cfg.variant == Variant()


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().xmit_interval = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("xmit_interval", 0, "> 0"),
        ("xmit_interval", -500, "> 0"),
        ("xmit_interval", 0.5, "an int"),
        ("xmit_interval", True, "an int"),
        ("conn_expiry_timeout", -1, ">= 0"),
        ("conn_close_timeout", -1, ">= 0"),
        ("max_retransmit_time", -1, ">= 0"),
        ("sync_min_interval", -1, ">= 0"),
        ("sync_min_interval", "2000", "an int"),
        ("ack_threshold", 1, "immediate ACKs are not supported"),
        ("xmit_table_num_rows", 0, ">= 1"),
        ("xmit_table_msgs_per_row", 0, ">= 1"),
        ("max_receive_span", 0, ">= 1"),
        ("max_send_window", 0, ">= 1"),
        ("max_xmit_served", 0, ">= 1"),
        ("max_receive_entries", 0, ">= 1"),
        ("min_window_replace_interval", -1, ">= 0"),
        ("max_xmit_req_size", 0, "in 1..8192"),
        ("max_xmit_req_size", 8193, "in 1..8192"),
        ("variant", None, "an impl.unicast3.Variant"),
        ("codec_limits", {}, "an impl.unicast3.codec.CodecLimits"),
    ],
)
def test_invalid_values_are_rejected_by_name(field: str, value: object, expected: str) -> None:
    pattern = rf"^Config\.{field}: expected .*{re.escape(expected)}.*got {re.escape(repr(value))}"
    with pytest.raises(ValueError, match=pattern):
        Config(**{field: value})  # type: ignore[arg-type]


def test_xmit_req_size_follows_the_codec_limits() -> None:
    big = CodecLimits(max_xmit_seqnos=20_000, max_xmit_span=40_000)
    assert Config(codec_limits=big, max_xmit_req_size=20_000).max_xmit_req_size == 20_000
    with pytest.raises(ValueError, match=r"Config\.codec_limits: expected max_datagram >= 1045"):
        Config(codec_limits=CodecLimits(max_datagram=1_000, max_payload=900))


def test_zero_disables_timeouts() -> None:
    cfg = Config(conn_expiry_timeout=0, conn_close_timeout=0, sync_min_interval=0)
    assert cfg.conn_expiry_timeout == cfg.conn_close_timeout == 0


def test_protocol_error_is_abstract() -> None:
    with pytest.raises(TypeError):
        ProtocolError("x")
    assert issubclass(SendWindowFull, LocalProtocolError)


def test_caller_mistakes_raise_local_protocol_error() -> None:
    engine: Unicast3Engine[str] = Unicast3Engine(Config(max_send_window=2), now=10)
    with pytest.raises(LocalProtocolError, match="time went backwards"):
        engine.handle_timer(now=9)
    with pytest.raises(LocalProtocolError, match="must be an int"):
        engine.handle_timer(now=10.5)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="payload must be bytes"):
        engine.send("B", "text", now=10)  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError, match="max_payload"):
        engine.send("B", bytes(70_000), now=10)
    assert engine.snapshot(now=10).send == ()  # refused sends changed nothing
    assert engine.send("B", b"1", now=10) == 1
    assert engine.send("B", b"2", now=10) == 2
    with pytest.raises(SendWindowFull, match="max_send_window"):
        engine.send("B", b"3", now=10)
    assert len(engine.datagrams_to_send()) == 2
    with pytest.raises(LocalProtocolError, match="no entry"):
        engine.fire_timer(1, "C", now=10)  # IDLE_SEND for a peer with no connection
    with pytest.raises(LocalProtocolError, match=r"entry for .B. is OPEN"):
        engine.fire_timer(3, "B", now=10)  # CLOSE_SEND on an OPEN entry
