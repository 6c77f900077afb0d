"""The model files the docs show are model files: every fenced ``toml`` block of README.md and
docs/*.md is valid TOML, and a block introduced as a shipped model (its path, ``models/...toml``, in
the line before the block) says what that file says, the description aside (the docs shorten it)."""

from __future__ import annotations

import re
import tomllib

import pytest
from doc_links import FENCE, ROOT, doc_pages

SHIPPED = re.compile(r"`(models/[\w./-]+\.toml)`")


def toml_blocks() -> list[tuple[str, str | None, str]]:
    """(page:line, the shipped model the block copies or None, the block's text)."""
    found = []
    for page in doc_pages():
        lines = page.read_text().splitlines()
        for i, line in enumerate(lines):
            opened = FENCE.match(line.strip())
            if not opened or opened.group(2).strip() != "toml":
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == opened.group(1))
            before = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            named = SHIPPED.findall(before)
            where = f"{page.relative_to(ROOT).as_posix()}:{i + 1}"
            found.append((where, named[-1] if named else None, "\n".join(lines[i + 1:end]) + "\n"))
    return found


BLOCKS = toml_blocks()


@pytest.mark.parametrize(("where", "shipped", "text"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_a_toml_block_is_toml_and_says_what_its_shipped_file_says(where: str, shipped: str | None,
                                                                  text: str) -> None:
    shown = tomllib.loads(text)
    if shipped is None:
        return
    actual = tomllib.loads((ROOT / shipped).read_text())
    shown.pop("description", None)
    actual.pop("description", None)
    assert shown == actual, f"{where} shows {shipped} otherwise than it is"


def test_the_readme_and_the_model_file_page_copy_shipped_models() -> None:
    copied = {shipped for _, shipped, _ in BLOCKS if shipped}
    assert {"models/unicast3/jgrp1873-no-timestamps.toml", "models/nakack4/three-members-crash.toml"} <= copied
    assert len(BLOCKS) >= 8
