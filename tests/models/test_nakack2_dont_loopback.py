"""NAKACK2's DONT_LOOPBACK models (``models/nakack2/dont-loopback-*.toml``; spec decision 15).

Invariants tested: no member ever sends a copy of its own DONT_LOOPBACK multicast to itself, and
its own window's hd (its digest's entry, what STABLE purges to) equals its counter after every
step; the other member delivers every message; the properties catch two planted defects on the
same world: a send without Table.add's remove filter (the own hd never passes the message:
``eventually_delivered``) and a sender that loops its copy back as without the flag
(``no_self_delivery``); in the mixed model (``[dont_loopback] A = [2]``) removeAndDeliver's filter is
what keeps #2 from A (without it: ``no_self_delivery``); with ``dont_loopback = false`` the copy to self is
back; a bad ``[dont_loopback]`` table is a one-line error, and NAKACK4 refuses it.
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
MIXED = MODELS_DIR / "nakack2" / "dont-loopback-mixed.toml"


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
    flagged = replace(step.node, dont_loopback=node.dont_loopback | {node.seqno + 1})
    return nak.Step(nak.with_window(flagged, node.me, window),
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


def test_the_removal_filter_matters_in_the_mixed_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without removeAndDeliver's filter (lines 150-153) the loopback of #1 delivers #2 to A too."""
    monkeypatch.setattr(nak, "on_receive", _unfiltered_receive(nak.on_receive))
    assert check_model(load(MIXED), trace_dir=None).verdict == "violation:no_self_delivery"


def _unfiltered_receive(original: object) -> object:
    def receive(cfg: nak.Config, node: nak.Node, src: int, msg: object) -> nak.Step:
        if src != node.me:
            return original(cfg, node, src, msg)  # type: ignore[operator]
        step = original(cfg, replace(node, dont_loopback=frozenset()), src, msg)  # type: ignore[operator]
        return nak.Step(replace(step.node, dont_loopback=node.dont_loopback), step.effects)

    return receive


@pytest.mark.parametrize(("table", "error"), [
    ("[dont_loopback]\nA = [3]\n", "dont_loopback.A: expected a non-empty list of send numbers in 1..2"),
    ("[dont_loopback]\nZ = [1]\n", "dont_loopback.Z"),
    ("[dont_loopback]\nA = 1\n", "dont_loopback.A"),
])
def test_a_bad_dont_loopback_table_is_one_line(tmp_path: Path, table: str, error: str) -> None:
    text = MIXED.read_text().replace("[dont_loopback]\nA = [2]\n", table).replace("states = 44604\n", "")
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(Exception, match=error.replace(".", r"\.").replace("[", r"\[")) as caught:
        load(tmp_path / "bad.toml")
    assert "\n" not in str(caught.value)


def test_nakack4_refuses_the_per_send_table(tmp_path: Path) -> None:
    text = MIXED.read_text().replace('protocol = "nakack2"', 'protocol = "nakack4"').replace("xmit_interval = 1\n", "")
    (tmp_path / "n4.toml").write_text(text)
    with pytest.raises(Exception, match="no \\[dont_loopback\\] table: protocol nakack4"):
        load(tmp_path / "n4.toml")
