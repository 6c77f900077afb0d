"""``seqcheck fuzz`` on NAKACK4 (the multicast world, checks/fuzz/mcast_coverage.py): every variant's
defect model is found and its fixed twin runs clean, and blocked senders are drawn.

Invariants tested: fuzzing finds every NAKACK4 defect model's violation (JGRP-2829, 2853, 2873,
2874, 2904 and its blocked face, 3034, the pre-fix lock of send_atomically, the seed's window
edge), reproduces and saves it as a trace the checker's world validates, and the fixed twin of
each runs clean (the JGRP-3034 fix's twin keeps the finding it ships with: a stranded last
message); the lockstep model runs clean, its report has the "sender blocked" phase met, and a held
send's SEND timer is drawn as the kind ``send`` (a blocked thread released), the delivery fault as
``loss``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main
from checks.explore.trace import Trace, validate
from checks.fuzz.coverage import kind_of
from checks.fuzz.inprocess import rows
from checks.fuzz.mcast_coverage import MULTICAST
from models.modelfile import load
from models.world import FireTimer
from spec import nakack4 as nak

NAKACK4 = MODELS_DIR / "nakack4"
PAIRS = [("jgrp2829", "jgrp2829-fixed"), ("jgrp2853", "jgrp2853-fixed"), ("jgrp2873", "jgrp2873-fixed"),
         ("jgrp2874", "lost-ack-threshold-2"), ("jgrp2904", "jgrp2904-fixed"), ("jgrp2904-blocked", "jgrp2904-fixed"),
         ("jgrp3034", "jgrp3034-fixed"), ("jgrp3034-fixed", "jgrp3034-deliver-stranded"),
         ("send-atomically-lock-after-seqno", "send-atomically"),
         ("window-edge-seed", "window-edge")]


def fuzz(model: Path, out: Path, *extra: str) -> dict[str, object]:
    assert main(["fuzz", str(model), "--runs", "300", "--steps", "100", "--master", "none", "--shrink", "1",
                 "--out", str(out), "--no-progress", *extra]) == 0
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    return summary


@pytest.mark.parametrize(("defect", "fixed"), PAIRS, ids=[d for d, _ in PAIRS])
def test_fuzz_finds_each_nakack4_defect_and_not_in_its_twin(defect: str, fixed: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    model = load(NAKACK4 / f"{defect}.toml")
    summary = fuzz(model.path, tmp_path / "defect")
    assert summary["matches"] and model.expect in summary["verdicts"], summary["verdicts"]  # type: ignore[operator]
    assert summary["traces"] and not summary["not_reproduced"]
    for saved in summary["traces"]:  # type: ignore[attr-defined]
        trace = Trace.load(saved["path"])
        assert f"violation:{trace.prop}" == model.expect
        validate(model.world, trace)
    twin = load(NAKACK4 / f"{fixed}.toml")
    verdicts = fuzz(twin.path, tmp_path / "fixed")["verdicts"]
    assert model.expect not in verdicts  # type: ignore[operator]
    assert set(verdicts) <= {"pass", twin.expect}, verdicts  # type: ignore[call-overload]
    capsys.readouterr()


@pytest.mark.long
def test_the_lockstep_model_runs_clean_with_blocked_senders(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    model = MODELS_DIR / "fuzz" / "nakack4-lockstep.toml"
    assert main(["fuzz", str(model), "--runs", "80", "--steps", "200", "--master", "none", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    assert "outcome   as expected (pass)" in capsys.readouterr().out
    written = list(rows(tmp_path / "runs"))
    hits = [sum(column) for column in zip(*(row["phase_hits"] for row in written))]
    cells = dict(zip(MULTICAST.cells, hits))
    assert sum(cells["sender blocked", fault] for fault in MULTICAST.faults) > 0
    assert cells["joining", "view"] > 0


def test_nakack4_timers_are_drawn_as_their_kinds() -> None:
    assert kind_of(FireTimer(0, nak.Timer(nak.SEND, 3))) == "send"
    assert kind_of(FireTimer(0, nak.Timer(nak.DELIVER_FAULT, 1))) == "loss"
    assert kind_of(FireTimer(0, nak.Timer(nak.XMIT))) == "xmit"
    assert kind_of(FireTimer(0, nak.Timer(nak.BECOME_SERVER))) == "xmit"
    assert FireTimer in MULTICAST.kind_types["send"] and FireTimer in MULTICAST.kind_types["loss"]
