"""The viewer page without a browser: the data embedded is the chart's, and a hostile trace cannot inject markup."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from viewer_traces import HOSTILE, NAKACK2, NAKACK4, UNICAST2, UNICAST3, make_page

from checks.view.html import embed_json, model_title


def _data(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', text, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_embedded_json_has_no_markup_characters() -> None:
    text = embed_json({"x": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"x": HOSTILE}


def test_a_hostile_description_stays_data(tmp_path: Path) -> None:
    page = make_page(tmp_path, UNICAST2, HOSTILE)
    text = page.read_text(encoding="utf-8")
    assert "window.injected" not in text.split('id="trace-data">', 1)[0]
    assert text.count("<script") == 2 and "<img" not in text and "onerror=\"window" not in text
    assert HOSTILE in _data(page)["header"][0]


@pytest.mark.parametrize(("model", "lost"), [(UNICAST2, True), (NAKACK2, False)], ids=["unicast2", "nakack2"])
def test_page_data_follows_the_trace(tmp_path: Path, model: Path, lost: bool) -> None:
    data = _data(make_page(tmp_path, model))
    trace = json.loads(next((tmp_path / "traces").rglob("*.json")).read_text())
    assert len(data["steps"]) == trace["length"]
    assert len(data["states"]) == len(data["in_flight"]) == len(data["steps"]) + 1
    assert any(a["lost"] for s in data["steps"] for a in s["arrows"]) == lost
    assert all(a["sent"] <= s["index"] for s in data["steps"] for a in s["arrows"])
    assert any(line.startswith("violated: eventually_delivered") for line in data["footer"])


def test_the_title_is_the_path_in_the_repository_else_the_file_name(tmp_path: Path) -> None:
    assert model_title(UNICAST3) == "models/unicast3/jgrp1873-no-timestamps.toml"
    assert model_title(tmp_path / "deep" / "mine.toml") == "mine.toml"
    shipped = make_page(tmp_path / "shipped", UNICAST3, copy_model=False)
    assert _data(shipped)["title"] == "models/unicast3/jgrp1873-no-timestamps.toml"
    assert "<title>models/unicast3/jgrp1873-no-timestamps.toml — seqcheck trace</title>" in shipped.read_text()
    (tmp_path / "copied").mkdir()
    copied = make_page(tmp_path / "copied", NAKACK4)
    assert _data(copied)["title"] == "jgrp2853.toml" and str(tmp_path) not in _data(copied)["header"][0]
