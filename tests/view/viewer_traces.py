"""Traces for the viewer tests, made in the test's tmp dir from shipped models (never read ./traces)."""

from __future__ import annotations

import shutil
from pathlib import Path

from checks.cli import main

ROOT = Path(__file__).resolve().parents[2]
UNICAST2 = ROOT / "models/unicast2/jgrp1563-no-first-ack.toml"
NAKACK2 = ROOT / "models/nakack2/below-drop-no-xmit.toml"
UNICAST3 = ROOT / "models/unicast3/jgrp1873-no-timestamps.toml"  # messages cross: m5 overtakes m3
NAKACK4 = ROOT / "models/nakack4/jgrp2853.toml"  # A's own copy and its own ACK come back through the loopback
HOSTILE = '</script><script>window.injected=1</script><img src=x onerror="window.injected=2">&lt;'


def make_trace(tmp_path: Path, model: Path, description: str | None = None, *, copy_model: bool = True) -> Path:
    """The counterexample of ``model`` (a copy under ``tmp_path``, its description replaced if given; with
    ``copy_model=False`` the shipped file itself, the trace still written under ``tmp_path``)."""
    traces = tmp_path / "traces"
    if not copy_model:
        assert main(["check", "--no-progress", "--trace-dir", str(traces), str(model)]) == 0
        return _only(traces)
    copy = tmp_path / model.name
    text = model.read_text(encoding="utf-8")
    if description is not None:
        start = text.index('description = """')
        end = text.index('"""', start + 17) + 3
        text = text[:start] + f"description = {description!r}" + text[end:]
    copy.write_text(text, encoding="utf-8")
    assert main(["check", "--no-progress", "--trace-dir", str(traces), str(copy)]) == 0
    return _only(traces)


def _only(traces: Path) -> Path:
    found = sorted(traces.rglob("*.json"))
    assert len(found) == 1, found
    return found[0]


def make_page(tmp_path: Path, model: Path, description: str | None = None, *, copy_model: bool = True) -> Path:
    trace = make_trace(tmp_path, model, description, copy_model=copy_model)
    out = tmp_path / f"{model.stem}.html"
    assert main(["show", str(trace), "--html", str(out)]) == 0
    return out


def chromium_paths() -> tuple[str, str] | None:
    """(browser, driver) of Debian's chromium and chromium-driver, if both are installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None
