"""The step property ``no_spurious_reset`` and the narrowed liveness excuse (issue 19, item 3).

Invariants tested: each cause of a receive window's end is read from its stimulus and judged per
protocol (UNICAST3: hook, expiry, a CLOSE of the window's own conn_id, a first DATA of a newer
conn_id, and a view without the sender only under JGRP-1586's variant; UNICAST2: hook, reaper,
view, newer first DATA, in the serial order of 15-bit conn_ids); a CLOSE that tears down a window of
another conn_id, planted in the UNICAST3 spec, is a violation that every other property misses; the
UNICAST2 residual (an old first DATA replacing the new window) delivers a payload twice and out of
order across incarnations with no_duplicate and in_order holding; a discard at conn_close_timeout is
excused only while the peer has stayed out of the view since the entry became CLOSING (a planted
CLOSING that a view with the peer does not reopen makes it a liveness violation); member
symmetry renames the grace bits with the pairs; charts say which window ended how and which discard
is not excused; the lockstep, with the same CLOSE defect planted in
engine and spec (no divergence), reports the property on a seeded walk; and the engine scripts of
``seqcheck replay`` judge it on the engines' own windows (a legitimate replacement holds, the planted
CLOSE does not).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from checks.check import check_model
from checks.explore.trace import validate
from models.chart import chart
from models.modelfile import load
from models.protocols.unicast import (
    EARLY_EXPIRY,
    EXPIRY,
    HOOK,
    LEFT_VIEW,
    NEWER_FIRST,
    OLDER_FIRST,
    OWN_CLOSE,
    UnicastAdapter,
    WindowEnded,
)
from models.protocols.unicast2 import UNICAST2
from models.protocols.unicast3 import UNICAST3
from models.world import AppSend, DeliverPacket, FireTimer, InstallView, Packet, World
from spec import unicast2 as u2
from spec import unicast3 as u3

A, B = 0, 1


def ends(adapter: UnicastAdapter, cfg: Any, node: Any, stimulus: Hashable) -> list[WindowEnded]:
    """The window endings the world observes when ``node`` handles ``stimulus``."""
    new, effects = adapter.handle(cfg, node, stimulus)
    return [value for kind, value in adapter.step_observations(node, new, stimulus, effects) if kind == "WindowEnded"]


def u3_receiver(conn_id: int, state: int = u3.OPEN, variant: u3.Variant | None = None) -> tuple[u3.Config, u3.Node]:
    """B with a receive window for A on ``conn_id`` that has delivered #1."""
    cfg = u3.Config(2, variant=variant or u3.Variant())
    node = u3.initial_node(B, cfg, frozenset({A, B}))
    return cfg, replace(node, recv=(u3.RecvEntry(conn_id, state, 1, (), False), None))


def data(conn_id: int, payload: int = 9) -> Packet:
    return Packet(A, B, "Data", u3.Data(1, conn_id, True, payload))


@pytest.mark.parametrize(("stimulus", "state", "cause"), [
    (Packet(A, B, "Close", u3.Close(3)), u3.OPEN, OWN_CLOSE),
    (data(4), u3.OPEN, NEWER_FIRST),
    (data(2), u3.OPEN, OLDER_FIRST),
    (("remove", A), u3.OPEN, HOOK),
    (("timer", u3.Timer(u3.CLOSE_RECV, A)), u3.CLOSING, EXPIRY),
    (("timer", u3.Timer(u3.CLOSE_RECV, A)), u3.OPEN, EARLY_EXPIRY),  # a planted expiry of an OPEN window
])
def test_unicast3_window_end_causes(stimulus: Hashable, state: int, cause: str) -> None:
    cfg, node = u3_receiver(3, state)
    assert ends(UNICAST3, cfg, node, stimulus) == [WindowEnded(A, 3, cause)]
    assert (cause in UNICAST3.legitimate_window_ends(cfg.variant)) == (cause not in (OLDER_FIRST, EARLY_EXPIRY))


def test_unicast3_as_shipped_ends_no_window_by_a_foreign_close_or_a_view() -> None:
    cfg, node = u3_receiver(3)
    assert ends(UNICAST3, cfg, node, Packet(A, B, "Close", u3.Close(2))) == []
    assert ends(UNICAST3, cfg, node, ("view", frozenset({B}))) == []
    assert ends(UNICAST3, cfg, node, data(3)) == []  # a retransmitted first DATA keeps the window


def test_a_view_ends_a_unicast3_window_legitimately_only_under_jgrp1586() -> None:
    variant = u3.Variant(remove_on_view_change=True)
    cfg, node = u3_receiver(3, variant=variant)
    assert ends(UNICAST3, cfg, node, ("view", frozenset({B}))) == [WindowEnded(A, 3, LEFT_VIEW)]
    assert LEFT_VIEW in UNICAST3.legitimate_window_ends(cfg.variant)
    assert LEFT_VIEW not in UNICAST3.legitimate_window_ends(u3.Variant())


def test_unicast2_window_end_causes() -> None:
    cfg = u2.Config(2, conn_expiry=True)
    node = u2.initial_node(B, cfg, frozenset({A, B}))
    node = replace(node, recv=(u2.RecvEntry(3, 1, (), 0, 0), None))
    assert ends(UNICAST2, cfg, node, ("view", frozenset({B}))) == [WindowEnded(A, 3, LEFT_VIEW)]
    assert ends(UNICAST2, cfg, node, ("timer", u2.Timer(u2.IDLE_RECV, A))) == [WindowEnded(A, 3, EXPIRY)]
    assert ends(UNICAST2, cfg, node, ("remove", A)) == [WindowEnded(A, 3, HOOK)]
    assert ends(UNICAST2, cfg, node, Packet(A, B, "Data", u2.Data(1, 2, True, 9))) == [WindowEnded(A, 3, OLDER_FIRST)]
    assert UNICAST2.legitimate_window_ends(cfg.variant) == {HOOK, EXPIRY, LEFT_VIEW, NEWER_FIRST}


def test_unicast2_conn_ids_are_ordered_serially_across_the_wrap() -> None:
    top = u2.MAX_CONN_ID
    assert UNICAST2.newer_conn_id(0, top) and not UNICAST2.newer_conn_id(top, 0)
    assert UNICAST2.newer_conn_id(5, 4) and not UNICAST2.newer_conn_id(4, 4) and not UNICAST2.newer_conn_id(4, 5)


# -- a planted spurious reset: UNICAST3's CLOSE without its conn_id check ---------------------------------
RESET_MODEL = """description = "A's idle connection is closed and reopened while its CLOSE is in flight"
protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 2
[timers]
conn_expiry = true
conn_close = true
[check]
expect = "pass"
{extra}
"""


def reset_model(tmp_path: Path, extra: str = "") -> Any:
    path = tmp_path / "close-reopen.toml"
    path.write_text(RESET_MODEL.format(extra=extra))
    return load(path)


def close_any_conn_id(node: u3.Node, src: int, msg: u3.Close) -> u3.Step:
    """The planted defect: CLOSE removes the receive window whatever its conn_id."""
    if node.recv[src] is None:
        return u3.Step(node, ())
    return u3.Step(replace(node, recv=u3.set_peer(node.recv, src, None)), (u3.WindowRemoved(src),))


def test_the_reset_model_passes_as_shipped(tmp_path: Path) -> None:
    outcome = check_model(reset_model(tmp_path), trace_dir=None)
    assert outcome.verdict == "pass"
    assert "no_spurious_reset" in outcome.model.properties


def test_a_close_of_another_conn_id_is_a_spurious_reset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(u3, "_on_close", close_any_conn_id)
    outcome = check_model(reset_model(tmp_path), trace_dir=None)
    assert outcome.verdict == "violation:no_spurious_reset"
    assert outcome.trace is not None
    last = outcome.trace.actions[-1]  # actions as the trace file writes them
    assert last["action"] == "DeliverPacket" and last["packet"]["kind"] == "Close"
    drawn = " ".join(chart(outcome.model.world, validate(outcome.model.world, outcome.trace)).replace("│", " ").split())
    assert "its receive window for A (conn_id=1) ends by a CLOSE of another connection: no_spurious_reset" in drawn
    # ... which no other property sees (what B delivers after it is a new incarnation's)
    others = check_model(reset_model(tmp_path, 'exclude = ["no_spurious_reset"]'), trace_dir=None)
    assert others.verdict == "pass"


# -- the UNICAST2 residual, continued to the redelivery --------------------------------------------------
def step(world: World, state: Any, wanted: Callable[[Any], bool]) -> Any:
    for action, after in world.successors(state):
        if wanted(action):
            return after
    raise AssertionError("no such action enabled")


def delivery_of(conn_id: int) -> Callable[[Any], bool]:
    return lambda a: (isinstance(a, DeliverPacket) and isinstance(a.packet.msg, u2.Data)
                      and a.packet.msg.conn_id == conn_id)


def test_an_old_first_data_makes_unicast2_redeliver_unseen_by_the_delivery_properties() -> None:
    model = load(Path(__file__).parents[2] / "models" / "unicast2" / "stale-first-data-resets-window.toml")
    world = model.world
    state = step(world, world.init_states()[0], lambda a: isinstance(a, AppSend))
    state = step(world, state, lambda a: isinstance(a, InstallView))  # A's connection removed, DATA in flight
    state = step(world, state, lambda a: isinstance(a, AppSend))  # conn_id 1
    state = step(world, state, delivery_of(1))  # B: payload 2
    state = step(world, state, delivery_of(0))  # B: the old DATA replaces the window, payload 1
    state = step(world, state, lambda a: isinstance(a, FireTimer) and a.member == A and a.timer.kind == u2.XMIT)
    state = step(world, state, delivery_of(1))  # the first-message resend: payload 2 again
    history = world.view(state).history
    channel = world.view(state).channel(A, B)
    assert channel.delivered == 0b11 and channel.run_first == channel.run_last == 2
    held = {p.name: p.holds(state) for p in world.properties if p.name in ("no_duplicate", "in_order")}
    assert held == {"no_duplicate": True, "in_order": True}
    assert history.step_violations & UNICAST2.step_bit("no_spurious_reset")


# -- the narrowed excuse --------------------------------------------------------------------------------
GRACE_MODEL = """description = "A leaves B out of its view and takes it back; #1 may be lost"
protocol = "unicast3"
members = ["A", "B"]
[sends]
"A->B" = 1
[faults]
loss = 1
[[views]]
member = "A"
view = ["A"]
[[views]]
member = "A"
view = ["A", "B"]
[check]
properties = ["eventually_delivered"]
expect = "pass"
"""


def keep_closing(original: Callable[..., u3.Step]) -> Callable[..., u3.Step]:
    """The planted defect: a view that contains a peer again leaves its CLOSING send entry CLOSING."""
    def on_view(cfg: u3.Config, node: u3.Node, members: frozenset[int]) -> u3.Step:
        new, effects = original(cfg, node, members)
        send = tuple(e if e is None or old is None or old.state != u3.CLOSING else replace(e, state=u3.CLOSING)
                     for e, old in zip(new.send, node.send))
        return u3.Step(replace(new, send=send), effects)
    return on_view


def test_a_discard_to_a_peer_back_in_the_view_is_not_excused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "grace.toml"
    path.write_text(GRACE_MODEL)
    assert check_model(load(path), trace_dir=None).verdict == "pass"  # discarded only while B is out: excused
    monkeypatch.setattr(u3, "on_view", keep_closing(u3.on_view))
    outcome = check_model(load(path), trace_dir=None)
    assert outcome.verdict == "violation:eventually_delivered"
    assert outcome.trace is not None
    kinds = [(a["action"], a.get("members"), a.get("timer", {}).get("kind")) for a in outcome.trace.actions]
    # B is back in A's view when conn_close_timeout discards #1
    assert kinds[-2:] == [("InstallView", [A, B], None), ("FireTimer", None, u3.CLOSE_SEND)]
    drawn = " ".join(chart(outcome.model.world, validate(outcome.model.world, outcome.trace)).replace("│", " ").split())
    assert "» discards unacknowledged payload 1 to B » not excused:" in drawn


def test_symmetry_renames_the_grace_bits(tmp_path: Path) -> None:
    path = tmp_path / "three.toml"
    path.write_text('description = "three"\nprotocol = "unicast3"\nmembers = ["A", "B", "C"]\n'
                    '[sends]\n"A->B" = 1\n"B->C" = 1\n"C->A" = 1\n[check]\nexpect = "pass"\n')
    world = load(path).world
    symmetry = world.symmetry
    assert symmetry.perms, "the ring is symmetric under rotation"
    init = world.init_states()[0]
    history = world.hist_table.values[init[world.n + 2]]
    marked = init[:world.n + 2] + (world.hist_table(history._replace(grace=1 << (0 * 3 + 1))),)
    for k, perm in enumerate(symmetry.perms):
        image = symmetry.image(marked, k)
        assert world.hist_table.values[image[world.n + 2]].grace == 1 << (perm[0] * 3 + perm[1])


def test_the_lockstep_sees_it_where_engine_and_spec_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same defect planted in the engine and the spec: no divergence, but the lockstep checks
    the model's safety properties on every state, so a seeded random walk reports no_spurious_reset."""
    from checks.conform.differential import random_walk
    from impl.unicast3 import receive

    def engine_close_any(m: Any, src: Any, msg: Any, *, now: int) -> None:
        if m.recv.get(src) is not None:
            m.remove_recv(src, receive.Event.CLOSE_MSG, now=now)

    monkeypatch.setattr(u3, "_on_close", close_any_conn_id)
    monkeypatch.setattr(receive, "on_close", engine_close_any)
    model = reset_model(tmp_path)
    found = [r for r in (random_walk(model, seed, 40) for seed in range(100)) if r.divergence is not None]
    assert found, "no walk of 100 reached the reset"
    assert {r.divergence.what for r in found if r.divergence} == {"spec property no_spurious_reset"}, found[0]


def close_and_reopen(planted: bool, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The engine script of the reset model: A's idle connection (conn_id 0) is closed, A reopens
    (conn_id 1), B gets the new first DATA, then the old CLOSE; does no_spurious_reset hold?"""
    from checks.conform.script import EngineScript
    from impl.unicast3 import receive

    if planted:
        def engine_close_any(m: Any, src: Any, msg: Any, *, now: int) -> None:
            if m.recv.get(src) is not None:
                m.remove_recv(src, receive.Event.CLOSE_MSG, now=now)
        monkeypatch.setattr(receive, "on_close", engine_close_any)
    net = EngineScript(["A", "B"])
    net.send("A", "B")
    net.deliver("A", "B", "DATA", seqno=1, conn_id=0, first=True)
    net.timer("A", "idle_send", "B")
    net.timer("A", "close_send", "B")
    net.send("A", "B")
    net.deliver("A", "B", "DATA", seqno=1, conn_id=1, first=True)
    net.deliver("A", "B", "CLOSE", conn_id=0)
    assert not net.skipped, net.skipped
    return net.holds("no_spurious_reset")


def test_the_engine_scripts_judge_it_too(monkeypatch: pytest.MonkeyPatch) -> None:
    assert close_and_reopen(False, monkeypatch)  # the new first DATA replaced the window legitimately
    assert not close_and_reopen(True, monkeypatch)
