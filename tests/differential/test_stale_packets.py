"""Lockstep with rule 6 lifted: packets that outlive their connection (issue 19, item 2).

``models/fuzz/unicast{2,3}-lockstep-stale.toml`` are the lockstep models with ``[faults]
stale_packets = true`` and twice the receiver resets, checking only the safety properties a stale
packet cannot break; the lockstep agreement is the verdict. Invariants tested: the engines agree
with the spec on seeded random walks of both, and the Hypothesis machine runs on them; and a
receiver that compares conn_ids by order (a DATA of an *older* conn_id taken as the current
window's, planted in each engine) is caught on the stale models; for UNICAST3 by nothing on the
shipped lockstep model, where rule 6 keeps every packet inside its connection's lifetime. (UNICAST2's
view changes are not gated by rule 6 and its conn_ids come from one counter for all peers, so on its
shipped model too a delayed first DATA meets a newer window, and the same defect shows there.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from impl.unicast2 import receive as u2receive
from impl.unicast3 import receive as u3receive
from models.modelfile import Model, load

WALKS, STEPS = 40, 300
STALE = {n: MODELS_DIR / "fuzz" / f"unicast{n}-lockstep-stale.toml" for n in (2, 3)}
SHIPPED = {n: MODELS_DIR / "fuzz" / f"unicast{n}-lockstep.toml" for n in (2, 3)}


def _first_divergence(model: Model, *, check_properties: bool = True) -> str | None:
    for seed in range(WALKS):
        result = random_walk(model, seed, STEPS, check_properties=check_properties)
        if result.divergence is not None:
            return f"seed {seed}: {result.divergence}"
    return None


@pytest.mark.parametrize("n", sorted(STALE))
def test_engines_agree_with_the_spec_when_packets_outlive_their_connection(n: int) -> None:
    model = load(STALE[n])
    assert model.world.bounds.stale_packets and model.expect == "pass"
    assert not {"no_spurious_purge", "purge_covered"} & set(model.properties)
    assert _first_divergence(model) is None


# -- conn_ids compared by order, planted in each engine ---------------------------------------------
U3_ON_DATA = u3receive.on_data


def u3_older_conn_id_is_current(m: Any, src: Any, msg: Any, *, now: int) -> None:
    entry = m.recv.get(src)
    if entry is not None and msg.conn_id < entry.conn_id:
        msg = replace(msg, conn_id=entry.conn_id)  # "not newer, so it is this window's"
    U3_ON_DATA(m, src, msg, now=now)


def u2_older_conn_id_is_current(m: Any, entry: Any, msg: Any) -> bool:
    return bool(m.variant.no_conn_ids or msg.conn_id <= entry.conn_id)


PLANTED = {3: (u3receive, "on_data", u3_older_conn_id_is_current),
           2: (u2receive, "same_connection", u2_older_conn_id_is_current)}


@pytest.mark.parametrize("n", sorted(PLANTED))
def test_an_ordered_conn_id_comparison_is_caught_with_stale_packets(n: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    owner, name, defect = PLANTED[n]
    monkeypatch.setattr(owner, name, defect)
    found = _first_divergence(load(STALE[n]), check_properties=False)
    assert found is not None and "differ" in found, found
    if n == 3:
        assert _first_divergence(load(SHIPPED[n]), check_properties=False) is None


class Unicast3Stale(WorldAgreement):
    MODEL = load(STALE[3])
    VARIANTS = False


class Unicast2Stale(WorldAgreement):
    MODEL = load(STALE[2])
    VARIANTS = False


TestUnicast3Stale = pytest.mark.long(Unicast3Stale.TestCase)
TestUnicast2Stale = pytest.mark.long(Unicast2Stale.TestCase)


@pytest.mark.long
def test_the_machine_catches_the_ordered_comparison_with_stale_packets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(u3receive, "on_data", u3_older_conn_id_is_current)
    with pytest.raises(AssertionError, match="differ"):
        run_state_machine_as_test(Unicast3Stale, settings=settings(max_examples=300, derandomize=True,
                                                                   phases=[Phase.generate]))
