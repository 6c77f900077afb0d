"""``seqcheck replay``: a checker trace against the production engine, and as a regression test.

Three runs of one trace, on the engine of the model's protocol (``checks/conform/script.py`` knows them):
1. lockstep on the engine with the model's variant (``checks/conform/differential.py``): the engine must
   take exactly the spec's steps; since its state then equals the spec's after every step, it
   reproduces the violation;
2. the trace as a script of network events (``checks/conform/script.py``) on the engine with the model's
   variant: the property, evaluated on the engine's own state and output, is violated;
3. the same script on the *reference* engine: the model's variant without the flags that bring a
   defect back (UNICAST3: as shipped; UNICAST2: keeping the unshipped fixes the model turned on):
   the property holds. A model whose variant has no defect flag shows a residual of the protocol
   (as shipped, or with those fixes): there is no reference run.
``emit_test`` writes run 2/3 as a standalone pytest file of plain calls.
"""

from __future__ import annotations

import keyword
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.conform.differential import Divergence, EngineFactory, replay_on_engines
from checks.conform.engines import binding
from checks.conform.engines import engines_for as default_engines
from checks.conform.mcast_script import LIVENESS as MCAST_LIVENESS
from checks.conform.mcast_script import McastScript
from checks.conform.script import LIVENESS, EngineScript, ScriptProtocol
from checks.explore.trace import Trace, TraceError, validate
from models.modelfile import Model, load
from models.multicast_world import AnswerJoin, AppMcast, MergeView, MulticastWorld, Stop
from models.world import FireTimer
from spec import nakack2 as nak
from spec.nakack2_state import queue_bound


@dataclass
class ReplayReport:
    trace: Trace
    model: Model
    divergence: Divergence | None
    defective_holds: bool | None  # None: no engine-level check for this property
    fixed_holds: bool | None  # None: no check, or no reference (a residual)
    skipped_on_fixed: list[str] = field(default_factory=list)
    path: list[tuple[Hashable, Hashable]] = field(default_factory=list)  # the trace as the spec replayed it

    @property
    def reproduced(self) -> bool:
        return self.divergence is None and self.defective_holds is not True and self.fixed_holds is not False

    def lines(self) -> list[str]:
        t, title = self.trace, binding(self.model.protocol).script.title
        variant = ", ".join(self.model.variant) or f"none ({title} as shipped)"
        out = [f"trace: {len(t.actions)} steps of {t.model}, violating {t.prop}; variant: {variant}"]
        if self.divergence is not None:
            out.append(f"engine DIVERGES from the spec at {self.divergence}")
            return out
        out.append(f"lockstep: the engine took all {len(t.actions)} steps exactly as the spec (datagrams, "
                   "deliveries, state), so it ends in the spec's violating state")
        if self.defective_holds is not None:
            verdict = "violates" if not self.defective_holds else "does NOT violate"
            out.append(f"engine with the variant: {verdict} {t.prop} (checked on the engine's own state)")
        if self.fixed_holds is not None:
            verdict = "holds" if self.fixed_holds else "is VIOLATED"
            reference = ", ".join(reference_variant(self.model)) or "as shipped"
            out.append(f"engine {reference}, same script: {t.prop} {verdict}"
                       + (f" ({len(self.skipped_on_fixed)} events did not apply)" if self.skipped_on_fixed else ""))
        return out


def reference_variant(model: Model) -> tuple[str, ...]:
    """The model's variant without its defect flags (the fixes stay on)."""
    return tuple(name for name in model.variant if name not in binding(model.protocol).script.defects)


def is_residual(model: Model) -> bool:
    """The violation is in the protocol as the model configures it, with no defect brought back."""
    return reference_variant(model) == model.variant


def run_replay(trace_path: Path, model_path: Path, protocol: str | None = None, *,
               engines_for: EngineFactory | None = None) -> ReplayReport:
    """Replay the trace in ``trace_path`` on the engines (``protocol``: which protocol of a
    side-by-side model file; ``engines_for``: other engines for the lockstep replay, e.g. timed)."""
    trace = Trace.load(trace_path)
    model = load(model_path, protocol=protocol)
    binding(model.protocol)  # NoEngine, before anything runs, if the protocol has no production engine
    path = validate(model.world, trace)
    _, divergence = replay_on_engines(model_path, trace, protocol=protocol, engines_for=engines_for or default_engines)
    defective = fixed = None
    skipped: list[str] = []
    if trace.prop in binding(model.protocol).script.scriptable:
        calls = script_calls(model, path)
        defective = run_script(model, calls, model.variant, trace.prop).holds(trace.prop)
        if not is_residual(model):
            reference = run_script(model, calls, reference_variant(model), trace.prop)
            fixed, skipped = reference.holds(trace.prop), reference.skipped
    return ReplayReport(trace, model, divergence, defective, fixed, skipped, path)


MCAST_SETTINGS = ("xmit_interval", "use_mcast_xmit", "resend_last_seqno", "resend_last_seqno_max_times",
                  "become_server_queue_size",
                  # NAKACK4's
                  "capacity", "ack_threshold", "send_atomically", "dont_block", "dont_loopback", "deliver_exceptions")


def settings_of(model: Model) -> dict[str, int]:
    """The model's protocol settings (its ``[config]``) that a script needs (a multicast model's also
    the bounds its properties judge: ``window_bound``, ``queue_bound``)."""
    cfg, world = model.world.cfg, model.world
    if isinstance(world, MulticastWorld):
        settings = {name: int(getattr(cfg, name)) for name in MCAST_SETTINGS if hasattr(cfg, name)}
        settings["window_bound"] = world.window_bound
        bound = queue_bound(cfg) if isinstance(cfg, nak.Config) else None
        return settings if bound is None else {**settings, "queue_bound": bound}
    return {name: int(getattr(cfg, name)) for name in world.adapter.config_keys if hasattr(cfg, name)}


def script_class(model: Model) -> str:
    """The script that drives the model's engines: ``McastScript`` for the multicast world."""
    return "McastScript" if isinstance(model.world, MulticastWorld) else "EngineScript"


def script_extra(model: Model) -> dict[str, Any]:
    """A multicast script's initial group and members still to install a merge view."""
    world = model.world
    if not isinstance(world, MulticastWorld):
        return {}
    names = model.members
    founders = [names[m] for m in sorted(world.initial_views[0])] if world.initial_views else list(names)
    return {"founders": founders, "merging": [names[m] for m in sorted(world.bounds.merges)]}


# -- the trace as calls on an EngineScript ------------------------------------------------------------
SCRIPT_METHODS = frozenset({"send", "deliver", "deliver_batch", "duplicate", "lose", "timer", "view", "remove_receiver",
                            "multicast", "answer_join", "merge", "stop"})  # the last four: McastScript's


@dataclass(frozen=True)
class ScriptCall:
    """One call on an ``EngineScript``, as data: ``net.<method>(*args, **kwargs)``. It is run with
    ``getattr`` on a fixed set of methods, never through ``eval``, and written into an emitted test
    only through ``repr()`` of its values (``source``)."""

    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.method not in SCRIPT_METHODS:
            raise TraceError(f"action: expected one of {sorted(SCRIPT_METHODS)}, got {self.method!r}")
        for name, _ in self.kwargs:
            if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
                raise TraceError(f"message field: expected a Python name, got {name!r}")

    def run(self, net: EngineScript | McastScript) -> None:
        method = getattr(net, self.method, None)
        if method is None:
            raise TraceError(f"action: {self.method} is not supported by the engine scripts of this world "
                             f"({type(net).__name__}); replay the trace in lockstep instead "
                             "(checks.conform.differential.replay_on_engines)")
        method(*self.args, **dict(self.kwargs))

    def source(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{name}={value!r}" for name, value in self.kwargs]
        return f"net.{self.method}({', '.join(parts)})"


def script_calls(model: Model, path: Sequence[tuple[Hashable, Hashable]]) -> list[tuple[ScriptCall, str]]:
    """(call, comment) per step of ``path``, a path the spec replayed (``validate``'s result): the
    calls and comments are made anew from the world's own actions, never copied from a trace file."""
    world = model.world
    names, protocol = model.members, binding(model.protocol).script
    calls = []
    before = world.init_states()[0]
    for action, after in path:
        call = _mcast_call(world, action, after, names, protocol) if isinstance(world, MulticastWorld) else None
        call = call or _call(world.action_to_json(action), names, protocol)
        sent: Any = action
        if type(sent).__name__ == "AppSend":  # UNICAST3's and UNICAST4's [oob] and [dont_loopback] sends
            key = (sent.src, sent.dst, world.app_payload(before, sent))
            flags = tuple((name, True) for name in ("oob", "dont_loopback") if key in getattr(world.bounds, name, ()))
            if flags:
                call = ScriptCall("send", call.args, flags)
        calls.append((call, world.format_action(action)))
        before = after
    return calls


def progress_views(model: Model, calls: Sequence[tuple[ScriptCall, str]]) -> list[tuple[ScriptCall, str]]:
    """With ``views_are_progress`` (multicast world rule 7) a fault-free continuation installs the
    scripted views still to come: (call, comment) for each, per running member in member order,
    after the ``calls`` of the trace (their ``view`` calls counted off each member's script)."""
    world = model.world
    if not isinstance(world, MulticastWorld) or not world.bounds.views_are_progress:
        return []
    names = model.members
    done = {name: 0 for name in names}
    gone = set()
    for call, _ in calls:
        if call.method in ("view", "merge", "answer_join"):
            done[call.args[0]] += 1
        elif call.method == "stop":
            gone.add(call.args[0])
    out = []
    for member, name in enumerate(names):
        if name in gone:
            continue
        for view in world.bounds.views[member][done[name]:]:
            members = [names[m] for m in sorted(view)]
            out.append((ScriptCall("view", (name, members)), f"{name} installs [{', '.join(members)}] (progress)"))
    return out


def _mcast_call(world: MulticastWorld, action: Any, after: Any, names: tuple[str, ...],
                protocol: ScriptProtocol) -> ScriptCall | None:
    """The multicast world's own actions as ``McastScript`` calls (None: a shared action)."""
    if isinstance(action, AppMcast):  # a send the model flags DONT_LOOPBACK or OOB by its number (world rule 6)
        number = world.hist_table.values[after[world.n + 2]].channels[action.src * world.n + action.src].sent
        flags: tuple[tuple[str, bool], ...] = ()
        if (action.src, number) in world.bounds.dont_loopback:
            flags = (("dont_loopback", True),)
        if (action.src, number) in world.bounds.oob:  # [oob] (world rule 6)
            flags += (("oob", True),)
        return ScriptCall("multicast", (names[action.src],), flags)
    if isinstance(action, AnswerJoin):
        view = sorted(world.view(after).nodes[action.coordinator].members)
        return ScriptCall("answer_join", (names[action.coordinator], names[action.joiner], [names[m] for m in view]))
    if isinstance(action, MergeView):
        return ScriptCall("merge", (names[action.member], [names[m] for m in action.members]))
    if isinstance(action, Stop):
        return ScriptCall("stop", (names[action.member],))
    if isinstance(action, FireTimer):
        timer = action.timer
        name = protocol.timer_names[timer.kind]
        peer = () if timer.peer < 0 else (timer.peer,) if name in protocol.seqno_timers else (names[timer.peer],)
        return ScriptCall("timer", (names[action.member], name, *peer))
    return None


def _fields(msg: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """A message's JSON fields as a script names them: members by name (``sender``, ``view``)."""
    out = {k: v for k, v in msg.items() if k not in ("type", "ts")}
    if "seqnos" in out:
        out["seqnos"] = tuple(out["seqnos"])
    if isinstance(out.get("sender"), int) and "digest" not in out:
        out["sender"] = names[out["sender"]]
    if isinstance(out.get("view"), list):
        out["view"] = [names[m] for m in out["view"]]
    return out


def _call(action: dict[str, Any], names: tuple[str, ...], protocol: ScriptProtocol) -> ScriptCall:
    kind = action["action"]
    if kind == "AppSend":
        return ScriptCall("send", (names[action["src"]], names[action["dst"]]))
    if kind in ("DeliverPacket", "DuplicatePacket", "LosePacket", "DropBelow"):
        packet = action["packet"]
        msg = _fields(packet["msg"], names)
        verb = {"DeliverPacket": "deliver", "DuplicatePacket": "duplicate", "LosePacket": "lose",
                "DropBelow": "lose"}[kind]
        head = (names[packet["src"]], names[packet["dst"]], protocol.kind_names[packet["kind"]])
        return ScriptCall(verb, head, tuple(msg.items()))
    if kind == "FireTimer":
        timer = action["timer"]
        peer = (names[timer["peer"]],) if timer["peer"] >= 0 else ()
        return ScriptCall("timer", (names[action["member"]], protocol.timer_names[timer["kind"]], *peer))
    if kind == "InstallView":
        return ScriptCall("view", (names[action["member"]], [names[m] for m in action["members"]]))
    if kind == "RemoveReceiver":
        return ScriptCall("remove_receiver", (names[action["member"]], names[action["peer"]]))
    if kind == "DeliverBatch":
        packets = action["packets"]
        messages = [(protocol.kind_names[p["kind"]], _fields(p["msg"], names)) for p in packets]
        return ScriptCall("deliver_batch", (names[packets[0]["src"]], names[packets[0]["dst"]], messages))
    raise TraceError(f"action: unknown action {kind!r}")


def run_script(model: Model, calls: Sequence[tuple[ScriptCall, str]], variant: tuple[str, ...],
               prop: str) -> EngineScript | McastScript:
    """The calls on engines of the model's protocol with ``variant`` (flag names) and settings."""
    protocol = binding(model.protocol).script
    flags = protocol.variant(**{name: True for name in variant})
    net: EngineScript | McastScript = (
        McastScript(model.members, flags, model.protocol, settings_of(model), **script_extra(model))
        if isinstance(model.world, MulticastWorld) else EngineScript(model.members, flags, model.protocol,
                                                                      settings_of(model)))
    for call, _ in calls:
        call.run(net)
    if prop in LIVENESS or prop in MCAST_LIVENESS:
        for call, _ in progress_views(model, calls):
            call.run(net)
        net.settle()
    return net


# -- emitting a pytest file ---------------------------------------------------------------------------
def one_line(text: str) -> str:
    """``text`` fit for a ``#`` comment: every character that is not printable (line breaks among
    them) becomes ``?``, so nothing can end the comment."""
    return "".join(c if c.isprintable() else "?" for c in text)


def python_name(text: str) -> str:
    """``text`` as a lower-case ASCII identifier fragment (anything else becomes ``_``)."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in text).lower()


def emit_test(report: ReplayReport, trace_path: Path, out: Path) -> Path:
    """Write the replayed trace as a pytest file of plain engine calls; a property the engines
    cannot be judged on (``ScriptProtocol.scriptable``) is a ``TraceError``.

    Nothing read from the trace file or its name reaches the file except through ``repr()``: the
    calls and their comments are made anew from the path the spec replayed (``script_calls``), the
    docstring is a ``repr`` literal, and names are reduced to ASCII letters, digits and ``_``."""
    model, trace = report.model, report.trace
    protocol = binding(model.protocol).script
    if trace.prop not in protocol.scriptable:
        raise TraceError(f"{trace.prop} has no engine-level check: no regression test can be emitted for it")
    flags = ", ".join(f"{name}=True" for name in model.variant)
    reference = ", ".join(f"{name}=True" for name in reference_variant(model))
    residual = is_residual(model)
    where = f"{protocol.title} as shipped" if not flags else f"{protocol.title} with Variant({flags})"
    if residual:
        outcome = [f"the trace. The violation is in {where}, so the test is marked xfail (strict):",
                   "it starts to pass, and must be unmarked, when the protocol is changed."]
    else:
        on = "as shipped" if not reference else f"with Variant({reference})"
        outcome = [f"the trace. It passes on the engine {on}; set ENGINE_VARIANT to the variant to see",
                   "it fail."]
    docstring = "\n".join([
        f"Regression test from {trace_path} ({len(trace.actions)} steps).", "", f"Model: {trace.model}",
        f"The trace violates {trace.prop} on the spec" + (f" with Variant({flags})." if flags else " as shipped."),
        f"Generated by `seqcheck replay --emit-test`: plain calls on {protocol.title} engines, one per step of",
        *outcome])
    extra = "" if model.protocol == "unicast3" else f", protocol={model.protocol!r}, settings={settings_of(model)!r}"
    extra += "".join(f", {name}={value!r}" for name, value in script_extra(model).items())
    script = script_class(model)
    lines = [
        repr(docstring),
        "",
        *(["import pytest", ""] if residual else []),
        f"from checks.conform.{'mcast_script' if script == 'McastScript' else 'script'} import {script}",
        f"from {protocol.package} import Variant",
        "",
        f"ENGINE_VARIANT = Variant({reference if not residual else flags})"
        + (f"  # Variant({flags}) brings the defect back" if not residual else ""),
        "",
        "",
        *([f"@pytest.mark.xfail(strict=True, reason={trace.model + f': a residual of {where}'!r})"]
          if residual else []),
        f"def test_{python_name(Path(trace.model).stem)}_{python_name(trace.prop)}() -> None:",
        f"    net = {script}({list(model.members)!r}, ENGINE_VARIANT{extra})",
    ]
    for index, (call, text) in enumerate(script_calls(model, report.path), 1):
        lines.append(f"    # {index}. {one_line(text)}".rstrip())
        lines.append(f"    {call.source()}")
    if trace.prop in LIVENESS or trace.prop in MCAST_LIVENESS:
        for call, text in progress_views(model, script_calls(model, report.path)):
            lines.append(f"    # {one_line(text)}")
            lines.append(f"    {call.source()}")
        lines.append("    net.settle()  # a fault-free continuation: deliver, retransmit, repeat")
    lines.append(f"    assert net.holds({trace.prop!r}), (net.undelivered(), net.skipped)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out
