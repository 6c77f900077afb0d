"""What bounds a model's search, in the model file's own keys: its sends, fault budgets,
``max_in_flight``, view scripts and stops, and the protocol's settings that size its windows
(``capacity``, ``send_atomically``, ``sender_threads``), each with its value in this model and
how to make the search smaller. ``seqcheck check`` names them when a search is projected to pass
its budgets (``checks/check_output.py``). Only the keys the model's world reads are named; a world
of neither kind (a plug-in's) has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.multicast_world import MulticastWorld
from models.world import World

FAULTS = ("loss", "duplicate", "receiver_removals", "below_drop")  # [faults] budgets, where the world has them


@dataclass(frozen=True)
class Knob:
    key: str  # the model-file key: "[sends]", "faults.loss", "config.capacity"
    value: str  # its value in this model
    cut: str  # what makes the search smaller


def knobs(world: Any) -> list[Knob]:
    """The model-file keys that bound ``world``'s search and are not at their smallest."""
    if not isinstance(world, (World, MulticastWorld)):
        return []
    bounds, names = world.bounds, list(getattr(world, "member_names", ()) or
                                       [chr(ord("A") + i) for i in range(world.n)])
    found: list[Knob] = []
    if isinstance(world, MulticastWorld):
        sends = ", ".join(f"{names[m]} = {k}" for m, k in enumerate(bounds.sends) if k)
    else:
        n = world.n
        sends = ", ".join(f'"{names[p // n]}->{names[p % n]}" = {k}' for p, k in enumerate(bounds.sends) if k)
    if sum(bounds.sends) > 1:
        found.append(Knob("[sends]", sends, "fewer"))
    for fault in FAULTS:
        budget = getattr(bounds, fault, 0)
        if budget:
            found.append(Knob(f"faults.{fault}", str(budget), str(budget - 1)))
    if bounds.max_in_flight > 1:
        found.append(Knob("faults.max_in_flight", str(bounds.max_in_flight), _down_to_2(bounds.max_in_flight)))
    scripted = sum(map(len, bounds.views))
    if scripted:
        found.append(Knob("[[views]]", f"{scripted} scripted views", "fewer"))
        if isinstance(world, MulticastWorld) and not world.bounds.views_are_progress:
            found.append(Knob("views_are_progress", "false", "true"))
    stops = getattr(bounds, "stops", ())
    if stops:
        found.append(Knob("[[stops]]", str(len(stops)), "fewer"))
    return found + _settings(world)


def _settings(world: World | MulticastWorld) -> list[Knob]:
    """The protocol's [config] settings that size its windows, where it has them."""
    keys, cfg = world.adapter.config_keys, world.cfg
    found: list[Knob] = []
    capacity = getattr(cfg, "capacity", None)
    if "capacity" in keys and isinstance(capacity, int) and capacity > 1:
        found.append(Knob("config.capacity", str(capacity), _down_to_2(capacity)))
    if "send_atomically" in keys and not getattr(cfg, "send_atomically", True):
        found.append(Knob("config.send_atomically", "false", "true"))
    threads = getattr(cfg, "sender_threads", 1)
    if "sender_threads" in keys and isinstance(threads, int) and threads > 1:
        found.append(Knob("config.sender_threads", str(threads), "1"))
    return found


def _down_to_2(value: int) -> str:
    return "1" if value == 2 else "1 or 2"


def advice(world: Any) -> str:
    """One clause: the keys to cut, with their values (``key = value -> cut``), or what to say
    when the world names none."""
    found = knobs(world)
    if not found:
        return "the model's own bounds (this world names none)"
    return "; ".join(f"{k.key} {k.value} -> {k.cut}" if k.key == "[sends]" or k.key.startswith("[[")
                     else f"{k.key} = {k.value} -> {k.cut}" for k in found)
