"""Renamed public modules (checks/renamed.py): every old name imports, in a fresh interpreter, as the
same module object (or the same attribute) as the new name, with one ``DeprecationWarning`` that
names the new one; an old name that no longer exists is not aliased; existing modules are never
shadowed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from checks.renamed import OLD_ATTRIBUTES, RENAMED

ROOT = Path(__file__).resolve().parents[2]
PROBE = '''
import importlib, json, sys, warnings
from checks.renamed import OLD_ATTRIBUTES, RENAMED
out = {}
for old, new in RENAMED.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
        again = importlib.import_module(old)
    out[old] = [module is importlib.import_module(new) and again is module,
                [str(w.message) for w in caught if w.category is DeprecationWarning], module.__spec__.name]
for package, (new, names) in OLD_ATTRIBUTES.items():
    for name in names:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            found = getattr(importlib.import_module(package), name)
        out[package + "." + name] = [found is getattr(importlib.import_module(new), name),
                                     [str(w.message) for w in caught if w.category is DeprecationWarning], new]
try:
    importlib.import_module("checks.no_such_module")
except ModuleNotFoundError:
    out["missing"] = True
print(json.dumps(out))
'''


def test_every_old_name_imports_with_a_warning() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, check=True)
    found = json.loads(run.stdout)
    assert found.pop("missing") is True
    expected = {**RENAMED, **{f"{p}.{n}": f"{m}.{n}" for p, (m, names) in OLD_ATTRIBUTES.items() for n in names}}
    assert set(found) == set(expected)
    for old, (same, warned, spec) in found.items():
        assert same, old
        assert warned == [f"{old} is deprecated: use {expected[old]} (the old name goes in seqcheck 0.3 at the "
                          "earliest)"], old
        if old in RENAMED:
            assert spec == RENAMED[old], old  # the module keeps its own spec


def test_the_old_names_are_free_and_the_new_ones_exist() -> None:
    """An alias never hides a module of the tree, and points at one that exists."""
    for old, new in RENAMED.items():
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
        assert (ROOT / (new.replace(".", "/") + ".py")).exists(), new
    for package, (new, _) in OLD_ATTRIBUTES.items():
        assert (ROOT / package.replace(".", "/") / "__init__.py").exists(), package
        assert (ROOT / (new.replace(".", "/") + ".py")).exists(), new
