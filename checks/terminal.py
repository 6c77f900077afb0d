"""Text for a terminal: lines wrapped to its width when the output is one, left whole otherwise (a
file or a pipe keeps one line per item, so that grep finds each whole). ``seqcheck list`` and
``seqcheck show`` print through it.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import TextIO

MIN_WIDTH = 40  # a narrower terminal is wrapped as if it had this many columns


def terminal_width(stream: TextIO) -> int | None:
    """The width to wrap ``stream``'s lines to: its terminal's columns, None when it is no terminal."""
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or unusual stream: no terminal
        return None
    return max(shutil.get_terminal_size().columns - 1, MIN_WIDTH)


def fit(line: str, width: int | None, indent: int | None = None) -> str:
    """``line`` wrapped to ``width`` (None: as it is); continuation lines are indented by ``indent``
    columns (default: as far as the line's own indentation, plus two)."""
    if width is None or len(line) <= width:
        return line
    lead = len(line) - len(line.lstrip(" "))
    hang = lead + 2 if indent is None else indent
    return textwrap.fill(line.strip(), width=width, initial_indent=" " * lead, subsequent_indent=" " * hang,
                         break_on_hyphens=False, break_long_words=True)
