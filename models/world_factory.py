"""The model-file section of ``models/world.py``: the factory (``models/registry.py``) of every
protocol that runs in the point-to-point world (UNICAST2, UNICAST3).

It reads the keys the world needs (``variant``, ``members``, ``sends``, ``oob``, ``faults``,
``views``, ``timers``, ``config``), validates them against the protocol's adapter (its variants, timers and
settings) and builds the ``World`` with the selected properties of ``models/properties.py``. A
protocol with one-to-many sends and joins (NAKACK2, NAKACK4) gets a world and a factory of its own
beside this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models import registry
from models.properties import build_properties, property_docs
from models.registry import BuildOptions, Built
from models.world import Bounds, World

if TYPE_CHECKING:
    from models.modelfile import ModelReader
    from models.protocols.base import ProtocolAdapter

FAULT_KEYS = {"loss": 0, "duplicate": 0, "receiver_removals": 0, "max_in_flight": 3, "max_batch": 0}  # default
FAULT_OPTIONS = {"stale_packets": False, "dead": ()}  # the other [faults] keys: default
VIEW_KEYS = ("member", "view")  # each [[views]] entry
WORLD_KEYS = frozenset({"variant", "members", "sends", "oob", "dont_loopback", "faults", "views", "timers", "config"})


class WorldFactory:
    """The ``ModelFactory`` of a protocol adapter in ``models/world.py``'s world."""

    model_keys = WORLD_KEYS

    def __init__(self, adapter: ProtocolAdapter) -> None:
        self.adapter = adapter
        self.name = adapter.name

    def property_docs(self) -> dict[str, str]:
        return property_docs(self.adapter)

    def describe(self) -> list[str]:
        return ["variants:", *(f"  {flag:<24} {alias}" for alias, flag in self.adapter.variant_aliases.items())]

    def build(self, reader: ModelReader, protocol: str, selected: tuple[str, ...], options: BuildOptions) -> Built:
        adapter = self.adapter
        members = _members(reader)
        n = len(members)
        variant = _variant(reader, adapter) if options.variant is None else options.variant
        timers = {k: reader.flag(key, v)
                  for k, (key, v) in reader.section("timers", protocol, adapter.timer_keys).items()}
        cfg = adapter.make_config(n, variant, {**adapter.timer_keys, **timers}, _settings(reader, adapter))
        fault_table = {**FAULT_KEYS, **reader.table("faults", {**FAULT_KEYS, **FAULT_OPTIONS})}
        stale: bool | str = fault_table.pop("stale_packets", False)
        if stale != "replies" and not isinstance(stale, bool):
            raise reader.fail("faults.stale_packets", f'true, false or "replies", got {stale!r}')
        dead = _dead(reader, members, fault_table.pop("dead", []))
        faults = {k: reader.natural(f"faults.{k}", v) for k, v in fault_table.items()}
        if faults["max_in_flight"] < 1:
            raise reader.fail("faults.max_in_flight", "at least 1")
        if faults["max_batch"] == 1 or (faults["max_batch"] and not adapter.batches):
            raise reader.fail("faults.max_batch", "0 (no batches) or at least 2" if adapter.batches else
                              f"0: protocol {adapter.name} has no batch input (UNICAST3 and UNICAST4 have)")
        sends = _sends(reader, members, adapter)
        if faults["max_batch"] and any(sends[m * n + m] for m in range(n)):
            raise reader.fail("faults.max_batch", "0 in a model with messages to self (\"A->A\" in [sends]): "
                                                  "batches from self (handleBatchFromSelf) are not modelled")
        bounds = Bounds(sends, faults["loss"], faults["duplicate"], faults["receiver_removals"],
                        _views(reader, members), faults["max_in_flight"], stale, dead,
                        _oob(reader, members, sends, adapter), faults["max_batch"],
                        _flagged(reader, "dont_loopback", members, sends, adapter))
        _check_dead(reader, members, bounds)
        name = reader.path.stem if len(reader.names) == 1 else f"{reader.path.stem}[{protocol}]"
        world = World(name, adapter, cfg, n, bounds, [frozenset(range(n))] * n, [],
                      reduce_timestamps=options.reduce_timestamps, rank_conn_ids=options.rank_conn_ids)
        world.member_names = members
        world.properties = build_properties(world, adapter, selected)
        return Built(world, members, variant)


def _members(reader: ModelReader) -> tuple[str, ...]:
    members = reader.raw.get("members")
    if (not isinstance(members, list) or not 2 <= len(members) <= 4
            or not all(isinstance(m, str) and m for m in members) or len(set(members)) != len(members)):
        raise reader.fail("members", "a list of 2 to 4 distinct member names")
    return tuple(members)


def _settings(reader: ModelReader, adapter: ProtocolAdapter) -> dict[str, int]:
    """The protocol's settings in [config] (each a whole number with a minimum), defaults filled in."""
    given = reader.section("config", adapter.name, adapter.config_keys)
    settings = {}
    for name, (default, minimum) in adapter.config_keys.items():
        key, value = given.get(name, (f"config.{name}", default))
        value = reader.natural(key, value)
        if value < minimum:
            raise reader.fail(key, f"at least {minimum}, got {value}")
        maximum = adapter.config_maxima.get(name)
        if maximum is not None and value > maximum:
            raise reader.fail(key, f"at most {maximum}, got {value}")
        settings[name] = value
    return settings


def _variant(reader: ModelReader, adapter: ProtocolAdapter) -> tuple[str, ...]:
    key, raw = reader.own("variant", reader.raw.get("variant", []), adapter.name)
    raw = [] if raw is None else [raw] if isinstance(raw, str) else raw
    names = adapter.variant_names()
    aliases = adapter.variant_aliases
    if not isinstance(raw, list):
        raise reader.fail(key, "a list of variant names")
    variant = []
    for item in raw:
        name = aliases.get(item, item) if isinstance(item, str) else None
        if name not in names:
            known = ", ".join(sorted(names | set(aliases)))
            raise reader.fail(key, f"names from {known}, got {item!r}")
        variant.append(name)
    return tuple(sorted(set(variant)))


def _member_index(reader: ModelReader, key: str, name: Any, members: tuple[str, ...]) -> int:
    if name not in members:
        raise reader.fail(key, f"a member name ({', '.join(members)}), got {name!r}")
    return members.index(name)


def _sends(reader: ModelReader, members: tuple[str, ...], adapter: ProtocolAdapter) -> tuple[int, ...]:
    """``[sends]``: per pair ``"A->B"`` the application messages A sends B; ``"A->A"`` (messages to
    self) where the protocol has them (``ProtocolAdapter.self_sends``)."""
    n = len(members)
    sends = [0] * (n * n)
    for pair, count in reader.table("sends", set()).items():
        src, sep, dst = pair.partition("->")
        if not sep:
            raise reader.fail(f"sends.{pair}", "a key of the form \"A->B\"")
        s = _member_index(reader, f"sends.{pair}", src.strip(), members)
        d = _member_index(reader, f"sends.{pair}", dst.strip(), members)
        if s == d and not adapter.self_sends:
            raise reader.fail(f"sends.{pair}", f"two different members (protocol {adapter.name} has no "
                                               "messages to self here; UNICAST3 and UNICAST4 have)")
        sends[s * n + d] = reader.natural(f"sends.{pair}", count)
    return tuple(sends)


def _oob(reader: ModelReader, members: tuple[str, ...], sends: tuple[int, ...],
         adapter: ProtocolAdapter) -> frozenset[tuple[int, int, int]]:
    """``[oob]``: per pair ``"A->B"``, the numbers (1 = the first) of A's sends to B that the
    application flags OOB, as (src, dst, n)."""
    return _flagged(reader, "oob", members, sends, adapter)


def _flagged(reader: ModelReader, table: str, members: tuple[str, ...], sends: tuple[int, ...],
             adapter: ProtocolAdapter) -> frozenset[tuple[int, int, int]]:
    """``[oob]`` or ``[dont_loopback]``: per pair ``"A->B"``, the numbers (1 = the first) of A's sends
    to B that the application flags so, as (src, dst, n). DONT_LOOPBACK only on a member's sends to
    itself (``"A->A"``): on a unicast to another member the flag changes nothing in UNICAST3/4."""
    raw = reader.raw.get(table)
    if raw is None:
        return frozenset()
    if table == "oob" and not adapter.oob_flag:
        raise reader.fail("oob", f"no [oob] table: protocol {adapter.name} has no OOB flag "
                                 "(UNICAST3 and UNICAST4 have)")
    if table == "dont_loopback" and not adapter.dont_loopback_flag:
        raise reader.fail("dont_loopback", f"no [dont_loopback] table: protocol {adapter.name} has no "
                                           "DONT_LOOPBACK unicasts to self here (UNICAST3 and UNICAST4 have)")
    n, chosen = len(members), set[tuple[int, int, int]]()
    for pair, numbers in reader.table(table, set()).items():
        key = f"{table}.{pair}"
        src, sep, dst = pair.partition("->")
        if not sep:
            raise reader.fail(key, "a key of the form \"A->B\"" if table == "oob" else "a key of the form \"A->A\"")
        s, d = (_member_index(reader, key, name.strip(), members) for name in (src, dst))
        if table == "dont_loopback" and s != d:
            raise reader.fail(key, "a member's sends to itself (\"A->A\"): DONT_LOOPBACK on a unicast to another "
                                   "member changes nothing in UNICAST3/UNICAST4")
        count = sends[s * n + d]
        if (not isinstance(numbers, list) or len(set(map(repr, numbers))) != len(numbers)
                or not all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= count for k in numbers)):
            raise reader.fail(key, f"a list of distinct send numbers from 1 to {count} (sends.{pair}), "
                                   f"got {numbers!r}")
        chosen.update((s, d, k) for k in numbers)
    return frozenset(chosen)


def _dead(reader: ModelReader, members: tuple[str, ...], names: Any) -> frozenset[int]:
    """``[faults] dead``: members that crashed before the run (``models/world.py`` rule 7)."""
    if not isinstance(names, list):
        raise reader.fail("faults.dead", "a list of member names")
    dead = frozenset(_member_index(reader, "faults.dead", name, members) for name in names)
    if len(dead) >= len(members):
        raise reader.fail("faults.dead", "fewer dead members than members")
    return dead


def _check_dead(reader: ModelReader, members: tuple[str, ...], bounds: Bounds) -> None:
    """A dead member sends nothing and installs no view."""
    n = len(members)
    for m in sorted(bounds.dead):
        if any(bounds.sends[m * n + d] for d in range(n)):
            raise reader.fail("faults.dead", f"members that send nothing ({members[m]} has sends)")
        if bounds.views[m]:
            raise reader.fail("faults.dead", f"members without views ({members[m]} has [[views]])")


def _views(reader: ModelReader, members: tuple[str, ...]) -> tuple[tuple[frozenset[int], ...], ...]:
    scripts: list[list[frozenset[int]]] = [[] for _ in members]
    views = reader.raw.get("views", [])
    if not isinstance(views, list):
        raise reader.fail("views", "an array of tables [[views]] with member and view")
    for i, item in enumerate(views):
        key = f"views[{i}]"
        if not isinstance(item, dict) or set(item) != set(VIEW_KEYS) or not isinstance(item["view"], list):
            raise reader.fail(key, "a table with keys member (a name) and view (a list of names)")
        member = _member_index(reader, f"{key}.member", item["member"], members)
        view = frozenset(_member_index(reader, f"{key}.view", m, members) for m in item["view"])
        if member not in view:
            raise reader.fail(f"{key}.view", "a view that contains its own member")
        scripts[member].append(view)
    return tuple(tuple(s) for s in scripts)


def world_adapters() -> dict[str, ProtocolAdapter]:
    """The adapters of every registered protocol that runs in this world, by name."""
    return {f.name: f.adapter for f in registry.factories() if isinstance(f, WorldFactory)}
