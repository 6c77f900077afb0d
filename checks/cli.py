"""The ``seqcheck`` command: check, show, replay, list, bench, fuzz, prove, mutate, conform, demo, validate.

Exit codes: 0 every verdict matches its expectation; 1 some verdict does not; 2 a usage error
(unknown option, unreadable model or trace file), reported as one line naming the input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from checks.check import WitnessError, display_path, replay_witness
from checks.check_command import check_command
from checks.cli_arguments import (
    BENCH_DIR,
    MODELS_DIR,
    UsageError,
    bench_arguments,
    check_arguments,
    model_paths,
    writable_folder,
)
from checks.explore.trace import Trace, TraceError, file_digest, validate
from checks.extras import MissingExtra, require_spark
from models.modelfile import Model, ModelError, load, load_all, split_reference

__all__ = ["MODELS_DIR", "UsageError", "main", "model_paths", "writable_folder"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (UsageError, ModelError, TraceError, MissingExtra) as error:
        print(f"seqcheck: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("seqcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`seqcheck list | head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def version_line() -> str:
    """``seqcheck --version``: the installed distribution's version and the Python running it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("seqcheck")
    except PackageNotFoundError:
        found = "(not installed: run from a checkout)"
    return f"seqcheck {found} (Python {sys.version.split()[0]})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seqcheck", description="Model-check JGroups reliable-delivery protocols.")
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    check = sub.add_parser("check", help="check model files against their expected verdicts")
    check_arguments(check)
    check.set_defaults(run=check_command)
    show = sub.add_parser("show", help="render a trace file (or a model file's witness) as a message-sequence chart")
    show.add_argument("trace", type=Path, help="a trace file, or a model file (*.toml) to draw its witness")
    show.add_argument("--html", type=Path, metavar="OUT.html",
                      help="also write the trace as a self-contained HTML viewer page (no network needed)")
    show.add_argument("--itf", type=Path, metavar="OUT.itf.json",
                      help="also write the trace in the Informal Trace Format (Apalache/Quint ITF JSON)")
    show.set_defaults(run=_show)
    replay = sub.add_parser("replay", help="run a trace against the production engine")
    replay.add_argument("trace", type=Path)
    replay.add_argument("--emit-test", type=Path, metavar="FILE",
                        help="also write the trace as a standalone pytest regression test")
    replay.add_argument("--engines-with", metavar="NAME",
                        help="the engines under one of seqcheck fuzz's settings (as the fuzz run that found the "
                             "trace had them: timed, rows-of-1, ...); the emitted test uses the default engines")
    replay.add_argument("--jgroups", metavar="VERSION|JAR",
                        help="run the trace on a JGroups release instead (its protocol classes in lockstep with the "
                             "spec as that release) and judge the trace's property on what JGroups did")
    replay.add_argument("--json", action="store_true", help="with --jgroups: one JSON object")
    replay.set_defaults(run=_replay)
    listing = sub.add_parser("list", help="list protocols, variants and properties")
    listing.set_defaults(run=_list)
    bench = sub.add_parser("bench", help="run the fixed benchmark and print one JSON line")
    bench_arguments(bench)
    bench.set_defaults(run=_bench)
    from checks.fuzz.command import add_arguments

    fuzz = sub.add_parser("fuzz", help="random fault schedules on Spark: engine against spec, properties, "
                          "shrunk traces")
    add_arguments(fuzz)
    fuzz.set_defaults(run=_fuzz)
    from checks.symbolic.command import add_arguments as add_prove_arguments

    prove = sub.add_parser("prove", help="z3 proofs: UNICAST3/UNICAST2 inductive invariants for any number of "
                           "messages, the engines' window and counter arithmetic for every value; "
                           "counterexamples replayed on the spec and drawn")
    add_prove_arguments(prove)
    prove.set_defaults(run=_prove)
    from checks.mutate.command import add_arguments as add_mutate_arguments

    mutate = sub.add_parser("mutate", help="plant the catalogue's defects (checks/mutate/mutants.toml) in copies of "
                            "the tree, judge each by lockstep, fuzz and model checks, print the kill table")
    add_mutate_arguments(mutate)
    mutate.set_defaults(run=_mutate)
    from checks.jgroups.command import add_arguments as add_conform_arguments

    conform = sub.add_parser("conform", help="seeded schedules of a model run by the spec and by JGroups' own "
                             "protocol classes in lockstep; every divergence explained or reported")
    add_conform_arguments(conform)
    conform.set_defaults(run=_conform)
    for name, module, text in (
            ("demo", "checks.demo.command", "N endpoints of a protocol in separate processes on loopback, through a "
             "fault-injecting link: live counts and a verdict"),
            ("validate", "checks.validate.command", "check event logs of real runs against the spec, step by step")):
        added = sub.add_parser(name, help=text)
        importlib.import_module(module).add_arguments(added)
        added.set_defaults(run=partial(_run_module, module))
    return parser


def _run_module(module: str, args: argparse.Namespace) -> int:
    """A command whose options and handler live in ``module`` (its usage errors: ``USAGE_ERRORS``)."""
    found = importlib.import_module(module)
    try:
        return int(found.command(args))
    except found.USAGE_ERRORS as error:
        raise UsageError(str(error)) from None


def _conform(args: argparse.Namespace) -> int:
    from checks.jgroups.command import ConformUsageError, command

    try:
        return command(args)
    except ConformUsageError as error:
        raise UsageError(str(error)) from None


def _mutate(args: argparse.Namespace) -> int:
    from checks.mutate.command import MutateUsageError, command

    try:
        return command(args)
    except MutateUsageError as error:
        raise UsageError(str(error)) from None


def _prove(args: argparse.Namespace) -> int:
    from checks.symbolic.command import ProveUsageError, run

    try:
        return run(args, writable_folder)
    except ProveUsageError as error:
        raise UsageError(str(error)) from None


# -- show ---------------------------------------------------------------------------------------
def _show(args: argparse.Namespace) -> int:
    """The chart on stdout; with ``--html`` or ``--itf`` the files instead, and only their paths."""
    if args.trace.suffix == ".toml":
        return _show_witness(args.trace, args.html, args.itf)
    trace = Trace.load(args.trace)
    model_path, protocol = _trace_model(trace, args.trace)
    model = load(model_path, protocol=protocol)
    try:
        path = validate(model.world, trace)
    except TraceError as error:
        raise TraceError(f"{args.trace}: {error}") from None
    if file_digest(model_path) != trace.model_digest:
        print(f"seqcheck: note: {model_path} changed since {args.trace} was made; the trace still replays",
              file=sys.stderr)
    from checks.view.html import trace_text

    header, footer = trace_text(display_path(model_path), protocol, model, trace)  # never an absolute path
    if args.html is None and args.itf is None:
        _print_chart(header, _drawing(model, path, footer))
    _write_files(args.html, args.itf, model, path, header, footer, str(args.trace))
    return 0


def _write_files(html: Path | None, itf: Path | None, model: Model, path: list[tuple[Any, Any]],
                 header: list[str], footer: Sequence[str], source: str) -> None:
    """``--html OUT`` (the viewer page, ``checks/view/html.py``) and ``--itf OUT``
    (``checks/view/itf.py``), both checked before either is written; each path written printed."""
    for flag, out, refusal in (("--html", html, "has no message-sequence chart to draw"),
                               ("--itf", itf, "is not a world of members to export")):
        if out is not None:
            _member_world_for(flag, out, model, refusal)
    if html is not None:
        from checks.view.html import model_title, write_page

        on = f" [{model.protocol}]" if model.side_by_side else ""
        write_page(html, model.world, path, model_title(model.path) + on, header, footer)
        print(f"viewer written to {html} (open it in a browser; it needs no network)")
    if itf is not None:
        from checks.view.itf import write_itf

        write_itf(itf, model.world, path, source, model.description)
        print(f"ITF trace written to {itf}")


def _member_world_for(flag: str, out: Path, model: Model, refusal: str) -> None:
    """``flag OUT`` needs a world of members (``models/world.py`` or ``models/multicast_world.py``)
    and a writable folder for OUT; a usage error otherwise."""
    from models.multicast_world import MulticastWorld
    from models.world import World

    if not isinstance(model.world, (World, MulticastWorld)):
        raise UsageError(f"{flag}: {model.path}: protocol {model.protocol} {refusal}")
    writable_folder(flag, out.parent)  # Path("x").parent is Path(".")


def _drawing(model: Model, path: list[tuple[Any, Any]], footer: Sequence[str] = ()) -> str:
    """A message-sequence chart for a protocol of ``models/world.py`` or ``models/multicast_world.py``
    (which offers the same ``view``, ``emitted``, ``adapter`` and ``pairs``); for any other transition
    system (a plug-in's), the numbered steps as it words them."""
    from models.chart import chart
    from models.multicast_world import MulticastWorld
    from models.world import World

    drawable: Any = model.world  # both worlds offer what the chart reads
    if isinstance(model.world, (World, MulticastWorld)):
        return chart(drawable, path, footer=footer)
    steps = [f"{number:>4}. {model.world.format_action(action)}" for number, (action, _) in enumerate(path, 1)]
    return "\n".join([*steps, *footer]) + "\n"


def _print_chart(header: Sequence[str], drawing: str) -> None:
    """A chart's header and drawing on stdout; on a terminal, the lines of text (not the drawn
    lanes, which have their own width) wrapped to its width."""
    from checks.terminal import fit, terminal_width

    width = terminal_width(sys.stdout)
    for line in [*header, *drawing.splitlines()]:
        drawn = line.startswith(" " * 6) and any(mark in line for mark in "│─")
        print(line if drawn or "─" * 8 in line else fit(line, width))


def _trace_model(trace: Trace, trace_file: Path) -> tuple[Path, str | None]:
    """The model file a trace names, and the protocol for a side-by-side file (``file#protocol``)."""
    name, protocol = split_reference(trace.model)
    for candidate in (MODELS_DIR.parent / name, Path(name), trace_file.parent / name):
        if candidate.is_file():
            return candidate, protocol
    raise UsageError(f"{trace_file}: model {name} not found")


def _show_witness(model_file: Path, html: Path | None = None, itf: Path | None = None) -> int:
    """``seqcheck show MODEL.toml``: the chart of each protocol's witness in the model file."""
    models_with_witness = [m for m in load_all(model_file) if m.witness]
    if not models_with_witness:
        raise UsageError(f"{model_file}: check.witness: expected a witness to draw (the file has none)")
    for model in models_with_witness:
        try:
            path = replay_witness(model)
        except WitnessError as error:
            raise UsageError(f"{model_file}: {error}") from None
        on = f" [{model.protocol}]" if model.side_by_side else ""
        header = [f"{display_path(model_file)}{on}: {model.description}",
                  f"witness: the scenario's {len(path)} steps, every checked safety property holding along them"]
        if html is None and itf is None:
            _print_chart(header, _drawing(model, path))
            continue
        several = len(models_with_witness) > 1
        _write_files(_per_protocol(html, ".html", model.protocol, several),
                     _per_protocol(itf, ".itf.json", model.protocol, several), model, path, header, (), str(model_file))
    return 0


def _per_protocol(out: Path | None, suffix: str, protocol: str, several: bool) -> Path | None:
    """``out`` for one protocol of a side-by-side file: ``name-<protocol><suffix>`` when there are several."""
    if out is None or not several:
        return out
    mine = out.name.endswith(suffix)
    base, ext = (out.name.removesuffix(suffix), suffix) if mine else (out.stem, out.suffix)
    return out.with_name(f"{base}-{protocol}{ext}")


# -- replay -------------------------------------------------------------------------------------
def _replay(args: argparse.Namespace) -> int:
    from checks.conform.engines import NoEngine
    from checks.conform.replay import emit_test, run_replay

    trace = Trace.load(args.trace)
    model_path, protocol = _trace_model(trace, args.trace)
    if args.jgroups is not None:
        from checks.jgroups.command import replay_command

        if args.emit_test is not None or args.engines_with is not None:
            raise UsageError("--jgroups: not with --emit-test or --engines-with (those run the production engines)")
        return replay_command(args, model_path, protocol, UsageError)
    if args.emit_test is not None:
        if args.emit_test.is_dir():
            raise UsageError(f"--emit-test: {args.emit_test} is a folder; expected a file name (test_*.py)")
        writable_folder("--emit-test", args.emit_test.parent)
    engines = _replay_engines(args.engines_with)
    try:
        report = run_replay(args.trace, model_path, protocol, engines_for=engines)
    except TraceError as error:
        raise TraceError(f"{args.trace}: {error}") from None
    except NoEngine as error:
        raise UsageError(f"{args.trace}: {error}") from None
    for line in report.lines():
        print(line)
    if args.engines_with is not None:
        print(f"lockstep engines: {args.engines_with} (seqcheck fuzz --engines-with); "
              "the scripts ran on the default ones")
    if args.emit_test is not None:
        written = emit_test(report, args.trace, args.emit_test)
        print(f"regression test written to {written} (run it: pytest {written})")
    return 0 if report.reproduced else 1


def _replay_engines(name: str | None) -> Any:
    """The engine factory ``--engines-with NAME`` names (``seqcheck fuzz``'s settings), None: default."""
    if name is None:
        return None
    from checks.fuzz.command import ENGINE_SETTINGS
    from checks.fuzz.run import resolve_engines

    if name not in ENGINE_SETTINGS:
        raise UsageError(f"--engines-with: expected one of {', '.join(ENGINE_SETTINGS)}, got {name!r}")
    return resolve_engines(ENGINE_SETTINGS[name])


# -- list ---------------------------------------------------------------------------------------
def _list(args: argparse.Namespace) -> int:
    """Every protocol's variants, settings and properties; on a terminal, lines wrapped to its width."""
    from checks.terminal import fit, terminal_width
    from models import registry

    width = terminal_width(sys.stdout)
    for factory in registry.factories():
        print(f"protocol {factory.name}")
        for line in factory.describe():
            print(fit(f"  {line}", width))
        print("  properties:")
        for prop, doc in factory.property_docs().items():
            print(fit(f"    {prop:<24} {doc}", width, indent=4 + max(24, len(prop)) + 1))
    return 0


# -- bench --------------------------------------------------------------------------------------
def _bench(args: argparse.Namespace) -> int:
    from checks.bench.checker import run_bench

    if args.repeat < 1:
        raise UsageError(f"--repeat: expected a whole number >= 1, got {args.repeat}")
    if args.fpset:
        from checks.bench.fpset import run_fpset_bench

        if min(args.fpset) < 1:
            raise UsageError(f"--fpset: expected sizes >= 1, got {min(args.fpset)}")
        print(json.dumps(run_fpset_bench(args.fpset)))
        return 0
    if args.race_spin:
        return _bench_race_spin(args)
    if not args.engine and not args.net:
        load(args.model)  # a missing or bad model is one line here, not a failed benchmark process
    if args.master is not None:
        from checks.bench.spark_search import run_spark_search_bench
        from checks.check_command import SPARK_MASTER

        if not SPARK_MASTER.fullmatch(args.master):
            raise UsageError(f"--master: expected local, local[N], local[*] or spark://HOST:PORT, got {args.master!r}")
        require_spark(f"bench --master {args.master}")
        print(json.dumps(run_spark_search_bench(args.model, args.master, repeat=args.repeat)))
        return 0
    if args.workers is not None:
        from checks.bench.workers import run_workers_bench

        if args.workers < 2:
            raise UsageError(f"--workers: expected 2 or more (compared with 1), got {args.workers}")
        print(json.dumps(run_workers_bench(args.model, args.workers, repeat=args.repeat)))
        return 0
    if args.jgroups is not None:
        return _bench_jgroups(args)
    if args.net:
        from checks.bench.net import run_net_bench

        print(json.dumps(run_net_bench(args.messages, args.repeat)))
        return 0
    if args.fuzz:
        from checks.bench.fuzz import run_fuzz_bench

        if args.runs < 1:
            raise UsageError(f"--runs: expected a whole number >= 1, got {args.runs}")
        if not args.no_spark:
            require_spark("bench --fuzz", "--no-spark (the in-process measurements only)")
        model = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml" if args.model == BENCH_DIR / "unicast3-bench.toml" \
            else args.model
        print(json.dumps(run_fuzz_bench(model, args.runs, repeat=args.repeat, spark=not args.no_spark)))
        return 0
    if args.engine:
        from checks.bench.engine import run_engine_bench

        if args.messages < 1:
            raise UsageError(f"--messages: expected a whole number >= 1, got {args.messages}")
        print(json.dumps(run_engine_bench(args.messages, args.repeat)))
        return 0
    print(json.dumps(run_bench(args.model, repeat=args.repeat)))
    return 0


def _bench_race_spin(args: argparse.Namespace) -> int:
    """``bench --race-spin`` (checks/bench/race_spin.py): exit 1 if the two checkers' counts differ."""
    from checks.bench.race_spin import RaceUnavailable, missing_tools, run_race

    if problem := missing_tools():
        raise UsageError(problem)
    model = (MODELS_DIR.parent / "docs" / "examples" / "arq_plugin" / "model-files" / "arq-large.toml"
             if args.model == BENCH_DIR / "unicast3-bench.toml" else args.model)
    try:
        report = run_race(model, repeat=args.repeat)
    except RaceUnavailable as error:
        raise UsageError(str(error)) from None
    print(json.dumps(report))
    return 0 if report["same_counts"] else 1


def _bench_jgroups(args: argparse.Namespace) -> int:
    from checks.bench.jgroups import run_jgroups_bench
    from checks.jgroups.locate import JGroupsUnavailable, jdk, release

    if args.runs < 1:
        raise UsageError(f"--runs: expected a whole number >= 1, got {args.runs}")
    try:
        chosen = release(args.jgroups)
        jdk()
    except JGroupsUnavailable as error:
        raise UsageError(str(error)) from None
    model = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml" if args.model == BENCH_DIR / "unicast3-bench.toml" \
        else args.model
    print(json.dumps(run_jgroups_bench(chosen, model, args.runs, args.repeat)))
    return 0


# -- fuzz ---------------------------------------------------------------------------------------
def _fuzz(args: argparse.Namespace) -> int:
    from checks.fuzz.command import FuzzUsageError, command

    try:
        return command(args)
    except FuzzUsageError as error:
        raise UsageError(str(error)) from None


if __name__ == "__main__":
    sys.exit(main())
