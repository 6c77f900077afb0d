"""A fuzz failure, re-run from its seed, shrunk, validated and saved as a trace file.

Rules
-----
1. Nothing is reported that has not been reproduced: the seed is re-run here, in this process,
   and must give the same verdict at the same step as the row the Spark task wrote.
2. Shrinking works on the run's canonical actions (the trace format, ``checks/trace.py``): remove
   chunks of actions, halving the chunk size down to single actions (small chunks are tried at
   every offset, since a removable group rarely starts at a multiple of its length) and repeating
   until nothing more can go, keeping a candidate when a replay still fails *with the same verdict*; a safety
   failure or divergence ends the replay at its step, which also cuts the tail. A liveness failure
   is judged at the end, so its candidate is then shortened to the shortest failing prefix.
3. The shrunk trace is validated before it is saved: on the spec (``checks.trace.validate``: it
   replays, and a property trace ends in its first violation or in a state that cannot reach the
   goal) and on the engines (``replay_on_engines``): a divergence trace diverges at its last step,
   a property trace takes every step exactly as the spec does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checks.differential import Divergence, replay_on_engines
from checks.fuzz_run import Failure, FuzzPlan, Runner, Walk
from checks.run import portable_path
from checks.system import Liveness
from checks.trace import Trace, TraceError, file_digest, validate

MAX_REPLAYS = 3_000  # replays one failure's shrinking may spend
MAX_SECONDS = 120.0  # ... and seconds
SLIDE_BELOW = 8  # chunks up to this size are tried at every offset, larger ones at half-chunk strides


class NotReproduced(Exception):
    """The seed re-run here does not give the row's verdict (a determinism bug; one line)."""


@dataclass(frozen=True)
class Shrunk:
    seed: int
    verdict: str
    original_length: int
    trace: Trace
    path: Path
    replays: int


Actions = list[dict[str, Any]]
Check = Callable[[Actions], Failure | None]


def shrink(actions: Actions, verdict: str, check: Check, *, liveness: bool,
           max_replays: int = MAX_REPLAYS, max_seconds: float = MAX_SECONDS) -> tuple[Actions, int]:
    """Rule 2; returns the shrunk actions and the number of replays spent."""
    deadline = time.monotonic() + max_seconds
    replays = 0

    def still_fails(candidate: Actions) -> Actions | None:
        nonlocal replays
        replays += 1
        failure = check(candidate)
        if failure is None or failure.verdict != verdict:
            return None
        return candidate[:failure.step]

    def spent() -> bool:
        return replays >= max_replays or time.monotonic() > deadline

    best = actions
    chunk = max(1, len(best) // 2)
    while not spent():
        removed_any, start = False, 0
        stride = 1 if chunk <= SLIDE_BELOW else chunk // 2  # small chunks at every offset
        while start < len(best) and not spent():
            kept = still_fails(best[:start] + best[start + chunk:])
            if kept is not None:
                best, removed_any = kept, True
            else:
                start += stride
        if chunk == 1 and not removed_any:
            break
        chunk = max(1, chunk // 2)
    if liveness:
        for length in range(1, len(best)):
            if spent():
                break
            kept = still_fails(best[:length])
            if kept is not None:
                best = kept
                break
    return best, replays


def reproduce_and_shrink(plan: FuzzPlan, model_path: Path, seed: int, verdict: str, fail_step: int | None,
                         trace_dir: Path) -> Shrunk:
    """Rules 1 to 3 for the failing run ``seed``; the trace names ``model_path``."""
    runner = Runner(plan, model_path)
    walk, _, failure = runner.walk(seed)
    got = (None, None) if failure is None else (failure.verdict, failure.step)
    if got != (verdict, fail_step):
        raise NotReproduced(f"the Spark run gave {verdict} at step {fail_step}, the local re-run "
                            f"{got[0] or 'pass'} at step {got[1]}")
    actions = [walk.lock.model.world.action_to_json(a) for a in walk.lock.canonical]
    liveness = _is_liveness(runner, verdict)

    def check(candidate: Actions) -> Failure | None:
        replayed = runner.replay(candidate, liveness=liveness)
        return None if replayed is None else replayed[1]

    shrunk, replays = shrink(actions, verdict, check, liveness=liveness)
    replayed = runner.replay(shrunk, liveness=liveness)
    final_walk, failure = replayed if replayed is not None else (None, None)
    if final_walk is None or failure is None or failure.verdict != verdict:
        raise NotReproduced(f"the shrunk schedule no longer fails with {verdict}")
    trace = fuzz_trace(final_walk, failure, seed, model_path, liveness=liveness)
    validate_fuzz_trace(model_path, trace, failure, runner)
    name = f"{model_path.stem}-seed{seed}-{verdict.replace(':', '-')}.json"
    return Shrunk(seed, verdict, len(actions), trace, trace.save(trace_dir / name), replays)


def _is_liveness(runner: Runner, verdict: str) -> bool:
    name = verdict.partition(":")[2]
    return any(isinstance(p, Liveness) and p.name == name for p in runner.model.world.properties)


def fuzz_trace(walk: Walk, failure: Failure, seed: int, model_path: Path, *, liveness: bool) -> Trace:
    """The walk as a trace of the model's (reduced) world, naming ``model_path`` portably."""
    lock = walk.lock
    reduced = lock.model.world
    actions = tuple(reduced.action_to_json(a) for a in lock.canonical)
    texts = [lock.world.format_action(a) for a, _ in lock.path]
    recorded = str(portable_path(model_path))
    if failure.verdict.startswith("violation:"):
        kind = "liveness" if liveness else "always"
        if texts and kind == "always":
            texts[-1] += f"  <- {failure.failing} violated"
        return Trace(recorded, file_digest(model_path), failure.failing, kind, actions, seed, tuple(texts))
    divergence = Divergence(failure.step, texts[-1] if texts else "", failure.failing, "", failure.detail)
    trace = lock.trace(divergence, seed)
    return replace(trace, model=recorded, model_digest=file_digest(model_path))


def validate_fuzz_trace(model_path: Path, trace: Trace, failure: Failure, runner: Runner) -> None:
    """Rule 3; raises ``TraceError`` (one line)."""
    validate(runner.model.world, trace)
    try:
        _, divergence = replay_on_engines(model_path, trace, engines_for=runner.engines_for)
    except Exception as error:  # a crash trace must crash the same way
        if failure.verdict == "crash" and type(error).__name__ == failure.failing:
            return
        raise TraceError(f"replaying the trace on the engines raised {error!r}") from None
    if failure.verdict == "crash":
        raise TraceError("the trace no longer makes the engine raise")
    if failure.verdict == "divergence":
        if divergence is None or divergence.step != len(trace.actions):
            raise TraceError(f"the engines do not diverge at the trace's last step ({divergence})")
    elif divergence is not None:
        raise TraceError(f"the engines diverge from the spec on the trace: {divergence}")


def shrink_failures(plan: FuzzPlan, model_path: Path, failures: Sequence[tuple[int, str, int | None]],
                    trace_dir: Path) -> list[Shrunk | str]:
    """Each ``(seed, verdict, fail_step)`` reproduced and shrunk; a string says why one was not."""
    out: list[Shrunk | str] = []
    for seed, verdict, step in failures:
        try:
            out.append(reproduce_and_shrink(plan, model_path, seed, verdict, step, trace_dir))
        except (NotReproduced, TraceError) as error:
            out.append(f"seed {seed} ({verdict}): {error}")
    return out
