"""The variant dimension of the lockstep: which variants of a model the harness runs, and how.

The engines carry every variant flag of their spec (a historical defect brought back, or a fix
JGroups did not ship), but the shipped lockstep models run as shipped, so the code inside a flag
was reached only by a few short walks each (issue 19, item 4). This module owns the list of
variants a model is run under by the Hypothesis machines (``tests/differential/lockstep_machine.py``)
and by the tests of ``seqcheck fuzz --variant`` (``checks/fuzz/command.py``):

- as shipped (no flag), every flag alone, and all the fix flags together (the fixed protocol);
- ``safety``: whether the spec's safety properties are invariants too. A fix flag (its alias starts
  with ``fix:``, as ``seqcheck list`` shows them) must keep them; a flag that brings a defect back
  may break them by design (that is the spec's own verdict), so there only a divergence between
  engine and spec counts.

``with_variant`` is the model under a variant (``models.modelfile.load``'s ``variant``), loaded
once per variant.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from models.modelfile import Model, load, split_reference

FIX_PREFIX = "fix:"


@dataclass(frozen=True)
class VariantRun:
    flags: tuple[str, ...]  # sorted flag names; () is the protocol as shipped
    safety: bool  # the spec's safety properties are invariants too

    def __str__(self) -> str:
        return ",".join(self.flags) or "as shipped"


def fix_flags(model: Model) -> frozenset[str]:
    """The flags of ``model``'s protocol that are fixes (alias ``fix:...``)."""
    aliases = model.world.adapter.variant_aliases
    return frozenset(flag for alias, flag in aliases.items() if alias.startswith(FIX_PREFIX))


def variant_runs(model: Model) -> tuple[VariantRun, ...]:
    """As shipped, every flag alone, and every fix flag together (when there are two or more)."""
    names = sorted(model.world.adapter.variant_names())
    fixes = fix_flags(model)
    runs = [VariantRun((), True), *(VariantRun((flag,), flag in fixes) for flag in names)]
    if len(fixes) > 1:
        runs.append(VariantRun(tuple(sorted(fixes)), True))
    return tuple(runs)


def with_variant(model: Model, flags: tuple[str, ...]) -> Model:
    """``model`` with its variant replaced by ``flags`` (loaded once per model file and variant)."""
    file, protocol = split_reference(model.reference)
    return _load(Path(file), protocol, tuple(sorted(flags)))


@cache
def _load(path: Path, protocol: str | None, flags: tuple[str, ...]) -> Model:
    return load(path, variant=flags, protocol=protocol)
