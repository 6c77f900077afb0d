"""``seqcheck bench --engine``'s NAKACK4 part: a run delivers every message at every member, in
order (the run checks it and fails on a stall), the ACKs purge A's window as it goes, a small
window holds sends back (blocked, then resumed by the engine) without losing any; the report's
figures are there, per capacity, and compared with NAKACK2's."""

from __future__ import annotations

from checks.bench.blocking import CAPACITIES, nakack4_bench, nakack4_run


def test_a_lossy_run_with_a_small_window_blocks_and_delivers_everything() -> None:
    run = nakack4_run(3000, 0.05, seed=3, capacity=64)
    assert run["messages"] == 3000 and run["messages_per_s"] > 0
    # bursts of 200 into 64 slots: the application thread blocks (and stops its burst) again and again
    assert run["blocked"] >= 3000 // 200
    assert run["purged"] >= 2900  # the ACKs of all three members purged nearly everything
    assert run["datagrams"] > 3 * 3000  # retransmissions and ACKs on top of one copy per member


def test_a_lossless_run_at_the_default_capacity_never_blocks() -> None:
    run = nakack4_run(2000, 0.0, seed=1)
    assert run["blocked"] == 0 and 3 * 2000 <= run["datagrams"] < 3 * 2000 + 100


def test_the_report_compares_with_nakack2_and_by_capacity() -> None:
    report = nakack4_bench(600, 1, 1, n2_no_loss=1000.0, n2_loss=500.0)
    assert report["capacity"] == 16384 and set(report["by_capacity"]) == {str(c) for c in CAPACITIES}
    assert report["ratio_vs_nakack2"] == round(report["cpu_messages_per_s_at_every_member"] / 1000.0, 3)  # CPU rates
    assert report["messages_per_s_at_every_member"] > 0
    assert report["by_capacity"]["64"]["sends_blocked"] > 0
