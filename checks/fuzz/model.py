"""Model files for fuzzing: the budgets of an exhaustive model scaled up, written as a model file.

``--budget-scale K`` multiplies the application sends of every pair, the loss, duplicate and
receiver-removal budgets and ``max_in_flight`` by K, and repeats every member's view script K
times (K rounds of split and heal). Everything else (members, variant, timers, properties,
expectation) is kept; a pinned ``[check] states`` is dropped, since it counts the original model.
The result is an ordinary model file (``seqcheck check``, ``show`` and ``replay`` read it), so a
trace found under scaled budgets names it and replays on it.

``--variant FLAG,...`` (issue 19, item 4): the derived file's ``variant`` is the flags named
(names or aliases, as ``seqcheck list`` shows them), replacing the model's own, so that a lockstep
model is fuzzed with the code inside a flag reached; its expectation is kept (a flag that brings a
defect back may then violate it: the spec's own verdict, which the report shows apart from a
divergence).

``MODEL#PROTOCOL`` (one protocol of a side-by-side file, ``models/side-by-side/``): the derived
file is that protocol's model alone (``one_protocol``: its variant, settings and expectation),
written even at scale 1, so that traces name a single-protocol file.

``--random-views K`` (joins and leaves): after the (repeated) scripts, every member gets K more
views drawn at random over the model's members (itself and each other member with probability
1/2, so peers leave and join its view; never the view it had just before), then the full
membership (a final heal, as the shipped view models end, so that liveness is judged on a
connected group). The draw depends on the
members and K only (``random.Random`` seeded with them), never on the fuzz seed: every schedule
of a job sees the same scripts and picks *when* each member installs its next view, which is how
the world makes view changes (``models/world.py``: per-member scripts, installed at any moment).
Per-schedule view contents would need a world action over every subset of members, a different
state space for the checker; the derived file keeps traces replayable by ``seqcheck show`` and
``seqcheck replay`` as they are.
"""

from __future__ import annotations

import json
import random
import tomllib
from pathlib import Path
from typing import Any

from models import registry
from models.modelfile import ModelError, load
from models.multicast_factory import FAULT_KEYS as MULTICAST_FAULT_KEYS
from models.multicast_world import MulticastWorld
from models.world_factory import FAULT_KEYS

SCALED_FAULTS = ("loss", "duplicate", "receiver_removals", "below_drop", "max_in_flight")


def scaled_model_text(path: Path, scale: int, random_views: int = 0, protocol: str | None = None,
                      variant: tuple[str, ...] | None = None) -> str:
    """The text of ``path`` with its budgets scaled by ``scale`` and ``random_views`` random views
    per member (module docstring); ``protocol``: of that protocol of a side-by-side file alone;
    ``variant``: these flags instead of the model's."""
    load(path, protocol=protocol)  # a bad model file is reported as usual, before anything is derived
    try:
        raw: dict[str, Any] = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ModelError(f"{path}: cannot be read: {error}") from None
    name = path.name
    if protocol is not None:
        raw, name = one_protocol(raw, protocol), f"{path.name}#{protocol}"
    out = dict(raw)
    out["description"] = (f"{name} with budgets x{scale} for fuzzing (seqcheck fuzz --budget-scale "
                          f"{scale}). " + str(raw.get("description", "")))
    out["sends"] = {pair: count * scale for pair, count in raw.get("sends", {}).items()}
    multicast = isinstance(load(path, protocol=protocol).world, MulticastWorld)
    defaults = MULTICAST_FAULT_KEYS if multicast else FAULT_KEYS  # those scaled (max_batch is a size: kept)
    faults = {**{k: v for k, v in defaults.items() if k in SCALED_FAULTS}, **raw.get("faults", {})}
    out["faults"] = {k: (v * scale if k in SCALED_FAULTS else v) for k, v in faults.items()}
    if raw.get("views") and not multicast:  # a multicast world's views come with its joins and stops: kept
        out["views"] = list(raw["views"]) * scale
    if random_views:
        scripted = list(out.get("views", []))
        out["views"] = scripted + random_view_scripts(list(raw["members"]), random_views, scripted)
        out["description"] += f" With {random_views} random views per member (--random-views)."
    if variant is not None:
        out["variant"] = list(variant)
        out["description"] += f" Under the variant [{', '.join(variant)}] (--variant)."
    out["check"] = {k: v for k, v in raw.get("check", {}).items() if k != "states"}
    return to_toml(out)


def one_protocol(raw: dict[str, Any], protocol: str) -> dict[str, Any]:
    """The table of a side-by-side model file as a single-protocol file of ``protocol``: its own
    variant, ``[config]`` and ``[timers]`` (shared keys, then its subtable's) and ``[check]`` values
    (those given per protocol, its own)."""
    out = dict(raw)
    out["protocol"] = protocol
    for key in ("config", "timers"):
        if key in raw:
            table = {k: v for k, v in raw[key].items() if not registry.is_known(k)}
            out[key] = {**table, **raw[key].get(protocol, {})}
    if isinstance(raw.get("variant"), dict):
        out["variant"] = raw["variant"].get(protocol, [])
    check = {k: (v.get(protocol) if isinstance(v, dict) else v) for k, v in raw.get("check", {}).items()}
    out["check"] = {k: v for k, v in check.items() if v is not None}
    return out


def random_view_scripts(members: list[str], count: int, scripted: list[dict[str, Any]] | None = None
                        ) -> list[dict[str, Any]]:
    """``count`` random views per member, each different from the one before it (the last of
    ``scripted``, else the full membership), then the full membership (module docstring)."""
    rng = random.Random(f"seqcheck random views {count} {members}")
    views: list[dict[str, Any]] = []
    for member in members:
        previous = next((list(v["view"]) for v in reversed(scripted or []) if v["member"] == member), list(members))
        for _ in range(count):
            view = previous
            while sorted(view) == sorted(previous):
                view = [m for m in members if m == member or rng.random() < 0.5]
            views.append({"member": member, "view": view})
            previous = view
        if sorted(previous) != sorted(members):
            views.append({"member": member, "view": list(members)})
    return views


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


def write_scaled_model(path: Path, scale: int, out_dir: Path, random_views: int = 0,
                       protocol: str | None = None, variant: tuple[str, ...] | None = None) -> Path:
    """``path`` itself for scale 1 without random views, no ``protocol`` and no ``variant`` named,
    else the derived copy written to ``out_dir/<stem>-x<scale>.toml`` (``-x<scale>-v<random_views>``
    with random views, then ``-<flag>+<flag>...`` (``-as-shipped`` for none) with a variant;
    ``<stem>.<protocol>.toml``, ``<stem>.<protocol>-x<scale>.toml``, ... for one protocol of a
    side-by-side file)."""
    if scale == 1 and not random_views and protocol is None and variant is None:
        return path
    suffix = "" if protocol is None else f".{protocol}"
    suffix += f"-x{scale}" if scale != 1 or protocol is None else ""
    suffix += f"-v{random_views}" if random_views else ""
    if variant is not None:
        suffix += "-" + ("+".join(flag.replace(":", "_") for flag in variant) or "as-shipped")
    derived = out_dir / f"{path.stem}{suffix}.toml"
    derived.parent.mkdir(parents=True, exist_ok=True)
    derived.write_text(scaled_model_text(path, scale, random_views, protocol, variant))
    load(derived)  # the derived file must be a valid model file
    return derived
