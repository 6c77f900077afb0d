"""Traces for the viewer tests, made in the test's tmp dir from shipped models (never read ./traces)."""

from __future__ import annotations

import shutil
from pathlib import Path

from checks.cli import main

ROOT = Path(__file__).resolve().parents[2]
UNICAST2 = ROOT / "models/unicast2/jgrp1563-no-first-ack.toml"
NAKACK2 = ROOT / "models/nakack2/below-drop-no-xmit.toml"
HOSTILE = '</script><script>window.injected=1</script><img src=x onerror="window.injected=2">&lt;'


def make_trace(tmp_path: Path, model: Path, description: str | None = None) -> Path:
    """The counterexample of ``model`` (a copy under ``tmp_path``, its description replaced if given)."""
    copy = tmp_path / model.name
    text = model.read_text(encoding="utf-8")
    if description is not None:
        start = text.index('description = """')
        end = text.index('"""', start + 17) + 3
        text = text[:start] + f"description = {description!r}" + text[end:]
    copy.write_text(text, encoding="utf-8")
    traces = tmp_path / "traces"
    assert main(["check", "--no-progress", "--trace-dir", str(traces), str(copy)]) == 0
    found = sorted(traces.rglob("*.json"))
    assert len(found) == 1, found
    return found[0]


def make_page(tmp_path: Path, model: Path, description: str | None = None) -> Path:
    trace = make_trace(tmp_path, model, description)
    out = tmp_path / f"{model.stem}.html"
    assert main(["show", str(trace), "--html", str(out)]) == 0
    return out


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) of Debian's chromium and chromium-driver, if both are installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None
