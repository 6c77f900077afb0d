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
sends to B", ...): ``checks/check.py`` replays them in the model's world to show that the scenario's
interleaving is reachable, with every checked safety property holding along it.
"""

from __future__ import annotations

import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checks.explore import textlimits
from checks.explore.system import DEFAULT_MAX_STATES  # [check] max_states when a file does not set it
from models import registry
from models.registry import BuildOptions

BASE_KEYS = {"description", "protocol", "check"}  # every model file; the rest belong to the protocol's world
CHECK_KEYS = {"properties", "exclude", "expect", "states", "max_states", "witness", "symmetry", "partial_order"}
# defaults of the [check] keys that have one (docs/model-files.md is generated from these tables)
CHECK_DEFAULTS: dict[str, Any] = {"max_states": DEFAULT_MAX_STATES, "symmetry": True, "partial_order": False}


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
    world: Any  # the protocol's transition system (for UNICAST2/UNICAST3 a models.world.World)
    witness: tuple[str, ...] = ()  # steps (as `seqcheck show` words them) that must replay
    protocols: tuple[str, ...] = ()  # every protocol of the file, in order (several: side by side)
    symmetry: bool = True  # [check] symmetry: explore one state per orbit of interchangeable members
    partial_order: bool = False  # [check] partial_order: explore persistent sets only (checks/explore/reduction.py)
    max_states_given: bool = False  # the file sets [check] max_states (else the default, DEFAULT_MAX_STATES)

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
    if sep and registry.is_known(protocol):
        return path, protocol
    return reference, None


def load(path: str | Path, *, reduce_timestamps: bool = True, variant: tuple[str, ...] | None = None,
         protocol: str | None = None, rank_conn_ids: bool = True) -> Model:
    """Read, validate and build the model in ``path``.

    ``reduce_timestamps=False`` builds the world without rule 5 of ``models/world.py`` (real
    timestamps, for driving engines); ``variant`` replaces the file's variant (``()`` = the
    protocol as shipped, to run a defect's trace against the fix); ``protocol`` picks one protocol
    of a side-by-side file (required there); ``rank_conn_ids=False`` turns rule 5b off."""
    reader = ModelReader(Path(path), _read(Path(path)), BuildOptions(reduce_timestamps, variant, rank_conn_ids))
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
    reader = ModelReader(Path(path), _read(Path(path)), BuildOptions(reduce_timestamps))
    return [reader.model(name) for name in reader.protocols()]


MAX_MODEL_BYTES = 1 << 20  # a model file is a page of TOML; anything larger is a mistake


def _read(path: Path) -> dict[str, Any]:
    """The TOML table in ``path``; every way it can fail is one ``ModelError`` line (a FIFO or a
    device is refused before it is read, so nothing hangs; nesting and huge integers are caught)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ModelError(f"{path}: not a regular file")
        with path.open("rb") as file:
            data = file.read(MAX_MODEL_BYTES + 1)
        if len(data) > MAX_MODEL_BYTES:
            raise ModelError(f"{path}: larger than {MAX_MODEL_BYTES} bytes: not a model file")
        text = data.decode("utf-8")
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise ModelError(f"{path}: no such model file") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{path}: not valid TOML: expected UTF-8 text") from None
    except (RecursionError, ValueError) as error:  # nesting, an integer of more than 4,300 digits
        where = textlimits.locate_toml(text)
        raise ModelError(f"{path}: {where}" if where else f"{path}: not valid TOML: {error}") from None
    except OSError as error:
        raise ModelError(f"{path}: cannot be read: {error.strerror or error}") from None
    deep = textlimits.check_nesting(raw)
    if deep is not None:
        raise ModelError(f"{path}: {deep}")
    return raw


class ModelReader:
    """One model file being read: the keys every model file has (``protocol``, ``description``,
    ``[check]``), and the helpers a protocol's factory (``models/registry.py``) reads its own keys
    with, so that every mistake is one ``ModelError`` line naming the file and the key."""

    def __init__(self, path: Path, raw: dict[str, Any], options: BuildOptions | None = None) -> None:
        self.path, self.raw, self.options = path, raw, options or BuildOptions()
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

    def flag(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"true or false, got {value!r}")
        return value

    def natural(self, key: str, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise self.fail(key, f"a whole number >= 0, got {value!r}")
        return value

    # -- the protocols, and values given per protocol ----------------------------------------------
    def protocols(self) -> tuple[str, ...]:
        """The protocols the file runs (validated): one name, or a list run side by side."""
        raw = self.raw.get("protocol")
        known = ", ".join(registry.names())
        items: list[Any] = raw if isinstance(raw, list) else [raw]
        names: list[str] = []
        for item in items:
            if not isinstance(item, str) or not registry.is_known(item):
                where = " in the list" if isinstance(raw, list) else ""
                raise self.fail("protocol", f"one of {known}, got {item!r}{where}")
            names.append(item)
        if not names or len(set(names)) != len(names):
            raise self.fail("protocol", f"one of {known}, or a list of distinct ones, got {raw!r}")
        self.names = tuple(names)
        keys = BASE_KEYS.union(*(self.factory(name).model_keys for name in names))
        for key in self.raw:
            if key not in keys:
                raise self.fail(key, f"one of {', '.join(sorted(keys))}")
        return self.names

    def factory(self, protocol: str) -> registry.ModelFactory:
        try:
            return registry.get(protocol)
        except KeyError as error:
            raise self.fail("protocol", f"a registered protocol: {error}") from None

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
            if registry.is_known(name):
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
        factory = self.factory(protocol)
        check = self.table("check", CHECK_KEYS)
        selected = self._selected(check, protocol, list(factory.property_docs()))
        expect = self._expect(*self.own("check.expect", check.get("expect"), protocol), selected)
        built = factory.build(self, protocol, selected, self.options)
        key, pinned = self.own("check.states", check.get("states"), protocol)
        if pinned is not None:
            pinned = self.natural(key, pinned)
        key, most = self.own("check.max_states", check.get("max_states"), protocol)
        max_states = self.natural(key, CHECK_DEFAULTS["max_states"] if most is None else most)
        description = self.raw.get("description", "")
        if not isinstance(description, str):
            raise self.fail("description", "a string")
        witness = self._witness(*self.own("check.witness", check.get("witness"), protocol))
        key, raw = self.own("check.symmetry", check.get("symmetry"), protocol)
        symmetry = CHECK_DEFAULTS["symmetry"] if raw is None else self.flag(key, raw)
        key, raw = self.own("check.partial_order", check.get("partial_order"), protocol)
        partial_order = CHECK_DEFAULTS["partial_order"] if raw is None else self.flag(key, raw)
        if partial_order and not callable(getattr(built.system, "enable_partial_order", None)):
            raise self.fail(key, f"false: partial-order reduction is not available for protocol {protocol}")
        return Model(self.path, description, protocol, built.variant, built.members, expect, selected, pinned,
                     max_states, built.system, witness, self.names, symmetry, partial_order, most is not None)

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
