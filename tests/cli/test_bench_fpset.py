"""`seqcheck bench --fpset SIZE...`: the visited-state set against the sorted runs it replaced, as
one JSON line (small sizes here; docs/benchmarks.md's curve goes to 50 million)."""

from __future__ import annotations

import json

import pytest

from checks.cli import main


def test_fpset_bench_prints_one_row_per_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--fpset", "20000", "5000"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["size"] for row in report["rows"]] == [5000, 20000]
    for row in report["rows"]:
        assert row["new"]["count"] == row["old"]["count"] >= row["size"]
        assert 12.0 <= row["new"]["bytes_per_fp"] < 16.0 and row["old"]["bytes_per_fp"] == 12.0
        assert set(row["ratio_new_old"]) >= {"absent_ns", "present_ns", "insert_ns"}


def test_fpset_bench_size_below_1_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--fpset", "0"]) == 2
    assert capsys.readouterr().err.startswith("seqcheck: --fpset: expected sizes >= 1")
