"""``seqcheck replay``: a checker trace against the production engine, and as a regression test.

Three runs of one trace:
1. lockstep on the engine with the model's variant (``checks/differential.py``): the engine must
   take exactly the spec's steps; since its state then equals the spec's after every step, it
   reproduces the violation;
2. the trace as a script of network events (``checks/script.py``) on the engine with the model's
   variant: the property, evaluated on the engine's own state and output, is violated;
3. the same script on the engine as shipped (no variant): the property holds.
``emit_test`` writes run 2/3 as a standalone pytest file of plain calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.differential import Divergence, replay_on_engines
from checks.script import EngineScript
from checks.trace import Trace, validate
from impl.unicast3 import Variant
from models.modelfile import Model, load
from spec import unicast3 as u3

KIND_NAMES = {"Data": "DATA", "Ack": "ACK", "SendFirstSeqno": "SEND_FIRST_SEQNO", "XmitReq": "XMIT_REQ",
              "Close": "CLOSE"}
LIVENESS = {"eventually_delivered", "eventually_acked"}
SCRIPTABLE = {"no_spurious_purge", "purge_covered", "sync_rate_limited"} | LIVENESS


@dataclass
class ReplayReport:
    trace: Trace
    model: Model
    divergence: Divergence | None
    defective_holds: bool | None  # None: no engine-level check for this property
    fixed_holds: bool | None
    skipped_on_fixed: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.divergence is None and self.defective_holds is not True and self.fixed_holds is not False

    def lines(self) -> list[str]:
        t, variant = self.trace, ", ".join(self.model.variant) or "none (UNICAST3 as shipped)"
        out = [f"trace: {len(t.actions)} steps of {t.model}, violating {t.prop}; variant: {variant}"]
        if self.divergence is not None:
            out.append(f"engine DIVERGES from the spec at {self.divergence}")
            return out
        out.append(f"lockstep: the engine took all {len(t.actions)} steps exactly as the spec (datagrams, "
                   "deliveries, state), so it ends in the spec's violating state")
        if self.defective_holds is not None:
            verdict = "violates" if not self.defective_holds else "does NOT violate"
            out.append(f"engine with the variant: {verdict} {t.prop} (checked on the engine's own state)")
        if self.fixed_holds is not None and self.model.variant:
            verdict = "holds" if self.fixed_holds else "is VIOLATED"
            out.append(f"engine as shipped, same script: {t.prop} {verdict}"
                       + (f" ({len(self.skipped_on_fixed)} events did not apply)" if self.skipped_on_fixed else ""))
        return out


def run_replay(trace_path: Path, model_path: Path) -> ReplayReport:
    trace = Trace.load(trace_path)
    model = load(model_path)
    validate(model.world, trace)
    _, divergence = replay_on_engines(model_path, trace)
    defective = fixed = None
    skipped: list[str] = []
    if trace.prop in SCRIPTABLE:
        calls = script_calls(model, trace)
        defective = run_script(model, calls, _variant(model.variant), trace.prop).holds(trace.prop)
        if model.variant:
            shipped = run_script(model, calls, Variant(), trace.prop)
            fixed, skipped = shipped.holds(trace.prop), shipped.skipped
    return ReplayReport(trace, model, divergence, defective, fixed, skipped)


def _variant(names: tuple[str, ...]) -> Variant:
    return Variant(**{name: True for name in names})


# -- the trace as calls on an EngineScript ------------------------------------------------------------
def script_calls(model: Model, trace: Trace) -> list[tuple[str, str]]:
    """(python call on ``net``, comment) per step."""
    names = model.members
    calls = []
    for action, text in zip(trace.actions, trace.summary or [""] * len(trace.actions), strict=True):
        calls.append((_call(action, names), text))
    return calls


def _call(action: dict[str, Any], names: tuple[str, ...]) -> str:
    kind = action["action"]
    if kind == "AppSend":
        return f"net.send({names[action['src']]!r}, {names[action['dst']]!r})"
    if kind in ("DeliverPacket", "DuplicatePacket", "LosePacket"):
        packet = action["packet"]
        msg = {k: v for k, v in packet["msg"].items() if k not in ("type", "ts")}
        if "seqnos" in msg:
            msg["seqnos"] = tuple(msg["seqnos"])
        args = ", ".join(f"{k}={v!r}" for k, v in msg.items())
        verb = {"DeliverPacket": "deliver", "DuplicatePacket": "duplicate", "LosePacket": "lose"}[kind]
        head = f"net.{verb}({names[packet['src']]!r}, {names[packet['dst']]!r}, {KIND_NAMES[packet['kind']]!r}"
        return head + (f", {args})" if args else ")")
    if kind == "FireTimer":
        timer = action["timer"]
        peer = f", {names[timer['peer']]!r}" if timer["peer"] >= 0 else ""
        return f"net.timer({names[action['member']]!r}, {u3.TIMER_NAMES[timer['kind']]!r}{peer})"
    if kind == "InstallView":
        return f"net.view({names[action['member']]!r}, {[names[m] for m in action['members']]!r})"
    if kind == "RemoveReceiver":
        return f"net.remove_receiver({names[action['member']]!r}, {names[action['peer']]!r})"
    raise ValueError(f"unknown action {kind!r}")


def run_script(model: Model, calls: list[tuple[str, str]], variant: Variant, prop: str) -> EngineScript:
    net = EngineScript(model.members, variant)
    for call, _ in calls:
        eval(call, {"net": net})  # the calls are generated above from the trace's own fields
    if prop in LIVENESS:
        net.settle()
    return net


# -- emitting a pytest file ---------------------------------------------------------------------------
def emit_test(model: Model, trace: Trace, trace_path: Path, out: Path) -> Path:
    variant = ", ".join(f"{name}=True" for name in model.variant)
    name = "".join(c if c.isalnum() else "_" for c in Path(trace.model).stem).lower()
    if variant:
        outcome = ["the trace. It passes on the engine as shipped; set ENGINE_VARIANT to the variant to see",
                   "it fail."]
    else:
        outcome = ["the trace. The violation is in UNICAST3 as shipped, so the test is marked xfail (strict):",
                   "it starts to pass, and must be unmarked, when the protocol is changed."]
    lines = [
        f'"""Regression test from {trace_path} ({len(trace.actions)} steps).',
        "",
        f"Model: {trace.model}",
        f"The trace violates {trace.prop} on the spec" + (f" with Variant({variant})." if variant else " as shipped."),
        "Generated by `seqcheck replay --emit-test`: plain calls on UNICAST3 engines, one per step of",
        *outcome,
        '"""',
        "",
        *([] if variant else ["import pytest", ""]),
        "from checks.script import EngineScript",
        "from impl.unicast3 import Variant",
        "",
        "ENGINE_VARIANT = Variant()" + (f"  # Variant({variant}) brings the defect back" if variant else ""),
        "",
        "",
        *([] if variant else [f"@pytest.mark.xfail(strict=True, reason={trace.model + ': a residual of UNICAST3'!r})"]),
        f"def test_{name}_{trace.prop}() -> None:",
        f"    net = EngineScript({list(model.members)!r}, ENGINE_VARIANT)",
    ]
    for index, (call, text) in enumerate(script_calls(model, trace), 1):
        lines.append(f"    # {index}. {text}".rstrip())
        lines.append(f"    {call}")
    if trace.prop in LIVENESS:
        lines.append("    net.settle()  # a fault-free continuation: deliver, retransmit, repeat")
    lines.append(f"    assert net.holds({trace.prop!r}), (net.undelivered(), net.skipped)")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return out
