"""``impl.nakack2.Config``: JGroups' defaults, and one clear line naming the field for every bad value."""

from __future__ import annotations

import pytest

from impl.nakack2 import Config, Variant
from impl.wire import CodecLimits
from spec import nakack2 as n2


def test_defaults_are_jgroups_and_the_specs() -> None:
    cfg, spec = Config(), n2.Config(members=3)
    assert (cfg.xmit_interval, cfg.use_mcast_xmit, cfg.resend_last_seqno, cfg.resend_last_seqno_max_times,
            cfg.become_server_queue_size) == (spec.xmit_interval, spec.use_mcast_xmit, spec.resend_last_seqno,
                                              spec.resend_last_seqno_max_times, spec.become_server_queue_size)
    assert (cfg.discard_delivered_msgs, cfg.max_xmit_req_size, cfg.xmit_table_num_rows,
            cfg.xmit_table_msgs_per_row, cfg.stable_interval) == (True, 1024, 100, 1024, 20_000)
    assert cfg.variant == Variant() and cfg.retransmission


@pytest.mark.parametrize(("size", "xmit", "variant", "bound"), [
    (50, 1000, Variant(), 50),
    (0, 1000, Variant(), 10),
    (-5, 1000, Variant(), 10),
    (50, 0, Variant(), None),
    (50, -1, Variant(), None),
    (50, 0, Variant(bounded_queue_no_xmit=True), 50),
])
def test_queue_bound_is_the_specs(size: int, xmit: int, variant: Variant, bound: int | None) -> None:
    cfg = Config(become_server_queue_size=size, xmit_interval=xmit, variant=variant)
    spec = n2.Config(members=2, become_server_queue_size=size, xmit_interval=xmit,
                     variant=n2.Variant(bounded_queue_no_xmit=variant.bounded_queue_no_xmit))
    assert cfg.queue_bound() == n2.queue_bound(spec) == bound


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"xmit_interval": 1.5}, r"Config.xmit_interval: expected an int"),
    ({"use_mcast_xmit": 1}, r"Config.use_mcast_xmit: expected a bool"),
    ({"discard_delivered_msgs": False}, r"Config.discard_delivered_msgs: expected True"),
    ({"resend_last_seqno_max_times": 0}, r"Config.resend_last_seqno_max_times: expected >= 1"),
    ({"stable_interval": 0}, r"Config.stable_interval: expected > 0"),
    ({"max_members": 0}, r"Config.max_members: expected >= 1"),
    ({"max_queue_bytes": 0}, r"Config.max_queue_bytes: expected >= 1"),
    ({"resend_factor": -1}, r"Config.resend_factor: expected >= 0"),
    ({"max_xmit_req_size": 10**6}, r"Config.max_xmit_req_size: expected in 1..8192"),
    ({"max_xmit_scan": 10}, r"Config.max_xmit_scan: expected >= max_xmit_req_size"),
    ({"variant": "none"}, r"Config.variant: expected an impl.nakack2.Variant"),
    ({"codec_limits": CodecLimits(max_datagram=200, max_payload=100)}, r"Config.codec_limits: expected max_datagram"),
    ({"max_resend_bytes": 10}, r"Config.max_resend_bytes: expected >= codec_limits.max_datagram"),
])
def test_bad_values_are_one_line_errors_naming_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        Config(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
