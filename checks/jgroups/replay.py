"""``seqcheck replay TRACE --jgroups VERSION``: a checker trace run on a real JGroups release, and
the trace's property judged on what JGroups did.

Rules
-----
1. The schedule is the trace's: its actions, taken in order in the model's unreduced world, with the
   spec as the *release* (``bindings.ReleaseProfile``, not the trace's variant) in lockstep with
   JGroups (``lockstep.py``). Each step the two sides are compared; while they agree, the world's
   state is what JGroups did (its packets, deliveries and state mapped to the spec's), so the model's
   properties judged on it are judged on JGroups' behaviour.
2. Following the trace on another release. A trace names packets by their contents; a release that
   stamps or numbers differently sends other contents. A step is matched exactly when it can be
   (the canonical action, as ``seqcheck show`` prints it), else loosely: the same kind of action by
   the same member(s), on a packet of the same type and fields except timestamps. When not even that
   is enabled (the release never sent such a packet), the schedule cannot go on: the report says at
   which step and why, and judges what came before.
3. Safety: every ``Always`` property of the model on every state reached; the first violated is
   the verdict. Liveness (a trace whose property is ``eventually_*``): from the trace's last state
   the run continues fairly without faults: rounds in which every enabled fault-free action (a
   delivery, a timer the world calls progress) is taken once, in the world's order, each still in
   lockstep. The goal reached: the property holds on that continuation. A state that repeats
   without the goal, or a state where no fault-free action changes anything: a fair run that never
   reaches it, i.e. the property is violated (the run is periodic from there, or quiescent).
   Neither within ``CONTINUATION_STEPS``: undecided, said so.
4. A divergence stops the replay: explained (the table of known differences) or not, the two sides
   no longer stand for each other; the report says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.explore.system import Always, Liveness
from checks.explore.trace import Trace
from checks.jgroups.explained import Difference, explain
from checks.jgroups.harness import Harness
from checks.jgroups.lockstep import Divergence, JGroupsLockstep
from models.modelfile import load

CONTINUATION_STEPS = 5_000


@dataclass
class JGroupsReplay:
    trace: Trace
    jgroups: str
    protocol: str
    flags: tuple[str, ...]
    total: int
    followed: int = 0
    loose: list[int] = field(default_factory=list)  # steps matched without timestamps (rule 2)
    stopped: str | None = None  # why the schedule could not be followed to its end
    divergence: Divergence | None = None
    explained: Difference | None = None
    violated: str | None = None  # the first property JGroups' run violates (rule 3)
    violated_at: int | None = None  # its step (for liveness: the continuation's last step)
    continuation: str | None = None  # liveness: reached | quiescent | periodic | undecided
    continuation_steps: int = 0

    def as_json(self) -> dict[str, Any]:
        d = self.divergence
        return {"trace": self.trace.model, "property": self.trace.prop, "kind": self.trace.kind,
                "jgroups": self.jgroups, "protocol": self.protocol, "spec_flags": list(self.flags),
                "steps": self.total, "followed": self.followed, "loose_steps": self.loose, "stopped": self.stopped,
                "divergence": None if d is None else {"step": d.step, "action": d.action, "what": d.what,
                                                      "spec": d.spec, "jgroups": d.jgroups,
                                                      "explained": self.explained is not None,
                                                      "reason": self.explained.name if self.explained else None},
                "violated": self.violated, "violated_at": self.violated_at,
                "continuation": self.continuation, "continuation_steps": self.continuation_steps}

    def lines(self) -> list[str]:
        out = [f"trace: {self.total} steps of {self.trace.model}, violating {self.trace.prop} (on the spec)",
               f"JGroups {self.jgroups}: {self.protocol} as the spec with flags "
               f"{', '.join(self.flags) or 'none'}; followed {self.followed} of {self.total} steps"
               + (f" ({len(self.loose)} matched without timestamps: steps {', '.join(map(str, self.loose))})"
                  if self.loose else "")]
        if self.stopped:
            out.append(f"stopped: {self.stopped}")
        if self.divergence is not None:
            tag = f"explained: {self.explained.name}" if self.explained else "UNEXPLAINED"
            out.append(f"JGroups diverged from the spec ({tag}) at {self.divergence}")
        if self.continuation is not None:
            out.append(f"fair fault-free continuation: {self.continuation} after {self.continuation_steps} steps")
        verdict = (f"JGroups violates {self.violated} (step {self.violated_at})" if self.violated
                   else "JGroups violates no property of the model on this run")
        out.append(verdict)
        return out


def _loose(value: Any) -> Any:
    """An action's JSON without timestamps (rule 2)."""
    if isinstance(value, dict):
        return {k: _loose(v) for k, v in value.items() if k not in ("ts", "timestamp")}
    if isinstance(value, list):
        return [_loose(v) for v in value]
    return value


def _match(run: JGroupsLockstep, wanted: dict[str, Any]) -> tuple[Any, Any, bool] | None:
    world, state = run.world, run.state
    enabled = run.enabled()
    named = [(world.action_to_json(world.canonical_action(state, a)), a, after) for a, after in enabled]
    for text, action, after in named:
        if text == wanted:
            return action, after, False
    loose = _loose(wanted)
    for text, action, after in named:
        if _loose(text) == loose:
            return action, after, True
    return None


def replay_on_jgroups(trace_file: Path, model_path: str, protocol: str | None, harness: Harness) -> JGroupsReplay:
    """Rules 1 to 4 for the trace in ``trace_file`` (of the model at ``model_path``)."""
    trace = Trace.load(trace_file)
    model = load(model_path, protocol=protocol)
    run = JGroupsLockstep(model, harness)
    out = JGroupsReplay(trace, harness.version, model.protocol, run.flags, len(trace.actions))
    always = [p for p in run.world.properties if isinstance(p, Always)]
    for index, wanted in enumerate(trace.actions, 1):
        found = _match(run, wanted)
        if found is None:
            text = trace.summary[index - 1] if index - 1 < len(trace.summary) else str(wanted)
            out.stopped = f"step {index} ({text}) cannot be taken on JGroups {harness.version}: no such action enabled"
            break
        action, after, loose = found
        if loose:
            out.loose.append(index)
        if _stopped_by(run.step(action, after), run, out):
            break
        out.followed = index
        if out.violated is None:
            out.violated = next((p.name for p in always if not p.holds(run.state)), None)
            out.violated_at = index if out.violated else None
    if out.violated is None and out.divergence is None and out.stopped is None and trace.kind == "liveness":
        _continue_fairly(run, model.world.properties, trace.prop, out)
    return out


def _stopped_by(divergence: Divergence | None, run: JGroupsLockstep, out: JGroupsReplay) -> bool:
    if divergence is None:
        return False
    out.divergence, out.explained = divergence, explain(divergence, run)
    return True


def _continue_fairly(run: JGroupsLockstep, properties: Any, name: str, out: JGroupsReplay) -> None:
    """Rule 3's fair continuation from the run's state, judging the liveness property ``name``."""
    goal = next((p for p in run.world.properties if isinstance(p, Liveness) and p.name == name), None)
    if goal is None:
        return
    world, seen = run.world, {run.state}
    while out.continuation_steps < CONTINUATION_STEPS:
        if goal.goal(run.state):
            out.continuation = "reached"
            return
        # the model's max_in_flight cuts the search, not a fair run: the continuation goes past it
        round_actions = [a for a, _ in world.successors(run.state) if not world.is_fault(a)]
        if not round_actions:
            out.continuation = "quiescent"
            out.violated, out.violated_at = name, out.followed + out.continuation_steps
            return
        for action in round_actions:
            after = next((s for a, s in world.successors(run.state) if type(a) is type(action) and a == action), None)
            if after is None:
                continue
            out.continuation_steps += 1
            if _stopped_by(run.step(action, after), run, out):
                return
        if run.state in seen:
            break
        seen.add(run.state)
    if goal.goal(run.state):
        out.continuation = "reached"
    elif out.continuation_steps >= CONTINUATION_STEPS:
        out.continuation = "undecided"
    else:
        out.continuation = "periodic"
        out.violated, out.violated_at = name, out.followed + out.continuation_steps
