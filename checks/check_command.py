"""``seqcheck check``: what it does with its options (``checks/cli_arguments.py`` declares them).

Every model file named is loaded and validated before any search; then each is checked in turn
(``checks/check.py``) with a progress line and a row of the table (``checks/check_output.py``), or
one JSON object each with ``--json``; ``--swarm`` hands the models to ``checks/swarm_job.py`` and
``--estimate`` explores only their first levels (``checks/estimate.py``); ``--master`` without ``--swarm``
runs each search on Spark (``checks/sparkbfs``, its session opened here once for all the models). A
mistake in the options is a one-line ``UsageError`` (exit 2) before anything runs.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from checks.check import Outcome, SparkRun, check_model, workers_problem
from checks.check_output import Table, interrupted_line, label, progress_reporter
from checks.cli_arguments import UsageError, model_paths, writable_folder
from checks.explore.system import Liveness, PortableStates, offers
from checks.sparkbfs.search import CheckpointError
from models.modelfile import Model, load_all

SWARM_ONLY = {"seed": "--seed", "tasks": "--tasks", "depth": "--depth",
              "task_states": "--task-states", "sample": "--sample", "liveness_rate": "--liveness-rate",
              "shorten_states": "--shorten-states", "exhaustive": "--exhaustive"}


def check_command(args: argparse.Namespace) -> int:
    swarm = _swarm_options(args)
    loaded = [model for p in model_paths(args.paths) for model in load_all(p)]  # all validated before any runs
    writable_folder("--trace-dir", args.trace_dir)
    partial_order = _usage(args, loaded, swarm is not None)
    master = None if swarm is not None else args.master
    if master is not None:
        spark_problem(args, loaded)
    elif args.checkpoint is not None:
        raise UsageError("--checkpoint: only with --master (and without --swarm): it keeps a search on Spark's levels")
    if swarm is not None:
        from checks.swarm_job import check_swarm

        return check_swarm(loaded, swarm, [label(m) for m in loaded], json_out=args.json, trace_dir=args.trace_dir,
                           progress=None if args.no_progress else sys.stderr)
    if args.estimate:
        from checks.estimate import estimate

        return estimate(loaded, args, partial_order)
    spark, owned = open_spark(master, args.checkpoint, None if args.no_progress else sys.stderr, args.json)
    try:
        return _check_all(args, loaded, partial_order, spark)
    finally:
        if owned and spark is not None:
            from checks.fuzz.spark import stop_quietly

            stop_quietly(spark.session)


def _check_all(args: argparse.Namespace, loaded: Sequence[Model], partial_order: bool | None,
               spark: SparkRun | None) -> int:
    table = Table(sys.stdout, [label(m) for m in loaded], args.trace_dir, args.time_limit) if not args.json else None
    terminal = sys.stderr.isatty()
    outcomes: list[Outcome] = []
    for model in loaded:
        progress = progress_reporter(label(model, short=False), model, terminal=terminal, json_lines=args.json,
                                     time_limit=args.time_limit, lines=not args.no_progress)
        try:
            outcome = check_model(model, trace_dir=args.trace_dir, progress=progress, workers=args.workers,
                                  symmetry=not args.no_symmetry, partial_order=partial_order,
                                  time_limit=args.time_limit, safety_only=args.safety_only, spark=spark)
        except CheckpointError as error:
            raise UsageError(str(error)) from None
        if terminal and not args.json and not args.no_progress:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        outcomes.append(outcome)
        if table is not None:
            table.row(outcome)
        else:
            print(json.dumps(outcome.to_json()), flush=True)
        if outcome.verdict == "interrupted":
            print(interrupted_line(outcome), file=sys.stderr)
            return 130
    all_match = all(o.matches for o in outcomes)
    if table is not None:
        table.footer(all_match)
    if args.report is not None:
        from checks.view.report import write_check_report

        index = write_check_report(args.report, outcomes, [label(o.model, for_files=True) for o in outcomes])
        print(f"Report written to {index}", file=sys.stderr)
    return 0 if all_match else 1


def _usage(args: argparse.Namespace, loaded: Sequence[Model], swarm: bool) -> bool | None:
    """Check the options against each other and the models (a ``UsageError`` for the first
    mistake); the partial-order reduction asked for (None: as each model file says)."""
    if args.time_limit is not None and not (math.isfinite(args.time_limit) and args.time_limit > 0):
        raise UsageError(f"--time-limit: expected CPU seconds > 0, got {args.time_limit:g}")
    if args.estimate_states is not None:
        if not args.estimate:
            raise UsageError("--estimate-states: only with --estimate")
        if args.estimate_states < 1:
            raise UsageError(f"--estimate-states: expected a whole number >= 1, got {args.estimate_states}")
    for flag, given in (("--estimate", args.estimate), ("--time-limit", args.time_limit is not None)):
        if given and swarm:
            raise UsageError(f"{flag}: not with --swarm (a swarm's budgets are its tasks': --task-states, --depth)")
    if args.estimate and args.report is not None:
        raise UsageError("--estimate: not with --report (it explores the first levels only: no verdicts to report)")
    if problem := workers_problem(loaded, args.workers, swarm=swarm, por=getattr(args, "por", False)):
        raise UsageError(problem)
    if args.report is not None:
        if swarm:
            raise UsageError("--report: not with --swarm (a report is written for the exhaustive check only)")
        writable_folder("--report", args.report)
    partial_order = True if args.por else False if args.no_por else None
    if partial_order:
        if swarm:
            raise UsageError("--por: not with --swarm (a swarm samples the unreduced state space)")
        if not any(callable(getattr(model.world, "enable_partial_order", None)) for model in loaded):
            raise UsageError(f"--por: {loaded[0].path}: protocol {loaded[0].protocol}: partial-order reduction is "
                             "available for the unicast protocols only" + (" (none of these models)"
                                                                           if len(loaded) > 1 else ""))
    return partial_order


SPARK_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?|spark://[^\s/:]+:[0-9]+(,[^\s/:]+:[0-9]+)*")


def spark_problem(args: argparse.Namespace, loaded: Sequence[Model]) -> None:
    """``--master`` without ``--swarm``: a ``UsageError`` for the first thing the search on Spark
    cannot do as asked (``checks/sparkbfs``)."""
    if not SPARK_MASTER.fullmatch(args.master):
        raise UsageError(f"--master: expected local, local[N], local[*] or spark://HOST:PORT (omit --master to search "
                         f"in this process), got {args.master!r}")
    for flag, given in (("--workers", args.workers > 1), ("--por", args.por), ("--estimate", args.estimate)):
        if given:
            raise UsageError(f"{flag}: not with --master (the search on Spark spreads the levels over the executors, "
                             "unreduced)")
    for model in loaded:
        if not offers(model.world, PortableStates):
            raise UsageError(f"--master: {model.path}: protocol {model.protocol}: its system offers no PortableStates "
                             "(checks.explore.system), so its states cannot cross processes")
        live = [p.name for p in model.world.properties if isinstance(p, Liveness)]
        if live and not args.safety_only:
            raise UsageError(f"--master: {model.path}: protocol {model.protocol}: the search on Spark checks no "
                             f"liveness property ({', '.join(live)}); add --safety-only to check the others there, "
                             "or omit --master to check them all in this process")


def open_spark(master: str | None, checkpoint: Path | None, progress: TextIO | None,
               json_lines: bool = False) -> tuple[SparkRun | None, bool]:
    """The session for ``--master`` (None without it) and whether this process started it; its JVM
    writes to ``spark.log`` in the checkpoint folder (else to a temporary file, removed at exit)."""
    if master is None:
        return None, False
    from checks.extras import require_spark
    from checks.fuzz.spark import is_local, session, unreachable

    require_spark(f"--master {master}")
    if not is_local(master) and (problem := unreachable(master)):
        raise UsageError(f"--master: {problem}")
    if checkpoint is not None:
        writable_folder("--checkpoint", checkpoint)
        checkpoint.mkdir(parents=True, exist_ok=True)
    if checkpoint is not None:
        log = checkpoint / "spark.log"
    else:  # removed at exit, as the temporary folder of the levels is
        log = Path(tempfile.gettempdir()) / f"seqcheck-spark-{os.getpid()}.log"
        atexit.register(log.unlink, missing_ok=True)
    try:
        spark, owned = session(master, "seqcheck check --master", log=log)
    except ValueError as error:
        raise UsageError(str(error)) from None
    return SparkRun(spark, checkpoint, progress, json_lines), owned


def _swarm_options(args: argparse.Namespace) -> Any:
    """The ``SwarmOptions`` of ``--swarm`` (None without it); a swarm option without it is a usage error."""
    given = {key: getattr(args, key) for key in SWARM_ONLY if getattr(args, key) is not None}
    if not args.swarm:
        if given:
            raise UsageError(f"{SWARM_ONLY[next(iter(given))]}: only with --swarm")
        return None
    if args.master is not None:  # not swarm-only: without --swarm it runs the exhaustive search on Spark
        given["master"] = args.master
    from checks.swarm_job import SwarmOptions, SwarmUsageError, parse_depth

    try:
        if "depth" in given:
            given["depth"] = parse_depth(given["depth"])
        options = SwarmOptions(**given)
        options.check()
    except SwarmUsageError as error:
        raise UsageError(str(error)) from None
    return options
