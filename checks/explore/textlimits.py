"""Where a model (TOML) or trace (JSON) file passes a parser's limits, named by the file's own field.

Python's parsers stop at nesting deeper than the interpreter's recursion allows and at integers of
more than ``sys.get_int_max_str_digits()`` (4,300) digits, with messages in Python's words ("maximum
recursion depth exceeded while decoding a JSON array from a unicode string", "use
sys.set_int_max_str_digits()") and no position. This module owns the project's words for both:

- ``MAX_NESTING``: arrays and tables (objects) nest at most this deep in any file we read (ours
  nest 4 deep at most). ``check_nesting`` enforces it on a parsed value (iteratively, no
  recursion), so the limit is the same whatever the interpreter's recursion limit is.
- ``locate_json`` / ``locate_toml``: after a parser failed, one linear scan of the text (no
  recursion) that finds the first place nesting passes ``MAX_NESTING`` or an integer has more
  digits than Python converts, and says where: the field path (JSON: ``steps[3].action.peer``) or
  the line and key (TOML: ``line 12 (key settings.x)``).

Each returns the message tail (``"<where>: <what was expected>"``) or None if the text has neither.
"""

from __future__ import annotations

import re
import sys
from typing import Any

MAX_NESTING = 64
MAX_DIGITS = sys.get_int_max_str_digits() or 4300  # 0 means unlimited; we keep Python's default then

_NEST = f"arrays and tables nested at most {MAX_NESTING} deep"
_DIGITS = f"an integer of at most {MAX_DIGITS:,} digits"


def check_nesting(value: Any, what: str = "top level") -> str | None:
    """None if ``value`` (parsed TOML or JSON) nests at most ``MAX_NESTING`` deep, else the message
    tail naming the first field that goes deeper."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict):
            children = [(v, f"{path}.{k}" if path else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        else:
            continue
        if depth + 1 > MAX_NESTING:
            return f"{_short(path) or what}: expected {_NEST}"
        stack.extend((child, child_path, depth + 1) for child, child_path in reversed(children))
    return None


def locate_json(text: str) -> str | None:
    """After ``json.loads(text)`` failed: the first field nested too deep or holding too long an
    integer, as ``"steps[0].action.a: expected ..."``; None if there is none (another error)."""
    stack: list[list[Any]] = []  # per open container: [is_object, key or index, expecting a key]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = _json_string_end(text, i)
            if stack and stack[-1][0] and stack[-1][2]:
                stack[-1][1] = text[i + 1:end - 1]
            i = end
            continue
        if c in "[{":
            if len(stack) >= MAX_NESTING:
                return f"{_short(_json_path(stack)) or 'top level'}: expected {_NEST}"
            stack.append([c == "{", None if c == "{" else 0, c == "{"])
        elif c in "]}":
            if stack:
                stack.pop()
        elif c == ",":
            if stack:
                top = stack[-1]
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
        elif c == ":":
            if stack:
                stack[-1][2] = False
        elif c.isdigit():
            match = _DIGIT_RUN.match(text, i)
            assert match is not None
            if len(match.group()) > MAX_DIGITS:
                return f"{_short(_json_path(stack)) or 'top level'}: expected {_DIGITS}, got {len(match.group()):,}"
            i = match.end()
            continue
        i += 1
    return None


def locate_toml(text: str) -> str | None:
    """After ``tomllib.loads(text)`` failed: the first line where arrays or inline tables nest too
    deep or an integer has too many digits, as ``"line 12 (key x): expected ..."``; None if there is
    none (another error)."""
    depth, line, key = 0, 1, ""
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line, at_line_start = line + 1, True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            i = _line_end(text, i)
            continue
        if c == "[" and depth == 0 and at_line_start:  # a table header: no nesting, skip the line
            i = _line_end(text, i)
            continue
        if at_line_start and depth == 0:
            match = _TOML_KEY.match(text, i)
            if match is not None:
                key = match.group(1).strip()
        at_line_start = False
        if c in "\"'":
            end = _toml_string_end(text, i)
            line += text.count("\n", i, end)
            i = end
            continue
        if c in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return f"line {line} (key {key}): expected {_NEST}"
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c.isdigit():
            match = _TOML_DIGITS.match(text, i)
            assert match is not None
            digits = len(match.group().replace("_", ""))
            if digits > MAX_DIGITS:
                return f"line {line} (key {key}): expected {_DIGITS}, got {digits:,}"
            i = match.end()
            continue
        i += 1
    return None


_DIGIT_RUN = re.compile(r"[0-9]+")
_TOML_DIGITS = re.compile(r"[0-9_]+")
_TOML_KEY = re.compile(r"""([A-Za-z0-9_.\-"' ]+?)\s*=""")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)


def _json_string_end(text: str, start: int) -> int:
    match = _JSON_STRING.match(text, start)
    assert match is not None
    return match.end()


def _toml_string_end(text: str, start: int) -> int:
    """The index just past the TOML string starting at ``start`` (basic, literal, or multi-line)."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        end = text.find(quote * 3, start + 3)
        return len(text) if end < 0 else end + 3
    i = start + 1
    while i < len(text) and text[i] not in (quote, "\n"):
        i += 2 if quote == '"' and text[i] == "\\" else 1
    return min(i + 1, len(text))


def _short(path: str) -> str:
    """``a[0][0][0][0][0]`` as ``a[0][0][...]``: a deep path's run of indexes, shortened."""
    return _INDEX_RUN.sub(lambda m: m.group(1) + "[...]", path)


_INDEX_RUN = re.compile(r"((?:\[\d+\]){2})(?:\[\d+\]){2,}")


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _json_path(stack: list[list[Any]]) -> str:
    path = ""
    for is_object, key, _ in stack:
        if is_object:
            if key is not None:
                path = f"{path}.{key}" if path else str(key)
        else:
            path = f"{path}[{key}]"
    return path
