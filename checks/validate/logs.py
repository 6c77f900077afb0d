"""Reading event logs (``impl/runtime/eventlog.py``): the header, then one step per line.

This module owns what a well-formed log is: every mistake in a header is a ``LogRefused`` naming
the file and the field (the command exits 2); a step line that is not a well-formed step is a
``StepError`` naming the field, which the validator reports as the first step it cannot allow
(a corrupted log is rejected at the corrupted step). Lines are read one at a time (at most
``MAX_LINE`` bytes each), so a log of any length is read in bounded memory.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checks.validate.protocols import LogRefused, Protocol, protocol

FORMAT = "seqcheck-netlog/1"
MAX_LINE = 64 << 20
EVENTS = frozenset({"send", "mcast", "in", "timer", "xmit", "view", "join", "merge", "become_server"})


class StepError(ValueError):
    """A step line that is not a well-formed step (one line: which field, what was expected)."""


@dataclass(frozen=True)
class Header:
    path: Path
    protocol: Protocol
    me: int
    members: tuple[int, ...]  # the initial view
    directory: dict[int, tuple[str, int]]
    config: Any  # the engine's Config
    clock_ns: int  # time.monotonic_ns() at engine time 0
    limits: tuple[str, ...]

    @property
    def clock_ms(self) -> float:
        return self.clock_ns / 1e6


Steps = Generator[tuple[int, dict[str, Any] | StepError], None, None]


def open_log(path: Path) -> tuple[Header, Steps]:
    """The header of the log at ``path`` and an iterator over its steps as (line number, record or
    the ``StepError`` of that line); ``LogRefused`` (one line) if the file or its header is not a log."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise LogRefused(f"{path}: not a regular file")
        file = path.open("rb")
    except FileNotFoundError:
        raise LogRefused(f"{path}: no such log file") from None
    except OSError as error:
        raise LogRefused(f"{path}: cannot be read: {error.strerror or error}") from None
    first = file.readline(MAX_LINE + 1)
    try:
        header = _header(path, _json(first))
    except (LogRefused, StepError) as error:
        file.close()
        raise LogRefused(f"{path}: line 1: {error}") from None
    return header, _steps(file)


def _steps(file: Any) -> Steps:
    with file:
        line_no = 1
        while True:
            raw = file.readline(MAX_LINE + 1)
            if not raw:
                return
            line_no += 1
            try:
                if len(raw) > MAX_LINE:
                    raise StepError(f"longer than {MAX_LINE} bytes")
                record = _json(raw)
                if not isinstance(record, dict):
                    raise StepError("expected a JSON object")
                yield line_no, record
            except StepError as error:
                yield line_no, error
                return


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise StepError(f"not JSON: {str(error) or 'nested too deeply'}") from None


def _header(path: Path, raw: Any) -> Header:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise LogRefused(f"format: expected \"{FORMAT}\" (an event log of impl/runtime)")
    proto = protocol(raw.get("protocol"))
    me = raw.get("me")
    if type(me) is not int or me < 0:
        raise LogRefused(f"me: expected a member number, got {me!r}")
    members = raw.get("members")
    if not isinstance(members, list) or not all(type(m) is int and m >= 0 for m in members):
        raise LogRefused(f"members: expected a list of member numbers, got {str(members)[:60]}")
    directory = raw.get("directory")
    if not isinstance(directory, dict) or not directory:
        raise LogRefused("directory: expected an object: member -> [host, port]")
    table: dict[int, tuple[str, int]] = {}
    for key, value in directory.items():
        if not (key.isdigit() and isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
                and type(value[1]) is int):
            raise LogRefused(f"directory: entry {key!r}: expected member -> [host, port], got {str(value)[:40]}")
        table[int(key)] = (value[0], value[1])
    clock = raw.get("clock_ns")
    if type(clock) is not int:
        raise LogRefused(f"clock_ns: expected an int, got {clock!r}")
    limits = raw.get("limits", [])
    if not isinstance(limits, list) or not all(isinstance(x, str) for x in limits):
        raise LogRefused("limits: expected a list of counter names")
    return Header(path, proto, me, tuple(sorted(set(members))), table, proto.engine_config(raw.get("config")),
                  clock, tuple(limits))


# -- fields of a step ---------------------------------------------------------------------------------
def integer(record: dict[str, Any], name: str, *, low: int = 0) -> int:
    value = record.get(name)
    if type(value) is not int or value < low:
        raise StepError(f"{name}: expected an int >= {low}, got {json.dumps(value)[:40]}")
    return value


def hex_bytes(record: dict[str, Any], name: str) -> bytes:
    value = record.get(name)
    try:
        if not isinstance(value, str):
            raise ValueError
        return bytes.fromhex(value)
    except ValueError:
        raise StepError(f"{name}: expected hex bytes, got {json.dumps(value)[:40]}") from None


def members_of(record: dict[str, Any], name: str) -> list[int]:
    value = record.get(name)
    if not isinstance(value, list) or not all(type(m) is int and m >= 0 for m in value):
        raise StepError(f"{name}: expected a list of member numbers, got {json.dumps(value)[:40]}")
    return value


def pairs(record: dict[str, Any], name: str, what: str) -> list[tuple[int, bytes]]:
    """``record[name]``: a list of [member, hex, ...] (absent: empty)."""
    value = record.get(name, [])
    out: list[tuple[int, bytes]] = []
    if not isinstance(value, list):
        raise StepError(f"{name}: expected a list of [{what}, hex]")
    for item in value:
        if not (isinstance(item, list) and len(item) >= 2 and type(item[0]) is int and isinstance(item[1], str)):
            raise StepError(f"{name}: expected a list of [{what}, hex], got {json.dumps(item)[:40]}")
        try:
            out.append((item[0], bytes.fromhex(item[1])))
        except ValueError:
            raise StepError(f"{name}: expected hex bytes, got {json.dumps(item[1])[:40]}") from None
    return out


def event(record: dict[str, Any]) -> str:
    ev = record.get("ev")
    if ev not in EVENTS:
        raise StepError(f"ev: expected one of {', '.join(sorted(EVENTS))}, got {json.dumps(ev)[:40]}")
    return str(ev)
