"""``seqcheck mutate``: plant each defect of the catalogue in a copy of the tree, judge it with the
lockstep, fuzz and model checks, and print the kill table.

Rules
-----
1. The checkout is only read. ``spec/ impl/ models/ checks/`` are snapshot once into a temporary
   folder (``--source work``: the working tree as it is; ``head``: as committed at git HEAD, for a
   checkout with edits under way), so every mutant is judged against the same code. Each mutant
   gets its own copy of the snapshot (``checks/mutate/catalogue.py``), patched there; its checks
   run in a subprocess (``python -m checks.mutate.kill``, an argument list, no shell) with the copy
   as working folder and first on ``PYTHONPATH``, and the copy is deleted afterwards.
2. A catalogue fragment that does not occur exactly once in the snapshot is a usage error naming
   the mutant and the file (exit 2), before anything runs.
3. The baseline (the same checks on an unmodified copy, for the protocols of the mutants chosen)
   must survive, else the table would mean nothing: exit 1 with what killed it. A survival is
   remembered by the SHA-256 of the snapshot, the protocols and the budget
   (``checks/mutate/baseline.py``), so ``--only X`` on unchanged sources does not judge it again;
   ``--fresh-baseline`` judges it anyway, ``--no-baseline`` skips it.
4. Times: wall seconds beside the CPU seconds of the checks' processes (what a busy machine does
   not change). Budgets are counts (``checks/mutate/kill.py``'s ``Budget``), the seed is printed and taken back
   (``--seed``); ``--timeout`` bounds the CPU time of one mutant's process (RLIMIT_CPU: work, not
   wall time, so a busy machine judges alike), and a mutant that runs it out (an engine looping
   forever) counts as killed by ``timeout``.
5. Exit status: 0 when the share of mutants killed is at least ``--min-kill`` (default 0.95), 1
   otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from checks import cpu_limit
from checks.mutate import baseline
from checks.mutate.catalogue import (
    CLASSES,
    CatalogueError,
    Mutant,
    apply,
    copy_tree,
    load_catalogue,
    snapshot_head,
    stale_edits,
)
from checks.mutate.kill import STAGES, Budget

TIMED_MISSING = ("the timed lockstep (checks/conform/timed.py, issue 19 item 1) is not in this tree: "
                 "class-1 mutants are judged without it")


class MutateUsageError(ValueError):
    """A bad option or a stale catalogue; the message is one line."""


@dataclass(frozen=True)
class Row:
    mutant: str
    cls: str
    files: tuple[str, ...]
    killed_by: str | None  # a stage, "timeout" or "crash"; None: survived
    detail: str
    seconds: float
    stage_seconds: dict[str, float]
    cpu_seconds: float | None = None  # the checks' process (None: it crashed before saying)
    stage_cpu_seconds: dict[str, float] = field(default_factory=dict)  # beside stage_seconds (wall)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the mutants of the catalogue and exit")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only these mutants (repeat, or separate by commas)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="mutants judged at once (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--min-kill", type=float, default=0.95, metavar="F",
                        help="exit 1 when fewer than this share of the mutants is killed (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help="first seed of every walk and fuzz job (default 0)")
    parser.add_argument("--walks", type=int, default=Budget.walks,
                        help=f"lockstep walks of each lockstep model as shipped (default {Budget.walks})")
    parser.add_argument("--mode-walks", type=int, default=Budget.mode_walks,
                        help="lockstep walks per geometry, seqno offset and variant "
                             f"(default {Budget.mode_walks})")
    parser.add_argument("--model-walks", type=int, default=Budget.model_walks,
                        help=f"lockstep walks of each shipped model (default {Budget.model_walks})")
    parser.add_argument("--steps", type=int, default=Budget.steps, help=f"steps per walk (default {Budget.steps})")
    parser.add_argument("--fuzz-runs", type=int, default=Budget.fuzz_runs,
                        help=f"fuzz runs per lockstep model (default {Budget.fuzz_runs})")
    parser.add_argument("--fuzz-steps", type=int, default=Budget.fuzz_steps,
                        help=f"steps per fuzz run (default {Budget.fuzz_steps})")
    parser.add_argument("--stages", default=",".join(STAGES),
                        help=f"the checks to run, in this order (default {','.join(STAGES)})")
    parser.add_argument("--timeout", type=float, default=900.0, metavar="S",
                        help="CPU seconds one mutant's checks may use (default 900)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the checks of the unmutated tree (rule 3)")
    parser.add_argument("--fresh-baseline", action="store_true",
                        help="judge the unmutated tree even if a survival with the same sources and budget is "
                             "remembered (rule 3)")
    parser.add_argument("--source", choices=("work", "head"), default="work",
                        help="judge the working tree as it is (default) or as committed at git HEAD")
    parser.add_argument("--catalogue", type=Path, default=None, help="another catalogue file (default: "
                        "checks/mutate/mutants.toml)")


def command(args: argparse.Namespace, out: TextIO | None = None, progress: TextIO | None = None) -> int:
    """``seqcheck mutate``: rules 1 to 5 (``out``: the table, default stdout; ``progress``: a line
    per mutant judged, default stderr)."""
    out = sys.stdout if out is None else out
    progress = sys.stderr if progress is None else progress
    mutants = _selected(args)
    if args.list:
        for m in mutants:
            print(f"{m.name:<38} class {m.cls:<5} {','.join(m.protocols):<34} {m.description}", file=out)
        return 0
    with tempfile.TemporaryDirectory(prefix="mutate-snapshot-") as folder:
        try:
            tree = (snapshot_head if args.source == "head" else copy_tree)(Path(folder) / "tree")
        except CatalogueError as error:
            raise MutateUsageError(str(error)) from None
        stale = stale_edits(mutants, tree)
        if stale:
            raise MutateUsageError(f"{len(stale)} stale catalogue edit(s) in the {args.source} tree; "
                                   f"the first: {stale[0]}")
        return _run(args, mutants, tree, out, progress)


def _run(args: argparse.Namespace, mutants: Sequence[Mutant], tree: Path, out: TextIO, progress: TextIO) -> int:
    budget = _budget(args)
    if not 0.0 <= args.min_kill <= 1.0:
        raise MutateUsageError(f"--min-kill: expected a share in 0..1, got {args.min_kill}")
    if args.jobs < 1 or args.timeout <= 0:
        raise MutateUsageError("--jobs, --timeout: expected a number >= 1 and a positive number of seconds")
    protocols = tuple(dict.fromkeys(p for m in mutants for p in m.protocols))
    started = time.perf_counter()
    if not args.no_baseline and not _baseline_survives(args, protocols, budget, tree, progress):
        return 1
    rows = _judge_all(mutants, budget, args.jobs, args.timeout, progress, tree)
    wall = time.perf_counter() - started
    rate = sum(r.killed_by is not None for r in rows) / len(rows)
    if args.json:
        print(json.dumps({"seed": budget.seed, "budget": asdict(budget), "kill_rate": round(rate, 4),
                          "min_kill": args.min_kill, "seconds": round(wall, 1),
                          "cpu_seconds": round(_cpu(rows), 1), "source": args.source,
                          "timed_lockstep": _has_timed(tree),
                          "rows": [asdict(r) for r in rows]}), file=out)
    else:
        print("\n".join(table_lines(rows, budget, wall, _has_timed(tree))), file=out)
    return 0 if rate >= args.min_kill else 1


def _baseline_survives(args: argparse.Namespace, protocols: Sequence[str], budget: Budget, tree: Path,
                       progress: TextIO) -> bool:
    """Rule 3: the unmutated snapshot survives (remembered, or judged now)."""
    name = baseline.key(tree, protocols, budget)
    known = None if args.fresh_baseline else baseline.recall(name)
    what = f"baseline (no mutant, {','.join(protocols)})"
    if known is not None:
        print(f"{what}: survives (remembered for these sources and this budget: {known['seconds']:.0f} s, "
              f"CPU {known['cpu_seconds']:.0f} s; --fresh-baseline judges it again)", file=progress, flush=True)
        return True
    base = judge(None, protocols, budget, args.timeout, tree)
    print(f"{what}: {base.killed_by or 'survives'} in {base.seconds:.0f} s (CPU {_cpu([base]):.0f} s)",
          file=progress, flush=True)
    if base.killed_by is not None:
        print(f"seqcheck mutate: the checks fail on the unmutated tree ({base.killed_by}: {base.detail})",
              file=progress)
        return False
    baseline.remember(name, base.seconds, base.cpu_seconds, base.detail)
    return True


def _cpu(rows: Sequence[Row]) -> float:
    return sum(r.cpu_seconds or 0.0 for r in rows)


def _selected(args: argparse.Namespace) -> tuple[Mutant, ...]:
    try:
        mutants = load_catalogue(args.catalogue) if args.catalogue else load_catalogue()
    except CatalogueError as error:
        raise MutateUsageError(str(error)) from None
    if args.only:
        names = [n.strip() for text in args.only for n in text.split(",") if n.strip()]
        known = {m.name for m in mutants}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise MutateUsageError(f"--only: no mutant named {unknown[0]!r} (seqcheck mutate --list names them)")
        mutants = tuple(m for m in mutants if m.name in names)
    return mutants


def _budget(args: argparse.Namespace) -> Budget:
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    bad = [s for s in stages if s not in STAGES]
    if bad or not stages:
        raise MutateUsageError(f"--stages: expected some of {','.join(STAGES)}, got {args.stages!r}")
    for name in ("walks", "mode_walks", "model_walks", "steps", "fuzz_runs", "fuzz_steps", "seed"):
        if getattr(args, name) < (0 if name == "seed" else 1):
            raise MutateUsageError(f"--{name.replace('_', '-')}: expected a whole number >= "
                                   f"{0 if name == 'seed' else 1}, got {getattr(args, name)}")
    return Budget(args.walks, args.mode_walks, args.model_walks, args.steps, args.fuzz_runs, args.fuzz_steps,
                  args.seed, stages)


def _judge_all(mutants: Sequence[Mutant], budget: Budget, jobs: int, timeout: float, progress: TextIO,
               tree: Path) -> list[Row]:
    def one(mutant: Mutant) -> Row:
        row = judge(mutant, mutant.protocols, budget, timeout, tree)
        cpu = "?" if row.cpu_seconds is None else f"{row.cpu_seconds:.0f}"
        print(f"  {mutant.name}: {row.killed_by or 'SURVIVES'} ({row.seconds:.0f} s, CPU {cpu} s)", file=progress,
              flush=True)
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, mutants))


def judge(mutant: Mutant | None, protocols: Sequence[str], budget: Budget, timeout: float, tree: Path) -> Row:
    """Rule 1: the checks of ``budget`` on a copy of ``tree`` (a snapshot) with ``mutant`` planted
    (None: the baseline), in a subprocess."""
    started = time.perf_counter()
    name = mutant.name if mutant else "(baseline)"
    with tempfile.TemporaryDirectory(prefix=f"mutate-{name.strip('()')}-") as folder:
        copy = copy_tree(Path(folder) / "tree", tree)
        if mutant is not None:
            apply(mutant, copy)
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        argv = [sys.executable, "-m", "checks.mutate.kill", "--protocols", ",".join(protocols),
                "--budget", json.dumps({**asdict(budget), "stages": list(budget.stages)})]
        try:
            done = cpu_limit.run(argv, cpu_seconds=timeout, cwd=copy, env=env, capture_output=True, text=True,
                                 check=False)
        except subprocess.TimeoutExpired:  # blocked, not working: cpu_limit.HANG_GUARD
            return _row(mutant, "timeout", f"the checks hung for {cpu_limit.HANG_GUARD:.0f} s", started, {}, None)
    if cpu_limit.exceeded(done.returncode):
        return _row(mutant, "timeout", f"the checks used more than {timeout:g} s of CPU time", started, {}, timeout)
    verdict = _last_json(done.stdout)
    if verdict is None:  # the process died before judging: the mutant broke an import, or worse
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return _row(mutant, "crash", lines[-1][:200] if lines else f"exit {done.returncode}", started, {}, None)
    cpu = verdict.get("cpu_seconds")
    row = _row(mutant, verdict["killed_by"], verdict["detail"], started, verdict["seconds"],
               float(cpu) if isinstance(cpu, int | float) else None)
    return replace(row, stage_cpu_seconds=dict(verdict.get("stage_cpu_seconds", {})))


def _row(mutant: Mutant | None, killed_by: str | None, detail: str, started: float,
         stage_seconds: dict[str, float], cpu_seconds: float | None) -> Row:
    seconds = time.perf_counter() - started
    if mutant is None:
        return Row("(baseline)", "", (), killed_by, detail, seconds, stage_seconds, cpu_seconds)
    return Row(mutant.name, mutant.cls, mutant.files, killed_by, detail, seconds, stage_seconds, cpu_seconds)


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                found: dict[str, Any] = json.loads(line)
                return found
            except json.JSONDecodeError:
                return None
    return None


def _has_timed(tree: Path) -> bool:
    return (tree / "checks" / "conform" / "timed.py").is_file()


# -- the table ----------------------------------------------------------------------------------
def table_lines(rows: Sequence[Row], budget: Budget, wall: float, timed: bool) -> list[str]:
    width = max(len(r.mutant) for r in rows)
    target = max(len(", ".join(r.files)) for r in rows)
    header = (f"{'mutant':<{width}}  {'class':<5}  {'target':<{target}}  {'killed by':<9}  {'seconds':>7}  "
              f"{'CPU s':>7}  detail")
    lines = [header, "─" * len(header)]
    for r in rows:
        cpu = "?" if r.cpu_seconds is None else f"{r.cpu_seconds:.1f}"
        lines.append(f"{r.mutant:<{width}}  {r.cls:<5}  {', '.join(r.files):<{target}}  {r.killed_by or '—':<9}  "
                     f"{r.seconds:>7.1f}  {cpu:>7}  {r.detail[:110]}")
    lines += ["─" * len(header), f"{'class':<28} {'mutants':>7} {'killed':>7}  by lockstep/fuzz/check/other"]
    for cls, title in CLASSES.items():
        group = [r for r in rows if r.cls == cls]
        if group:
            lines.append(_class_line(title if cls == "other" else f"{cls} {title}", group))
    lines.append(_class_line("all", list(rows)))
    killed = sum(r.killed_by is not None for r in rows)
    lines.append(f"{killed} of {len(rows)} mutants killed ({100 * killed / len(rows):.1f}%) in {wall:.0f} s "
                 f"(CPU {_cpu(rows):.0f} s in the checks' processes); "
                 f"seed {budget.seed}; budget: {budget.walks} walks as shipped and stale, {budget.mode_walks} per "
                 f"other mode, {budget.model_walks} per shipped model, {budget.steps} steps; fuzz "
                 f"{budget.fuzz_runs} runs x {budget.fuzz_steps} steps; stages {','.join(budget.stages)}")
    survivors = [r for r in rows if r.killed_by is None]
    if survivors:
        lines.append("survivors: " + ", ".join(f"{r.mutant} (class {r.cls})" for r in survivors))
    if not timed and any(r.cls == "1" for r in survivors):
        lines.append(f"note: {TIMED_MISSING}")
    return lines


def _class_line(title: str, group: Sequence[Row]) -> str:
    by = [sum(r.killed_by == stage for r in group) for stage in STAGES]
    other = sum(r.killed_by in ("timeout", "crash") for r in group)
    killed = sum(r.killed_by is not None for r in group)
    return f"{title:<28} {len(group):>7} {killed:>7}  {'/'.join(map(str, [*by, other]))}"
