"""``seqcheck bench`` (checker): the figures of a symmetric model are those of the states the
explored ones stand for, side by side with the search without symmetry and the plain baseline."""

from __future__ import annotations

from checks.bench.checker import run_bench
from checks.cli import MODELS_DIR


def test_bench_compares_the_reduced_search_with_the_plain_ones() -> None:
    out = run_bench(MODELS_DIR / "unicast2" / "scenario-7-disjoint-merge.toml")
    assert out["complete"] and out["states"] < out["unreduced_states"]
    assert out["unreduced_states"] == out["baseline"]["states"] == out["without_symmetry"]["states"]
    assert out["unreduced_states_per_s"] > out["states_per_s"] > 0
    assert out["symmetry_speedup"] > 0 and out["speed_ratio_vs_baseline"] > 0
