"""The viewer in a real browser: headless Chromium (Debian's chromium and chromium-driver) through Selenium.

Skipped only when no Chromium is installed and not under CI (``CI=true``: .ci/run installs it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_traces import HOSTILE, NAKACK2, UNICAST2, chromium_paths, make_page

PATHS = chromium_paths()
if PATHS is None and os.environ.get("CI") != "true":
    pytest.skip("no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)",
                allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    assert PATHS is not None, "CI=true but chromium or chromedriver is missing"
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
    drawn = browser.find_elements(By.CSS_SELECTOR, "line.packet")
    assert len(drawn) == len(arrows) > 0
    assert len(browser.find_elements(By.CSS_SELECTOR, "line.packet.lost")) == sum(a["lost"] for a in arrows)
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
    assert browser.find_elements(By.CSS_SELECTOR, "line.packet")
    assert "violated: eventually_" in browser.find_element(By.ID, "footer").text
    assert _console_errors(browser) == []
