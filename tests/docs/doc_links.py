"""README.md and docs/*.md as the docs tests read them: the pages, their prose outside code, the
anchors GitHub gives their headings, their relative links, and the shell commands of their fenced
``sh`` blocks."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```+|~~~+)(.*)$")


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose_lines(text: str, *, blank_code: bool = True) -> list[tuple[int, str]]:
    """(line number, line) outside fenced and indented code blocks; inline code blanked unless
    ``blank_code`` is false."""
    out, fence = [], ""
    previous_blank = True
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line.strip())
        if fence:
            if opened and line.strip().startswith(fence) and not opened.group(2).strip():
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        if previous_blank and line.startswith("    ") and line.strip():
            continue  # an indented code block (a list item's continuation follows a non-blank line)
        previous_blank = not line.strip()
        out.append((number, re.sub(r"`[^`]*`", "``", line) if blank_code else line))
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text (before de-duplication)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of ``page``, with GitHub's -1, -2 suffixes for repeated headings."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(page.read_text(), blank_code=False):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def relative_links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link and image on ``page`` that is not a URL or mail address."""
    links = []
    for number, line in prose_lines(page.read_text()):
        for target in LINK.findall(line):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                links.append((number, target))
    return links


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    argv: tuple[str, ...]  # after ``seqcheck``
    exit: int  # the status the page documents (``# exit N`` at the end of the line; 0 when silent)
    slow: bool  # under an ``<!-- slow -->`` comment: run only with -m slow
    block: str  # ``page:line`` of the block's opening fence


@dataclass(frozen=True)
class File:
    page: str
    line: int
    name: str
    text: str


def blocks(page: Path) -> tuple[list[Command], list[File]]:
    """The ``seqcheck`` commands of the page's fenced ``sh`` blocks (each ``&&`` part that starts with
    ``seqcheck`` or ``.venv/bin/seqcheck``), and the files it asks the reader to write: a fenced block
    right after an ``<!-- file: NAME -->`` comment."""
    commands: list[Command] = []
    files: list[File] = []
    lines = page.read_text().splitlines()
    name = page.relative_to(ROOT).as_posix()
    marker = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = FENCE.match(line.strip())
        if not opened:
            if line.strip():
                marker = line.strip() if line.strip().startswith("<!--") else ""
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == opened.group(1))
        body = lines[i + 1:end]
        wanted = re.match(r"<!--\s*file:\s*(\S+)\s*-->", marker)
        if wanted:
            files.append(File(name, i + 1, wanted.group(1), "\n".join(body) + "\n"))
        elif opened.group(2).strip() in ("sh", "bash", "console", "shell"):
            for offset, text in enumerate(body, i + 2):
                commands += _commands(name, offset, text, "slow" in marker, f"{name}:{i + 1}")
        marker = ""
        i = end + 1
    return commands, files


def _commands(page: str, line: int, text: str, slow: bool, block: str) -> list[Command]:
    command, _, comment = text.partition(" # ")
    documented = re.match(r"\s*exit (\d+)\b", comment)
    status = int(documented.group(1)) if documented else 0
    found = []
    for part in command.split("&&"):
        words = shlex.split(part)
        if words and words[0] in ("seqcheck", ".venv/bin/seqcheck"):
            found.append(Command(page, line, tuple(words[1:]), status, slow, block))
    return found
