"""NAKACK2's DONT_LOOPBACK models (``models/nakack2/dont-loopback-*.toml``; spec decision 15).

Invariants tested: no member ever sends a copy of its own DONT_LOOPBACK multicast to itself, and
its own window's hd (its digest's entry, what STABLE purges to) equals its counter after every
step; the other member delivers every message; the properties catch two planted defects on the
same world: a send without Table.add's remove filter (the own hd never passes the message:
``eventually_delivered``) and a sender that loops its copy back as without the flag
(``no_self_delivery``); and with ``dont_loopback = false`` the copy to self is back.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from checks.check import check_model
from checks.cli import MODELS_DIR
from models.modelfile import load
from spec import nakack2 as nak

LOSS = MODELS_DIR / "nakack2" / "dont-loopback-under-loss.toml"


def test_no_copy_to_self_and_the_own_hd_keeps_up_with_the_counter() -> None:
    world = load(LOSS).world
    seen, frontier = set(world.init_states()), list(world.init_states())
    while frontier:
        state = frontier.pop()
        for action, after in world.successors(state):
            for packet in world.emitted(state, action):
                assert packet.src != packet.dst or packet.kind != "Data", (action, packet)
            for member in range(world.n):
                node = world.node(after, member)
                own = node.windows[member]
                assert own is not None and own.delivered == node.seqno, node
            if after not in seen:
                seen.add(after)
                if world.within_bounds(after):  # a cut state is checked, not expanded (as the search)
                    frontier.append(after)
    assert len(seen) > 1000


def _without_filter(cfg: nak.Config, node: nak.Node, payload: int) -> nak.Step:
    step = nak.on_send(replace(cfg, dont_loopback=False), node, payload)
    own = node.windows[node.me]
    assert own is not None
    window = replace(own, buffered=own.buffered + (nak.Data(node.seqno + 1, payload),))
    return nak.Step(nak.with_window(step.node, node.me, window),
                    tuple(e for e in step.effects if not (isinstance(e, nak.Send) and e.dst == node.me)))


def _looped_back(cfg: nak.Config, node: nak.Node, payload: int) -> nak.Step:
    return nak.on_send(replace(cfg, dont_loopback=False), node, payload)


@pytest.mark.parametrize(("defect", "violated"), [(_without_filter, "eventually_delivered"),
                                                  (_looped_back, "no_self_delivery")])
def test_the_properties_catch_a_planted_defect(monkeypatch: pytest.MonkeyPatch, defect: object,
                                               violated: str) -> None:
    original = nak.on_send
    monkeypatch.setattr(nak, "on_send", lambda cfg, node, payload: (defect if cfg.dont_loopback else original)(
        cfg, node, payload))  # type: ignore[operator]
    outcome = check_model(load(LOSS), trace_dir=None)
    assert outcome.verdict == f"violation:{violated}"


def test_without_the_flag_the_sender_loops_its_copy_back(tmp_path: Path) -> None:
    (tmp_path / "plain.toml").write_text(LOSS.read_text().replace("dont_loopback = true", "dont_loopback = false"))
    for path, to_self in ((tmp_path / "plain.toml", True), (LOSS, False)):
        world = load(path).world
        start = world.init_states()[0]
        send = next(action for action, _ in world.successors(start) if type(action).__name__ == "AppMcast")
        assert any(p.dst == p.src == 0 for p in world.emitted(start, send)) == to_self, path
