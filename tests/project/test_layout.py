"""The layout's rules, kept by parsing the project's modules (``ast``), not by importing them:

- no import circle among the project's modules, counting every ``import`` statement, inside
  functions too, except those under ``if TYPE_CHECKING:`` (which never run); the registries
  (``models/registry.py``, ``checks/conform/engines.py``) load protocols by name with
  ``importlib``, which is no import statement;
- no module takes another module's private names: no ``from m import _name``, and no ``x._name``
  on anything but ``self`` and ``cls`` (a NamedTuple's own API, ``_replace``, ``_asdict``,
  ``_fields`` and ``_make``, is public);
- ``impl/`` never imports ``spec/``, ``models/`` or ``checks/``; ``spec/`` imports only ``spec/``;
  ``checks/explore/`` imports nothing of ``spec/``, ``impl/`` or ``models/``;
- nothing generic is named after a protocol: outside ``spec/``, ``impl/<protocol>/`` and the
  per-protocol modules (``models/protocols/<protocol>``, ``checks/conform/<protocol>``,
  ``checks/jgroups/<protocol>``, ``checks/symbolic/<protocol>/``), no module's name mentions a protocol.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spec", "impl", "models", "checks")
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}
PROTOCOL_NAMES = ("unicast2", "unicast3", "nakack2", "nakack4")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of the module, except those under ``if TYPE_CHECKING:``."""
    never_run = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node)
                 for n in ast.walk(node)}
    return [node for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in never_run]


def _targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    base = node.module or ""
    out = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
    if base in MODULES and len(out) < len(node.names):
        out.append(base)
    return out


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        for node in _imports(ast.parse(path.read_text(), str(path))):
            for target in _targets(node):
                if target != name:
                    graph.add_edge(name, target)
    return graph


def test_no_import_circles() -> None:
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, [" -> ".join([*c, c[0]]) for c in cycles]


def test_no_module_takes_another_modules_private_names() -> None:
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PACKAGES:
                found += [f"{name}:{node.lineno} imports {alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and node.attr not in NAMEDTUPLE_API
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                found.append(f"{name}:{node.lineno} reads .{node.attr}")
    assert not found, found


def test_layers() -> None:
    graph = import_graph()
    rules = {"impl": ("spec", "models", "checks"), "spec": ("impl", "models", "checks"),
             "checks.explore": ("spec", "impl", "models")}
    wrong = [f"{a} -> {b}" for a, b in graph.edges for layer, banned in rules.items()
             if (a == layer or a.startswith(layer + ".")) and b.split(".")[0] in banned]
    assert not wrong, wrong


def test_nothing_generic_is_named_after_a_protocol() -> None:
    """A module named after a protocol lives where that protocol's own modules live."""
    wrong = []
    for name in MODULES:
        parts = name.split(".")
        leaf = parts[-1]
        if not any(p in leaf for p in PROTOCOL_NAMES) or parts[0] == "spec":
            continue
        own_place = (parts[0] == "impl" and len(parts) >= 2 and parts[1] in PROTOCOL_NAMES) or (
            parts[:2] in (["models", "protocols"], ["checks", "conform"], ["checks", "symbolic"], ["checks", "jgroups"])
            and leaf in PROTOCOL_NAMES)
        if not own_place:
            wrong.append(name)
    assert not wrong, wrong
