"""Public names that moved, kept importable under their old names with a ``DeprecationWarning``.

The deprecation policy (docs/architecture.md, "Plug-ins"): a module a plug-in may import (the
contract ``checks.explore.system``, the registries, the model-file reader, traces) that is renamed or
moved stays importable under its old name, as the same module object, for two minor releases after
the one that moved it (the renames of 0.1 go in 0.3 at the earliest); each import of an old name
warns once, naming the new one. A module that became a package keeps its old names as attributes
of the package (``OLD_ATTRIBUTES``, through the package's ``__getattr__``). ``install`` runs when
``checks`` or ``models`` is imported; tests/project/test_renamed.py imports every old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

REMOVED_IN = "0.3"  # the first release that may drop the renames of 0.1
RENAMED = {  # old module -> the module it is now
    "checks.system": "checks.explore.system",
    "checks.trace": "checks.explore.trace",
    "checks.render": "checks.explore.render",
    "checks.liveness": "checks.explore.liveness",
    "checks.run": "checks.check",
    "checks.engines": "checks.conform.engines",
    "models.protocol_unicast2": "models.protocols.unicast2",
    "models.protocol_unicast3": "models.protocols.unicast3",
}
OLD_ATTRIBUTES = {  # a module that became a package -> (the module its old names are in now, those names)
    "checks.explore": ("checks.explore.search", ("explore", "Result", "Stats", "Finding", "CHUNK", "rebuild_path")),
    "models.protocols": ("models.protocols.base", ("ProtocolAdapter", "NodeProperty", "PairProperty", "doc_of")),
}


_warned: set[str] = set()


def warn(old: str, new: str, stacklevel: int) -> None:
    """The deprecation warning of ``old``, once per process (``stacklevel`` counted from the caller)."""
    if old not in _warned:
        _warned.add(old)
        warnings.warn(f"{old} is deprecated: use {new} (the old name goes in seqcheck {REMOVED_IN} at the earliest)",
                      DeprecationWarning, stacklevel=stacklevel + 1)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it is now (the same object in ``sys.modules`` under both names)."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # importing under the old name set the old spec: the module keeps its own


class RenamedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of ``RENAMED`` (last on ``sys.meta_path``: an existing module always wins)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = RENAMED.get(fullname)
        if new is None:
            return None
        warn(fullname, new, 2)  # the import statement (the import system's own frames are skipped)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def old_attribute(package: str, name: str) -> Any:
    """The package's ``__getattr__``: an old name of ``OLD_ATTRIBUTES``, with its warning."""
    module, names = OLD_ATTRIBUTES[package]
    if name not in names:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    warn(f"{package}.{name}", f"{module}.{name}", 3)  # the statement that read the package's attribute
    return getattr(importlib.import_module(module), name)


def install() -> None:
    if not any(isinstance(finder, RenamedFinder) for finder in sys.meta_path):
        sys.meta_path.append(RenamedFinder())
