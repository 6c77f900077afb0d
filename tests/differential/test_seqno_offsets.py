"""Lockstep with receive windows near 2**31 and 2**63 (checks/conform/offsets.py; issue 19, item 5).

Invariants tested: with every receiver's seqnos shifted by 2**31 - 3 or by 2**63 - 17, the UNICAST2
and UNICAST3 engines agree with their specs on seeded random walks of the fuzz models, and their
receive windows really hold seqnos that high; an offset that would pass 2**63 - 1, the variant
no_conn_ids and a multicast model are refused in one line; and a receiver that bounds seqnos by the
timestamps' range (2**31 - 1, planted in each engine) is caught near 2**31 and 2**63 and by
nothing without an offset.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR, main
from checks.conform.differential import EngineFactory, Lockstep, random_walk
from checks.conform.engines import engines_for
from checks.conform.offsets import NEAR_2_31, NEAR_2_63, engines_with_offset, near_2_31, near_2_63
from checks.conform.variants import with_variant
from impl.unicast2 import receive as u2receive
from impl.unicast3 import receive as u3receive
from models.modelfile import Model, load

WALKS, STEPS = 20, 300
FUZZ = {n: MODELS_DIR / "fuzz" / f"unicast{n}-lockstep.toml" for n in (2, 3)}
OFFSETS = {"near 2**31": (NEAR_2_31, near_2_31), "near 2**63": (NEAR_2_63, near_2_63)}


def _first_divergence(model: Model, factory: EngineFactory) -> str | None:
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS, engines_for=factory, check_properties=False)
        if result.divergence is not None:
            return f"seed {seed}: {result.divergence}"
    return None


@pytest.mark.parametrize("offset", sorted(OFFSETS))
@pytest.mark.parametrize("n", sorted(FUZZ))
def test_engines_agree_with_the_spec_with_shifted_receive_windows(n: int, offset: str) -> None:
    k, factory = OFFSETS[offset]
    model, highest = load(FUZZ[n]), 0
    for seed in range(WALKS):
        run, rng = Lockstep(model, factory, check_properties=False), random.Random(seed)
        for _ in range(STEPS):
            enabled = run.enabled()
            if not enabled:
                break
            divergence = run.step(*enabled[rng.randrange(len(enabled))])
            assert divergence is None, f"seed {seed}: {divergence}"
            for engine in run.engines.engines:  # the engines' own views, not shifted back
                highest = max([highest, *(view.delivered for _, view in engine.snapshot(now=0).recv)])
    assert highest >= k + 3  # the windows really ran up there


def test_offsets_the_protocol_cannot_run_are_refused() -> None:
    too_far = engines_with_offset(2**63 - 2)
    with pytest.raises(ValueError, match=r"^seqno offset: expected 0\.\.9223372036854775801 .* got 92233720368547758"):
        Lockstep(load(FUZZ[3]), too_far)
    no_conn_ids = with_variant(load(FUZZ[2]), ("no_conn_ids",))
    with pytest.raises(ValueError, match=r"^seqno offset: the variant no_conn_ids opens every window at 0"):
        Lockstep(no_conn_ids, near_2_31)
    with pytest.raises(ValueError, match=r"^seqno offset: expected a model of unicast2 or unicast3, got nakack2$"):
        Lockstep(load(MODELS_DIR / "fuzz" / "nakack2-lockstep.toml"), near_2_31)


def test_fuzz_refuses_an_offset_run_it_cannot_make_in_one_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    n2 = MODELS_DIR / "fuzz" / "nakack2-lockstep.toml"
    assert main(["fuzz", str(n2), "--engines-with", "seqnos-near-2^63", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "seqno offset: expected a model of unicast2 or unicast3" in err
    assert main(["fuzz", str(FUZZ[3]), "--engines-with", "seqnos-near-2^63", "--runs", "10", "--steps", "60",
                 "--master", "none", "--out", str(tmp_path / "u3"), "--no-progress"]) == 0


# -- a seqno bounded like a timestamp, planted in each engine -------------------------------------
def _bounded_like_a_timestamp(on_data: Any) -> Any:
    def planted(m: Any, src: Any, msg: Any, *, now: int) -> None:
        if msg.seqno > 2**31 - 1:  # the timestamps' range, not the seqnos'
            m.stats.bad_seqno += 1
            return
        on_data(m, src, msg, now=now)
    return planted


PLANTED = {3: u3receive, 2: u2receive}


@pytest.mark.parametrize("n", sorted(PLANTED))
def test_a_seqno_bounded_like_a_timestamp_is_caught_only_with_an_offset(n: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    module = PLANTED[n]
    monkeypatch.setattr(module, "on_data", _bounded_like_a_timestamp(module.on_data))
    model = load(FUZZ[n])
    for offset, (_, factory) in OFFSETS.items():
        found = _first_divergence(model, factory)
        assert found is not None and "differ" in found, (offset, found)
    assert _first_divergence(model, engines_for) is None


class Unicast3Near263(WorldAgreement):
    MODEL = load(FUZZ[3])

    def engine_factory(self) -> EngineFactory:
        return near_2_63


class Unicast2Near231(WorldAgreement):
    MODEL = load(FUZZ[2])
    VARIANTS = False  # no_conn_ids has no shifted run

    def engine_factory(self) -> EngineFactory:
        return near_2_31


TestUnicast3Near263 = pytest.mark.long(Unicast3Near263.TestCase)
TestUnicast2Near231 = pytest.mark.long(Unicast2Near231.TestCase)
