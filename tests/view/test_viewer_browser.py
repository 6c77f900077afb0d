"""The viewer in a real browser: headless Chromium (Debian's chromium and chromium-driver) through Selenium.

Skipped only when no Chromium is installed and not required: under CI (``CI=true``) or with
``SEQCHECK_REQUIRE_CHROMIUM=1`` (both set by .ci/run, which installs it) a missing Chromium fails.
The layout tests read every drawn text's ``getBoundingClientRect()`` and require that no two meet.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_traces import HOSTILE, NAKACK2, NAKACK4, UNICAST2, UNICAST3, chromium_paths, make_page

PATHS = chromium_paths()
REQUIRED = os.environ.get("CI") == "true" or os.environ.get("SEQCHECK_REQUIRE_CHROMIUM") == "1"
if PATHS is None and not REQUIRED:
    pytest.skip("no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)",
                allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if PATHS is None:
        pytest.fail("SEQCHECK_REQUIRE_CHROMIUM=1 or CI=true, but chromium or chromedriver is missing")
    options = webdriver.ChromeOptions()
    options.binary_location = PATHS[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1600,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=PATHS[1]))
    yield driver
    driver.quit()


def _open(browser: Any, page: Path) -> dict[str, Any]:
    browser.get(page.as_uri())
    data: dict[str, Any] = json.loads(browser.find_element(By.ID, "trace-data").get_attribute("textContent"))
    return data


def _console_errors(browser: Any) -> list[Any]:
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


@pytest.mark.parametrize("model", [UNICAST2, NAKACK2], ids=["unicast2", "nakack2"])
def test_chart_and_stepping_match_the_trace(browser: Any, tmp_path: Path, model: Path) -> None:
    page = make_page(tmp_path, model)
    data = _open(browser, page)
    arrows = [a for s in data["steps"] for a in s["arrows"]]
    drawn = browser.find_elements(By.CSS_SELECTOR, ".packet")
    assert len(drawn) == len(arrows) > 0
    assert len(browser.find_elements(By.CSS_SELECTOR, ".packet.lost")) == sum(a["lost"] for a in arrows)
    assert len(browser.find_elements(By.CSS_SELECTOR, "text.cross")) == sum(a["lost"] for a in arrows)
    for line, arrow in zip(drawn, arrows):
        assert line.find_element(By.TAG_NAME, "title").get_attribute("textContent") == arrow["label"]
    rows = browser.find_elements(By.CSS_SELECTOR, "g.step-row")
    assert len(rows) == len(data["steps"])
    rows[0].click()
    title = browser.find_element(By.ID, "step-title").text
    assert title.startswith("After step 1: ")
    first_changed = len(browser.find_elements(By.CSS_SELECTOR, "tr.changed"))
    body = browser.find_element(By.TAG_NAME, "body")
    changed_somewhere = first_changed > 0
    for step in data["steps"][1:]:
        body.send_keys(Keys.ARROW_DOWN)
        assert browser.find_element(By.ID, "step-title").text.startswith(f"After step {step['index']}: ")
        changed_somewhere |= bool(browser.find_elements(By.CSS_SELECTOR, "tr.changed"))
        flight = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#in-flight li")]
        assert flight == (data["in_flight"][step["index"]] or ["none"])
    assert changed_somewhere
    assert browser.find_elements(By.CSS_SELECTOR, "g.step-row.selected")[0].get_attribute("data-step") == str(
        data["steps"][-1]["index"])
    assert "violated: eventually_delivered" in browser.find_element(By.ID, "footer").text
    browser.save_screenshot(str(tmp_path / f"{model.stem}.png"))
    assert _console_errors(browser) == []


def test_a_hostile_trace_runs_no_script(browser: Any, tmp_path: Path) -> None:
    page = make_page(tmp_path, UNICAST2, HOSTILE)
    _open(browser, page)
    assert browser.execute_script("return window.injected === undefined")
    assert HOSTILE in browser.find_element(By.ID, "summary").get_attribute("textContent")
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 2
    assert browser.find_elements(By.TAG_NAME, "img") == []
    browser.save_screenshot(str(tmp_path / "hostile.png"))
    assert _console_errors(browser) == []


def test_fuzz_report_draws_its_plots_and_links_the_viewer(browser: Any, tmp_path: Path) -> None:
    from checks.cli import MODELS_DIR, main

    report = tmp_path / "report"
    assert main(["fuzz", str(MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"), "--runs", "40", "--steps", "60",
                 "--master", "none", "--shrink", "1", "--out", str(tmp_path / "out"), "--report", str(report),
                 "--no-progress"]) == 0
    browser.get((report / "index.html").as_uri())
    curve = browser.find_element(By.CSS_SELECTOR, "svg.coverage polyline.curve")
    assert curve.size["width"] > 100 and curve.size["height"] > 10  # drawn, not collapsed to a point
    cells = browser.find_elements(By.CSS_SELECTOR, "svg.heatmap g.cell")
    assert cells and all(c.find_element(By.TAG_NAME, "rect").size["width"] > 0 for c in cells)
    links = browser.find_elements(By.LINK_TEXT, "viewer")
    assert links
    browser.save_screenshot(str(tmp_path / "fuzz-report.png"))
    assert _console_errors(browser) == []
    links[0].click()
    assert browser.find_elements(By.CSS_SELECTOR, ".packet")
    assert "violated: eventually_" in browser.find_element(By.ID, "footer").text
    assert _console_errors(browser) == []


# Every text drawn in the chart (step titles, arrow labels, lane names, crosses) with its box, and every pair
# of them whose boxes meet (by more than a rounding error).
_TEXT_BOXES = """
const texts = [...document.querySelectorAll('#chart-svg text')].map((t) => {
  const r = t.getBoundingClientRect();
  return {cls: t.getAttribute('class'), text: [...t.childNodes].filter((c) => c.nodeName !== 'title')
            .map((c) => c.textContent).join('\\n'), full: (t.querySelector('title') || t).textContent,
          box: [r.left, r.top, r.right, r.bottom]};
});
const meet = [];
for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
  const [a, b] = [texts[i].box, texts[j].box];
  if (a[0] < b[2] - 0.5 && b[0] < a[2] - 0.5 && a[1] < b[3] - 0.5 && b[1] < a[3] - 0.5)
    meet.push([texts[i].text, texts[j].text]);
}
return {texts: texts, meet: meet};
"""

# The share of a PNG's pixels that are not white, and how many colours it has (decoded by the browser).
_PNG_INK = """
const done = arguments[arguments.length - 1];
const img = new Image();
img.onload = () => {
  const canvas = document.createElement('canvas');
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const px = ctx.getImageData(0, 0, img.width, img.height).data;
  let ink = 0; const colours = new Set();
  for (let i = 0; i < px.length; i += 4) {
    if (px[i] < 250 || px[i + 1] < 250 || px[i + 2] < 250) ink++;
    if (colours.size < 1000) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
  }
  done({ink: ink / (px.length / 4), colours: colours.size, width: img.width});
};
img.onerror = () => done(null);
img.src = 'data:image/png;base64,' + arguments[0];
"""

# The panel as the reader sees it: each member's heading and rows, and the list of what the step did.
_PANEL = """
const text = (node) => node.textContent;
return {members: [...document.querySelectorAll('.member-state')].map((box) => [
          text(box.querySelector('h4')),
          [...box.querySelectorAll('tr')].map((tr) => [...tr.querySelectorAll('td')].map(text))]),
        notes: [...document.querySelectorAll('#notes li')].map(text)};
"""

_REPR = re.compile(r"\b(None|True|False)\b|\w+Entry\(|Window\(|\[_|\(\d+, ")


@pytest.mark.parametrize(("model", "title", "copy_model"),
                         [(UNICAST3, "models/unicast3/jgrp1873-no-timestamps.toml", False),
                          (NAKACK4, "jgrp2853.toml", True)], ids=["unicast3-jgrp1873", "nakack4-jgrp2853"])
def test_no_two_texts_overlap_and_none_is_cut(browser: Any, tmp_path: Path, model: Path, title: str,
                                               copy_model: bool) -> None:
    """JGRP-1873's messages cross (m5 SEND_FIRST_SEQNO arrives before m3 ACK, sent earlier); JGRP-2853's
    sender gets its own copy and its own ACK through the loopback. No two drawn texts meet, every label and
    step title is there in full (wrapped, never cut), the loopbacks are drawn, and the page renders."""
    page = make_page(tmp_path, model, copy_model=copy_model)
    browser.set_window_size(1600, 1000)
    data = _open(browser, page)
    found = browser.execute_script(_TEXT_BOXES)
    assert found["meet"] == []
    labels = [t for t in found["texts"] if t["cls"] == "packet-label"]
    arrows = [a for s in data["steps"] for a in s["arrows"]]
    assert [" ".join(t["text"].split()) for t in labels] == [" ".join(a["label"].split()) for a in arrows]
    steps = [t for t in found["texts"] if t["cls"] == "step-title"]
    assert [" ".join(t["text"].split()) for t in steps] == [f"{s['index']}. {' '.join(s['title'].split())}"
                                                            for s in data["steps"]]
    assert not any("\u2026" in t["text"] for t in found["texts"])
    loopbacks = [a for a in arrows if a["src"] == a["dst"]]
    assert len(browser.find_elements(By.CSS_SELECTOR, "path.packet.loopback")) == len(loopbacks)
    assert (len(loopbacks) > 0) == (model == NAKACK4)
    assert browser.find_element(By.ID, "title").text == title
    png = browser.get_screenshot_as_png()
    (tmp_path / f"{model.stem}.png").write_bytes(png)
    assert _console_errors(browser) == []
    ink = browser.execute_async_script(_PNG_INK, base64.b64encode(png).decode("ascii"))
    assert ink is not None and ink["width"] > 0 and ink["ink"] > 0.02 and ink["colours"] > 20, ink


@pytest.mark.parametrize("model", [UNICAST3, NAKACK4], ids=["unicast3", "nakack4"])
def test_state_panel_names_members_and_fields(browser: Any, tmp_path: Path, model: Path) -> None:
    """Members by name in the panel as on the lanes; per-member positions named by member; no Python repr in
    the panel's fields or in its list of what the step did (changed fields worded as the panel names them)."""
    data = _open(browser, make_page(tmp_path, model))
    lanes = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "text.lane-name")]
    body = browser.find_element(By.TAG_NAME, "body")
    positional = "ack_table" if model == NAKACK4 else "xmit_last"
    for _ in range(len(data["steps"]) + 1):
        panel = browser.execute_script(_PANEL)
        assert [name for name, _ in panel["members"]] == lanes == data["members"]
        for name, rows in panel["members"]:
            fields = dict(rows)
            assert fields["me"] == name
            assert [v for v in fields.values() if _REPR.search(v)] == []
            indexed = [k[len(positional) + 1:-1] for k in fields if k.startswith(positional + "[")]
            assert indexed and all(member in lanes for member in indexed)
        assert panel["notes"] and [n for n in panel["notes"] if _REPR.search(n)] == []
        body.send_keys(Keys.ARROW_UP)
    assert browser.find_element(By.ID, "step-title").text == "Initial state"
    assert _console_errors(browser) == []
