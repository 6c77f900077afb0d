"""Partial-order reduction (checks/explore/reduction.py, models/reduction.py): the reduced search
gives the unreduced search's verdict on every shipped model it applies to; on small three-member
models every persistent set commutes, as rule 3 of models/reduction.py claims, with each action
outside it; every property is stable while reducing; each proviso is needed."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from checks.check import check_model
from checks.explore.search import explore
from checks.explore.system import Always, Liveness, Sometimes
from models.modelfile import Model, load_all

MODELS = Path(__file__).resolve().parents[2] / "models"
TOO_BIG: set[str] = set()


def _reducible() -> list[Path]:
    out = []
    for path in sorted(MODELS.glob("*/*.toml")):
        if path.parent.name in ("bench", "fuzz") or path.name in TOO_BIG:
            continue
        if any(callable(getattr(m.world, "enable_partial_order", None)) for m in load_all(path)):
            out.append(path)
    return out


REDUCIBLE = _reducible()


@pytest.mark.long
@pytest.mark.parametrize("path", REDUCIBLE, ids=[f"{p.parent.name}/{p.stem}" for p in REDUCIBLE])
def test_reduced_search_gives_the_expected_verdict(path: Path) -> None:
    """The unreduced verdict is the model's ``expect`` (the shipped-models tests check that)."""
    for model in load_all(path):
        if not callable(getattr(model.world, "enable_partial_order", None)):
            continue
        reduced = check_model(model, trace_dir=None, partial_order=True)  # validates its trace
        assert reduced.verdict == model.expect, (path, model.protocol)
        if getattr(model.world.cfg, "xmit_per_connection", False) and model.expect != "pass":
            full = check_model(load_one(path, model.protocol), trace_dir=None, partial_order=False, symmetry=False)
            assert full.verdict == model.expect
            assert reduced.result.stats.distinct <= full.result.stats.distinct
            if reduced.trace is not None and full.trace is not None:
                assert len(reduced.trace.actions) >= len(full.trace.actions)


def load_one(path: Path, protocol: str) -> Model:
    return next(m for m in load_all(path) if m.protocol == protocol)


@pytest.mark.long
@pytest.mark.parametrize("name", ["per-connection-ring", "per-connection-jgrp1873", "per-connection-jgrp1548"])
def test_three_member_models_do_reduce(name: str) -> None:
    """(per-connection-fan-out is left to its pin and the audit below: its full search takes 20 s.)"""
    model = load_one(MODELS / "unicast3" / f"{name}.toml", "unicast3")
    reduced = check_model(model, trace_dir=None)
    counts = reduced.result.stats.partial_order
    assert counts is not None and counts.reduced > 0, name
    full = check_model(load_one(MODELS / "unicast3" / f"{name}.toml", "unicast3"), trace_dir=None,
                       partial_order=False, symmetry=False)
    assert reduced.result.stats.distinct < full.result.stats.distinct, name
    if reduced.verdict == "pass":  # a violation stops both searches early
        assert reduced.result.stats.distinct < full.result.stats.distinct / 3, name


# -- rule 3 of models/reduction.py, state by state -------------------------------------------------
AUDITED = ["per-connection-ring", "per-connection-jgrp1873", "per-connection-jgrp1548", "per-connection-fan-out"]
BUDGETED = {"LosePacket", "DuplicatePacket", "RemoveReceiver"}  # one may end the budget of another


def _states(model: Model, limit: int) -> list[Hashable]:
    """Up to ``limit`` reachable states, breadth-first, of the full graph (stable properties on)."""
    world = model.world
    world.enable_partial_order()
    seen = {world.init_states()[0]: None}
    queue = list(seen)
    for state in queue:
        if len(seen) >= limit:
            break
        if world.within_bounds(state):
            for _, after in world.successors(state):
                if after not in seen:
                    seen[after] = None
                    queue.append(after)
    return list(seen)


def _named(world: Any, state: Hashable) -> dict[str, Hashable]:
    return {repr(world.action_to_json(a)): after for a, after in world.successors(state)}


# A's view script drops C and re-adds it: its views touch A's connection to C alone (rule 1's
# ``view_peers``), so A's connection to B stays apart from it while A has views left; not with
# conn_close_timeout on, whose removal of the receive entry the view makes CLOSING flushes every ACK.
REJOIN = """protocol = "unicast3"
members = ["A", "B", "C"]
[sends]
"A->B" = 1
"A->C" = 1
"C->A" = 1
[timers]
xmit_per_connection = true
conn_close = false
[faults]
loss = 1
max_in_flight = 2
[[views]]
member = "A"
view = ["A", "B"]
[[views]]
member = "A"
view = ["A", "B", "C"]
[check]
expect = "pass"
"""


@pytest.mark.long
@pytest.mark.parametrize("name", [*AUDITED, "rejoin"])
def test_persistent_sets_commute_with_everything_outside(name: str, tmp_path: Path) -> None:
    path = MODELS / "unicast3" / f"{name}.toml"
    if name == "rejoin":
        path = tmp_path / "rejoin.toml"
        path.write_text(REJOIN)
    model = load_one(path, "unicast3")
    world, audited = model.world, 0
    if name == "rejoin":  # the views' footprint is A-C's alone, so some sets leave a view outside
        world.enable_partial_order()
        assert world._clusters.of_views[0] == (1,)
        closing = tmp_path / "closing.toml"
        closing.write_text(REJOIN.replace("conn_close = false\n", ""))
        widened = load_one(closing, "unicast3").world
        widened.enable_partial_order()
        assert widened._clusters.of_views[0] == (0, 1)
    for state in _states(model, 1500):
        if not world.within_bounds(state):
            continue
        steps = list(world.successors(state))
        _, counts, _, candidates = world.expand_persistent([state])
        assert counts == [len(steps)]
        for mask in candidates[0]:
            inside = [(a, s) for (a, s), m in zip(steps, mask) if m]
            outside = [(a, s) for (a, s), m in zip(steps, mask) if not m]
            inside_names = {repr(world.action_to_json(a)) for a, _ in inside}
            places = {world._clusters.place(a) for a, _ in inside}
            cluster = {c for p in places for c in world._clusters.footprint(p)}
            for b, after_b in outside:
                at_b = _named(world, after_b)
                for t, after_t in inside:
                    key_t, key_b = repr(world.action_to_json(t)), repr(world.action_to_json(b))
                    budget_race = type(t).__name__ in BUDGETED and type(b).__name__ in BUDGETED
                    if key_t not in at_b or key_b not in _named(world, after_t):
                        assert budget_race, (name, t, b)
                        continue
                    assert at_b[key_t] == _named(world, after_t)[key_b], (name, t, b)
                    audited += 1
                # nothing outside the set makes an action of its cluster appear
                grown = {k for k, _ in at_b.items()
                         if set(world._clusters.footprint(world._clusters.place(_action(world, after_b, k))))
                         & cluster} - inside_names
                assert not grown, (name, b, grown)
    assert audited > 1000


def _action(world: Any, state: Hashable, key: str) -> Any:
    return next(a for a, _ in world.successors(state) if repr(world.action_to_json(a)) == key)


# -- rule 4 of models/reduction.py: stable properties -----------------------------------------------
STABLE = [MODELS / "unicast3" / f"{n}.toml" for n in ("jgrp1873-no-timestamps", "jgrp1548-no-hs-resend",
                                                          "jgrp1586-remove-on-view-change", "receiver-removal",
                                                          "per-connection-jgrp1873")] + \
         [MODELS / "unicast2" / f"{n}.toml" for n in ("stale-first-data-resets-window",)]


@pytest.mark.parametrize("path", STABLE, ids=[p.stem for p in STABLE])
def test_properties_are_stable_while_reducing(path: Path) -> None:
    model = next(iter(load_all(path)))
    world, checked = model.world, 0
    props = world.properties
    for state in _states(model, 3000):
        if not world.within_bounds(state):
            continue
        before = _truths(props, state)
        for action, after in world.successors(state):
            now = _truths(props, after)
            for prop, was, is_ in zip(props, before, now):
                if isinstance(prop, Always):
                    assert was or not is_, (path.name, prop.name, action)
                elif isinstance(prop, Sometimes) or (isinstance(prop, Liveness) and not world.is_fault(action)):
                    assert not was or is_, (path.name, prop.name, action)
                checked += 1
    assert checked > 1000


def _truths(props: Sequence[Any], state: Hashable) -> list[bool]:
    return [p.goal(state) if isinstance(p, Liveness) else p.holds(state) for p in props]


# -- the provisos, on a system made to need each ------------------------------------------------
class _Ignoring:
    """Two independent parts: a loop (``tick`` toggles a bit for ever) and a line (``step`` counts
    0 -> 1 -> 2, where 2 violates ``low``). The loop alone is a persistent set in every state, so
    without the cycle proviso the search would tick for ever and never see 2."""

    name = "ignoring"
    properties: ClassVar[list[Always]] = [Always("low", lambda s: s[1] < 2)]

    def init_states(self) -> list[tuple[int, int]]:
        return [(0, 0)]

    def successors(self, state: tuple[int, int]) -> list[tuple[str, tuple[int, int]]]:
        out = [("tick", (1 - state[0], state[1]))]
        if state[1] < 2:
            out.append(("step", (state[0], state[1] + 1)))
        return out

    def within_bounds(self, state: tuple[int, int]) -> bool:
        return True

    def accepts_end(self, state: tuple[int, int]) -> bool:
        return True

    def is_fault(self, action: str) -> bool:
        return False

    def action_to_json(self, action: str) -> dict[str, str]:
        return {"action": action}

    def format_action(self, action: str) -> str:
        return action

    def expand_persistent(self, states: Sequence[tuple[int, int]]
                          ) -> tuple[list[tuple[int, int]], list[int], list[bool], list[list[list[bool]]]]:
        afters, counts, progress, masks = [], [], [], []
        for state in states:
            steps = self.successors(state)
            afters += [s for _, s in steps]
            counts.append(len(steps))
            progress += [True] * len(steps)
            masks.append([[a == "tick" for a, _ in steps]] if len(steps) > 1 else [])
        return afters, counts, progress, masks


def test_the_cycle_proviso_keeps_a_violation_the_loop_would_ignore() -> None:
    result = explore(_Ignoring(), partial_order=True)
    assert [f.prop for f in result.findings] == ["low"]
    counts = result.stats.partial_order
    assert counts is not None and counts.reduced >= 1 and counts.full_cycle >= 1


@pytest.mark.long
def test_symmetry_is_off_under_reduction() -> None:
    model = load_one(MODELS / "unicast3" / "per-connection-ring.toml", "unicast3")
    outcome = check_model(model, trace_dir=None, symmetry=True)
    assert outcome.result.stats.symmetry_group == 1


def test_a_per_connection_trace_has_no_engine_to_replay_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checks.cli import main

    assert main(["check", str(MODELS / "unicast3" / "per-connection-jgrp1873.toml"), "--no-progress",
                 "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "partial-order reduction: " in out and "the trace is a shortest counterexample" in out, out
    assert main(["replay", str(tmp_path / "unicast3" / "per-connection-jgrp1873.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "timers.xmit_per_connection" in err, err


@pytest.mark.long
def test_por_refusals_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checks.cli import main

    nakack = MODELS / "nakack2" / "three-members-loss.toml"
    assert main(["check", str(nakack), "--por"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--por" in err and "unicast" in err, err
    # with others that offer it, a model whose world does not is explored unreduced, and says so
    assert main(["check", str(nakack), str(MODELS / "unicast3" / "jgrp1873-no-timestamps.toml"), "--por",
                 "--no-progress", "--trace-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "partial-order reduction: not offered by protocol nakack2" in out, out
    assert main(["check", str(MODELS / "unicast3" / "per-connection-ring.toml"), "--por", "--swarm"]) == 2
    assert "--swarm" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text(nakack.read_text().replace('[check]', '[check]\npartial_order = true', 1))
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "check.partial_order" in err and len(err.splitlines()) == 1, err


def test_json_reports_the_reduction_and_no_por_turns_it_off(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from checks.cli import main

    path = str(MODELS / "unicast3" / "per-connection-jgrp1548.toml")
    assert main(["check", path, "--json", "--no-progress", "--trace-dir", str(tmp_path)]) == 0
    reduced = json.loads(capsys.readouterr().out)
    assert reduced["partial_order"]["reduced"] > 0 and reduced["trace_shortest"] is True
    assert reduced["states"] == load_one(Path(path), "unicast3").pinned_states  # the pin is of the reduced count
    assert main(["check", path, "--json", "--no-por", "--no-progress", "--trace-dir", str(tmp_path)]) == 0
    full = json.loads(capsys.readouterr().out)
    assert full["partial_order"] is None and full["matches"] and full["states"] > reduced["states"]
    assert full["verdict"] == reduced["verdict"] and full["trace_length"] == reduced["trace_length"]


VARIANTS = ["", "JGRP-1873", "JGRP-1548", "JGRP-1586", "JGRP-1578", "JGRP-1874"]
FAULTS = {"loss": "loss = 1", "removal": "receiver_removals = 1", "views": "loss = 1"}


CASES = [pytest.param(v, f, marks=[pytest.mark.slow] if f != "loss" else [], id=f"{v or 'shipped'}-{f}")
         for f in sorted(FAULTS) for v in VARIANTS]  # the slow ones: 45 to 170 s each (18 in 330 s on 2 cores)


@pytest.mark.parametrize(("variant", "faults"), CASES)
def test_reduced_and_full_verdicts_agree_on_three_member_variants(variant: str, faults: str, tmp_path: Path) -> None:
    """Every UNICAST3 variant (its historical defect or none) among three members with one kind of
    fault, the retransmit task per connection, and A's view script in the ``views`` case: the
    reduced search finds what the full one finds (the first violation's property; liveness too)."""
    views = '\n[[views]]\nmember = "A"\nview = ["A", "B"]\n\n[[views]]\nmember = "A"\nview = ["A", "B", "C"]\n'
    text = f"""protocol = "unicast3"
variant = [{f'"{variant}"' if variant else ""}]
members = ["A", "B", "C"]
[sends]
"A->B" = 1
"B->C" = 1
"C->A" = 1
[timers]
xmit_per_connection = true
[faults]
{FAULTS[faults]}
max_in_flight = {1 if faults == "loss" else 2}
{views if faults == "views" else ""}
[check]
expect = "pass"
"""
    path = tmp_path / "model.toml"
    path.write_text(text)
    full = check_model(load_one(path, "unicast3"), trace_dir=None, partial_order=False, symmetry=False)
    reduced = check_model(load_one(path, "unicast3"), trace_dir=None, partial_order=True)
    assert full.result.stats.complete or full.result.findings
    assert reduced.verdict == full.verdict, (variant, faults)
    assert reduced.result.stats.distinct <= full.result.stats.distinct
