"""``seqcheck conform MODEL... --jgroups VERSION``: the command line of ``conform.py`` (options,
the in-process and Spark runs, the table or JSON lines, the trace files of unexplained divergences).

Exit status: 0 when no schedule diverged unexplained, 1 when one did, 2 for a usage error (no such
model, release or JDK; a model of a protocol the harness has no binding for), as one line.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from checks.explore.trace import Trace
from checks.jgroups.bindings import binding
from checks.jgroups.conform import ConformPlan, RangeResult, close_all, report, run_range
from checks.jgroups.harness import HarnessError
from checks.jgroups.locate import JGroupsUnavailable, jdk, release
from models.modelfile import Model, ModelError, load, split_reference

MAX_RUNS = 100_000_000
MAX_STEPS = 100_000


class ConformUsageError(Exception):
    """A mistake in what the user asked for; one line, exit status 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path,
                        help="model files or folders (e.g. models/fuzz/unicast3-lockstep.toml)")
    parser.add_argument("--jgroups", required=True, metavar="VERSION|JAR",
                        help="the JGroups release: 5.4.12.Final, 5.4.12, master, or a path to a jar (jars from "
                             "SEQCHECK_JGROUPS, default ../shared/jgroups)")
    parser.add_argument("--runs", type=int, default=200, help="schedules per model (default 200)")
    parser.add_argument("--steps", type=int, default=150, help="steps per schedule at most (default 150)")
    parser.add_argument("--seed", type=int, help="first seed (default: random, printed); schedule i has seed+i")
    parser.add_argument("--master", default="none",
                        help="none (this process, the default), local[N] or spark://HOST:PORT: one harness JVM "
                             "per Spark worker")
    parser.add_argument("--spec-flags", metavar="FLAG,...",
                        help="run the spec with these variant flags (names or aliases, `none` for none) instead of "
                             "the release's own (bindings: a release before a fix is the spec with its defect flag)")
    parser.add_argument("--partitions", type=int, help="Spark tasks (default: twice the default parallelism)")
    parser.add_argument("--json", action="store_true", help="one JSON object per model")
    parser.add_argument("--trace-dir", type=Path, default=Path("traces"),
                        help="where the traces of unexplained divergences go (default ./traces; under jgroups/)")
    parser.add_argument("--no-progress", action="store_true", help="no progress line")


def _models(paths: list[Path]) -> list[tuple[Path, Model]]:
    out: list[tuple[Path, Model]] = []
    for path in paths:
        file, protocol = split_reference(str(path))
        found = sorted(Path(file).rglob("*.toml")) if Path(file).is_dir() else [Path(file)]
        if not found:
            raise ConformUsageError(f"{path}: no model files there")
        for one in found:
            try:
                models = [load(one, protocol=protocol)] if protocol else _all(one)
            except ModelError as error:
                raise ConformUsageError(str(error)) from None
            out.extend((one, m) for m in models)
    return out


def _all(path: Path) -> list[Model]:
    from models.modelfile import load_all

    return load_all(path)


def command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    if not 1 <= args.runs <= MAX_RUNS:
        raise ConformUsageError(f"--runs: expected 1 to {MAX_RUNS:,}, got {args.runs}")
    if not 1 <= args.steps <= MAX_STEPS:
        raise ConformUsageError(f"--steps: expected 1 to {MAX_STEPS:,}, got {args.steps}")
    try:
        chosen = release(args.jgroups)
        jdk()
        models = _models(list(args.paths))
        for _, model in models:
            binding(model.protocol).flags_for(chosen)
            binding(model.protocol).check(model.world.cfg, chosen)  # a setting it cannot run: one line
    except JGroupsUnavailable as error:
        raise ConformUsageError(str(error)) from None
    flags = _flags(args.spec_flags, models)
    first = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"seqcheck conform: JGroups {chosen.version} ({chosen.jar}), first seed {first}", file=sys.stderr)
    spark = None
    if args.master != "none":
        spark = _spark(args.master, args.trace_dir)
    worst = 0
    try:
        for path, model in models:
            plan = ConformPlan(str(path), path.read_text(), model.protocol if len(model.protocols) > 1 else None,
                               args.jgroups, args.steps, flags)
            start = time.perf_counter()
            try:
                result = (_in_process(plan, first, args.runs, not args.no_progress) if spark is None
                          else _on_spark(spark, plan, first, args.runs, args.partitions))
            except HarnessError as error:  # the harness or JGroups failed: one line, and no verdict
                print(f"seqcheck conform: {path}: {error}", file=sys.stderr)
                return 1
            row = report(model, plan, result, first, time.perf_counter() - start, args.master)
            _write_traces(row, args.trace_dir, chosen.version)
            print(json.dumps(row) if args.json else _text(row), file=out)
            worst = max(worst, 1 if row["unexplained"] else 0)
    finally:
        close_all()
        if spark is not None:
            from checks.fuzz.spark import stop_quietly

            stop_quietly(spark)
    return worst


def _flags(text: str | None, models: list[tuple[Path, Model]]) -> tuple[str, ...] | None:
    """``--spec-flags``: flag names or aliases of every model's protocol; None: the release's own."""
    if text is None:
        return None
    if text == "none":
        return ()
    out = []
    for name in text.split(","):
        for _, model in models:
            adapter = model.world.adapter
            flag = adapter.variant_aliases.get(name, name)
            if flag not in adapter.variant_names():
                raise ConformUsageError(f"--spec-flags: {name} is no variant flag of {model.protocol} (seqcheck list "
                                        f"names them)")
        out.append(flag)
    return tuple(sorted(set(out)))


def _in_process(plan: ConformPlan, first: int, runs: int, progress: bool) -> RangeResult:
    total, chunk, done = RangeResult(), 50, 0
    while done < runs:
        part = run_range(plan, (first + done, first + min(runs, done + chunk)))
        total.add(part)
        done += part.schedules
        if progress and sys.stderr.isatty():
            print(f"\r  {done:,}/{runs:,} schedules, {total.steps:,} steps, {total.unexplained} unexplained",
                  end="", file=sys.stderr, flush=True)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return total


def _spark(master: str, trace_dir: Path) -> Any:
    from checks.extras import require_spark
    from checks.fuzz.spark import is_local, session, unreachable

    require_spark(f"--master {master}", "--master none")

    if not is_local(master) and not master.startswith("spark://"):
        raise ConformUsageError(f"--master: expected none, local[N] or spark://HOST:PORT, got {master}")
    if master.startswith("spark://"):
        problem = unreachable(master)
        if problem:
            raise ConformUsageError(problem)
    trace_dir.mkdir(parents=True, exist_ok=True)
    spark, _ = session(master, "seqcheck conform", log=trace_dir / "spark-conform.log")
    return spark


def _on_spark(spark: Any, plan: ConformPlan, first: int, runs: int, partitions: int | None) -> RangeResult:
    from checks.fuzz.spark import seed_ranges

    sc = spark.sparkContext
    ranges = seed_ranges(first, runs, partitions or 2 * sc.defaultParallelism)
    total = RangeResult()
    for part in sc.parallelize(ranges, len(ranges)).map(partial(_task, plan)).collect():
        total.add(part)
    return total


def _task(plan: ConformPlan, seeds: tuple[int, int]) -> RangeResult:
    return run_range(plan, seeds)


def _write_traces(row: dict[str, Any], trace_dir: Path, version: str) -> None:
    for divergence in row["divergences"]:
        trace_json = divergence.pop("trace")
        stem = Path(row["model"]).stem
        path = trace_dir / "jgroups" / f"{stem}-{version}-seed{divergence['seed']}.json"
        trace = Trace(trace_json["model"], trace_json["model_digest"], trace_json["property"], trace_json["kind"],
                      tuple(s["action"] for s in trace_json["steps"]), trace_json["seed"],
                      tuple(s["text"] for s in trace_json["steps"]))
        divergence["trace"] = str(trace.save(path))


def _text(row: dict[str, Any]) -> str:
    explained = ", ".join(f"{name} {count}" for name, count in row["explained"].items()) or "none"
    lines = [f"{row['model']}  {row['protocol']} vs JGroups {row['jgroups']} (spec flags: "
             f"{', '.join(row['spec_flags']) or 'none'})",
             f"  {row['schedules']:,} schedules, {row['steps']:,} steps in {row['seconds']:.1f} s "
             f"({row['cpu_seconds']:.1f} s CPU: Python {row['python_cpu_seconds']:.1f}, "
             f"JVM {row['jvm_cpu_seconds']:.1f}); "
             f"{row['steps_per_second'] or 0:,.0f} steps/s, {row['steps_per_cpu_second'] or 0:,.0f} per CPU-second",
             f"  divergences: {row['unexplained']} unexplained; explained: {explained}"]
    for d in row["divergences"]:
        if d["explained"]:
            continue
        lines.append(f"  seed {d['seed']} step {d['step']} ({d['action']}): {d['what']} differ")
        lines.append(f"    spec:    {d['spec']}")
        lines.append(f"    jgroups: {d['jgroups']}")
        lines.append(f"    trace:   {d['trace']}")
    return "\n".join(lines)


def replay_command(args: argparse.Namespace, model_path: Path, protocol: str | None,
                   usage: Callable[[str], Exception]) -> int:
    """``seqcheck replay TRACE --jgroups VERSION``: 0 when JGroups followed the spec (whatever the
    verdict, which is printed), 1 when it diverged unexplained, 2 (``usage``) for a usage error."""
    from checks.jgroups.harness import Harness
    from checks.jgroups.replay import replay_on_jgroups

    try:
        chosen = release(args.jgroups)
        binding(load(model_path, protocol=protocol).protocol).flags_for(chosen)
        with Harness(chosen) as harness:
            result = replay_on_jgroups(args.trace, str(model_path), protocol, harness)
    except JGroupsUnavailable as error:
        raise usage(f"{args.trace}: {error}") from None
    if args.json:
        print(json.dumps(result.as_json()))
    else:
        print("\n".join(result.lines()))
    return 1 if result.divergence is not None and result.explained is None else 0
