"""Counterexample traces: a value that names the model and the actions, replays, and re-checks itself.

Rules
-----
1. A trace is data: the model file it came from (and a digest of that file's text), the seed of the
   run that found it (``None`` for exhaustive checking), the property it violates and the actions,
   each as the JSON description the model gives it. States are never stored: they are recomputed
   by replaying the actions, so a trace stays small and cannot disagree with the model.
2. Nothing is reported that has not been validated (GUIDE C3): ``validate`` replays the actions and
   re-evaluates the property on the replayed states. Safety: the last state violates it and no
   earlier one does. Deadlock: the last state has no successor and may not end. Liveness: from the
   last state no fault-free continuation reaches the goal, confirmed by a fresh exhaustive search
   of the fault-free continuations from that state (``checks.explore.closure.judge``, the fuzz's own
   judgement); a search that meets more than ``max_states`` states confirms nothing and says so.
3. This module is protocol-agnostic: it sees the model through ``checks.explore.system``.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.explore import textlimits
from checks.explore.closure import BOUND, judge
from checks.explore.system import Always, Liveness, Property, ReplayError, TransitionSystem, replay

FORMAT = "seqcheck-trace/1"
MAX_TRACE_BYTES = 64 << 20  # far above any trace the tools write (a step is a few hundred bytes)


class TraceError(Exception):
    """A trace file that cannot be read or does not replay; the message is one line."""


@dataclass(frozen=True)
class Trace:
    model: str  # path of the model file, as given when the trace was made
    model_digest: str  # sha256 of the model file's text when the trace was made
    prop: str  # the violated property ("deadlock" for a deadlock)
    kind: str  # always | liveness | deadlock
    actions: tuple[dict[str, Any], ...]
    seed: int | None = None
    summary: tuple[str, ...] = field(default=(), compare=False)  # one line per step, for people
    # how the trace was found, for people, when not by the checker or a seeded run (``seqcheck prove``'s
    # search through a counterexample-to-induction); "" otherwise, and then not written
    origin: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "model": self.model, "model_digest": self.model_digest,
                "seed": self.seed, "property": self.prop, "kind": self.kind,
                "length": len(self.actions), "steps": [
                    {"action": a, "text": t} for a, t in zip(self.actions, self.summary or [""] * len(self.actions))],
                **({"origin": self.origin} if self.origin else {})}

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path

    @staticmethod
    def load(path: str | Path) -> Trace:
        path = Path(path)
        try:
            if not stat.S_ISREG(path.stat().st_mode):
                raise TraceError(f"{path}: not a regular file")
            with path.open("rb") as file:
                data = file.read(MAX_TRACE_BYTES + 1)
            if len(data) > MAX_TRACE_BYTES:
                raise TraceError(f"{path}: larger than {MAX_TRACE_BYTES} bytes: not a trace file")
            text = data.decode("utf-8")
            raw = json.loads(text)
        except FileNotFoundError:
            raise TraceError(f"{path}: no such trace file") from None
        except UnicodeDecodeError:
            raise TraceError(f"{path}: not a JSON trace file: expected UTF-8 text") from None
        except json.JSONDecodeError as error:
            raise TraceError(f"{path}: not a JSON trace file: {error}") from None
        except (ValueError, RecursionError) as error:  # nesting, an integer of more than 4,300 digits
            where = textlimits.locate_json(text)
            raise TraceError(f"{path}: {where}" if where else f"{path}: not a JSON trace file: {error}") from None
        except OSError as error:
            raise TraceError(f"{path}: cannot be read: {error.strerror or error}") from None
        deep = textlimits.check_nesting(raw)
        if deep is not None:
            raise TraceError(f"{path}: {deep}")
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise TraceError(f"{path}: format: expected \"{FORMAT}\"")
        steps = raw.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, dict) and isinstance(s.get("action"), dict)
                                                  for s in steps):
            raise TraceError(f"{path}: missing or malformed field steps: expected a list of objects, each with an"
                             " \"action\" object")
        for key in ("model", "model_digest", "property", "kind"):
            if not isinstance(raw.get(key), str):
                raise TraceError(f"{path}: missing or malformed field {key}: expected a string, got "
                                 f"{json.dumps(raw.get(key))[:40]}")
        if not isinstance(raw.get("origin", ""), str):
            raise TraceError(f"{path}: malformed field origin: expected a string, got "
                             f"{json.dumps(raw.get('origin'))[:40]}")
        try:
            if raw.get("length") != len(steps):
                raise TraceError(f"{path}: length: expected {len(steps)} (the number of steps), "
                                 f"got {raw.get('length')!r}")
            return Trace(str(raw["model"]), str(raw["model_digest"]), str(raw["property"]), str(raw["kind"]),
                         tuple(dict(s["action"]) for s in steps), raw.get("seed"),
                         tuple(str(s.get("text", "")) for s in steps), raw.get("origin", ""))
        except (KeyError, TypeError, ValueError) as error:
            raise TraceError(f"{path}: missing or malformed field {error}") from None


def file_digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def make_trace(system: TransitionSystem, model_path: str | Path, prop: str, kind: str,
               path: Sequence[tuple[Hashable, Hashable]], seed: int | None = None, *,
               recorded_as: str | Path | None = None) -> Trace:
    """A trace of ``path`` (``[(action, state_after)]`` from the first initial state); the model
    is named ``recorded_as`` in the file (default: ``model_path``)."""
    return Trace(str(recorded_as or model_path), file_digest(model_path), prop, kind,
                 tuple(system.action_to_json(a) for a, _ in path), seed,
                 tuple(system.format_action(a) for a, _ in path))


def validate(system: TransitionSystem, trace: Trace, *, max_states: int = 2_000_000) -> list[tuple[Hashable, Hashable]]:
    """Replay ``trace`` on ``system`` and confirm it shows its violation; returns the replayed path.

    Raises ``TraceError`` (one line) when the actions do not replay, go on from a state beyond the
    model's bounds (which the checker checks but never expands), or the property is not violated
    where the trace says.
    """
    try:
        path = replay(system, trace.actions)
    except ReplayError as error:
        raise TraceError(f"trace does not replay on {trace.model}: {error}") from None
    init = system.init_states()[0]
    states = [init] + [s for _, s in path]
    beyond = next((i for i, s in enumerate(states[:-1]) if not system.within_bounds(s)), None)
    if beyond is not None:  # the checker never expands such a state, so no trace of it goes on from there
        raise TraceError(f"after step {beyond} the trace is beyond the model's bounds (max_in_flight), where "
                         "the checker expands nothing; it cannot go on from there")
    if trace.kind == "deadlock":
        last = states[-1]
        if any(True for _ in system.successors(last)) or system.accepts_end(last):
            raise TraceError("trace does not end in a deadlock")
        return path
    if trace.kind == "divergence":
        return path  # an engine-vs-spec trace: it replays on the spec; `seqcheck replay` re-checks the engine
    prop = _find_property(system.properties, trace.prop)
    if prop.kind != trace.kind:
        raise TraceError(f"kind: expected {prop.kind!r} (the kind of {trace.prop}), got {trace.kind!r}")
    if isinstance(prop, Always):
        if prop.holds(states[-1]):
            raise TraceError(f"the last state of the trace satisfies {trace.prop}")
        early = next((i for i, s in enumerate(states[:-1]) if not prop.holds(s)), None)
        if early is not None:
            raise TraceError(f"{trace.prop} is already violated after step {early}; the trace is not minimal")
        return path
    if isinstance(prop, Liveness):
        judged = judge(system, states[-1], [prop], max_states=max_states)[prop.name]
        if judged.outcome == BOUND:
            raise TraceError(f"cannot confirm {trace.prop}: the fault-free continuations of the last state pass "
                             f"{max_states:,} states (the bound of the search) without reaching the goal")
        if judged.live:
            raise TraceError(f"from the last state of the trace a fault-free continuation reaches {trace.prop}")
        return path
    raise TraceError(f"{trace.prop} is a {prop.kind} property; only always, liveness and deadlock traces replay")


def _find_property(properties: Iterable[Property], name: str) -> Property:
    for prop in properties:
        if prop.name == name:
            return prop
    raise TraceError(f"the model has no property named {name!r}")


def can_reach_goal(system: TransitionSystem, start: Hashable, goal: Callable[[Any], bool], *,
                   max_states: int) -> bool:
    """True if some path of non-fault actions from ``start`` reaches a state satisfying ``goal``
    (or the search hits a bound, which gives the benefit of the doubt as the checker does):
    ``checks.explore.closure.judge`` for one goal."""
    return judge(system, start, [Liveness("goal", goal)], max_states=max_states)["goal"].live
