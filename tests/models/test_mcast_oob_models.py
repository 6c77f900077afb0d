"""The multicast OOB models (``models/nakack2/oob-*.toml``, ``models/nakack4/oob-*.toml``; NAKACK2 spec
decision 17, NAKACK4 spec decision 18).

Invariants tested: the witnesses deliver what the models say (NAKACK2: B delivers the OOB #2 while #1
is lost, then #1; NAKACK4: A delivers its own OOB #2 above a gap of its own window, then #1, each once);
``oob-redelivers`` is the loss-free world of ``oob-under-loss`` with the defect flag; without the ``[oob]``
table the NAKACK2 world has the same states (NAKACK4's differ: the OOB delivery's ACK); a bad
``[oob]`` table is a one-line error naming the key; and the trace of the NAKACK4 finding draws as a chart
(sets of seqnos are not drawn as members).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.check import check_model, replay_witness
from checks.cli import MODELS_DIR, main
from models.modelfile import load

N2 = MODELS_DIR / "nakack2"
N4 = MODELS_DIR / "nakack4"


def deliveries(path: list[tuple[object, object]], world: object) -> list[tuple[int, int, int]]:
    """(receiver, sender, payload) of every delivery along ``path``."""
    out: list[tuple[int, int, int]] = []
    state = world.init_states()[0]  # type: ignore[attr-defined]
    for action, after in path:
        member, _, delivered = world.step_effects(state, action)  # type: ignore[attr-defined]
        out += [(member, src, payload) for src, payload in delivered]
        state = after
    return out


def test_nakack2_the_oob_message_is_delivered_while_the_one_before_is_lost() -> None:
    model = load(N2 / "oob-under-loss.toml")
    assert deliveries(replay_witness(model), model.world) == [(0, 0, 1), (1, 0, 2), (0, 0, 2), (1, 0, 1)]


def test_nakack4_the_own_oob_message_is_delivered_above_a_gap_then_passed_over() -> None:
    model = load(N4 / "oob-threads.toml")
    assert deliveries(replay_witness(model), model.world) == [(0, 0, 2), (0, 0, 1)]


def test_the_defect_model_is_the_loss_free_world_of_the_passing_one() -> None:
    passing, defect = load(N2 / "oob-under-loss.toml"), load(N2 / "oob-redelivers.toml")
    assert passing.world.bounds.oob == defect.world.bounds.oob == {(0, 2)}
    assert (passing.world.bounds.loss, defect.world.bounds.loss) == (1, 0)
    assert (passing.variant, defect.variant) == ((), ("oob_redelivers",))


@pytest.mark.parametrize(("name", "same"), [("nakack2/oob-under-loss", True), ("nakack4/oob-under-loss", False)])
def test_what_the_oob_table_changes(tmp_path: Path, name: str, same: bool) -> None:
    """NAKACK2: OOB changes what is delivered when, not which states exist (the same count without the
    table). NAKACK4: an OOB delivery's ACK goes before the removal, with the hd from before it, so the
    ACKs and the purges differ and so do the states; both worlds pass."""
    text = (MODELS_DIR / f"{name}.toml").read_text()
    plain = text.replace("[oob]\nA = [2]\n", "").split("witness = [")[0]
    plain = "\n".join(line for line in plain.splitlines() if not line.startswith("states ="))
    (tmp_path / "plain.toml").write_text(plain + "\n")
    results = [check_model(m, trace_dir=None).to_json() for m in (load(MODELS_DIR / f"{name}.toml"),
                                                                   load(tmp_path / "plain.toml"))]
    assert [r["verdict"] for r in results] == ["pass", "pass"]
    assert (results[0]["states"] == results[1]["states"]) is same


@pytest.mark.parametrize(("table", "error"), [
    ("[oob]\nA = [3]\n", "oob.A: expected a non-empty list of distinct send numbers in 1..2"),
    ("[oob]\nA = [2, 2]\n", "oob.A"),
    ("[oob]\nZ = [1]\n", "oob.Z"),
    ("[oob]\nA = 1\n", "oob.A"),
])
def test_a_bad_oob_table_is_one_line(tmp_path: Path, table: str, error: str) -> None:
    text = (N2 / "oob-under-loss.toml").read_text().replace("[oob]\nA = [2]\n", table).replace("states = 44932\n", "")
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(Exception, match=error.replace(".", r"\.").replace("[", r"\[")) as caught:
        load(tmp_path / "bad.toml")
    assert "\n" not in str(caught.value)


def test_the_finding_draws_as_a_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With #2 OOB too, the thread holding it shows in the chart (a set of seqnos, not of members)."""
    text = (N4 / "oob-ack-threshold-1.toml").read_text().replace("[oob]\nA = [1]\n", "[oob]\nA = [1, 2]\n")
    (tmp_path / "finding.toml").write_text(text.replace("states = 81\n", ""))
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path), str(tmp_path / "finding.toml")]) == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / tmp_path.name / "finding.json")]) == 0
    out = capsys.readouterr().out
    assert "oob_sending: none -> 2" in out and "DATA(seqno=1, payload=1, oob)" in out
    assert "violates liveness property eventually_delivered" in out


def test_oob_with_batches_is_refused_in_one_line(tmp_path: Path) -> None:
    text = (N2 / "oob-under-loss.toml").read_text().replace("max_in_flight = 1\n", "max_in_flight = 2\nmax_batch = 2\n")
    (tmp_path / "batched.toml").write_text(text.replace("states = 44932\n", ""))
    with pytest.raises(Exception, match=r"oob: .*max_batch") as caught:
        load(tmp_path / "batched.toml")
    assert "\n" not in str(caught.value)
