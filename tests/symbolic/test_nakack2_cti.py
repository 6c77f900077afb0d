"""Traces ``seqcheck prove`` writes say how they were found (the trace file's ``origin``), and
``seqcheck show`` prints that instead of "a shortest counterexample"."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from checks import cli
from checks.explore.trace import Trace, TraceError
from checks.symbolic.nakack4 import proofs as n4_proofs


def test_a_reached_cti_s_trace_says_how_it_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = n4_proofs._reach(tmp_path, "jgrp2904", "deliver_ack", "ack_table_members")
    assert row[1] == "reachable"
    capsys.readouterr()
    trace = tmp_path / "prove" / "nakack4-jgrp2904-deliver_ack-ack_table_members.json"
    assert json.loads(trace.read_text())["origin"].startswith("seqcheck prove: step 4 is the first")
    assert cli.main(["show", str(trace)]) == 0
    header = capsys.readouterr().out.splitlines()[1]
    assert "seqcheck prove: step 4 is the first counterexample-to-induction of deliver_ack / ack_table_members" \
        in header
    assert "a shortest counterexample" not in header


def test_origin_round_trips_and_is_left_out_when_empty(tmp_path: Path) -> None:
    trace = Trace("m.toml", "0" * 64, "p", "always", ({"action": "X"},), None, ("x",))
    assert "origin" not in trace.to_json()
    found = replace(trace, origin="found some way")
    loaded = Trace.load(found.save(tmp_path / "t.json"))
    assert loaded.origin == "found some way" and loaded == trace  # origin, like the summary, is for people
    raw = found.to_json() | {"origin": 3}
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(TraceError, match="malformed field origin: expected a string, got 3"):
        Trace.load(tmp_path / "bad.json")


# ---------------------------------------------------------------------------------------------
# z3's counterexamples-to-induction as spec states (cti.concrete_cti, validate_cti, draw_cti).
def test_every_nakack4_cti_replays_on_the_spec_the_seed_edge_s_unreachable_ones_too(tmp_path: Path) -> None:
    from checks.symbolic.cti import replayed_cti
    from models.modelfile import load

    for label, (v, expected, model) in n4_proofs.EXPECTED.items():
        world = load(n4_proofs.MODELS / f"{model}.toml").world
        for action, invariant in sorted(expected):
            drawing = tmp_path / f"{action}-{invariant}.txt"
            result, _, _, detail = replayed_cti(n4_proofs.INVARIANTS, v, action, invariant, n4_proofs.SUBJECT, world,
                                             drawing)
            assert result == "validated", (label, action, invariant, detail)
            text = drawing.read_text()
            assert "pre-state (every invariant holds)" in text and f"breaks {invariant}" in text
    assert "A receives ACK" in (tmp_path / "deliver_ack-blocks_only_when_full.txt").read_text()
    assert "A installs view" in (tmp_path / "view_s-blocks_only_when_full.txt").read_text()


def test_every_nakack2_merge_cti_replays_on_the_spec(tmp_path: Path) -> None:
    from checks.symbolic.nakack2 import proofs as n2_proofs

    rows = list(n2_proofs.merge_ctis_replayed(tmp_path))
    assert [row[1] for row in rows] == ["validated"] * len(n2_proofs.MERGE_BREAKS), rows
    assert all("installs merge view" in path.read_text() for path in (tmp_path / "prove").glob("*.txt"))


def test_validation_is_not_vacuous() -> None:
    """A concretization that loses the packets in flight fails the round trip; a CTI checked against
    an invariant its step keeps is refused; a pre-state breaking an invariant is refused."""
    from checks.symbolic.cti import concrete_cti, validate_cti
    from checks.symbolic.nakack2 import concrete
    from checks.symbolic.nakack2 import proofs as n2_proofs
    from checks.symbolic.nakack2.invariants import INVARIANTS
    from models.modelfile import load
    from spec import nakack2 as nak

    world = load(n2_proofs.MODELS / "merge-digest-lags-loopback.toml").world
    cti = concrete_cti(INVARIANTS, nak.Variant(), "merge", "votes_in_flight_truthful", n2_proofs.SUBJECT, world)
    assert cti is not None and cti.pre.n_vote
    lossy = replace(n2_proofs.SUBJECT, concretize=lambda state, base: replace(concrete.concretize(state, base),
                                                                              network=()))
    assert "round trip" in (validate_cti(cti, INVARIANTS, world, lossy) or "")
    kept = replace(cti, invariant="own_window_order")
    assert validate_cti(kept, INVARIANTS, world, n2_proofs.SUBJECT) == "the spec's step keeps own_window_order"
    broken = replace(cti, pre=type(cti.pre)(cti.pre, low=cti.pre.high + 1))
    assert (validate_cti(broken, INVARIANTS, world, n2_proofs.SUBJECT) or "").startswith("the pre-state breaks")


SEED_EDGE_THREADS = '''description = """The seed's edge, three threads outside the lock, DONT_BLOCK drops."""
protocol = "nakack4"
members = ["A", "B"]
variant = ["seed-edge", "JGRP-2873"]

[sends]
A = 4

[config]
capacity = 2
send_atomically = false
sender_threads = 3
dont_block = true

[faults]
max_in_flight = 1

[check]
properties = ["blocks_only_when_full"]
expect = "violation:blocks_only_when_full"
'''


def test_a_cti_reached_only_past_an_earlier_violation_gives_no_trace(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed edge's deliver_ack CTI needs a held seqno more than capacity above low; with threads
    outside the lock and DONT_BLOCK drops a state like that is reached, but only after a thread held
    one exactly capacity above low (the same property broken earlier): no minimal trace, so none."""
    from checks.symbolic import cti

    refused: list[str] = []
    original = cti.validate

    def validating(world: object, trace: Trace) -> object:
        try:
            return original(world, trace)  # type: ignore[arg-type]
        except TraceError as error:
            refused.append(str(error))
            raise

    model = tmp_path / "seed-edge-threads.toml"
    model.write_text(SEED_EDGE_THREADS)
    monkeypatch.setattr(cti, "validate", validating)
    found = cti.reachable_cti(model, n4_proofs.INVARIANTS, "deliver_ack", "blocks_only_when_full", max_states=20_000,
                              subject=n4_proofs.SUBJECT)
    assert found is None
    assert refused and {r.split(" after")[0] for r in refused} == {"blocks_only_when_full is already violated"}
