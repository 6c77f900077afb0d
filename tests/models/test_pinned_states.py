"""Every shipped model pins its state count (``[check] states``), or is listed here with the reason
it does not (issue 19, item 7).

A change to a spec or to the world that only adds states (a latency-only regression: a message
delivered a step later, a timer enabled once more) keeps every verdict; the pinned count is what
catches it, since ``seqcheck check`` (and ``test_shipped_models``, which runs every model of the
default run) reports a model whose count differs as a mismatch. Invariants tested: every model
file under ``models/`` pins its count for each of its protocols, except those ``UNPINNED`` names
with a reason; every exception names an existing file or folder; a pin that is off by one is
reported by ``seqcheck check`` in one line with exit 1; and a latency-only regression planted in
the UNICAST3 spec (the highest-sent resend one retransmit run later) keeps the model's verdict and
is caught by its pin alone.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR, main
from models.modelfile import Model, load, load_all
from spec import unicast3 as u3

UNPINNED = {
    "bench": "benchmark models: minutes each, out of the default run (their figures are the docs' and "
             "the closing notes')",
    "fuzz": "random-walk models for the lockstep harness and the fuzzer, not checked exhaustively (their "
            "state spaces are far beyond max_states)",
}
ALL = sorted(MODELS_DIR.rglob("*.toml"))


def _name(model: Model) -> str:
    """The model as ``UNPINNED`` names it: its file under ``models/``, ``#protocol`` for one
    protocol of a side-by-side file."""
    name = model.path.resolve().relative_to(MODELS_DIR.resolve()).as_posix()
    return f"{name}#{model.protocol}" if model.side_by_side else name


def _unpinned_reason(model: Model) -> str | None:
    name = _name(model)
    return next((reason for key, reason in UNPINNED.items() if name == key or name.startswith(key + "/")), None)


def test_every_shipped_model_pins_its_state_count() -> None:
    missing = [_name(model) for path in ALL for model in load_all(path)
               if model.pinned_states is None and _unpinned_reason(model) is None]
    assert not missing, f"models without [check] states (pin the count or list them in UNPINNED): {missing}"


def test_every_exception_names_existing_models_and_gives_a_reason() -> None:
    names = {_name(model) for path in ALL for model in load_all(path)}
    for key, reason in UNPINNED.items():
        assert any(name == key or name.startswith(key + "/") for name in names), key
        assert len(reason) > 20, key


def test_a_pin_off_by_one_is_a_one_line_mismatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = MODELS_DIR / "unicast3" / "basic-one-way.toml"
    pinned = load(source).pinned_states
    assert pinned is not None
    text = source.read_text()
    assert f"states = {pinned}\n" in text
    wrong = tmp_path / "basic-one-way.toml"
    wrong.write_text(text.replace(f"states = {pinned}\n", f"states = {pinned + 1}\n"))
    model: Model = load(wrong)
    outcome = check_model(model, trace_dir=None)
    assert not outcome.matches
    assert outcome.mismatch_reason == f"expected {pinned + 1} distinct states, got {pinned}"
    assert main(["check", "--json", "--no-progress", "--trace-dir", str(tmp_path), str(wrong)]) == 1
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["matches"] is False and report["unreduced_states"] == pinned


def hs_resend_one_run_later(cfg: u3.Config, node: u3.Node, only: int | None = None) -> u3.Step:
    """The spec's retransmit task with the HS resend once (HA, HS) stayed unchanged for two runs,
    not one (the watermark carries a third element, 2, once it has been seen twice)."""
    node, effects = u3._send_pending_acks(cfg, node, only)
    node, requests = u3._request_missing(cfg, node, only)
    effects.extend(requests)
    send: list[Any] = list(node.send)
    for peer, entry in enumerate(send):
        if entry is None or (only is not None and peer != only):
            continue
        mark = (entry.acked, entry.highest_sent)
        if mark[0] < mark[1] and entry.watermark == (*mark, 2):
            if not cfg.variant.no_hs_resend:
                effects.append(u3.Send(peer, u3.Data(mark[1], entry.conn_id, mark[1] == 1, entry.unacked[-1])))
        elif entry.watermark[:2] == mark:
            send[peer] = replace(entry, watermark=(*mark, 2))
        else:
            send[peer] = replace(entry, watermark=mark)
    return u3.Step(replace(node, send=tuple(send)), tuple(effects))


def test_a_latency_only_regression_is_caught_by_the_pin_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    path = MODELS_DIR / "unicast3" / "jgrp1548-fixed.toml"
    pinned = load(path).pinned_states
    monkeypatch.setattr(u3, "_retransmit_task", hs_resend_one_run_later)
    outcome = check_model(load(path), trace_dir=None)
    assert outcome.verdict == load(path).expect == "pass"  # every property still holds
    assert not outcome.matches and outcome.result.stats.unreduced > (pinned or 0)
    assert outcome.mismatch_reason == f"expected {pinned} distinct states, got {outcome.result.stats.unreduced}"
