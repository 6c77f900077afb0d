"""The event log of one endpoint: JSON lines, one per engine input, with what that input did.

This module owns the log's format (``FORMAT``) and its writer; ``checks/validate/`` reads it and
checks every step against the spec. A log is a header line, then one *step* per line, then (if
the endpoint closed cleanly) an ``end`` line:

- header: ``{"format": FORMAT, "protocol", "me", "members" (the initial view), "directory" (member ->
  [host, port]), "config" (every engine ``Config`` field; nested ones as objects), "clock_ns" (the
  ``time.monotonic_ns()`` at engine time 0: logs of one host share that clock), "limits"
  (the engine's limit counters this log reports)}``
- a step: ``{"n": step number from 1, "t": the engine's ``now`` (ms), "ev": what the input was, its
  fields, and what it did: "out" (datagrams sent, ``[dst, hex]``, in order), "up" (deliveries,
  ``[src, payload hex]``, in order), "resumed" (NAKACK4: held sends passed down in this step,
  ``[seqno, status]``), "limits" (the engine's limit counters that moved: ``{name: delta}``)}``.
  Inputs: ``send`` (``to``, ``payload``, ``seqno``), ``mcast`` (``payload``, ``seqno``, ``status``),
  ``in`` (``from``, ``data``: a datagram), ``timer`` (``handle_timer`` at ``t``), ``xmit`` (the
  retransmit task run early: ``fire_timer`` of the spec's XMIT), ``view``
  (``members``), ``join`` (``joiner``, ``view``: the coordinator answers a join and installs the
  view), ``merge`` (``digest``, ``view``), ``become_server``.
- With ``decoded`` on, each datagram also carries its decoded form for people (``"msg"`` beside
  ``"data"``, and a third element of each ``out`` entry); the validator reads only the bytes.

A log never grows past ``max_bytes``: the step that would pass it is replaced by a ``truncated``
line and nothing more is written (a validator then checks the prefix and says so).
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, TextIO

FORMAT = "seqcheck-netlog/1"
DEFAULT_MAX_BYTES = 1 << 30


class EventLog:
    """A JSON-lines writer with a byte limit (the file is opened at once; ``close`` flushes it)."""

    def __init__(self, path: str | Path, header: dict[str, Any], *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if type(max_bytes) is not int or max_bytes < 1024:
            raise ValueError(f"EventLog max_bytes: expected an int >= 1024, got {max_bytes!r}")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.steps = 0
        self.truncated = False
        self._file: TextIO | None = self.path.open("w", encoding="utf-8", buffering=1 << 16)
        self.written = 0
        self._line({"format": FORMAT, **header})

    def step(self, record: dict[str, Any]) -> None:
        """Write one step (its number ``n`` is added here)."""
        if self._file is None or self.truncated:
            return
        self.steps += 1
        record["n"] = self.steps
        text = json.dumps(record, separators=(",", ":"))
        if self.written + len(text) + 64 > self.max_bytes:
            self.truncated = True
            self._line({"ev": "truncated", "n": self.steps, "max_bytes": self.max_bytes})
            return
        self._line_text(text)

    def close(self, final: dict[str, Any] | None = None) -> None:
        """Write the ``end`` line (unless truncated) and close the file; idempotent."""
        if self._file is None:
            return
        if final is not None and not self.truncated:
            self._line({"ev": "end", **final})
        self._file.close()
        self._file = None

    def _line(self, record: dict[str, Any]) -> None:
        self._line_text(json.dumps(record, separators=(",", ":")))

    def _line_text(self, text: str) -> None:
        assert self._file is not None
        self._file.write(text)
        self._file.write("\n")
        self.written += len(text) + 1


def config_json(config: Any) -> dict[str, Any]:
    """Every field of a frozen engine ``Config`` (dataclasses nested as objects) as JSON values."""
    out: dict[str, Any] = {}
    for f in fields(config):
        value = getattr(config, f.name)
        out[f.name] = config_json(value) if is_dataclass(value) and not isinstance(value, type) else value
    return out
