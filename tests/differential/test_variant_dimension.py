"""The variant dimension (checks/conform/variants.py, ``seqcheck fuzz --variant``; issue 19, item 4).

Invariants tested: every model runs as shipped, under each flag alone and under all its fixes
together, with the spec's properties as invariants exactly where only fix flags are on, and the
engines agree with the spec on seeded walks under each of them; ``seqcheck
fuzz --variant`` fuzzes a lockstep model under the flags named (names or aliases) through a
derived model file, and refuses an unknown flag in one line (exit 2); and defects planted inside
UNICAST2's fix paths (fix:JGRP-1873: the sender accepts a newer timestamp without recording it;
fix:JGRP-1548: the stalled highest message resent without its first flag) are caught by the fuzz
under ``--variant`` of their flag, the first also by the Hypothesis machine's variant dimension,
while the fuzz and the machine as shipped do not reach them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR, main
from checks.conform.differential import random_walk
from checks.conform.variants import VariantRun, variant_runs, with_variant
from checks.fuzz.command import parse_variant
from checks.fuzz.model import write_scaled_model
from impl.unicast2 import state, tasks
from impl.unicast2.state import Member, SendEntry, ts_newer
from impl.unicast2.tasks import request_missing
from models.modelfile import load

U2, U3, U4 = (MODELS_DIR / "fuzz" / f"unicast{n}-lockstep.toml" for n in (2, 3, 4))


def test_variant_runs_cover_every_flag_and_the_fixed_protocol() -> None:
    u2 = variant_runs(load(U2))
    assert u2[0] == VariantRun((), True)
    assert {run.flags for run in u2 if len(run.flags) == 1} == {(f,) for f in load(U2).world.adapter.variant_names()}
    assert VariantRun(("fix_resend_highest", "fix_sync_lowest_only", "fix_timestamps"), True) in u2
    assert VariantRun(("no_conn_ids",), False) in u2 and VariantRun(("fix_timestamps",), True) in u2
    u3 = variant_runs(load(U3))  # UNICAST3's flags all bring old behaviour back: no fixed protocol to add
    assert len(u3) == 1 + len(load(U3).world.adapter.variant_names()) and all(not run.safety for run in u3[1:])
    assert VariantRun(("no_message_cache",), False) in u3
    assert with_variant(load(U2), ("fix_timestamps",)).variant == ("fix_timestamps",)


RUNS = [(path, run) for path in (U2, U3, U4) for run in variant_runs(load(path))]


@pytest.mark.parametrize(("path", "run"), RUNS, ids=[f"{p.stem}[{r}]" for p, r in RUNS])
def test_engines_agree_under_every_variant(path: Path, run: VariantRun) -> None:
    """Every variant of the unicast lockstep models: no divergence on seeded walks, and the spec's safety
    properties hold where ``run.safety`` says they must."""
    model, steps = with_variant(load(path), run.flags), 0
    for seed in range(15):
        result = random_walk(model, seed, 300, check_properties=run.safety)
        assert result.divergence is None, f"{run}, seed {seed}: {result.divergence}"
        steps += result.steps
    assert steps > 600


def test_parse_variant() -> None:
    assert parse_variant(None) is None and parse_variant("none") == () and parse_variant("") == ()
    assert parse_variant(" fix:JGRP-1873, no_first_ack ") == ("fix:JGRP-1873", "no_first_ack")


def test_the_derived_model_carries_the_variant(tmp_path: Path) -> None:
    derived = write_scaled_model(U2, 1, tmp_path, variant=("fix:JGRP-1873",))
    assert derived.name == "unicast2-lockstep-x1-fix_JGRP-1873.toml"
    model = load(derived)
    assert model.variant == ("fix_timestamps",) and model.expect == "pass" and model.pinned_states is None
    assert load(write_scaled_model(U2, 1, tmp_path, variant=())).variant == ()


def test_an_unknown_flag_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(U3), "--variant", "fix:JGRP-1873", "--master", "none", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--variant: expected flags of unicast3" in err and "'fix:JGRP-1873'" in err


# -- a defect inside UNICAST2's fix:JGRP-1873 path -------------------------------------------------
def accept_without_recording(self: Member[int], entry: SendEntry, ts: int) -> bool:
    """fix_timestamps' check of a STABLE's / SEND_FIRST_SEQNO's timestamp, forgetting to record it."""
    if not self.variant.fix_timestamps:
        return True
    if entry.last_ts != 0 and not ts_newer(ts, entry.last_ts):
        self.stats.stale_timestamps += 1
        return False
    return True


def retransmit_resend_never_first(m: Member[int]) -> None:
    """The retransmit task with fix_resend_highest's resend of a stalled HS never marked first."""
    request_missing(m)
    for peer in sorted(m.send):
        entry = m.send[peer]
        acked, highest = entry.acked, entry.highest_sent
        if acked == highest:
            continue
        if not entry.ack_received and not m.variant.no_first_ack:
            m.emit_data(peer, entry, acked + 1, first=True)
        if m.variant.fix_resend_highest:
            mark = (acked, highest)
            if entry.watermark == mark:
                m.emit_data(peer, entry, highest, first=False)  # the planted defect: first=highest == 1
            else:
                entry.watermark = mark


FIX_PATH_DEFECTS = {"fix:JGRP-1873": (state.Member, "accept_timestamp", accept_without_recording),
                    "fix:JGRP-1548": (tasks, "retransmit", retransmit_resend_never_first)}


def _fuzz(out: Path, *variant: str) -> dict[str, int]:
    args = ["fuzz", str(U2), "--runs", "20", "--steps", "80", "--master", "none", "--out", str(out),
            "--no-progress", "--no-liveness", "--shrink", "0", "--json"]
    main(args + (["--variant", ",".join(variant)] if variant else []))
    verdicts: dict[str, int] = json.loads((out / "summary.json").read_text())["verdicts"]
    return verdicts


@pytest.mark.parametrize("fix", sorted(FIX_PATH_DEFECTS))
def test_fuzz_under_the_fix_flag_catches_a_defect_in_its_path(fix: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(*FIX_PATH_DEFECTS[fix])
    assert _fuzz(tmp_path / "shipped") == {"pass": 20}
    found = _fuzz(tmp_path / "fixed", fix)
    assert found.get("divergence", 0) > 0, found


class Unicast2Shipped(WorldAgreement):
    MODEL = load(U2)
    VARIANTS = False


class Unicast2Variants(WorldAgreement):
    MODEL = load(U2)


@pytest.mark.long
def test_the_machines_variant_dimension_catches_a_defect_in_a_fix_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state.Member, "accept_timestamp", accept_without_recording)
    quick = settings(max_examples=120, derandomize=True, phases=[Phase.generate], stateful_step_count=60)
    run_state_machine_as_test(Unicast2Shipped, settings=quick)  # as shipped: never reached
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast2Variants, settings=quick)
