"""DistAI-style inference: grammar, sample filter, Houdini; each step can drop a wrong candidate."""

from __future__ import annotations

import pytest

from checks.symbolic.infer import _compare, candidates, houdini, infer, reachable_states, sample_filter
from spec.unicast3 import Variant

SHIPPED = Variant()


def test_houdini_keeps_the_inductive_and_drops_the_non_inductive() -> None:
    """HA <= HS and the watermark facts are inductive together; 'HS <= HA' is not (a send breaks it)."""
    kept = houdini([_compare("s_acked", "<=", "s_hs"), _compare("s_wm_lo", "<=", "s_acked"),
                    _compare("s_wm_hi", "<=", "s_hs"), _compare("s_hs", "<=", "s_acked")], SHIPPED)
    assert [inv.name for inv in kept] == ["s_acked <= s_hs", "s_wm_lo <= s_acked", "s_wm_hi <= s_hs"]


def test_the_sample_refutes_candidates_the_spec_never_satisfies() -> None:
    states = reachable_states(["basic-one-way"], max_states=300, walks=5, depth=30)
    grammar = candidates()
    kept = {inv.name for inv in sample_filter(grammar, states, SHIPPED)}
    assert "s_acked <= s_hs" in kept and "s_hs <= s_acked" not in kept and len(kept) < len(grammar) // 3


@pytest.mark.slow
def test_inference_finds_an_inductive_invariant_that_does_not_explain_the_purge() -> None:
    found = infer()
    names = {inv.name for inv in found.inductive}
    assert {"s_acked <= s_hs", "s_last_ts <= b_ts", "DATA: conn == s_conn"} <= names
    assert found.implied["timestamps_issued"] and not found.implied["purge_covered"]
