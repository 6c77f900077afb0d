"""Model files (``models/<protocol>/<name>.toml``): parsing, validation, and building the world.

A model file names a protocol and its variant, the members, the application workload, the fault
budgets, the view scripts, the timers in play, the properties to check and the expected verdict.
Every mistake is reported as one ``ModelError`` line naming the file, the key and what was expected.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.properties import build_properties, property_names
from models.protocols import PROTOCOLS, ProtocolAdapter
from models.world import Bounds, World

TOP_KEYS = {"description", "protocol", "variant", "members", "sends", "faults", "views", "timers", "config",
            "check"}
FAULT_KEYS = {"loss": 0, "duplicate": 0, "receiver_removals": 0, "max_in_flight": 3}


class ModelError(Exception):
    """A model file that cannot be used; the message is one line: file, key, what was expected."""


@dataclass(frozen=True)
class Model:
    path: Path
    description: str
    protocol: str
    variant: tuple[str, ...]
    members: tuple[str, ...]
    expect: str  # "pass" or "violation:<property>"
    properties: tuple[str, ...]
    pinned_states: int | None
    max_states: int
    world: World


def load(path: str | Path, *, reduce_timestamps: bool = True, variant: tuple[str, ...] | None = None) -> Model:
    """Read, validate and build the model in ``path``.

    ``reduce_timestamps=False`` builds the world without rule 5 of ``models/world.py`` (real
    timestamps, for driving engines); ``variant`` replaces the file's variant (``()`` = the
    protocol as shipped, to run a defect's trace against the fix)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ModelError(f"{path}: no such model file") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not valid TOML: expected UTF-8 text") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot be read: {error.strerror or error}") from None
    return _Reader(path, raw, reduce_timestamps, variant).model()


class _Reader:
    def __init__(self, path: Path, raw: dict[str, Any], reduce_timestamps: bool = True,
                 variant: tuple[str, ...] | None = None) -> None:
        self.path, self.raw = path, raw
        self.reduce_timestamps, self.variant_override = reduce_timestamps, variant

    def fail(self, key: str, expected: str) -> ModelError:
        return ModelError(f"{self.path}: {key}: expected {expected}")

    def table(self, key: str, allowed: set[str] | dict[str, Any]) -> dict[str, Any]:
        value = self.raw.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(key, "a table")
        for name in value:
            if name not in allowed and allowed:
                raise self.fail(f"{key}.{name}", f"one of {', '.join(sorted(allowed))}")
        return value

    def natural(self, key: str, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(key, f"a whole number >= 0, got {value!r}")
        return value

    def model(self) -> Model:
        for key in self.raw:
            if key not in TOP_KEYS:
                raise self.fail(key, f"one of {', '.join(sorted(TOP_KEYS))}")
        protocol = self.raw.get("protocol")
        if not isinstance(protocol, str) or protocol not in PROTOCOLS:
            raise self.fail("protocol", f"one of {', '.join(sorted(PROTOCOLS))}, got {protocol!r}")
        adapter = PROTOCOLS[protocol]
        members = self._members()
        n = len(members)
        variant = self._variant(adapter) if self.variant_override is None else self.variant_override
        timer_table = {**adapter.timer_keys, **self.table("timers", adapter.timer_keys)}
        timers = {k: self._flag(f"timers.{k}", v) for k, v in timer_table.items()}
        cfg = adapter.make_config(n, variant, timers, self._settings(adapter))
        fault_table = {**FAULT_KEYS, **self.table("faults", {**FAULT_KEYS, "stale_packets": False})}
        stale = self._flag("faults.stale_packets", fault_table.pop("stale_packets", False))
        faults = {k: self.natural(f"faults.{k}", v) for k, v in fault_table.items()}
        if faults["max_in_flight"] < 1:
            raise self.fail("faults.max_in_flight", "at least 1")
        bounds = Bounds(self._sends(members), faults["loss"], faults["duplicate"], faults["receiver_removals"],
                        self._views(members), faults["max_in_flight"], stale)
        check = self.table("check", {"properties", "expect", "states", "max_states"})
        known = property_names(adapter)
        selected = self._properties(check.get("properties", ["all"]), known)
        expect = self._expect(check.get("expect"), selected)
        world = World(self.path.stem, adapter, cfg, n, bounds, [frozenset(range(n))] * n, [],
                      reduce_timestamps=self.reduce_timestamps)
        world.member_names = members
        world.properties = build_properties(world, adapter, selected)
        pinned = check.get("states")
        if pinned is not None:
            pinned = self.natural("check.states", pinned)
        max_states = self.natural("check.max_states", check.get("max_states", 5_000_000))
        description = self.raw.get("description", "")
        if not isinstance(description, str):
            raise self.fail("description", "a string")
        return Model(self.path, description, protocol, variant, members, expect, selected, pinned, max_states, world)

    def _members(self) -> tuple[str, ...]:
        members = self.raw.get("members")
        if (not isinstance(members, list) or not 2 <= len(members) <= 4
                or not all(isinstance(m, str) and m for m in members) or len(set(members)) != len(members)):
            raise self.fail("members", "a list of 2 to 4 distinct member names")
        return tuple(members)

    def _flag(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"true or false, got {value!r}")
        return value

    def _settings(self, adapter: ProtocolAdapter) -> dict[str, int]:
        """The protocol's settings in [config] (each a whole number with a minimum), defaults filled in."""
        table = self.table("config", adapter.config_keys)
        if table and not adapter.config_keys:
            raise self.fail("config", f"no table: protocol {adapter.name} has no settings")
        settings = {}
        for key, (default, minimum) in adapter.config_keys.items():
            value = self.natural(f"config.{key}", table.get(key, default))
            if value < minimum:
                raise self.fail(f"config.{key}", f"at least {minimum}, got {value}")
            settings[key] = value
        return settings

    def _variant(self, adapter: ProtocolAdapter) -> tuple[str, ...]:
        raw = self.raw.get("variant", [])
        raw = [raw] if isinstance(raw, str) else raw
        names = adapter.variant_names()
        aliases = adapter.variant_aliases
        if not isinstance(raw, list):
            raise self.fail("variant", "a list of variant names")
        variant = []
        for item in raw:
            name = aliases.get(item, item) if isinstance(item, str) else None
            if name not in names:
                known = ", ".join(sorted(names | set(aliases)))
                raise self.fail("variant", f"names from {known}, got {item!r}")
            variant.append(name)
        return tuple(sorted(set(variant)))

    def _member_index(self, key: str, name: Any, members: tuple[str, ...]) -> int:
        if name not in members:
            raise self.fail(key, f"a member name ({', '.join(members)}), got {name!r}")
        return members.index(name)

    def _sends(self, members: tuple[str, ...]) -> tuple[int, ...]:
        n = len(members)
        sends = [0] * (n * n)
        for pair, count in self.table("sends", set()).items():
            src, sep, dst = pair.partition("->")
            if not sep:
                raise self.fail(f"sends.{pair}", "a key of the form \"A->B\"")
            s = self._member_index(f"sends.{pair}", src.strip(), members)
            d = self._member_index(f"sends.{pair}", dst.strip(), members)
            if s == d:
                raise self.fail(f"sends.{pair}", "two different members")
            sends[s * n + d] = self.natural(f"sends.{pair}", count)
        return tuple(sends)

    def _views(self, members: tuple[str, ...]) -> tuple[tuple[frozenset[int], ...], ...]:
        scripts: list[list[frozenset[int]]] = [[] for _ in members]
        views = self.raw.get("views", [])
        if not isinstance(views, list):
            raise self.fail("views", "an array of tables [[views]] with member and view")
        for i, item in enumerate(views):
            key = f"views[{i}]"
            if not isinstance(item, dict) or set(item) != {"member", "view"} or not isinstance(item["view"], list):
                raise self.fail(key, "a table with keys member (a name) and view (a list of names)")
            member = self._member_index(f"{key}.member", item["member"], members)
            view = frozenset(self._member_index(f"{key}.view", m, members) for m in item["view"])
            if member not in view:
                raise self.fail(f"{key}.view", "a view that contains its own member")
            scripts[member].append(view)
        return tuple(tuple(s) for s in scripts)

    def _properties(self, raw: Any, known: list[str]) -> tuple[str, ...]:
        if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
            raise self.fail("check.properties", "a list of property names (or [\"all\"])")
        if raw == ["all"]:
            return tuple(known)
        for name in raw:
            if name not in known:
                raise self.fail("check.properties", f"names from: {', '.join(known)}; got {name!r}")
        return tuple(raw)

    def _expect(self, raw: Any, selected: tuple[str, ...]) -> str:
        if raw == "pass":
            return raw
        if isinstance(raw, str) and raw.startswith("violation:") and raw[len("violation:"):] in selected:
            return raw
        raise self.fail("check.expect", f"\"pass\" or \"violation:<one of the checked properties>\", got {raw!r}")
