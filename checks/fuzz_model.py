"""Model files for fuzzing: the budgets of an exhaustive model scaled up, written as a model file.

``--budget-scale K`` multiplies the application sends of every pair, the loss, duplicate and
receiver-removal budgets and ``max_in_flight`` by K, and repeats every member's view script K
times (K rounds of split and heal). Everything else (members, variant, timers, properties,
expectation) is kept; a pinned ``[check] states`` is dropped, since it counts the original model.
The result is an ordinary model file (``seqcheck check``, ``show`` and ``replay`` read it), so a
trace found under scaled budgets names it and replays on it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from models.modelfile import FAULT_KEYS, ModelError, load

SCALED_FAULTS = ("loss", "duplicate", "receiver_removals", "max_in_flight")


def scaled_model_text(path: Path, scale: int) -> str:
    """The text of ``path`` with its budgets scaled by ``scale`` (module docstring)."""
    load(path)  # a bad model file is reported as usual, before anything is derived from it
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ModelError(f"{path}: cannot be read: {error}") from None
    out = dict(raw)
    out["description"] = (f"{path.name} with budgets x{scale} for fuzzing (seqcheck fuzz --budget-scale "
                          f"{scale}). " + str(raw.get("description", "")))
    out["sends"] = {pair: count * scale for pair, count in raw.get("sends", {}).items()}
    faults = {**FAULT_KEYS, **raw.get("faults", {})}
    out["faults"] = {k: (v * scale if k in SCALED_FAULTS else v) for k, v in faults.items()}
    if raw.get("views"):
        out["views"] = list(raw["views"]) * scale
    out["check"] = {k: v for k, v in raw.get("check", {}).items() if k != "states"}
    return to_toml(out)


def to_toml(table: dict[str, Any]) -> str:
    """A model file's table as TOML (strings, ints, bools, lists of those, tables, arrays of tables)."""
    head = [f"{_key(k)} = {_value(v)}" for k, v in table.items() if not isinstance(v, (dict, list)) or
            (isinstance(v, list) and not any(isinstance(x, dict) for x in v))]
    body: list[str] = []
    for key, value in table.items():
        if isinstance(value, dict):
            body += ["", f"[{_key(key)}]", *(f"{_key(k)} = {_value(v)}" for k, v in value.items())]
        elif isinstance(value, list) and any(isinstance(x, dict) for x in value):
            for item in value:
                body += ["", f"[[{_key(key)}]]", *(f"{_key(k)} = {_value(v)}" for k, v in item.items())]
    return "\n".join(head + body) + "\n"


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value)  # JSON's string escapes are valid TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise ModelError(f"cannot write {value!r} to a model file")


def write_scaled_model(path: Path, scale: int, out_dir: Path) -> Path:
    """``path`` itself for scale 1, else the scaled copy written to ``out_dir/<stem>-x<scale>.toml``."""
    if scale == 1:
        return path
    derived = out_dir / f"{path.stem}-x{scale}.toml"
    derived.parent.mkdir(parents=True, exist_ok=True)
    derived.write_text(scaled_model_text(path, scale))
    load(derived)  # the derived file must be a valid model file
    return derived
