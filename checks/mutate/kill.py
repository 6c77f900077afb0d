"""The kill checks of one mutant, run inside a patched copy of the tree (``python -m checks.mutate.kill``).

This module owns what judges a mutant, in order, stopping at the first kill:

1. ``lockstep``: seeded random walks of ``checks/conform/differential.py`` on the protocol's
   lockstep model (``models/fuzz/<protocol>-lockstep.toml``) as shipped; on its stale-packet model
   (``-lockstep-stale.toml``) where there is one, and on its companions (``-lockstep-*.toml``:
   NAKACK4's delivery faults), with their variant runs too; under tiny window rows
   (``checks/conform/geometry.py``'s ``TINY``, not NAKACK4: its ring has no rows); with receive
   windows near 2**31 and 2**63 (``checks/conform/offsets.py``, unicast only); and under every
   variant (``checks/conform/variants.py``, with the spec's properties only where the variant is
   all fixes); on every shipped model of the protocol (its scenarios reach configurations the
   lockstep models do not: ack thresholds, delivery faults, joins; the spec's properties checked
   where the model expects ``pass``); and the timed lockstep (``checks/conform/timed.py``) under
   each of its timings, when the tree has it. A divergence, or an exception from
   engine or spec, kills.
2. ``fuzz``: ``seqcheck fuzz --master none`` of the lockstep models (liveness judged at the end of
   every run, which the walks do not): an outcome other than the model's ``expect`` kills.
3. ``check``: ``seqcheck check`` of every shipped model of the protocol (its own folder and the
   side-by-side files' halves): a verdict or a pinned state count that mismatches kills.

Never the hand-written unit tests. Budgets are counts (walks, runs, steps), so a result depends on
the tree and the seed only, not on the machine's load. The process refuses to run unless every
package it imports comes from the current folder (the copy), and prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

STAGES = ("lockstep", "fuzz", "check")


@dataclass(frozen=True)
class Budget:
    """How much each check spends: walks of the lockstep model as shipped and of each other mode,
    walks of each shipped model, steps per walk; fuzz runs and steps per lockstep model; ``seed``:
    the first seed of each."""

    walks: int = 40
    mode_walks: int = 20
    model_walks: int = 4
    steps: int = 300
    fuzz_runs: int = 150
    fuzz_steps: int = 150
    seed: int = 0
    stages: tuple[str, ...] = STAGES


@dataclass(frozen=True)
class Verdict:
    killed_by: str | None  # a stage of STAGES, or None: survived
    detail: str  # what killed it (mode, seed, what differed), or what ran
    seconds: dict[str, float]  # per stage run: wall
    stage_cpu_seconds: dict[str, float]  # per stage run: CPU of this process and of the ones it waited for


class Killed(Exception):
    """A check found the mutant (its message says where)."""


def run(protocols: Sequence[str], budget: Budget, work: Path) -> Verdict:
    """The stages of ``budget`` in order on ``protocols``, stopping at the first kill."""
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    stages: dict[str, Callable[[Sequence[str], Budget, Path], str]] = {
        "lockstep": lockstep, "fuzz": fuzz, "check": check}
    done = []
    for stage in budget.stages:
        started, cpu_started = time.perf_counter(), _cpu_seconds()
        try:
            done.append(stages[stage](protocols, budget, work))
        except Killed as kill:
            _took(stage, started, cpu_started, seconds, cpu)
            return Verdict(stage, str(kill), seconds, cpu)
        except Exception as error:  # a crash of engine, spec or world under the mutant kills too
            _took(stage, started, cpu_started, seconds, cpu)
            return Verdict(stage, f"crash: {_crash(error)}", seconds, cpu)
        _took(stage, started, cpu_started, seconds, cpu)
    return Verdict(None, "; ".join(done), seconds, cpu)


def _took(stage: str, started: float, cpu_started: float, seconds: dict[str, float], cpu: dict[str, float]) -> None:
    """Record ``stage``'s wall and CPU seconds since ``started`` and ``cpu_started``."""
    seconds[stage] = round(time.perf_counter() - started, 2)
    cpu[stage] = round(_cpu_seconds() - cpu_started, 2)


def _crash(error: Exception) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"{type(error).__name__}: {' '.join(str(error).split())[:160]}{where}"


# -- 1. lockstep --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mode:
    label: str
    model: Any  # models.modelfile.Model
    engines: Any  # an engine factory (checks.conform.differential.EngineFactory)
    properties: bool
    walks: int


def lockstep_modes(protocol: str, budget: Budget) -> Iterator[Mode]:
    """The lockstep runs of ``protocol``, cheapest and most telling first."""
    from checks.check import MODELS_DIR
    from checks.conform.engines import engines_for
    from checks.conform.geometry import TINY, engines_with
    from checks.conform.offsets import NEAR_2_31, NEAR_2_63, engines_with_offset
    from checks.conform.variants import variant_runs, with_variant
    from models.modelfile import load

    base = load(MODELS_DIR / "fuzz" / f"{protocol}-lockstep.toml")
    yield Mode("as shipped", base, engines_for, True, budget.walks)
    stale = MODELS_DIR / "fuzz" / f"{protocol}-lockstep-stale.toml"
    if stale.is_file():
        yield Mode("stale packets", load(stale), engines_for, True, budget.walks)
    companions = [load(path) for path in companion_models(protocol)]
    for companion in companions:
        yield Mode(f"companion {companion.path.stem}", companion, engines_for, True, budget.walks)
    if protocol not in ("nakack4", "unicast4"):  # their windows are FixedBuffers: no Table rows
        for geometry in TINY:
            yield Mode(f"geometry {geometry}", base, engines_with(geometry), True, budget.mode_walks)
    if protocol in ("unicast2", "unicast3"):
        for name, k in (("2^31", NEAR_2_31), ("2^63", NEAR_2_63)):
            yield Mode(f"seqnos near {name}", base, engines_with_offset(k), True, budget.mode_walks)
    for model in (base, *companions):
        label = "" if model is base else f" on {model.path.stem}"
        for run_ in variant_runs(model)[1:]:
            yield Mode(f"variant {run_}{label}", with_variant(model, run_.flags), engines_for, run_.safety,
                       budget.mode_walks)
    for model in shipped_models([protocol]):
        if getattr(model.world.cfg, "xmit_per_connection", False):
            continue  # no engine takes the retransmit task per connection (checks/conform/unicast3.py)
        name = f"{model.path.parent.name}/{model.path.name}"
        yield Mode(f"shipped {name}", model, engines_for, model.expect == "pass", budget.model_walks)
    yield from timed_modes(protocol, budget, base, load(stale) if stale.is_file() else None)


def companion_models(protocol: str) -> list[Path]:
    """The protocol's other lockstep models, ``models/fuzz/<protocol>-lockstep-*.toml`` but the stale
    one: the same world with a setting the main one leaves off (NAKACK4's delivery faults)."""
    from checks.check import MODELS_DIR

    return sorted(p for p in (MODELS_DIR / "fuzz").glob(f"{protocol}-lockstep-*.toml") if not p.stem.endswith("-stale"))


def timed_modes(protocol: str, budget: Budget, base: Any, stale: Any) -> Iterator[Mode]:
    """The timed lockstep (``checks/conform/timed.py``, issue 19 item 1) where the tree has it: the
    lockstep model (and the stale one) under each of its timings; nothing for a tree without it
    or a model its factory refuses (one line, a ValueError)."""
    try:
        timed = importlib.import_module("checks.conform.timed")
    except ImportError:
        return
    timings, factory_of = getattr(timed, "TIMINGS", ()), getattr(timed, "engines_with", None)
    if factory_of is None:
        return
    for index, timing in enumerate(timings):
        for label, model in (("", base), (" stale packets", stale)):
            if model is None:
                continue
            factory = factory_of(timing)
            try:
                factory(model.world)
            except ValueError:
                continue
            walks = budget.walks if index == 0 and not label else budget.mode_walks
            yield Mode(f"timed {index}{label}", model, factory, True, walks)


def lockstep(protocols: Sequence[str], budget: Budget, work: Path) -> str:
    from checks.conform.differential import Shared, random_walk

    walks = 0
    for protocol in protocols:
        for mode in lockstep_modes(protocol, budget):
            shared = Shared(mode.model, mode.engines)
            for seed in range(budget.seed, budget.seed + mode.walks):
                result = random_walk(mode.model, seed, budget.steps, engines_for=mode.engines,
                                     check_properties=mode.properties, shared=shared)
                walks += 1
                if result.divergence is not None:
                    what = result.divergence
                    raise Killed(f"{protocol} {mode.label}, seed {seed}, step {what.step}: {what.what} differ")
    return f"{walks} lockstep walks"


# -- 2. fuzz ------------------------------------------------------------------------------------
def fuzz(protocols: Sequence[str], budget: Budget, work: Path) -> str:
    from checks.check import MODELS_DIR
    from checks.fuzz.command import FuzzOptions, run_fuzz

    runs = 0
    for protocol in protocols:
        paths = [MODELS_DIR / "fuzz" / f"{protocol}-lockstep{suffix}.toml" for suffix in ("", "-stale")]
        for path in [*paths, *companion_models(protocol)]:
            if not path.is_file():
                continue
            out = work / f"fuzz-{path.stem}"
            options = FuzzOptions(model=path, runs=budget.fuzz_runs, steps=budget.fuzz_steps, master="none",
                                  seed=budget.seed, out=out, shrink=0)
            report = run_fuzz(options)
            runs += report.totals.runs
            if report.mismatch:
                seeds = ", ".join(f"{v} at seed {s}" for v, s in report.totals.first_seed.items() if v != "pass")
                raise Killed(f"{path.name}: {report.mismatch} ({seeds})")
    return f"{runs} fuzz runs"


# -- 3. check -----------------------------------------------------------------------------------
def shipped_models(protocols: Sequence[str]) -> list[Any]:
    """Every shipped model of ``protocols``: their folders and their halves of side-by-side files."""
    from checks.check import MODELS_DIR
    from models.modelfile import load_all

    paths = [p for protocol in protocols for p in sorted((MODELS_DIR / protocol).glob("*.toml"))]
    paths += sorted((MODELS_DIR / "side-by-side").glob("*.toml"))
    return [model for path in paths for model in load_all(path) if model.protocol in protocols]


def check(protocols: Sequence[str], budget: Budget, work: Path) -> str:
    from checks.check import check_model

    models = shipped_models(protocols)
    for model in models:
        outcome = check_model(model, trace_dir=work / "traces", progress=None)
        if not outcome.matches:
            name = f"{model.path.parent.name}/{model.path.name}"
            raise Killed(f"{name} [{model.protocol}]: {' '.join(str(outcome.mismatch_reason).split())[:200]}")
    return f"{len(models)} model{'' if len(models) == 1 else 's'} checked"


# -- the process --------------------------------------------------------------------------------
def _own_packages() -> None:
    """Refuse to judge anything unless spec/, impl/, models/ and checks/ are the copy's."""
    import checks
    import impl
    import models
    import spec

    here = Path.cwd().resolve()
    for package in (spec, impl, models, checks):
        location = Path(package.__path__[0]).resolve()
        if location.parent != here:
            raise SystemExit(f"checks.mutate.kill: {package.__name__} comes from {location}, not from the copy {here}; "
                             "run it with the copy first on PYTHONPATH")


def _cpu_seconds() -> float:
    """CPU seconds of this process and of the processes it waited for (user + system)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checks.mutate.kill", description=__doc__.splitlines()[0])
    parser.add_argument("--protocols", required=True, help="comma-separated protocols")
    parser.add_argument("--budget", required=True, help="the Budget as JSON")
    args = parser.parse_args(argv)
    _own_packages()
    fields = json.loads(args.budget)
    fields["stages"] = tuple(fields["stages"])
    budget = Budget(**fields)
    with tempfile.TemporaryDirectory(prefix="mutate-work-") as work:
        verdict = run(args.protocols.split(","), budget, Path(work))
    print(json.dumps({**asdict(verdict), "cpu_seconds": round(_cpu_seconds(), 2)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
