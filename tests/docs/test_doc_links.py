"""Every relative link and image in README.md and docs/*.md resolves: to a file of the checkout, and
with ``#anchor`` to a heading of that file (GitHub's anchors); every docs page is reachable from the
index, docs/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_links import ROOT, anchors, doc_pages, relative_links, slug


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for line, target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(ROOT)}:{line}: {target}"
        if not file.exists():
            broken.append(f"{where}: no such file")
        elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
            broken.append(f"{where}: no heading with that anchor in {file.relative_to(ROOT)}")
    assert broken == []


def test_every_docs_page_is_linked_from_the_index() -> None:
    index = ROOT / "docs" / "README.md"
    linked = {(index.parent / target.partition("#")[0]).resolve() for _, target in relative_links(index)}
    pages = {p.resolve() for p in (ROOT / "docs").glob("*.md")} - {index.resolve()}
    assert sorted(p.name for p in pages - linked) == []


def test_the_checker_of_links_finds_a_broken_one(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A `code` title: here\n\n## Twice\n\n## Twice\n\nSee [it](page.md#twice-1), [x](missing.md),\n"
                    "`[not](a-link.md)`, [web](https://example.org) and [y](#nowhere).\n\n```sh\n[no](b.md)\n```\n")
    assert anchors(page) == {"a-code-title-here", "twice", "twice-1"}
    assert relative_links(page) == [(7, "page.md#twice-1"), (7, "missing.md"), (8, "#nowhere")]
    assert slug("Over the network: `impl/runtime`") == "over-the-network-implruntime"


def test_the_readme_stays_a_five_minute_page() -> None:
    """The README says what seqcheck is, the two commands, one worked example and where to go next;
    everything else belongs in a docs/ page linked from docs/README.md."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 160, "README.md grew past 160 lines: move the new section into docs/"
    targets = {target for _, target in relative_links(ROOT / "README.md")}
    assert {"docs/README.md", "docs/tutorial.md"} <= targets
