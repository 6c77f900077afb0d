"""A member's spec state as named rows for the HTML viewer's panel: ``(path, value)`` per leaf field.

It owns the wording, not the knowledge: each protocol adapter declares a ``StateLayout`` (which
fields are indexed by member, which hold a member or a set of members, which hold seqnos, what the
positions of a fixed tuple are called, what the numbers of an enumeration mean), and this module
walks a frozen dataclass state by it. So a per-member tuple becomes one row per member named by the
member (``ack_table[B] = 3``, ``send[B].acked = 2``), a nested entry one row per field, a pair its
named parts (``watermark.high = 2``), and no Python repr reaches the page. A field the layout does
not mention is still shown, worded generically (numbers, flags, nested dataclasses by field name).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StateLayout:
    """What a protocol's state fields mean, by field name (at any depth: ``state`` names the field of a
    send entry and of a receive entry alike)."""

    per_member: frozenset[str] = frozenset()  # tuples indexed by member: one row per member
    member: frozenset[str] = frozenset()  # an int that is a member (``me``)
    member_set: frozenset[str] = frozenset()  # a frozenset of members (``members``, ``sync_sent``)
    seqnos: frozenset[str] = frozenset()  # ints, tuples or sets of seqnos (or of DATA): ``#n``
    parts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # fixed tuple -> its positions' names
    entries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # tuple of fixed tuples -> positions' names
    enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # int -> name (index into the tuple)
    absent: Mapping[str, int] = field(default_factory=dict)  # per-member ints: the value meaning "no entry"


GENERIC = StateLayout()


def state_rows(node: Any, layout: StateLayout, names: Sequence[str]) -> list[tuple[str, str]]:
    """Every leaf of ``node`` as ``(path, text)``: ``seqno``, ``send[B].acked``, ``watermark.high``."""
    if not dataclasses.is_dataclass(node):
        return [("state", _text("state", node, layout, names))]
    return list(_fields(node, layout, names, ""))


def _fields(value: Any, layout: StateLayout, names: Sequence[str], path: str) -> Iterator[tuple[str, str]]:
    for f in dataclasses.fields(value):
        yield from _rows(f.name, getattr(value, f.name), layout, names, f"{path}.{f.name}" if path else f.name)


def _rows(name: str, value: Any, layout: StateLayout, names: Sequence[str], path: str,
          indexed: bool = False) -> Iterator[tuple[str, str]]:
    """The rows of one field; ``indexed``: ``value`` is already one member's item of a per-member field."""
    if name in layout.per_member and isinstance(value, tuple) and not indexed:
        yield from _per_member(name, value, layout, names, path)
    elif name in layout.parts and isinstance(value, tuple) and len(value) == len(layout.parts[name]):
        for part, item in zip(layout.parts[name], value):
            yield f"{path}.{part}", _text(part, item, layout, names)
    elif dataclasses.is_dataclass(value):
        yield from _fields(value, layout, names, path)
    else:
        yield path, _text(name, value, layout, names)


def _per_member(name: str, value: tuple[Any, ...], layout: StateLayout, names: Sequence[str],
                path: str) -> Iterator[tuple[str, str]]:
    """One row (or group of rows) per member; entries that hold nothing (no entry, an empty set) are left out,
    and a field with no entry at all is one row ``none``."""
    held = False
    for member, item in enumerate(value):
        if item is None or item == frozenset() or item == layout.absent.get(name, object()):
            continue
        held = True
        label = names[member] if member < len(names) else str(member)
        yield from _rows(name, item, layout, names, f"{path}[{label}]", indexed=True)
    if not held:
        yield path, "none"


def _text(name: str, value: Any, layout: StateLayout, names: Sequence[str]) -> str:
    """One leaf value in words."""
    if value is None:
        return "none"
    if getattr(value, "_fields", None) is not None or dataclasses.is_dataclass(value):  # a message, a record
        return _item(value, layout, names)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name in layout.member and isinstance(value, int):
        return _member(value, names)
    if name in layout.member_set and isinstance(value, frozenset):
        return "{" + ", ".join(_member(m, names) for m in sorted(value)) + "}" if value else "none"
    if name in layout.enums and isinstance(value, int):
        known = layout.enums[name]
        return known[value] if 0 <= value < len(known) else str(value)
    if name in layout.seqnos:
        return _seqnos(value)
    if name in layout.entries and isinstance(value, tuple):
        return "none" if not value else "; ".join(_entry(layout.entries[name], v, layout, names) for v in value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (tuple, frozenset)):
        items = sorted(value) if isinstance(value, frozenset) else value
        return "none" if not items else ", ".join(_item(v, layout, names) for v in items)
    return _item(value, layout, names)


def _entry(parts: tuple[str, ...], value: Any, layout: StateLayout, names: Sequence[str]) -> str:
    """One item of an ``entries`` field, its positions named: ``from A: DATA(...)``, ``seqno #2 payload 2``."""
    if not isinstance(value, tuple) or len(value) != len(parts):
        return _item(value, layout, names)
    return " ".join(f"{part} {_text(part, v, layout, names)}" for part, v in zip(parts, value))


def _seqnos(value: Any) -> str:
    """``#3``; a tuple or set of seqnos or DATA as the seqnos held (a buffer's gaps are left out: the
    window's ``delivered`` says where it stands)."""
    if isinstance(value, int):
        return f"#{value}"
    if isinstance(value, (tuple, frozenset)):
        held = [v for v in value if v is not None]
        held = sorted(held, key=lambda v: getattr(v, "seqno", v)) if isinstance(value, frozenset) else held
        return "none" if not held else ", ".join(_seqno_item(v) for v in held)
    return str(value)


def _seqno_item(value: Any) -> str:
    if isinstance(value, int):
        return f"#{value}"
    if hasattr(value, "seqno"):
        conn = getattr(value, "conn_id", None)
        return f"#{value.seqno}" + ("" if conn is None else f" (conn_id={conn})")
    return str(value)


def _member(member: int, names: Sequence[str]) -> str:
    return names[member] if 0 <= member < len(names) else str(member)


def _item(value: Any, layout: StateLayout, names: Sequence[str]) -> str:
    """A value inside a collection: a message or a record by its fields, members by name."""
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return _text("", value, layout, names)
    if dataclasses.is_dataclass(value):
        inner = ", ".join(f"{f.name}={_item(getattr(value, f.name), layout, names)}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    fields = getattr(value, "_fields", None)
    if isinstance(value, tuple) and fields:  # a NamedTuple: a message
        inner = ", ".join(f"{k}={_text(k, v, layout, names)}" for k, v in zip(fields, value))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        return "(" + ", ".join(_item(v, layout, names) for v in value) + ")"
    if isinstance(value, frozenset):
        return "{" + ", ".join(_item(v, layout, names) for v in sorted(value)) + "}"
    return str(value)
