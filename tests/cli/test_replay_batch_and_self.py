"""Engine scripts of the point-to-point world with batches (``[faults] max_batch``) and messages to self
(``"A->A"``): a spec path with a batch delivery becomes a ``deliver_batch`` call handed to the engine's
``received_batch``, and a path of loopbacks is judged on the send window for oneself, both as the spec
delivered; an emitted test writes the batch call through ``repr``; and a script world without batch
calls refuses one in one line.

Invariants tested: the engines deliver what the spec delivered along the path (a batch of DATA as one
input; a loopback delivering everything sent to self before it), every delivery property holds on the
script's channels, and a planted redelivery on the self path is judged a duplicate by the script.
"""

from __future__ import annotations

import random

import pytest

from checks.cli import MODELS_DIR
from checks.conform.replay import ScriptCall, TraceError, run_script, script_calls
from checks.conform.script import DELIVERY
from impl.unicast3 import receive
from impl.unicast3.codec import DataMsg
from impl.unicast3.state import Member
from models.modelfile import Model, load
from models.world import AppSend, DeliverBatch, DeliverPacket


def path_of(model: Model, wanted: list[type]) -> list[tuple[object, object]]:
    """The first enabled action of each wanted type, in turn, from the initial state."""
    world, state, path = model.world, model.world.init_states()[0], []
    for kind in wanted:
        action, state = next((a, s) for a, s in world.successors(state) if isinstance(a, kind))
        path.append((action, state))
    return path


def test_a_batch_delivery_replays_as_one_received_batch() -> None:
    model = load(MODELS_DIR / "unicast3" / "batch-under-loss.toml")
    path = path_of(model, [AppSend, AppSend, DeliverBatch])
    calls = script_calls(model, path)
    assert calls[2][0].method == "deliver_batch"
    assert calls[2][0].source().startswith("net.deliver_batch('A', 'B', [('DATA', {'seqno': 1,")
    net = run_script(model, calls, (), "no_duplicate")
    assert net.delivered == {("A", "B"): {1, 2}}
    assert all(net.holds(prop) for prop in DELIVERY)


def test_loopbacks_replay_on_the_window_for_oneself(monkeypatch: pytest.MonkeyPatch) -> None:
    model = load(MODELS_DIR / "unicast3" / "self-under-loss.toml")
    path = path_of(model, [AppSend, AppSend, DeliverPacket, DeliverPacket])
    calls = script_calls(model, path)
    assert [c.method for c, _ in calls] == ["send", "send", "deliver", "deliver"]
    net = run_script(model, calls, (), "no_duplicate")
    assert net.delivered == {("A", "A"): {1, 2}}
    assert all(net.holds(prop) for prop in DELIVERY)
    original = receive.on_data_from_self

    def redelivers(m: Member[str], msg: DataMsg, *, now: int) -> None:
        entry = m.send.get(m.me) if m.me is not None else None
        before = entry.window.hd if entry is not None else 0
        original(m, msg, now=now)
        if entry is not None and before == entry.window.hd and before > 0:
            m.deliver(m.me, entry.window.get(before) or b"\0" * 7 + bytes((before,)))  # type: ignore[arg-type]

    monkeypatch.setattr(receive, "on_data_from_self", redelivers)
    net = run_script(model, calls, (), "no_duplicate")
    assert not net.holds("no_duplicate")


def test_a_script_world_without_the_call_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from checks.conform.mcast_script import McastScript

    monkeypatch.delattr(McastScript, "deliver_batch")
    model = load(MODELS_DIR / "nakack2" / "three-members-loss.toml")
    call = ScriptCall("deliver_batch", ("A", "B", []))
    with pytest.raises(TraceError, match="action: deliver_batch is not supported by the engine scripts of this world "
                                         r"\(McastScript\)"):
        run_script(model, [(call, "")], (), "no_duplicate")


def test_a_multicast_batch_and_a_retransmission_request_replay_on_the_engines() -> None:
    """A multicast world's batch (here an ACK and an XMIT_REQ handed up together) is one
    ``received_batch``, and an XMIT_REQ is found in flight by its seqnos (once skipped, unmatched:
    the script compared a list with the trace's tuple)."""
    model = load(MODELS_DIR / "nakack4" / "batch-under-loss.toml")
    world = model.world
    for seed in range(50):
        rng, state, path = random.Random(seed), world.init_states()[0], []
        for _ in range(60):
            enabled = list(world.successors(state))
            batches = [pair for pair in enabled if isinstance(pair[0], DeliverBatch)
                       and any(p.kind == "XmitReq" for p in pair[0].packets)]
            action, state = batches[0] if batches else enabled[rng.randrange(len(enabled))]
            path.append((action, state))
            if batches:
                break
        if isinstance(path[-1][0], DeliverBatch):
            break
    calls = script_calls(model, path)
    assert calls[-1][0].method == "deliver_batch"
    net = run_script(model, calls, (), "no_duplicate")
    assert net.skipped == [], net.skipped
