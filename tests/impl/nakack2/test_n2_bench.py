"""``seqcheck bench --engine``'s NAKACK2 part: a run delivers every message at every member, in
order (the run checks it and fails on a stall), with STABLE purging as it goes; the report's
figures are there and positive."""

from __future__ import annotations

from checks.bench.engine import nakack2_bench
from checks.bench.multicast import nakack2_run


def test_a_lossy_run_delivers_everything_and_purges() -> None:
    run = nakack2_run(6000, 0.05, seed=3)  # 30 bursts, one a second: STABLE's round at 20 s
    assert run["messages"] == 6000 and run["messages_per_s"] > 0 and run["cpu_messages_per_s"] > 0
    assert run["cpu_seconds"] > 0 and run["seconds"] > 0
    assert run["datagrams"] > 3 * 6000  # the retransmissions came on top of one copy per member
    assert run["purged"] >= 3000


def test_a_lossless_run_sends_one_copy_per_member_and_a_few_control_datagrams() -> None:
    run = nakack2_run(2000, 0.0, seed=1)
    assert 3 * 2000 <= run["datagrams"] < 3 * 2000 + 100


def test_the_report_compares_with_unicast3() -> None:
    report = nakack2_bench(1000, 1, 1, u3_no_loss=1000.0, u3_loss=500.0)
    assert report["members"] == 3
    assert report["messages_per_s_at_every_member"] > 0 and report["messages_per_s_at_every_member_5pct_loss"] > 0
    assert report["cpu_messages_per_s_at_every_member"] > 0
    assert report["ratio_vs_unicast3"] == round(report["cpu_messages_per_s_at_every_member"] / 1000.0, 3)  # CPU rates
