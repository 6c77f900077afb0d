"""seqcheck-arq: a sliding-window ARQ (``arq.py``) as a seqcheck protocol, found by ``seqcheck`` through
the entry point ``arq`` of the group ``seqcheck.protocols`` (``pyproject.toml``): ``FACTORY`` reads a
model file's keys and builds the transition system. It imports only seqcheck's public contract:
``checks.explore.system`` (the system and its capabilities) and ``models.registry`` (``Built``, what
a factory returns; ``ModelFactory``, what it is)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models.registry import BuildOptions, Built, ModelFactory

from .arq import SlidingWindowArq, property_list

if TYPE_CHECKING:
    from models.modelfile import ModelReader

KEYS = {"messages": 3, "window": 2, "modulus": None, "capacity": 2}  # key -> default (modulus: 2 * window)
FAULT_KEYS = {"loss": 0, "duplicate": 0}


class ArqFactory:
    """The ``ModelFactory`` of protocol ``arq``."""

    name = "arq"
    model_keys = frozenset({*KEYS, "faults"})

    def property_docs(self) -> dict[str, str]:
        return {p.name: p.doc for p in property_list(1)}

    def describe(self) -> list[str]:
        return ["keys: messages (3), window (2), modulus (2 * window; 0: unbounded), capacity (2) per channel,",
                "      [faults] loss, duplicate (0): losses and duplications in a run, anywhere in a channel",
                "no variants: modulus = window shows why go-back-N needs modulus > window"]

    def build(self, reader: ModelReader, protocol: str, selected: tuple[str, ...], options: BuildOptions) -> Built:
        given: dict[str, Any] = {}
        for key, default in KEYS.items():
            raw = reader.raw.get(key, default)
            given[key] = None if raw is None else reader.natural(key, raw)
        for key in ("messages", "window", "capacity"):
            if given[key] < 1:
                raise reader.fail(key, f"a whole number >= 1, got {given[key]}")
        if given["modulus"] is None:
            given["modulus"] = 2 * given["window"]
        elif 0 < given["modulus"] < given["window"]:
            raise reader.fail("modulus", f"0 (unbounded) or at least the window ({given['window']}), "
                                         f"got {given['modulus']}")
        faults = reader.table("faults", set(FAULT_KEYS))
        for key, default in FAULT_KEYS.items():
            given[key] = reader.natural(f"faults.{key}", faults.get(key, default))
        if given["messages"] >= 2**31:
            raise reader.fail("messages", f"fewer than 2**31, got {given['messages']}")
        system = SlidingWindowArq(reader.path.stem, properties=selected, **given)
        return Built(system, ("S", "R"))


FACTORY: ModelFactory = ArqFactory()  # mypy checks it against the contract
