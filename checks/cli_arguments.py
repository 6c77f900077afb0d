"""The options of ``seqcheck check`` and ``seqcheck bench`` (``checks/cli.py`` owns the commands
and what they do with them), where the shipped models are, and what every command shares: the
one-line ``UsageError``, the check that an output folder is writable, the model files named."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import models

MODELS_DIR = Path(models.__file__).resolve().parent
BENCH_DIR = MODELS_DIR / "bench"
UNCHECKED = {"bench", "fuzz"}  # model folders for the benchmark and for random walks, not for `check`
ESTIMATE_STATES = 100_000  # --estimate: the states of the first levels explored


class UsageError(Exception):
    """A mistake in what the user asked for; printed as one line, exit code 2."""


def writable_folder(option: str, folder: Path) -> Path:
    """``folder`` after checking that files can be written there (so that no search's result is
    lost to an unwritable output folder): a file is created and removed in its nearest existing
    ancestor, nothing is left behind; else a one-line ``UsageError``."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, f"{existing} is not a folder")
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise UsageError(f"{option}: cannot write in {folder}: {error.strerror or error}") from None
    return folder


def model_paths(paths: Sequence[Path]) -> list[Path]:
    """The model files named by ``paths`` (folders are searched); default: every shipped model
    except those in ``models/bench`` and ``models/fuzz``."""
    if not paths:
        return sorted(p for p in MODELS_DIR.rglob("*.toml") if p.relative_to(MODELS_DIR).parts[0] not in UNCHECKED)
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(path.rglob("*.toml")))
        elif path.is_file():
            found.append(path)
        else:
            raise UsageError(f"{path}: no such model file or folder")
    if not found:
        raise UsageError(f"{', '.join(map(str, paths))}: no model files (*.toml) there")
    return found


def check_arguments(check: argparse.ArgumentParser) -> None:
    """``seqcheck check``'s options."""
    check.add_argument("paths", nargs="*", type=Path, help="model files or folders (default: every shipped model)")
    check.add_argument("--json", action="store_true", help="print one JSON object per model instead of a table")
    check.add_argument("--trace-dir", type=Path, default=Path("traces"),
                       help="where counterexample traces are written (default: ./traces)")
    check.add_argument("--no-progress", action="store_true",
                       help="no progress line, even on a terminal (the one-line warning that a search's growth "
                            "projects past its budgets still prints)")
    check.add_argument("--report", type=Path, metavar="DIR", help="also write DIR/index.html: the run as one page, "
                       "each counterexample linked to its viewer page (DIR/traces/*.html)")
    check.add_argument("--no-symmetry", action="store_true",
                       help="explore every state, not one per orbit of interchangeable members (as [check] "
                            "symmetry = false does for one model)")
    reduction = check.add_mutually_exclusive_group()
    reduction.add_argument("--por", action="store_true",
                           help="partial-order reduction: explore persistent sets only (as [check] partial_order = "
                                "true does for one model; unicast protocols; counterexamples then shortened)")
    reduction.add_argument("--no-por", action="store_true", help="no partial-order reduction, even where a model "
                                                                 "file asks for it")
    check.add_argument("--workers", type=int, default=1, metavar="N",
                       help="compute successors in N worker processes (default 1; started for levels of "
                            "8,192 states or more): the same states, verdicts and trace lengths as one process")
    check.add_argument("--time-limit", type=float, metavar="CPU_SECONDS",
                       help="stop each model's search after CPU_SECONDS of CPU time (its process and workers; never "
                            "wall time): the verdict is then incomplete (a violation found before stands); the "
                            "progress line warns as soon as the levels' growth projects past it or past max_states")
    check.add_argument("--estimate", action="store_true",
                       help="explore only the first levels (--estimate-states) and print the growth per level and "
                            "its projection: states and CPU time of the next levels, where max_states is reached, "
                            "what to cut; no verdict unless the whole search fits")
    check.add_argument("--estimate-states", type=int, metavar="N",
                       help=f"with --estimate: the states explored (default {ESTIMATE_STATES:,}; the levels complete "
                            "within them are projected)")
    spark = check.add_argument_group("search on Spark (checks/sparkbfs)")
    spark.add_argument("--checkpoint", type=Path, metavar="DIR",
                       help="with --master (no --swarm): keep the search's levels in DIR and resume from its last "
                            "complete level when run again with the same model and options (default: a temporary "
                            "folder, removed at the end); on a cluster DIR must be shared by the driver and executors")
    check.add_argument("--safety-only", action="store_true",
                       help="leave the liveness properties out: check the safety properties, deadlocks and witnesses "
                            "(a model expecting a liveness violation then expects pass); needed for --master on a "
                            "model with liveness properties")
    swarm_arguments(check)


def bench_arguments(bench: argparse.ArgumentParser) -> None:
    """``seqcheck bench``'s options."""
    bench.add_argument("--model", type=Path, default=BENCH_DIR / "unicast3-bench.toml")
    bench.add_argument("--repeat", type=int, default=1, help="runs to take the median of (default 1)")
    bench.add_argument("--engine", action="store_true",
                       help="benchmark the engines (UNICAST3: messages/s between two; NAKACK2: delivered at every "
                            "member of three) instead of the checker")
    bench.add_argument("--messages", type=int, default=100_000, help="messages per engine run (default 100000)")
    bench.add_argument("--fuzz", action="store_true",
                       help="benchmark fuzzing: lockstep steps/s in one process and on Spark local[1], local[2]")
    bench.add_argument("--runs", type=int, default=2000, help="schedules per fuzz measurement (default 2000)")
    bench.add_argument("--no-spark", action="store_true",
                       help="with --fuzz: the in-process measurements only (no Spark local[1], local[2])")
    bench.add_argument("--jgroups", metavar="VERSION", help="benchmark the JGroups lockstep (steps/s, wall and CPU "
                       "with the JVM's) beside the engine lockstep on the same walks (default model: "
                       "models/fuzz/unicast3-lockstep.toml; --runs walks, default 2000)")
    bench.add_argument("--net", action="store_true",
                       help="benchmark the network runtime: UNICAST3 messages/s and p50/p99 delivery latency between "
                            "two endpoints over loopback, without loss and with 5%% loss, beside raw asyncio UDP "
                            "on the same sockets (--messages per run)")
    bench.add_argument("--fpset", type=int, nargs="+", metavar="SIZE",
                       help="benchmark the visited-state set at these sizes (fingerprints), against sorted runs")
    bench.add_argument("--workers", type=int, metavar="N", help="the checker with --workers 1 and --workers N, "
                       "alternately --repeat times each: medians, their ratio, CPU seconds and the load")
    bench.add_argument("--master", metavar="URL", help="the checker in this process and on Spark URL (seqcheck check "
                       "--master), alternately --repeat times each, liveness left out on both: medians of wall and CPU "
                       "seconds, CPU overhead per state, states per executor-core-second, shuffle bytes per state")
    bench.add_argument("--race-spin", action="store_true",
                       help="the checker against Spin (-DSAFETY) on a model with a Promela twin (default: "
                            "docs/examples/arq_plugin/model-files/arq-large.toml, its plug-in installed), alternately "
                            "--repeat times each in fresh processes: the same counts, CPU and peak-memory ratios")


def swarm_arguments(check: argparse.ArgumentParser) -> None:
    """``seqcheck check --swarm`` and its options (``checks/swarm_job.py``)."""
    swarm = check.add_argument_group("swarm search (checks/swarm_job.py)")
    swarm.add_argument("--swarm", action="store_true",
                       help="instead of the exhaustive search: many randomised bounded depth-first searches as "
                            "Spark tasks, their coverage merged; violations come back as validated, shortened traces")
    swarm.add_argument("--master", metavar="URL", help="Spark master: local[*], local[N] or spark://HOST:PORT. "
                       "Without --swarm: the exhaustive search level by level as Spark jobs (the same counts and "
                       "verdicts as in this process; safety properties, deadlocks and witnesses). With --swarm: where "
                       "its tasks run (default local[*]; none: in this process, without Spark)")
    swarm.add_argument("--seed", type=int, metavar="S", help="the swarm's seed; every task's seed, order and depth "
                       "bound derive from it (default 0)")
    swarm.add_argument("--tasks", type=int, metavar="N", help="searches (default 16)")
    swarm.add_argument("--depth", metavar="LO:HI", help="range of the tasks' depth bounds (default 10:60)")
    swarm.add_argument("--task-states", type=int, metavar="N", help="distinct states per task (default 100000)")
    swarm.add_argument("--sample", type=int, metavar="K", help="fingerprints per task kept to merge coverage "
                       "(default 65536; the distinct count is exact below it, an estimate above)")
    swarm.add_argument("--liveness-rate", type=float, metavar="R", help="share of new states whose fault-free "
                       "continuations a task searches, besides its leaves (default 1: all)")
    swarm.add_argument("--shorten-states", type=int, metavar="N", help="states per BFS that shortens a trace "
                       "(default 200000)")
    swarm.add_argument("--exhaustive", action="store_true", default=None,
                       help="also run the checker's exhaustive count, for coverage against CPU time")
