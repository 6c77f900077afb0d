"""The model-file section of ``models/multicast_world.py``: the factory (``models/registry.py``) of
every protocol that runs in the multicast world (NAKACK2, NAKACK4).

Keys (besides ``description``, ``protocol`` and ``[check]``): ``members`` (2 to 4 names);
``variant``; ``[sends]`` per member (``A = 3``: multicasts its application makes); ``[faults]``
``loss``, ``duplicate``, ``below_drop`` (drops between the transport and the protocol, seed 004),
``max_in_flight`` (per directed channel, default 3), ``max_batch`` (0: off; N >= 2: up to N packets
of one channel and bundle as one input, ``models/multicast_batch.py``); ``[[views]]`` (``member``, ``view``: per-member
scripts, installed in order); ``[[joins]]`` (``joiner``, ``coordinator``: the joiner starts outside
the group, the coordinator answers it with its next scripted view, which must hold the joiner);
``[[stops]]`` (``member``, ``kind``: "leave" or "crash", each member at most once, rule 8);
``[config]`` the protocol's settings (whole numbers, or true/false for switches); ``[dont_loopback]``
(NAKACK2: ``A = [2]``, the numbers of A's multicasts flagged DONT_LOOPBACK); ``[oob]`` (``A = [1]``,
those flagged OOB); ``window_bound``
(the ``window_bounded`` property's limit, default 2); ``sends_after_joins`` (true: no multicast
before every join is answered, ``models/multicast_world.py`` rule 6); ``views_are_progress`` (true: the
scripted views are not faults, rule 7); ``merges`` (member names: each installs the last view of its
script as a merge view, MERGE_DIGEST first, rule 10). Every mistake is one line naming the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models.multicast_world import CRASH, LEAVE, McastBounds, MulticastWorld
from models.registry import BuildOptions, Built

if TYPE_CHECKING:
    from models.modelfile import ModelReader

FAULT_KEYS = {"loss": 0, "duplicate": 0, "below_drop": 0, "max_in_flight": 3, "max_batch": 0}
DEFAULTS = {"window_bound": 2, "sends_after_joins": False, "views_are_progress": False}  # top-level keys
ENTRY_KEYS = {"views": ("member", "view"), "joins": ("joiner", "coordinator"), "stops": ("member", "kind")}
MODEL_KEYS = frozenset({"variant", "members", "sends", "faults", "views", "joins", "config", "window_bound",
                        "sends_after_joins", "stops", "views_are_progress", "merges", "dont_loopback",
                        "oob"})


class MulticastFactory:
    """The ``ModelFactory`` of a protocol adapter in the multicast world."""

    model_keys = MODEL_KEYS

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.name: str = adapter.name

    def property_docs(self) -> dict[str, str]:
        return dict(self.adapter.all_property_docs())

    def describe(self) -> list[str]:
        switches = self.adapter.boolean_settings
        settings = [f"  {k:<28} default {str(bool(v[0])).lower() if k in switches else v[0]}"
                    for k, v in self.adapter.config_keys.items()]
        return ["variants:", *(f"  {flag:<24} {alias}" for alias, flag in self.adapter.variant_aliases.items()),
                "settings ([config]):", *settings]

    def build(self, reader: ModelReader, protocol: str, selected: tuple[str, ...], options: BuildOptions) -> Built:
        members = read_members(reader)
        n = len(members)
        variant = read_variant(reader, self.adapter) if options.variant is None else options.variant
        cfg = self.adapter.make_config(n, variant, {}, self._settings(reader, protocol))
        faults = {**FAULT_KEYS, **reader.table("faults", FAULT_KEYS)}
        faults = {k: reader.natural(f"faults.{k}", v) for k, v in faults.items()}
        if faults["max_in_flight"] < 1:
            raise reader.fail("faults.max_in_flight", "at least 1")
        if faults["max_batch"] == 1 or (faults["max_batch"] and not self.adapter.batches):
            raise reader.fail("faults.max_batch", "0 (no batches) or at least 2" if self.adapter.batches else
                              f"0: protocol {self.adapter.name} has no batch input")
        joins = read_joins(reader, members)
        views = read_views(reader, members)
        for i, (joiner, coordinator) in enumerate(joins):
            if not any(joiner in view for view in views[coordinator]):
                raise reader.fail(f"joins[{i}]", f"a coordinator ({members[coordinator]}) whose [[views]] script "
                                                 f"has a view with the joiner {members[joiner]}")
        given = {**DEFAULTS, **{k: v for k, v in reader.raw.items() if k in DEFAULTS}}
        bound = reader.natural("window_bound", given["window_bound"])
        bounds = McastBounds(read_sends(reader, members), faults["loss"], faults["duplicate"],
                             faults["below_drop"], views, joins, faults["max_in_flight"],
                             reader.flag("sends_after_joins", given["sends_after_joins"]),
                             read_stops(reader, members),
                             ("no_premature_xmit_req" in selected and getattr(cfg, "retransmission", False))
                             or "no_spurious_xmit_req" in selected,
                             reader.flag("views_are_progress", given["views_are_progress"]),
                             read_merges(reader, members, views), read_dont_loopback(reader, members, self.adapter),
                             faults["max_batch"],
                             read_oob(reader, members, self.adapter))
        if bounds.oob and bounds.max_batch:  # left out: an OOB MSG goes up in an OOB batch (world rule 11)
            raise reader.fail("oob", "no [oob] table with [faults] max_batch: OOB multicasts in batches are not "
                                     "modelled (the world's batches hold regular MSGs only)")
        founders = frozenset(range(n)) - {j for j, _ in joins}
        name = reader.path.stem if len(reader.names) == 1 else f"{reader.path.stem}[{protocol}]"
        world = MulticastWorld(name, self.adapter, cfg, n, bounds, [founders] * n)
        world.member_names = members
        world.window_bound = bound
        world.properties = self.adapter.build_properties(world, selected, bound)
        return Built(world, members, variant)

    def _settings(self, reader: ModelReader, protocol: str) -> dict[str, int]:
        given = reader.section("config", protocol, self.adapter.config_keys)
        settings = {}
        for name, (default, minimum) in self.adapter.config_keys.items():
            switch = name in self.adapter.boolean_settings
            key, value = given.get(name, (f"config.{name}", bool(default) if switch else default))
            if switch:
                settings[name] = int(reader.flag(key, value))
                continue
            value = reader.natural(key, value)
            if value < minimum:
                raise reader.fail(key, f"at least {minimum}, got {value}")
            settings[name] = value
        return settings


def read_members(reader: ModelReader) -> tuple[str, ...]:
    members = reader.raw.get("members")
    if (not isinstance(members, list) or not 2 <= len(members) <= 4
            or not all(isinstance(m, str) and m for m in members) or len(set(members)) != len(members)):
        raise reader.fail("members", "a list of 2 to 4 distinct member names")
    return tuple(members)


def read_variant(reader: ModelReader, adapter: Any) -> tuple[str, ...]:
    key, raw = reader.own("variant", reader.raw.get("variant", []), adapter.name)
    raw = [] if raw is None else [raw] if isinstance(raw, str) else raw
    if not isinstance(raw, list):
        raise reader.fail(key, "a list of variant names")
    names, aliases = adapter.variant_names(), adapter.variant_aliases
    variant: list[str] = []
    for item in raw:
        name = aliases.get(item, item) if isinstance(item, str) else None
        if name is None or name not in names:
            raise reader.fail(key, f"names from {', '.join(sorted(names | set(aliases)))}, got {item!r}")
        variant.append(name)
    return tuple(sorted(set(variant)))


def member_index(reader: ModelReader, key: str, name: Any, members: tuple[str, ...]) -> int:
    if name not in members:
        raise reader.fail(key, f"a member name ({', '.join(members)}), got {name!r}")
    return members.index(name)


def read_sends(reader: ModelReader, members: tuple[str, ...]) -> tuple[int, ...]:
    sends = [0] * len(members)
    for name, count in reader.table("sends", set()).items():
        sends[member_index(reader, f"sends.{name}", name, members)] = reader.natural(f"sends.{name}", count)
    return tuple(sends)


def read_entries(reader: ModelReader, key: str, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    entries = reader.raw.get(key, [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) and set(e) == set(fields) for e in entries):
        raise reader.fail(key, f"an array of tables [[{key}]], each with exactly the keys {' and '.join(fields)}")
    return entries


def read_views(reader: ModelReader, members: tuple[str, ...]) -> tuple[tuple[frozenset[int], ...], ...]:
    scripts: list[list[frozenset[int]]] = [[] for _ in members]
    for i, item in enumerate(read_entries(reader, "views", ENTRY_KEYS["views"])):
        member = member_index(reader, f"views[{i}].member", item["member"], members)
        if not isinstance(item["view"], list):
            raise reader.fail(f"views[{i}].view", "a list of member names")
        view = frozenset(member_index(reader, f"views[{i}].view", m, members) for m in item["view"])
        if member not in view:
            raise reader.fail(f"views[{i}].view", "a view that contains its own member")
        scripts[member].append(view)
    return tuple(tuple(s) for s in scripts)


def read_joins(reader: ModelReader, members: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    joins: list[tuple[int, int]] = []
    entries = read_entries(reader, "joins", ENTRY_KEYS["joins"])
    indices = [(member_index(reader, f"joins[{i}].joiner", item["joiner"], members),
                 member_index(reader, f"joins[{i}].coordinator", item["coordinator"], members))
                for i, item in enumerate(entries)]
    for i, (joiner, coordinator) in enumerate(indices):
        if any(coordinator == j for j, _ in indices):
            raise reader.fail(f"joins[{i}].coordinator", "a member of the initial group, not a joiner")
        if any(j == joiner for j, _ in joins):
            raise reader.fail(f"joins[{i}].joiner", f"a member that joins once, got {members[joiner]!r} again")
        joins.append((joiner, coordinator))
    if len(joins) == len(members):
        raise reader.fail("joins", "at least one member of the initial group")
    return tuple(joins)


def read_stops(reader: ModelReader, members: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    stops: list[tuple[int, str]] = []
    for i, item in enumerate(read_entries(reader, "stops", ENTRY_KEYS["stops"])):
        member = member_index(reader, f"stops[{i}].member", item["member"], members)
        if item["kind"] not in (LEAVE, CRASH):
            raise reader.fail(f"stops[{i}].kind", f'"{LEAVE}" or "{CRASH}", got {item["kind"]!r}')
        if any(m == member for m, _ in stops):
            raise reader.fail(f"stops[{i}].member", f"a member that stops once, got {members[member]!r} again")
        stops.append((member, item["kind"]))
    return tuple(stops)


def read_dont_loopback(reader: ModelReader, members: tuple[str, ...], adapter: Any) -> frozenset[tuple[int, int]]:
    """``[dont_loopback]``: per member, the numbers (1 = the first) of its multicasts flagged
    DONT_LOOPBACK (world rule 6); NAKACK2 only (NAKACK4's flag is the ``[config]`` switch)."""
    if "dont_loopback" not in reader.raw:
        return frozenset()
    if not adapter.dont_loopback_per_send:
        raise reader.fail("dont_loopback", f"no [dont_loopback] table: protocol {adapter.name} flags every multicast "
                                           "or none ([config] dont_loopback = true)")
    sends = read_sends(reader, members)
    flagged: set[tuple[int, int]] = set()
    for name, numbers in reader.table("dont_loopback", set()).items():
        key = f"dont_loopback.{name}"
        member = member_index(reader, key, name, members)
        if not isinstance(numbers, list) or not numbers or not all(
                type(k) is int and 1 <= k <= sends[member] for k in numbers):
            raise reader.fail(key, f"a non-empty list of send numbers in 1..{sends[member]} ([sends] {name})")
        flagged.update((member, k) for k in numbers)
    return frozenset(flagged)


def read_oob(reader: ModelReader, members: tuple[str, ...], adapter: Any) -> frozenset[tuple[int, int]]:
    """``[oob]``: per member, the distinct numbers (1 = the first) of its multicasts the application
    flags OOB (world rule 6); refused for a protocol without the flag."""
    if "oob" not in reader.raw:
        return frozenset()
    if not adapter.oob_flag:
        raise reader.fail("oob", f"no [oob] table: protocol {adapter.name} has no OOB flag")
    sends = read_sends(reader, members)
    flagged: set[tuple[int, int]] = set()
    for name, numbers in reader.table("oob", set()).items():
        key = f"oob.{name}"
        member = member_index(reader, key, name, members)
        if not isinstance(numbers, list) or not numbers or len(set(map(repr, numbers))) != len(numbers) or not all(
                type(k) is int and 1 <= k <= sends[member] for k in numbers):
            raise reader.fail(key, f"a non-empty list of distinct send numbers in 1..{sends[member]} "
                                   f"([sends] {name}), got {numbers!r}")
        flagged.update((member, k) for k in numbers)
    return frozenset(flagged)


def read_merges(reader: ModelReader, members: tuple[str, ...],
                views: tuple[tuple[frozenset[int], ...], ...]) -> frozenset[int]:
    """``merges``: members whose last scripted view is installed as a merge view (world rule 10)."""
    raw = reader.raw.get("merges", [])
    if not isinstance(raw, list):
        raise reader.fail("merges", "a list of member names")
    merging = frozenset(member_index(reader, "merges", name, members) for name in raw)
    for member in sorted(merging):
        if not views[member]:
            raise reader.fail("merges", f"members with a [[views]] script (its last view is the merge view), "
                                        f"got {members[member]!r}")
    return merging
