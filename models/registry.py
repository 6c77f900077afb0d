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
The system a factory builds, and the optional capabilities it may offer, are the ``Protocol``
classes of ``checks/explore/system.py``; docs/architecture.md ("Plug-ins") documents the contract,
and ``docs/examples/arq_plugin/`` is an example package.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from checks.explore.system import TransitionSystem
    from models.modelfile import ModelReader

T = TypeVar("T")
ENTRY_POINT_GROUP = "seqcheck.protocols"
BUILT_IN = {
    "unicast2": "models.protocols.unicast2:FACTORY",
    "unicast3": "models.protocols.unicast3:FACTORY",
    "unicast4": "models.protocols.unicast4:FACTORY",
    "nakack2": "models.protocols.nakack2:FACTORY",
    "nakack4": "models.protocols.nakack4:FACTORY",
}


@dataclass(frozen=True)
class BuildOptions:
    """How ``load`` asks for a model beyond what the file says."""

    reduce_timestamps: bool = True  # models/world.py rule 5; off to drive real engines
    variant: tuple[str, ...] | None = None  # replaces the file's variant (``()``: as shipped)
    rank_conn_ids: bool = True  # models/world.py rule 5b (with rule 5 only); off to compare with it


@dataclass(frozen=True)
class Built:
    """What a factory makes of a model file: the transition system (its ``properties`` the selected
    ones), the member names its actions use, and the variant flags in force."""

    system: TransitionSystem  # its ``properties`` the selected ones
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


class Registry(Generic[T]):
    """Objects by name: built in (``module:attribute`` strings, imported on first use), installed
    plug-ins (entry points of ``group``) and ``register``ed ones. ``accepts(obj, name)`` says
    whether a loaded object is what the registry holds under that name."""

    def __init__(self, group: str, built_in: dict[str, str], accepts: Callable[[Any, str], bool]) -> None:
        self.group, self.built_in, self.accepts = group, built_in, accepts
        self.loaded: dict[str, T] = {}
        self._plugins: dict[str, Any] | None = None

    def register(self, name: str, obj: T) -> None:
        self.loaded[name] = obj

    def plugins(self) -> dict[str, Any]:
        """The installed entry points of ``group``, read once per process (reading them scans every
        installed distribution's metadata: about a millisecond)."""
        if self._plugins is None:
            self._plugins = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._plugins

    def names(self) -> list[str]:
        """Every name known, sorted."""
        return sorted(set(self.built_in) | set(self.plugins()) | set(self.loaded))

    def __contains__(self, name: object) -> bool:
        return name in self.built_in or name in self.loaded or name in self.plugins()

    def get(self, name: str) -> T:
        """The object called ``name``; ``KeyError`` if there is none, or it is not acceptable."""
        found = self.loaded.get(name)
        if found is not None:
            return found
        if name in self.built_in:
            module, _, attribute = self.built_in[name].partition(":")
            loaded = getattr(importlib.import_module(module), attribute)
        elif name in self.plugins():
            loaded = self.plugins()[name].load()
        else:
            raise KeyError(name)
        if not self.accepts(loaded, name):
            raise KeyError(f"{name}: what {self.group} names under {name!r} is not what it should hold")
        self.loaded[name] = loaded
        return cast(T, loaded)


PROTOCOLS: Registry[ModelFactory] = Registry(ENTRY_POINT_GROUP, BUILT_IN,
                                             lambda factory, name: getattr(factory, "name", None) == name)


def register(factory: ModelFactory) -> None:
    """Make ``factory`` known by its name (it replaces one of the same name)."""
    PROTOCOLS.register(factory.name, factory)


def names() -> list[str]:
    """Every protocol known: built in, installed plug-ins, registered; sorted."""
    return PROTOCOLS.names()


def is_known(name: str) -> bool:
    return name in PROTOCOLS


def get(name: str) -> ModelFactory:
    """The factory called ``name``; ``KeyError`` if there is none."""
    return PROTOCOLS.get(name)


def factories(selected: Sequence[str] | None = None) -> list[ModelFactory]:
    return [get(name) for name in (names() if selected is None else selected)]
