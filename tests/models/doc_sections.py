"""The project's documentation as tests read it: README.md and docs/*.md, and the one section of
them a heading names (a test that checks a table finds it wherever the section lives, and fails if
the heading is missing or given twice)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def doc_pages() -> list[Path]:
    """README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def doc_section(heading: str) -> tuple[Path, str]:
    """(page, body) of the section headed ``heading`` (a line such as ``## NAKACK2 models``): the
    text after the heading up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    assert set(level) == {"#"}, f"not a heading: {heading!r}"
    found = [(page, text) for page in doc_pages()
             for text in [page.read_text()] if f"\n{heading}\n" in f"\n{text}"]
    pages = ", ".join(p.relative_to(ROOT).as_posix() for p, _ in found)
    assert len(found) == 1, f"{heading!r}: expected in exactly one of README.md and docs/*.md, found in [{pages}]"
    page, text = found[0]
    assert f"\n{text}".count(f"\n{heading}\n") == 1, f"{page}: {heading!r} twice"
    body = f"\n{text}".split(f"\n{heading}\n", 1)[1]
    ends = [body.find(f"\n{'#' * n} ") for n in range(1, len(level) + 1)]
    ends = [e for e in ends if e >= 0]
    return page, body[:min(ends)] if ends else body
