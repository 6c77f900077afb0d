"""Model files (``models/<protocol>/<name>.toml``): parsing, validation, and building the world.

A model file names a protocol and its variant, the members, the application workload, the fault
budgets, the view scripts, the timers in play, the properties to check and the expected verdict.
Every mistake is reported as one ``ModelError`` line naming the file, the key and what was expected.

Side by side
------------
``protocol`` may list several protocols (``protocol = ["unicast2", "unicast3"]``): the file then
describes one scenario (members, sends, faults, views) run once per protocol, and ``load_all``
returns one ``Model`` per protocol, in the order listed. What may differ between the protocols is
given per protocol, everything else is shared:

- ``variant`` and the ``[check]`` keys ``expect``, ``properties``, ``exclude``, ``states``,
  ``max_states`` and ``witness`` take either their usual value (shared by every protocol) or a
  table with one entry per protocol: ``expect = { unicast2 = "violation:...", unicast3 = "pass" }``.
  ``expect`` must name every protocol; the others fall back to their defaults.
- ``[config]`` and ``[timers]`` hold shared settings directly and a protocol's own settings in a
  subtable named after it: ``[config.unicast2]``, ``[timers.unicast3]`` (the subtable wins).

``load`` returns the one model of a single-protocol file (callers that run one model at a time
keep working); for a side-by-side file it needs ``protocol=``.

A witness (``[check] witness``) lists steps as ``seqcheck show`` words them ("A: application
sends to B", ...): ``checks/run.py`` replays them in the model's world to show that the scenario's
interleaving is reachable, with every checked safety property holding along it.
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
CHECK_KEYS = {"properties", "exclude", "expect", "states", "max_states", "witness"}
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
    witness: tuple[str, ...] = ()  # steps (as `seqcheck show` words them) that must replay
    protocols: tuple[str, ...] = ()  # every protocol of the file, in order (several: side by side)

    @property
    def side_by_side(self) -> bool:
        return len(self.protocols) > 1

    @property
    def reference(self) -> str:
        """How traces name this model: the file, plus ``#<protocol>`` for a side-by-side file."""
        return f"{self.path}#{self.protocol}" if self.side_by_side else str(self.path)


def split_reference(reference: str) -> tuple[str, str | None]:
    """(file, protocol) of a model reference: ``path#protocol`` names one protocol of a
    side-by-side file, a plain path a single-protocol file."""
    path, sep, protocol = reference.rpartition("#")
    if sep and protocol in PROTOCOLS:
        return path, protocol
    return reference, None


def load(path: str | Path, *, reduce_timestamps: bool = True, variant: tuple[str, ...] | None = None,
         protocol: str | None = None) -> Model:
    """Read, validate and build the model in ``path``.

    ``reduce_timestamps=False`` builds the world without rule 5 of ``models/world.py`` (real
    timestamps, for driving engines); ``variant`` replaces the file's variant (``()`` = the
    protocol as shipped, to run a defect's trace against the fix); ``protocol`` picks one protocol
    of a side-by-side file (required there)."""
    reader = _Reader(Path(path), _read(Path(path)), reduce_timestamps, variant)
    names = reader.protocols()
    if protocol is None:
        if len(names) > 1:
            raise reader.fail("protocol", f"one protocol, got {len(names)} side by side ({', '.join(names)}): "
                                          "name one, or read them all with load_all")
        protocol = names[0]
    elif protocol not in names:
        raise reader.fail("protocol", f"{protocol!r} among the protocols of the file ({', '.join(names)})")
    return reader.model(protocol)


def load_all(path: str | Path, *, reduce_timestamps: bool = True) -> list[Model]:
    """Every model of the file at ``path``: one per protocol it lists (one for most files), each
    validated before any is returned."""
    reader = _Reader(Path(path), _read(Path(path)), reduce_timestamps, None)
    return [reader.model(name) for name in reader.protocols()]


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ModelError(f"{path}: no such model file") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not valid TOML: expected UTF-8 text") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot be read: {error.strerror or error}") from None


class _Reader:
    def __init__(self, path: Path, raw: dict[str, Any], reduce_timestamps: bool = True,
                 variant: tuple[str, ...] | None = None) -> None:
        self.path, self.raw = path, raw
        self.reduce_timestamps, self.variant_override = reduce_timestamps, variant
        self.names: tuple[str, ...] = ()

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

    # -- the protocols, and values given per protocol ----------------------------------------------
    def protocols(self) -> tuple[str, ...]:
        """The protocols the file runs (validated): one name, or a list run side by side."""
        for key in self.raw:
            if key not in TOP_KEYS:
                raise self.fail(key, f"one of {', '.join(sorted(TOP_KEYS))}")
        raw = self.raw.get("protocol")
        known = ", ".join(sorted(PROTOCOLS))
        items: list[Any] = raw if isinstance(raw, list) else [raw]
        names: list[str] = []
        for item in items:
            if not isinstance(item, str) or item not in PROTOCOLS:
                where = " in the list" if isinstance(raw, list) else ""
                raise self.fail("protocol", f"one of {known}, got {item!r}{where}")
            names.append(item)
        if not names or len(set(names)) != len(names):
            raise self.fail("protocol", f"one of {known}, or a list of distinct ones, got {raw!r}")
        self.names = tuple(names)
        return self.names

    def own(self, key: str, value: Any, protocol: str) -> tuple[str, Any]:
        """(key for messages, value) of ``protocol`` for a value that may be given per protocol
        (a table keyed by protocol names) or once for all (anything else); None if not given."""
        if not isinstance(value, dict):
            return key, value
        for name in value:
            if name not in self.names:
                raise self.fail(f"{key}.{name}", f"one of the file's protocols ({', '.join(self.names)})")
        return f"{key}.{protocol}", value.get(protocol)

    def section(self, key: str, protocol: str, allowed: dict[str, Any]) -> dict[str, tuple[str, Any]]:
        """The settings of ``protocol`` in table ``key``: shared keys, overridden by the subtable
        named after the protocol; each value comes with its key for messages."""
        table = self.table(key, set())
        settings: dict[str, tuple[str, Any]] = {}
        for name, value in table.items():
            if name in PROTOCOLS:
                if name not in self.names:
                    raise self.fail(f"{key}.{name}", f"a protocol of the file ({', '.join(self.names)})")
                continue
            if name not in allowed:
                raise self.fail(f"{key}.{name}", self._unknown(key, protocol, allowed))
            settings[name] = (f"{key}.{name}", value)
        own = table.get(protocol, {})
        if not isinstance(own, dict):
            raise self.fail(f"{key}.{protocol}", "a table")
        for name, value in own.items():
            if name not in allowed:
                raise self.fail(f"{key}.{protocol}.{name}", self._unknown(key, protocol, allowed))
            settings[name] = (f"{key}.{protocol}.{name}", value)
        return settings

    def _unknown(self, key: str, protocol: str, allowed: dict[str, Any]) -> str:
        hint = f" (put another protocol's under [{key}.<protocol>])" if len(self.names) > 1 else ""
        if not allowed:
            return f"no key here: protocol {protocol} has no {key} settings{hint}"
        return f"one of {', '.join(sorted(allowed))}, for protocol {protocol}{hint}" if hint \
            else f"one of {', '.join(sorted(allowed))}"

    # -- one model ---------------------------------------------------------------------------------
    def model(self, protocol: str) -> Model:
        adapter = PROTOCOLS[protocol]
        members = self._members()
        n = len(members)
        variant = self._variant(adapter) if self.variant_override is None else self.variant_override
        timers = {k: self._flag(key, v) for k, (key, v) in
                  self.section("timers", protocol, adapter.timer_keys).items()}
        cfg = adapter.make_config(n, variant, {**adapter.timer_keys, **timers}, self._settings(adapter))
        fault_table = {**FAULT_KEYS, **self.table("faults", {**FAULT_KEYS, "stale_packets": False})}
        stale = self._flag("faults.stale_packets", fault_table.pop("stale_packets", False))
        faults = {k: self.natural(f"faults.{k}", v) for k, v in fault_table.items()}
        if faults["max_in_flight"] < 1:
            raise self.fail("faults.max_in_flight", "at least 1")
        bounds = Bounds(self._sends(members), faults["loss"], faults["duplicate"], faults["receiver_removals"],
                        self._views(members), faults["max_in_flight"], stale)
        check = self.table("check", CHECK_KEYS)
        selected = self._selected(check, protocol, property_names(adapter))
        expect = self._expect(*self.own("check.expect", check.get("expect"), protocol), selected)
        name = self.path.stem if len(self.names) == 1 else f"{self.path.stem}[{protocol}]"
        world = World(name, adapter, cfg, n, bounds, [frozenset(range(n))] * n, [],
                      reduce_timestamps=self.reduce_timestamps)
        world.member_names = members
        world.properties = build_properties(world, adapter, selected)
        key, pinned = self.own("check.states", check.get("states"), protocol)
        if pinned is not None:
            pinned = self.natural(key, pinned)
        key, most = self.own("check.max_states", check.get("max_states"), protocol)
        max_states = self.natural(key, 5_000_000 if most is None else most)
        description = self.raw.get("description", "")
        if not isinstance(description, str):
            raise self.fail("description", "a string")
        witness = self._witness(*self.own("check.witness", check.get("witness"), protocol))
        return Model(self.path, description, protocol, variant, members, expect, selected, pinned, max_states,
                     world, witness, self.names)

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
        given = self.section("config", adapter.name, adapter.config_keys)
        settings = {}
        for name, (default, minimum) in adapter.config_keys.items():
            key, value = given.get(name, (f"config.{name}", default))
            value = self.natural(key, value)
            if value < minimum:
                raise self.fail(key, f"at least {minimum}, got {value}")
            settings[name] = value
        return settings

    def _variant(self, adapter: ProtocolAdapter) -> tuple[str, ...]:
        key, raw = self.own("variant", self.raw.get("variant", []), adapter.name)
        raw = [] if raw is None else [raw] if isinstance(raw, str) else raw
        names = adapter.variant_names()
        aliases = adapter.variant_aliases
        if not isinstance(raw, list):
            raise self.fail(key, "a list of variant names")
        variant = []
        for item in raw:
            name = aliases.get(item, item) if isinstance(item, str) else None
            if name not in names:
                known = ", ".join(sorted(names | set(aliases)))
                raise self.fail(key, f"names from {known}, got {item!r}")
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

    def _selected(self, check: dict[str, Any], protocol: str, known: list[str]) -> tuple[str, ...]:
        """``check.properties`` (default all) minus ``check.exclude``."""
        key, raw = self.own("check.properties", check.get("properties"), protocol)
        selected = self._properties(key, ["all"] if raw is None else raw, known)
        key, raw = self.own("check.exclude", check.get("exclude"), protocol)
        if raw is None:
            return selected
        if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
            raise self.fail(key, "a list of property names to leave out")
        for name in raw:
            if name not in selected:
                raise self.fail(key, f"names from the checked properties ({', '.join(selected)}); got {name!r}")
        return tuple(p for p in selected if p not in raw)

    def _properties(self, key: str, raw: Any, known: list[str]) -> tuple[str, ...]:
        if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
            raise self.fail(key, "a list of property names (or [\"all\"])")
        if raw == ["all"]:
            return tuple(known)
        for name in raw:
            if name not in known:
                raise self.fail(key, f"names from: {', '.join(known)}; got {name!r}")
        return tuple(raw)

    def _expect(self, key: str, raw: Any, selected: tuple[str, ...]) -> str:
        if raw == "pass":
            return raw
        if isinstance(raw, str) and raw.startswith("violation:") and raw[len("violation:"):] in selected:
            return raw
        raise self.fail(key, f"\"pass\" or \"violation:<one of the checked properties>\", got {raw!r}")

    def _witness(self, key: str, raw: Any) -> tuple[str, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list) or not raw or not all(isinstance(s, str) and s.strip() for s in raw):
            raise self.fail(key, "a non-empty list of steps, each worded as `seqcheck show` words an action")
        return tuple(s.strip() for s in raw)
