"""The protocols seqcheck knows, by the name a model file's ``protocol`` gives: the plug-in point.

A protocol is a *model factory* (``ModelFactory`` below): it names itself, lists the properties it
can check, the model-file keys its world reads and the lines ``seqcheck list`` prints, and builds a
``checks.explore.system.TransitionSystem`` from a model file. ``seqcheck check``, ``show``,
``list`` and trace files then work for it unchanged; ``replay`` and ``fuzz`` also need its
production engines, which register the same way in ``checks/conform/engines.py``. The protocols
of ``models/world.py`` (UNICAST2, UNICAST3) are factories like any other
(``models/world_factory.py``).

A factory is found, by name, in this order:
1. built in: ``BUILT_IN`` below, one ``module:attribute`` line per protocol, imported on first use;
2. a plug-in: an entry point of the group ``seqcheck.protocols`` in any installed distribution,
   ``<name> = "<module>:<attribute>"`` (in a ``pyproject.toml``:
   ``[project.entry-points."seqcheck.protocols"]``); its value is the factory;
3. ``register(factory)``, for a program that embeds seqcheck.
A model file names a protocol only by its registered name: nothing a model file says is imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from models.modelfile import ModelReader

ENTRY_POINT_GROUP = "seqcheck.protocols"
BUILT_IN = {
    "unicast2": "models.protocols.unicast2:FACTORY",
    "unicast3": "models.protocols.unicast3:FACTORY",
}


@dataclass(frozen=True)
class BuildOptions:
    """How ``load`` asks for a model beyond what the file says."""

    reduce_timestamps: bool = True  # models/world.py rule 5; off to drive real engines
    variant: tuple[str, ...] | None = None  # replaces the file's variant (``()``: as shipped)


@dataclass(frozen=True)
class Built:
    """What a factory makes of a model file: the transition system (its ``properties`` the selected
    ones), the member names its actions use, and the variant flags in force."""

    system: Any  # a checks.explore.system.TransitionSystem with a ``properties`` attribute
    members: tuple[str, ...]
    variant: tuple[str, ...] = ()


class ModelFactory(Protocol):
    """What a protocol registers."""

    name: str
    model_keys: frozenset[str]  # top-level model-file keys its world reads (besides description, protocol, check)

    def property_docs(self) -> dict[str, str]:
        """Every property it can check, in the order ``check.properties = ["all"]`` takes them,
        with a one-line definition each (``seqcheck list``)."""
        ...

    def describe(self) -> list[str]:
        """Lines ``seqcheck list`` prints about it besides its properties (variants, settings)."""
        ...

    def build(self, reader: ModelReader, protocol: str, selected: tuple[str, ...], options: BuildOptions) -> Built:
        """The model of ``protocol`` in ``reader``'s file with the properties ``selected``; every
        mistake is ``reader.fail(key, expected)``."""
        ...


_registered: dict[str, ModelFactory] = {}


def register(factory: ModelFactory) -> None:
    """Make ``factory`` known by its name (it replaces one of the same name)."""
    _registered[factory.name] = factory


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Every protocol known: built in, installed plug-ins, registered; sorted."""
    return sorted(set(BUILT_IN) | set(_plugins()) | set(_registered))


def is_known(name: str) -> bool:
    return name in BUILT_IN or name in _registered or name in _plugins()


def get(name: str) -> ModelFactory:
    """The factory called ``name``; ``KeyError`` if there is none."""
    found = _registered.get(name)
    if found is not None:
        return found
    if name in BUILT_IN:
        module, _, attribute = BUILT_IN[name].partition(":")
        factory: ModelFactory = getattr(importlib.import_module(module), attribute)
    else:
        plugin = _plugins().get(name)
        if plugin is None:
            raise KeyError(name)
        factory = plugin.load()
    if getattr(factory, "name", None) != name:
        raise KeyError(f"{name}: the registered object is not a model factory named {name!r}")
    _registered[name] = factory
    return factory


def factories(selected: Sequence[str] | None = None) -> list[ModelFactory]:
    return [get(name) for name in (names() if selected is None else selected)]

