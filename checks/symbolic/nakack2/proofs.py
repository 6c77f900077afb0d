"""What ``seqcheck prove nakack2`` runs, as rows (name, result, expected, seconds, cpu, detail):

1. the cross-check of ``nakack2.model`` against ``spec/nakack2.py`` on shipped models' explicit
   states (``crosscheck`` with ``binding_for``: every step satisfies the symbolic relation, the
   gossip's guard is enabled exactly when the spec enables the STABLE timer, the restated targets
   agree with the spec's predicates), for one sender or two per model; the merge model too (its
   ``merge`` steps against the model's ``merge`` action);
2. every obligation of the proven scope (founders, views that only shrink; every NAKACK2 variant:
   none touches STABLE or the windows' purge): expected proved;
3. the ``merge`` action: the obligations ``MERGE_BREAKS`` are the expected counterexamples-to-
   induction (the rest proved); each made concrete (``concrete``) for the merge model's members,
   replayed on the spec and drawn; and seqcheck check's own counterexample of
   ``merge-digest-lags-loopback.toml`` takes such a step: written as a trace ``seqcheck show`` draws.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from checks.stopwatch import Stopwatch
from checks.symbolic.bounded import bounded
from checks.symbolic.crosscheck import (
    CONCRETE,
    CROSSCHECK_DEPTH,
    CROSSCHECK_WALKS,
    Binding,
    crosscheck,
    crosscheck_detail,
)
from checks.symbolic.cti import Subject, checker_trace_through, replayed_cti
from checks.symbolic.nakack2 import abstraction, concrete
from checks.symbolic.nakack2.invariants import INVARIANTS, spec_agreement
from checks.symbolic.nakack2.model import ACTION_BY_NAME, NAKACK2, PROVEN_SCOPE
from checks.symbolic.obligations import COUNTEREXAMPLE, PROVED, obligations
from checks.symbolic.system import State
from models.modelfile import load
from spec import nakack2 as nak

MODELS = Path(__file__).resolve().parents[3] / "models" / "nakack2"
# (model, sender): no join; together they take every action but stutter from a state where every
# invariant holds (the merge model its merges: that action is checked against the spec too).
CROSSCHECKED = (("three-members-loss", 0), ("crash-stable-goes-on", 0), ("crash-stable-goes-on", 1),
                ("jgrp2678-fixed", 0), ("jgrp2678", 0), ("jgrp1539-fixed", 0), ("below-drop-xmit", 0),
                ("merge-digest-lags-loopback", 0))
CROSSCHECK_STATES = 800
MERGE_MODEL = "merge-digest-lags-loopback"
# A merge grows a view: S's (a member whose window for S lags S's purge joins S's view again), or a
# member's (its new window for S at S's own hd, below a vote it sent before the partition).
MERGE_BREAKS = frozenset({"purge_covered", "low_below_view_min", "votes_in_flight_truthful",
                          "votes_counted_truthful"})

Row = tuple[str, str, str, float, float, str]  # name, result, expected, wall and CPU seconds, detail


def binding_for(world: Any, sender: int = 0) -> Binding:
    """The cross-check's binding for ``sender``'s model in ``world``."""
    actions = dict(ACTION_BY_NAME)
    return Binding(actions, abstraction.binder(sender, world.n), abstraction.action_instance(sender),
                   concrete.world_action(sender), nak, {}, {}, lambda cfg, kind: False,
                   enabled_check=abstraction.stable_enabled(actions))


SUBJECT = Subject(NAKACK2, concrete.concretize, binding_for, concrete.pins, concrete.scope)  # sender 0


def all_hold(v: nak.Variant) -> Callable[[State], bool]:
    """Every state invariant on a concrete state (the cross-check's witnesses of non-vacuity)."""
    return lambda state: all(inv.state(CONCRETE, state, v) for inv in INVARIANTS if inv.state)


def crosschecks(seed: int) -> Iterator[Row]:
    for name, sender in CROSSCHECKED:
        watch = Stopwatch()
        path = MODELS / f"{name}.toml"
        world = load(path).world
        report = crosscheck(path, CROSSCHECK_STATES, spec_agreement(world.cfg, sender),
                            binding=binding_for(world, sender), world=world, walks=CROSSCHECK_WALKS,
                            depth=CROSSCHECK_DEPTH, seed=seed, invariant=all_hold(world.cfg.variant))
        yield (f"nakack2: cross-check with spec on {name} (sender {world.member_name(sender)})",
               "agrees" if not report.mismatches else "disagrees", "agrees", *watch.elapsed(),
               crosscheck_detail(report, seed))


def rows(trace_dir: Path, seed: int) -> Iterator[Row]:
    yield from crosschecks(seed)
    for r in obligations(INVARIANTS, nak.Variant(), model=NAKACK2, actions=PROVEN_SCOPE):
        yield f"nakack2: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds, ""
    yield from merge_obligations()
    yield from merge_ctis_replayed(trace_dir)
    yield checker_reaches_merge_cti(trace_dir)


def merge_ctis_replayed(trace_dir: Path) -> Iterator[Row]:
    """Each merge CTI made concrete for the merge model's three members, replayed on spec/nakack2.py
    (the merge handler: MERGE_DIGEST, then the view) and drawn."""
    world = load(MODELS / f"{MERGE_MODEL}.toml").world
    for invariant in sorted(MERGE_BREAKS):
        drawing = trace_dir / "prove" / f"nakack2-cti-merge-{invariant}.txt"
        result, seconds, cpu, detail = replayed_cti(INVARIANTS, nak.Variant(), "merge", invariant, SUBJECT, world,
                                                    drawing)
        yield (f"nakack2[merge]: CTI of merge / {invariant} replays on spec/nakack2.py", result, "validated",
               seconds, cpu, detail)


def merge_obligations() -> Iterator[Row]:
    """The merge action's obligations: those of ``MERGE_BREAKS`` are counterexamples, found with a
    bounded pre-state (``checks/symbolic/bounded``: a bounded counterexample is one of the unbounded
    obligation, and z3 finds it at once instead of timing out first); the others proved."""
    merge = (ACTION_BY_NAME["merge"],)
    v = nak.Variant()
    for r in obligations(INVARIANTS, v, model=NAKACK2, actions=merge,
                         only=lambda a, i: a != "init" and i not in MERGE_BREAKS):
        yield f"nakack2[merge]: {r.name}", r.result, PROVED, r.seconds, r.cpu_seconds, ""
    for r in obligations(INVARIANTS, v, model=NAKACK2, actions=merge,
                         only=lambda a, i: a != "init" and i in MERGE_BREAKS, extra=bounded(NAKACK2.fields)):
        yield (f"nakack2[merge]: {r.name} (bounded pre-state)", r.result, COUNTEREXAMPLE, r.seconds, r.cpu_seconds,
               "")


def checker_reaches_merge_cti(trace_dir: Path) -> Row:
    """seqcheck check's counterexample of the merge model takes a merge step from a state where every
    invariant holds to one breaking one of ``MERGE_BREAKS``: that trace, saved for ``seqcheck show``."""
    from checks.check import portable_path

    watch = Stopwatch()
    path = MODELS / f"{MERGE_MODEL}.toml"
    found = checker_trace_through(path, INVARIANTS, "merge", sorted(MERGE_BREAKS), SUBJECT)
    detail = "the checker's counterexample takes no merge step that breaks an invariant"
    if found is not None:
        trace, step, invariant = found
        trace = replace(trace, model=str(portable_path(path)), origin=(
            f"a shortest counterexample, seqcheck check's; step {step + 1} is seqcheck prove's "
            f"counterexample-to-induction of merge / {invariant}"))
        saved = trace.save(trace_dir / "prove" / f"nakack2-{MERGE_MODEL}-merge-{invariant}.json")
        detail = (f"step {step + 1} of {len(trace.actions)} ({trace.summary[step]}) breaks {invariant}; "
                  f"ends in {trace.prop}; seqcheck show {saved}")
    return (f"nakack2[merge]: seqcheck check's counterexample of {MERGE_MODEL}.toml takes a merge CTI",
            "passes through" if found else "does not", "passes through", *watch.elapsed(), detail)
