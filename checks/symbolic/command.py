"""``seqcheck prove``: every proof of this package as a table of obligations, with a verdict.

One line per obligation: its name, its result (proved / counterexample / unknown), the result it
should have, and its wall seconds with the CPU seconds beside them (z3 and the checker run in this
process: ``checks/stopwatch``). What runs (``seqcheck prove WHAT`` or ``--protocol WHAT``):

- ``unicast3``: the cross-check of the symbolic model on shipped models' explicit states; every
  obligation of the shipped protocol (expected: proved), and of it without the message cache
  (JGRP-2327's variant: the 3.x releases; expected: proved); every obligation without timestamps
  and without the cache, as in 3.4.8 (JGRP-1873; expected: proved except the one
  counterexample-to-induction of ``EXPECTED_1873``), that counterexample made concrete and
  replayed on the spec, and the bounded search that reaches it and on to a violation, written as
  a trace file ``seqcheck show`` draws; and the removal hook without the world's rule 6
  (expected: a counterexample).
- ``table``: the engines' window arithmetic for every 64-bit value: ``impl/window.Table``
  (``checks/symbolic/table``) and ``impl/fixed_window.FixedBuffer`` (``checks/symbolic/fixed_buffer``).
- ``counters``: the wrapping timestamps and conn_ids of ``impl/common.py`` (``checks/symbolic/counters``).
- ``unicast2``: the same for UNICAST2's STABLE-based purge (``checks/symbolic/unicast2/proofs.py``):
  proved with the fix flags (for the removals rule 6 gates), failing as shipped.
- ``nakack4``: one NAKACK4 sender's window and AckTable (``checks/symbolic/nakack4/proofs.py``): the
  window bound, purge safety and ACK monotonicity proved as shipped; the seed's window edge and
  JGRP-2904 as expected counterexamples-to-induction, each replayed on the spec and drawn, the
  reachable ones also reached in their models and written as traces.
- ``nakack2``: one NAKACK2 sender's window at every member under STABLE's rounds
  (``checks/symbolic/nakack2/proofs.py``): purge_covered, the own window's order and the purge below the
  view's minimum proved for founders and shrinking views; a merge's expected counterexamples-to-induction,
  taken by seqcheck check's counterexample of ``merge-digest-lags-loopback.toml`` and drawn.
- ``lemmas``: ``table`` and ``counters``; ``all`` (the default): everything above.
- ``infer`` (opt-in, about 45 s): DistAI-style inference for UNICAST3 (``checks/symbolic/infer``),
  which invariants a grammar finds and which hand-written ones they imply (``info`` lines).

Every z3 query is bounded by its work budget (z3's ``rlimit``, calibrated per obligation:
``checks/symbolic/budget``), never by wall time, so the verdict is the same on a busy machine. A
query that spends its budget answers ``unknown``: undecided, not a failed proof.

Exit 0 when every line has its expected result; 1 when some line contradicts it (an obligation that
should hold and has a counterexample, an expected counterexample not found, a CTI that does not
replay); 3 when none does but some line is ``unknown`` (a budget spent: nothing was disproved);
2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checks.stopwatch import Stopwatch
from checks.symbolic import cti as ctis
from checks.symbolic.counters import prove_counters
from checks.symbolic.crosscheck import (
    CONCRETE,
    CROSSCHECK_DEPTH,
    CROSSCHECK_WALKS,
    crosscheck,
    crosscheck_detail,
    load_world,
)
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, UNKNOWN, obligations
from checks.symbolic.system import State
from checks.symbolic.table import prove_table
from checks.symbolic.unicast3.invariants import SPEC_AGREEMENT, STRENGTHENINGS, TARGETS
from spec.unicast3 import Variant

MODELS = Path(__file__).resolve().parents[2] / "models" / "unicast3"
CROSSCHECKED = ("receiver-removal", "idle-expiry", "asymmetric-view-heal", "jgrp1586-fixed", "jgrp1873-no-timestamps")
CROSSCHECK_STATES = 800  # breadth first, then CROSSCHECK_WALKS random walks of CROSSCHECK_DEPTH steps
JGRP1873_MODEL = MODELS / "jgrp1873-no-timestamps.toml"
EXPECTED_1873 = ("deliver_sfs", "live_ack_below_first")
JGRP1873 = Variant(no_timestamps=True, no_message_cache=True)  # 3.4.8, as JGRP1873_MODEL
PROTOCOLS = ("unicast3", "table", "counters", "unicast2", "nakack4", "nakack2", "all")
OPT_IN = ("infer",)  # not part of "all": about 45 s
INFO = "info"  # an expected value that any result matches (inference reports what it found)
UNDECIDED_EXIT = 3  # no line contradicted, some undecided (a z3 budget spent)


@dataclass(frozen=True)
class Settings:
    trace_dir: Path  # where traces of reachable counterexamples-to-induction go
    seed: int  # of the cross-checks' random walks


@dataclass
class Line:
    name: str
    result: str
    expected: str
    seconds: float  # wall
    cpu_seconds: float  # this process's: z3 and the checker's searches run in it
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.result == self.expected

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "result": self.result, "expected": self.expected,
                "seconds": round(self.seconds, 3),
                "cpu_seconds": round(self.cpu_seconds, 3), "detail": self.detail}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", nargs="?", metavar="|".join(PROTOCOLS[:-1] + ("lemmas", "all") + OPT_IN),
                        help="what to prove, as --protocol (lemmas: table and counters; infer: DistAI-style "
                             "invariant inference for UNICAST3, not part of all)")
    parser.add_argument("--protocol", metavar="|".join(PROTOCOLS + OPT_IN),
                        help="what to prove (default: all): unicast3's invariants, the Table's arithmetic, ...")
    parser.add_argument("--json", action="store_true", help="print one JSON object per obligation, then the verdict")
    parser.add_argument("--trace-dir", type=Path, default=Path("traces"),
                        help="where a reachable counterexample-to-induction's trace is written (default: ./traces)")
    parser.add_argument("--seed", type=int, default=1,
                        help="seed of the cross-check's random walks (default 1; printed on each cross-check line)")


class ProveUsageError(Exception):
    """A mistake in what ``seqcheck prove`` was asked (``checks/cli.py`` prints it in one line, exit 2)."""


def run(args: argparse.Namespace, writable_folder: Callable[[str, Path], Path]) -> int:
    """Run what ``args`` asks; ``writable_folder(option, folder)`` checks the trace folder (the CLI's)."""
    choices = {**{p: (p,) for p in PROTOCOLS[:-1] + OPT_IN}, "lemmas": ("table", "counters"),
               "all": PROTOCOLS[:-1]}
    if args.what is not None and args.what not in choices:
        raise ProveUsageError(f"what to prove: expected one of {', '.join(choices)}, got {args.what!r}")
    if args.protocol is not None and args.protocol not in PROTOCOLS + OPT_IN:
        raise ProveUsageError(f"--protocol: expected one of {', '.join(PROTOCOLS + OPT_IN)}, got {args.protocol!r}")
    if args.what is not None and args.protocol is not None and args.what != args.protocol:
        raise ProveUsageError(f"what to prove: {args.what!r} and --protocol {args.protocol!r} disagree; give one")
    trace_dir = writable_folder("--trace-dir", args.trace_dir)
    wanted = choices[args.what or args.protocol or "all"]
    out: Callable[[Line], None] = _print_json if args.json else _print_text
    watch = Stopwatch()
    lines = []
    settings = Settings(trace_dir, args.seed)
    for what in wanted:
        for line in SECTIONS[what](settings):
            lines.append(line)
            out(line)
    undecided = [line for line in lines if line.result == UNKNOWN and line.expected != INFO]
    failed = [line for line in lines if not line.ok and line.expected != INFO and line not in undecided]
    word = "NOT as expected" if failed else "unknown" if undecided else "as expected"
    wall, cpu = watch.elapsed()
    verdict = {"verdict": word, "obligations": len(lines), "unexpected": [line.name for line in failed],
               "unknown": [line.name for line in undecided], "seconds": round(wall, 1), "cpu_seconds": round(cpu, 1)}
    if args.json:
        print(json.dumps(verdict))
    else:
        print(f"{len(lines)} lines, {len(failed)} not as expected, {len(undecided)} unknown, "
              f"{verdict['seconds']} s (CPU {verdict['cpu_seconds']} s): {word}")
        for line in failed:
            print(f"  unexpected: {line.name}: {line.result} (expected {line.expected})")
        for line in undecided:
            print(f"  unknown (z3's work budget spent, nothing disproved): {line.name} (expected {line.expected})")
    return 1 if failed else UNDECIDED_EXIT if undecided else 0


def _print_text(line: Line) -> None:
    mark = "" if line.ok or line.expected == INFO else f"  (expected {line.expected})"
    detail = f"  {line.detail}" if line.detail else ""
    took = f"{line.seconds:7.2f} s (CPU {line.cpu_seconds:6.2f} s)"
    print(f"{line.name:<78} {line.result:<15} {took}{mark}{detail}", flush=True)


def _print_json(line: Line) -> None:
    print(json.dumps(line.to_json()), flush=True)


# ---------------------------------------------------------------------------------------------
def _unicast3(settings: Settings) -> Iterator[Line]:
    invariants = TARGETS + STRENGTHENINGS
    yield from _crosschecks(settings.seed)
    for r in obligations(invariants, Variant()):
        yield Line(f"unicast3: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds)
    for r in obligations(invariants, Variant(no_message_cache=True)):
        yield Line(f"unicast3[JGRP-2327]: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds)
    for r in obligations(invariants, JGRP1873):
        expected = COUNTEREXAMPLE if (r.action, r.invariant) == EXPECTED_1873 else PROVED
        yield Line(f"unicast3[JGRP-1873]: {r.name}", r.result, expected, r.seconds, r.cpu_seconds)
    yield from _jgrp1873(settings.trace_dir)
    yield from _without_rule_6()


def _without_rule_6() -> Iterator[Line]:
    """The removal hook without the world's rule 6 (stale packets may outlive the window: the
    2 x MSL assumption dropped, as models/unicast3/residual-stale-packets.toml does) breaks
    induction: a stale first DATA can open a window below what a stale ACK purges."""
    from checks.symbolic.unicast3.model import ACTION_BY_NAME

    ungated = replace(ACTION_BY_NAME["remove_recv"], guard=lambda o, p, a, v: p.r_exists)
    for r in obligations(TARGETS + STRENGTHENINGS, Variant(), actions=(ungated,),
                         only=lambda a, i: i == "first_data_above_acked" and a != "init"):
        yield Line(f"unicast3 without rule 6 (stale packets): {r.name}", r.result, COUNTEREXAMPLE, r.seconds,
                   r.cpu_seconds)


def _crosschecks(seed: int) -> Iterator[Line]:
    for name in CROSSCHECKED:
        watch = Stopwatch()
        world_variant = load_world(MODELS / f"{name}.toml").cfg.variant

        def all_hold(state: State, v: Variant = world_variant) -> bool:
            return all(inv.state(CONCRETE, state, v) for inv in TARGETS + STRENGTHENINGS if inv.state)

        agreements = SPEC_AGREEMENT if world_variant == Variant() else ()
        report = crosscheck(MODELS / f"{name}.toml", CROSSCHECK_STATES, agreements,
                            invariant=all_hold if world_variant == Variant() else None,
                            walks=CROSSCHECK_WALKS, depth=CROSSCHECK_DEPTH, seed=seed)
        result = "agrees" if not report.mismatches else "disagrees"
        detail = crosscheck_detail(report, seed)
        yield Line(f"unicast3: cross-check with spec on {name}", result, "agrees", *watch.elapsed(),
                   detail)


def _jgrp1873(trace_dir: Path) -> Iterator[Line]:
    invariants = TARGETS + STRENGTHENINGS
    action, invariant = EXPECTED_1873
    watch = Stopwatch()
    result, detail, _ = ctis.validated_cti(invariants, JGRP1873, action, invariant,
                                           load_world(JGRP1873_MODEL))
    yield Line(f"unicast3[JGRP-1873]: CTI of {action} / {invariant} replays on spec/unicast3.py",
               result, "validated", *watch.elapsed(), detail)
    watch = Stopwatch()
    reached = ctis.reachable_cti(JGRP1873_MODEL, invariants, action, invariant)
    detail = "no reachable CTI within the bound"
    if reached is not None and reached.trace is not None:
        from checks.check import portable_path

        trace = reached.trace
        trace = replace(trace, model=str(portable_path(JGRP1873_MODEL)))
        path = trace.save(trace_dir / "prove" / "unicast3-jgrp1873-no-timestamps.json")
        detail = (f"{reached.states} states searched; step {reached.cti_step + 1} of {len(reached.path)} "
                  f"({trace.summary[reached.cti_step]}) is the CTI; ends in {trace.prop}; seqcheck show {path}")
    yield Line(f"unicast3[JGRP-1873]: the CTI is reachable (bounded search, {JGRP1873_MODEL.name})",
               "reachable" if reached else "not found", "reachable", *watch.elapsed(), detail)
    watch = Stopwatch()
    where = ctis.checker_passes_through(JGRP1873_MODEL, invariants, action, invariant)
    yield Line(f"unicast3[JGRP-1873]: seqcheck check's counterexample of {JGRP1873_MODEL.name} passes through it",
               "passes through" if where else "does not", "passes through", *watch.elapsed(),
               where or "")


def _table(settings: Settings) -> Iterator[Line]:
    from checks.symbolic.fixed_buffer import prove_fixed_buffer

    for lemma in prove_table() + prove_fixed_buffer():
        yield Line(lemma.name, lemma.result, lemma.expected, lemma.seconds, lemma.cpu_seconds, lemma.detail)


def _counters(settings: Settings) -> Iterator[Line]:
    for lemma in prove_counters():
        yield Line(lemma.name, lemma.result, lemma.expected, lemma.seconds, lemma.cpu_seconds, lemma.detail)


def _unicast2(settings: Settings) -> Iterator[Line]:
    from checks.symbolic.unicast2.proofs import rows

    for row in rows(settings.trace_dir, settings.seed):
        yield Line(*row)


def _nakack4(settings: Settings) -> Iterator[Line]:
    from checks.symbolic.nakack4.proofs import rows

    for row in rows(settings.trace_dir, settings.seed):
        yield Line(*row)


def _nakack2(settings: Settings) -> Iterator[Line]:
    from checks.symbolic.nakack2.proofs import rows

    for row in rows(settings.trace_dir, settings.seed):
        yield Line(*row)


def _infer(settings: Settings) -> Iterator[Line]:
    from checks.symbolic.infer import infer

    found = infer()
    yield Line("infer: unicast3 candidates from the grammar, states sampled, survivors, inductive (Houdini)",
               f"{found.candidates}/{found.sampled_states}/{found.survived_sample}/{len(found.inductive)}", INFO,
               found.seconds, found.cpu_seconds, "; ".join(inv.name for inv in found.inductive))
    for name, implied in found.implied.items():
        yield Line(f"infer: the inferred invariant implies {name}", "implied" if implied else "not implied", INFO,
                   0.0, 0.0)


SECTIONS: dict[str, Callable[[Settings], Iterator[Line]]] = {
    "unicast3": _unicast3, "table": _table, "counters": _counters, "unicast2": _unicast2, "nakack4": _nakack4,
    "nakack2": _nakack2, "infer": _infer}


