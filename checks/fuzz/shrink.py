"""A fuzz failure, re-run from its seed, shrunk, validated and saved as a trace file.

Rules
-----
1. Nothing is reported that has not been reproduced: the seed is re-run here, in this process,
   and must give the same verdict at the same step as the row the Spark task wrote.
2. Shrinking works on the run's canonical actions (the trace format, ``checks/explore/trace.py``). A
   candidate (a list of actions) is replayed by rule 2c; it is kept, as the actions its replay
   *took*, when the replay fails *with the same verdict* and took fewer actions than the best so
   far (so shrinking ends). A safety failure or divergence ends the replay at its step, which
   also cuts the tail. The passes, repeated until neither shortens the best:
   a. Removal: chunks of actions, halving the chunk size down to single actions (small chunks are
      tried at every offset, since a removable group rarely starts at a multiple of its length),
      until no single action can go.
   b. Loss for delivery, once removal is stuck: one packet delivery replaced by the loss of that
      packet (in the order of the actions). A lost packet does nothing, so later actions it
      caused go (rule 2c skips them); a candidate whose replay fails with the verdict but is no
      shorter is kept only if that replay without one of its actions (the first such, in order)
      fails with the verdict. (Moving actions earlier was measured too: over 160 failures of the
      shipped bug models it never shortened a trace, at twice the replays, so it is not a pass.)
   c. Replay by matching: each action of a candidate is matched to an action enabled in the
      current state, the one whose canonical JSON equals it, else the *analogous* one (the same
      JSON once every message, a ``msg`` field, is reduced to its type: same kind, members and
      message type) that shares the most JSON leaves with it, the first such in the world's
      order; an action with no match is skipped. Packets are named by content and timestamps by
      rank, so removing an action renames later packets (a DATA's seqno, an ACK's ts): without
      rule 2c a candidate would fail to replay whenever an upstream action of a later one went.
   A liveness failure is judged at the end of a replay, so the best is then shortened to its
   shortest failing prefix. Everything is deterministic: the same actions give the same result,
   the budget (``MAX_REPLAYS``) included: it counts replays, never seconds, so a loaded machine
   shrinks to the same trace (issue 28, item 8; it also had a 120 s wall-clock budget).
3. The shrunk trace is validated before it is saved: on the spec (``checks.explore.trace.validate``: it
   replays, and a property trace ends in its first violation or in a state that cannot reach the
   goal) and on the engines (``replay_on_engines``): a divergence trace diverges at its last step,
   a property trace takes every step exactly as the spec does. The shrunk actions are the ones
   the matching replay took, so the exact replay (``Runner.replay``) that makes the trace takes
   them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checks.check import portable_path
from checks.conform.differential import Divergence, Lockstep, replay_on_engines
from checks.explore.system import Liveness
from checks.explore.trace import Trace, TraceError, file_digest, validate
from checks.fuzz.run import Failure, FuzzPlan, Runner, Walk

MAX_REPLAYS = 3_000  # replays one failure's shrinking may spend
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


@dataclass(frozen=True)
class Replayed:
    """A failing replay of a candidate: the actions it took (rule 2's matching), up to the failing one."""

    actions: Actions
    failure: Failure


Check = Callable[[Actions], Replayed | None]


class _Search:
    """Rule 2's state: the shortest failing actions so far and the budget spent."""

    def __init__(self, actions: Actions, verdict: str, check: Check, max_replays: int) -> None:
        self.best, self.verdict, self.check = actions, verdict, check
        self.replays, self.max_replays = 0, max_replays

    def spent(self) -> bool:
        return self.replays >= self.max_replays

    def fails(self, candidate: Actions) -> Actions | None:
        """The actions ``candidate``'s replay took up to its failure, if it fails with the verdict."""
        self.replays += 1
        replayed = self.check(candidate)
        if replayed is None or replayed.failure.verdict != self.verdict:
            return None
        return replayed.actions

    def keep_if_shorter(self, candidate: Actions) -> bool:
        """Rule 2: ``candidate``'s failing replay becomes the best if it is shorter."""
        if self.spent():
            return False
        taken = self.fails(candidate)
        if taken is None or len(taken) >= len(self.best):
            return False
        self.best = taken
        return True

    def keep_if_it_shrinks(self, variant: Actions) -> bool:
        """Rule 2b: ``variant``'s failing replay, or that replay without one of its actions (the
        first such that fails), becomes the best if it is shorter."""
        if self.spent():
            return False
        taken = self.fails(variant)
        if taken is None:
            return False
        if len(taken) < len(self.best):
            self.best = taken
            return True
        return any(self.keep_if_shorter(taken[:index] + taken[index + 1:]) for index in range(len(taken)))


def shrink(actions: Actions, verdict: str, check: Check, *, liveness: bool,
           max_replays: int = MAX_REPLAYS) -> tuple[Actions, int]:
    """Rule 2; returns the shrunk actions and the number of replays spent."""
    search = _Search(actions, verdict, check, max_replays)
    while not search.spent():
        remove_chunks(search)
        if not any(search.keep_if_it_shrinks(variant) for variant in losses_for_deliveries(search.best)):
            break
    if liveness:  # the shortest failing prefix
        for length in range(1, len(search.best)):
            if search.keep_if_shorter(search.best[:length]):
                break
    return search.best, search.replays


def remove_chunks(search: _Search) -> None:
    """Rule 2a: chunks of halving size removed until no single action can go."""
    chunk = max(1, len(search.best) // 2)
    while not search.spent():
        removed_any, start = False, 0
        stride = 1 if chunk <= SLIDE_BELOW else chunk // 2  # small chunks at every offset
        while start < len(search.best) and not search.spent():
            best = search.best
            if search.keep_if_shorter(best[:start] + best[start + chunk:]):
                removed_any = True
            else:
                start += stride
        if chunk == 1 and not removed_any:
            return
        chunk = max(1, chunk // 2)


def losses_for_deliveries(actions: Actions) -> Iterator[Actions]:
    """Rule 2b, in its order: ``actions`` with one packet delivery replaced by the loss of that packet."""
    for index, action in enumerate(actions):
        if action.get("action") == "DeliverPacket":
            yield actions[:index] + [{**action, "action": "LosePacket"}] + actions[index + 1:]


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
    shrunk, replays = shrink(actions, verdict, lambda candidate: replay_matching(runner, candidate, liveness=liveness),
                             liveness=liveness)
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


def replay_matching(runner: Runner, candidate: Actions, *, liveness: bool) -> Replayed | None:
    """Rule 2c: ``candidate`` replayed with every check (liveness at the end only if ``liveness``),
    each action matched to an enabled one (``matching_action``) or skipped; None if it passes."""
    replayed = runner.replay(candidate, liveness=liveness, match=matching_action)
    assert replayed is not None  # a matching replay skips what it cannot match
    walk, failure = replayed
    if failure is None:
        return None
    return Replayed([walk.lock.model.world.action_to_json(a) for a in walk.lock.canonical], failure)


def matching_action(lock: Lockstep, wanted: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]] | None:
    """Rule 2c: the enabled ``(action, next state, its canonical JSON)`` that is ``wanted``, else
    the analogous one most like it (the first of those in the world's order), else None."""
    world, state = lock.world, lock.state
    named = [(action, after, world.action_to_json(world.canonical_action(state, action)))
             for action, after in lock.enabled()]
    exact = next((match for match in named if match[2] == wanted), None)
    if exact is not None:
        return exact
    shape = action_shape(wanted)
    analogous = [match for match in named if action_shape(match[2]) == shape]
    wanted_leaves = set(_leaves(wanted))
    return max(analogous, key=lambda match: len(wanted_leaves.intersection(_leaves(match[2]))), default=None)


def action_shape(value: Any) -> Any:
    """An action's JSON with every message (a ``msg`` field) reduced to its type: what an
    analogous action shares with it."""
    if not isinstance(value, dict):
        return value
    return {key: ({"type": item.get("type")} if key == "msg" and isinstance(item, dict) else action_shape(item))
            for key, item in value.items()}


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """``(path, value)`` of every scalar in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


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
