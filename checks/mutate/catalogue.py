"""The catalogue of planted defects (``mutants.toml``) and how one is applied to a copy of the tree.

This module owns the mutants as data and their application, nothing about judging them
(``checks/mutate/kill.py``) or running many (``checks/mutate/command.py``):

- ``load_catalogue`` reads and validates the catalogue; a malformed entry is a ``CatalogueError``
  of one line naming the file, the mutant and the field.
- ``stale_edits`` lists every edit whose fragment does not occur exactly once in a tree, so a
  catalogue left behind by a code change is a clear error, never a silent skip.
- ``copy_tree`` copies the packages the checks import (``spec/ impl/ models/ checks/``) to a new
  folder (``snapshot_head``: as committed at HEAD) and ``apply`` patches the copy: the checkout
  itself is only ever read. Fragments are plain text replaced once; nothing of the catalogue is
  evaluated.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CATALOGUE = Path(__file__).resolve().with_name("mutants.toml")
ROOT = Path(__file__).resolve().parents[2]  # the checkout: spec/, impl/, models/, checks/
PACKAGES = ("spec", "impl", "models", "checks")
PROTOCOLS = ("unicast3", "unicast2", "unicast4", "nakack2", "nakack4")
CLASSES = {
    "1": "time",
    "2": "stale packets, conn_id",
    "3": "spurious window reset",
    "4": "variant path",
    "5": "window edge",
    "6": "codec, symmetric",
    "7": "spec weak spot",
    "other": "other",
}


class CatalogueError(ValueError):
    """A malformed or stale catalogue: one line naming the file, the mutant and what is wrong."""


@dataclass(frozen=True)
class Edit:
    file: str  # relative to the checkout, e.g. impl/unicast3/receive.py
    find: str  # must occur exactly once in that file
    replace: str


@dataclass(frozen=True)
class Mutant:
    name: str
    cls: str  # a key of CLASSES
    protocols: tuple[str, ...]  # whose lockstep, fuzz and shipped models judge it
    description: str
    edits: tuple[Edit, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(edit.file for edit in self.edits))


def load_catalogue(path: Path = CATALOGUE) -> tuple[Mutant, ...]:
    """Every mutant of ``path``, validated (unique names, known classes and protocols, files under
    one of ``PACKAGES``, non-empty fragments that differ from their replacement)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise CatalogueError(f"{path}: {error}") from None
    entries = data.get("mutant")
    if not isinstance(entries, list) or not entries:
        raise CatalogueError(f"{path}: expected [[mutant]] entries, found none")
    mutants: list[Mutant] = []
    for index, entry in enumerate(entries, 1):
        mutant = _mutant(path, index, entry)
        if any(m.name == mutant.name for m in mutants):
            raise CatalogueError(f"{path}: mutant {mutant.name}: name: expected a unique name, it is used twice")
        mutants.append(mutant)
    return tuple(mutants)


def _mutant(path: Path, index: int, entry: Any) -> Mutant:
    where = f"{path}: mutant #{index}"
    if not isinstance(entry, dict):
        raise CatalogueError(f"{where}: expected a table")
    unknown = set(entry) - {"name", "class", "protocols", "description", "edit"}
    if unknown:
        raise CatalogueError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    name = _text(where, entry, "name")
    where = f"{path}: mutant {name}"
    cls = _text(where, entry, "class")
    if cls not in CLASSES:
        raise CatalogueError(f"{where}: class: expected one of {', '.join(CLASSES)}, got {cls!r}")
    protocols = entry.get("protocols")
    if not isinstance(protocols, list) or not protocols or any(p not in PROTOCOLS for p in protocols):
        raise CatalogueError(f"{where}: protocols: expected a non-empty list of {', '.join(PROTOCOLS)}, "
                             f"got {protocols!r}")
    edits = entry.get("edit")
    if not isinstance(edits, list) or not edits:
        raise CatalogueError(f"{where}: edit: expected at least one [[mutant.edit]]")
    return Mutant(name, cls, tuple(protocols), _text(where, entry, "description"),
                  tuple(_edit(f"{where}: edit #{i}", e) for i, e in enumerate(edits, 1)))


def _edit(where: str, entry: Any) -> Edit:
    if not isinstance(entry, dict) or set(entry) != {"file", "find", "replace"}:
        raise CatalogueError(f"{where}: expected exactly the fields file, find, replace")
    file, find, replace = (_text(where, entry, key) for key in ("file", "find", "replace"))
    parts = Path(file).parts
    if Path(file).is_absolute() or ".." in parts or not parts or parts[0] not in PACKAGES:
        raise CatalogueError(f"{where}: file: expected a path under {', '.join(PACKAGES)}, got {file!r}")
    if find == replace:
        raise CatalogueError(f"{where}: replace: expected a change, it equals find")
    return Edit(file, find, replace)


def _text(where: str, entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogueError(f"{where}: {key}: expected a non-empty string, got {value!r}")
    return value


def stale_edits(mutants: tuple[Mutant, ...], root: Path = ROOT) -> list[str]:
    """One line per edit whose fragment does not occur exactly once in ``root`` (empty: all do)."""
    problems = []
    for mutant in mutants:
        for edit in mutant.edits:
            problem = _occurrence_problem(root, edit)
            if problem:
                problems.append(f"mutant {mutant.name}: {edit.file}: {problem}")
    return problems


def _occurrence_problem(root: Path, edit: Edit) -> str | None:
    target = root / edit.file
    try:
        count = target.read_text().count(edit.find)
    except OSError as error:
        return f"cannot read it ({error.strerror or error})"
    if count != 1:
        first = edit.find.strip().splitlines()[0]
        return f"fragment {first!r}... occurs {count} times, expected exactly once (update the catalogue)"
    return None


def copy_tree(destination: Path, root: Path = ROOT) -> Path:
    """Copy ``PACKAGES`` of ``root`` into ``destination`` (created), without bytecode caches."""
    destination.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(root / package, destination / package, ignore=ignore)
    return destination


def snapshot_head(destination: Path, root: Path = ROOT) -> Path:
    """``PACKAGES`` as committed at ``root``'s git HEAD, extracted into ``destination`` (created):
    what the checks judge when the working tree holds unfinished edits. ``CatalogueError`` (one
    line) when ``root`` is not a git checkout."""
    destination.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", "HEAD", *PACKAGES],
                              capture_output=True, check=False)
    except OSError as error:
        raise CatalogueError(f"--source head: cannot run git ({error.strerror or error})") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        reason = lines[-1] if lines else f"exit {done.returncode}"
        raise CatalogueError(f"--source head: git archive failed in {root}: {reason}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(destination, filter="data")
    return destination


def apply(mutant: Mutant, copy: Path) -> None:
    """Patch ``copy`` (a ``copy_tree``) with ``mutant``'s edits; ``CatalogueError`` if a fragment
    does not occur exactly once there."""
    if copy.resolve() == ROOT:
        raise CatalogueError(f"mutant {mutant.name}: refusing to patch the checkout itself ({ROOT})")
    for edit in mutant.edits:
        problem = _occurrence_problem(copy, edit)
        if problem:
            raise CatalogueError(f"mutant {mutant.name}: {edit.file}: {problem}")
        target = copy / edit.file
        target.write_text(target.read_text().replace(edit.find, edit.replace, 1))
