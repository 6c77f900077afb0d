"""The baseline of ``seqcheck mutate`` (rule 3), judged once per source tree and budget.

The baseline (the checks on the unmutated snapshot) takes minutes and says the same thing every
time the sources and the budget are the same, so a survival is remembered: the key is a SHA-256 of
every file of the snapshot (path and bytes, in path order), the protocols and the budget; the
record is a small JSON file under the cache folder the JGroups harness uses (``SEQCHECK_CACHE``,
else ``$XDG_CACHE_HOME/seqcheck`` or ``~/.cache/seqcheck``), in ``mutate-baseline/``. Only a
baseline that survived is remembered (a failing one must be seen, and fixed). A record that does not
parse is ignored and judged again; nothing read from it is ever executed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from checks.cache import cache_root
from checks.mutate.kill import Budget


def key(tree: Path, protocols: Sequence[str], budget: Budget) -> str:
    """The identity of a baseline judgement: the snapshot's files, the protocols and the budget."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"protocols": list(protocols), "budget": asdict(budget)}, sort_keys=True).encode())
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(tree)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _path(name: str) -> Path:
    return cache_root() / "mutate-baseline" / f"{name}.json"


def recall(name: str) -> dict[str, Any] | None:
    """The remembered survival for ``name`` (``seconds``, ``cpu_seconds``, ``detail``), or None."""
    try:
        record = json.loads(_path(name).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != name:
        return None
    if not all(isinstance(record.get(f), int | float) for f in ("seconds", "cpu_seconds")):
        return None
    return record


def remember(name: str, seconds: float, cpu_seconds: float | None, detail: str) -> None:
    """Record a survival (best effort: a cache folder that cannot be written is no error)."""
    path = _path(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"key": name, "seconds": round(seconds, 1),
                                         "cpu_seconds": round(cpu_seconds or 0.0, 1), "detail": detail}))
        temporary.replace(path)
    except OSError:
        pass
