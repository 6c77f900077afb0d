"""Counterexample trace files (checks/explore/trace.py) written by ``seqcheck check`` for the shipped models.

For every shipped model whose expected verdict is a violation (each protocol of a side-by-side
file counts as one model), the trace written by ``check_model`` (what ``seqcheck check`` runs):
(a) loads with ``Trace.load`` and describes its model, property and kind;
(b) validates (``checks.explore.trace.validate``) against the loaded model's world;
(c) is a shortest one: an independent breadth-first search (real state equality, no fingerprints)
    finds no violating state at a smaller depth and puts the trace's last state at depth
    ``len(trace)``; dropping any single step makes it invalid; re-running gives the same trace;
(d) a tampered copy is rejected with one ``TraceError`` line, and ``seqcheck show`` exits with 2
    printing one ``seqcheck:`` line on stderr and nothing on stdout.

Tests marked ``xfail(strict=True, reason="BUG: ...")`` state the right behaviour for a defect that is
not fixed yet; they fail as XPASS once it is.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from checks import cpu_limit
from checks.check import Outcome, check_model, trace_file
from checks.cli import MODELS_DIR, main, model_paths
from checks.explore.system import Always, Liveness, replay
from checks.explore.trace import FORMAT, Trace, TraceError, can_reach_goal, validate
from models.modelfile import Model, load, load_all, split_reference
from models.world import World

MODELS_ROOT = MODELS_DIR.parent


class Case(NamedTuple):
    """One model: a file, and the protocol when the file runs several side by side."""

    path: Path
    protocol: str | None

    def load(self) -> Model:
        return load(self.path, protocol=self.protocol)

    @property
    def id(self) -> str:
        name = str(self.path.relative_to(MODELS_DIR).with_suffix(""))
        return f"{name}[{self.protocol}]" if self.protocol else name


def shipped_violation_models() -> list[Case]:
    """The models ``seqcheck check`` runs by default whose expected verdict is a violation."""
    found = []
    for path in model_paths([]):
        for model in load_all(path):
            if model.expect.startswith("violation:"):
                found.append(Case(path, model.protocol if model.side_by_side else None))
    return found


VIOLATION_MODELS = shipped_violation_models()
JGRP1873 = Case(MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml", None)
LONG_STATES = 50_000  # models pinned at this many states or more: the long phase (-m long, run by .ci/run)
SIZED = [pytest.param(case, id=case.id,
                      marks=[pytest.mark.long] if (case.load().pinned_states or 0) >= LONG_STATES else [])
         for case in VIOLATION_MODELS]


class Checked:
    """Each violation model checked once per module, its trace written under a temporary folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.done: dict[Case, tuple[Model, Outcome]] = {}

    def __call__(self, case: Case) -> tuple[Model, Outcome, Path]:
        if case not in self.done:
            model = case.load()
            self.done[case] = model, check_model(model, trace_dir=self.folder)
        model, outcome = self.done[case]
        assert outcome.trace_path is not None, f"{case.id}: no trace written (verdict {outcome.verdict})"
        return model, outcome, outcome.trace_path


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> Checked:
    return Checked(tmp_path_factory.mktemp("traces"))


def test_the_shipped_models_include_violations() -> None:
    assert JGRP1873 in VIOLATION_MODELS
    assert len(VIOLATION_MODELS) >= 4
    protocols = {case.load().protocol for case in VIOLATION_MODELS}
    assert protocols == {"nakack2", "nakack4", "unicast2", "unicast3", "unicast4"}
    assert any(case.protocol for case in VIOLATION_MODELS), "no side-by-side violation"


# ---------------------------------------------------------------- (a) load, (b) validate


@pytest.mark.parametrize("case", SIZED)
def test_trace_loads_and_describes_its_model(checked: Checked, case: Case) -> None:
    model, outcome, written = checked(case)
    path = case.path
    assert outcome.matches, outcome.mismatch_reason
    assert written == trace_file(model, checked.folder)
    relative = path.relative_to(MODELS_DIR)
    suffix = f".{case.protocol}" if case.protocol else ""
    assert written == checked.folder / relative.parent / f"{path.stem}{suffix}.json"
    trace = Trace.load(written)
    assert trace == outcome.trace
    name, protocol = split_reference(trace.model)
    assert (MODELS_ROOT / name).resolve() == path.resolve()  # relative to the checkout
    assert protocol == case.protocol
    assert trace.model_digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"violation:{trace.prop}" == model.expect
    prop = next(p for p in model.world.properties if p.name == trace.prop)
    assert trace.kind == prop.kind
    assert trace.seed is None
    raw = json.loads(written.read_text())
    assert raw["format"] == FORMAT
    assert raw["length"] == len(raw["steps"]) == len(trace.actions) > 0


@pytest.mark.long
def test_trace_files_of_all_violation_models_are_distinct(checked: Checked) -> None:
    written = [checked(case)[2] for case in VIOLATION_MODELS]
    assert len(set(written)) == len(written)


@pytest.mark.parametrize("case", SIZED)
def test_trace_validates_against_the_loaded_model(checked: Checked, case: Case) -> None:
    model, _, written = checked(case)
    trace = Trace.load(written)
    replayed = validate(model.world, trace)
    assert len(replayed) == len(trace.actions)
    assert [model.world.action_to_json(a) for a, _ in replayed] == list(trace.actions)
    assert [model.world.format_action(a) for a, _ in replayed] == list(trace.summary)
    # a freshly loaded model (new interning tables) replays it too
    assert len(validate(case.load().world, trace)) == len(trace.actions)


# ---------------------------------------------------------------- (c) shortest


WorldState = tuple[int, ...]


def bfs_levels(world: World, depth: int) -> list[list[WorldState]]:
    """States by breadth-first depth, 0..depth, as the checker explores them (states outside the
    model's bounds are kept but not expanded); states compared by equality, not fingerprint."""
    first = list(dict.fromkeys(world.init_states()))
    levels: list[list[WorldState]] = [first]
    seen = set(first)
    for _ in range(depth):
        level: list[WorldState] = []
        for state in levels[-1]:
            if not world.within_bounds(state):
                continue
            for _, after in world.successors(state):
                if after not in seen:
                    seen.add(after)
                    level.append(after)
        levels.append(level)
    return levels


@pytest.mark.parametrize("case", SIZED)
def test_trace_is_a_shortest_counterexample(checked: Checked, case: Case) -> None:
    model, outcome, written = checked(case)
    world = model.world
    trace = Trace.load(written)
    length = len(trace.actions)
    last = replay(world, trace.actions)[-1][1]
    levels = bfs_levels(world, length)
    assert last in levels[length], "the trace's last state is not at breadth-first depth len(trace)"
    prop = next(p for p in world.properties if p.name == trace.prop)
    always = [p for p in world.properties if isinstance(p, Always)]
    if isinstance(prop, Always):
        # the checker stops at the first violation: its depth is the trace's length
        assert outcome.result.stats.depth == length
        for depth, level in enumerate(levels[:length]):
            bad = [p.name for s in level for p in always if not p.holds(s)]
            assert not bad, f"{bad[0]} is already violated at depth {depth} < {length}"
    else:
        assert isinstance(prop, Liveness)
        for depth, level in enumerate(levels[:length]):
            for state in level:
                assert can_reach_goal(world, state, prop.goal, max_states=200_000), \
                    f"a state at depth {depth} < {length} already cannot reach {prop.name}"


@pytest.mark.parametrize("case", SIZED)
def test_no_single_step_can_be_dropped(checked: Checked, case: Case) -> None:
    model, _, written = checked(case)
    trace = Trace.load(written)
    for drop in range(len(trace.actions)):
        shorter = Trace(trace.model, trace.model_digest, trace.prop, trace.kind,
                        trace.actions[:drop] + trace.actions[drop + 1:])
        with pytest.raises(TraceError):
            validate(model.world, shorter)


@pytest.mark.parametrize("case", SIZED)
def test_rerunning_gives_the_same_trace(checked: Checked, case: Case) -> None:
    _, outcome, written = checked(case)
    again = check_model(case.load(), trace_dir=None)
    assert again.trace_path is None
    assert again.verdict == outcome.verdict
    assert again.trace is not None
    assert again.trace == Trace.load(written)
    assert again.trace.summary == outcome.trace.summary  # type: ignore[union-attr]


# ---------------------------------------------------------------- (d) tampered traces

Raw = dict[str, Any]


def first_int_leaf(value: Any, bump: int) -> bool:
    """Add ``bump`` to the first whole-number field found in ``value`` (depth first); True if one was."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            value[key] = item + bump
            return True
        if isinstance(item, dict | list) and first_int_leaf(item, bump):
            return True
    return False


def drop_step(index: int) -> Callable[[Raw], None]:
    def change(raw: Raw) -> None:
        del raw["steps"][index]
        raw["length"] = len(raw["steps"])

    return change


def change_field(index: int) -> Callable[[Raw], None]:
    def change(raw: Raw) -> None:
        assert first_int_leaf(raw["steps"][index]["action"], 7)

    return change


def set_key(key: str, value: Any) -> Callable[[Raw], None]:
    def change(raw: Raw) -> None:
        raw[key] = value

    return change


def delete_key(key: str) -> Callable[[Raw], None]:
    def change(raw: Raw) -> None:
        del raw[key]

    return change


def rename_action(raw: Raw) -> None:
    raw["steps"][0]["action"]["action"] = "Teleport"


def repeat_last_step(raw: Raw) -> None:
    raw["steps"].append(copy.deepcopy(raw["steps"][-1]))
    raw["length"] = len(raw["steps"])


def action_not_a_table(raw: Raw) -> None:
    raw["steps"][0]["action"] = 5


# (id, change to the JSON, a fragment of the one-line message)
TAMPERS: list[tuple[str, Callable[[Raw], None], str]] = [
    ("drop-first-step", drop_step(0), ""),
    ("drop-middle-step", drop_step(1), ""),
    ("drop-last-step", drop_step(-1), ""),
    ("repeat-last-step", repeat_last_step, "is not enabled"),
    ("change-first-action-field", change_field(0), "step 1: action"),
    ("change-last-action-field", change_field(-1), "is not enabled"),
    ("rename-action", rename_action, "step 1: action"),
    ("unknown-property", set_key("property", "no_such_property"), "no property named 'no_such_property'"),
    ("other-property", set_key("property", "no_duplicate"), "satisfies no_duplicate"),
    ("format-tag", set_key("format", "seqcheck-trace/2"), 'format: expected "seqcheck-trace/1"'),
    ("no-format-tag", delete_key("format"), 'format: expected "seqcheck-trace/1"'),
    ("no-steps", delete_key("steps"), "missing or malformed field"),
    ("no-property", delete_key("property"), "missing or malformed field"),
    ("steps-not-a-list", set_key("steps", 5), "missing or malformed field"),
    ("action-not-a-table", action_not_a_table, "missing or malformed field"),
]
TEXT_TAMPERS: list[tuple[str, str, str]] = [
    ("garbage-json", "{this is not json", "not a JSON trace file: "),
    ("truncated-json", '{"format": "seqcheck-trace/1", "steps": [', "not a JSON trace file: "),
    ("empty-file", "", "not a JSON trace file: "),
    ("json-list", "[1, 2, 3]", 'format: expected "seqcheck-trace/1"'),
    ("json-string", '"seqcheck-trace/1"', 'format: expected "seqcheck-trace/1"'),
]


def tampered(written: Path, change: Callable[[Raw], None], target: Path) -> Path:
    raw = json.loads(written.read_text())
    change(raw)
    target.write_text(json.dumps(raw, indent=1))
    return target


def load_and_validate(path: Path) -> None:
    trace = Trace.load(path)
    name, protocol = split_reference(trace.model)
    validate(load(MODELS_ROOT / name, protocol=protocol).world, trace)


def assert_show_rejects(capsys: pytest.CaptureFixture[str], path: Path, fragment: str) -> str:
    capsys.readouterr()
    code = main(["show", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith("seqcheck: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert fragment in err
    return err


@pytest.mark.parametrize(("change", "fragment"), [pytest.param(c, f, id=i) for i, c, f in TAMPERS])
def test_tampered_jgrp1873_trace_is_rejected(checked: Checked, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             change: Callable[[Raw], None], fragment: str) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, change, tmp_path / "tampered.json")
    with pytest.raises(TraceError) as caught:
        load_and_validate(path)
    assert "\n" not in str(caught.value)
    assert fragment in str(caught.value)
    assert_show_rejects(capsys, path, fragment)


@pytest.mark.parametrize(("text", "fragment"), [pytest.param(t, f, id=i) for i, t, f in TEXT_TAMPERS])
def test_unreadable_trace_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                      fragment: str) -> None:
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(TraceError) as caught:
        Trace.load(path)
    assert str(caught.value).startswith(f"{path}: {fragment}")
    assert "\n" not in str(caught.value)
    assert_show_rejects(capsys, path, f"{path}: {fragment}")


def test_not_utf8_trace_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"format": "caf\xe9"}')
    assert_show_rejects(capsys, path, f"{path}: not a JSON trace file: ")


def test_trace_naming_a_missing_model(checked: Checked, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, set_key("model", "no/such/model.toml"), tmp_path / "elsewhere.json")
    assert Trace.load(path).model == "no/such/model.toml"
    assert_show_rejects(capsys, path, f"{path}: model no/such/model.toml not found")


def test_missing_trace_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(TraceError, match="no such trace file"):
        Trace.load(path)
    assert_show_rejects(capsys, path, f"{path}: no such trace file")


@pytest.mark.parametrize("case", SIZED)
def test_every_trace_rejects_a_changed_field_and_a_wrong_property(checked: Checked, tmp_path: Path,
                                                                  case: Case) -> None:
    model, _, written = checked(case)
    for name, change in (("field", change_field(-1)), ("property", set_key("property", "no_such_property"))):
        bad = tampered(written, change, tmp_path / f"{name}.json")
        with pytest.raises(TraceError):
            validate(model.world, Trace.load(bad))


def test_show_rejects_a_tampered_trace_in_a_real_process(checked: Checked, tmp_path: Path) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, drop_step(-1), tmp_path / "short.json")
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "show", str(path)], capture_output=True, text=True,
                          cpu_seconds=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"seqcheck: {path}: the last state of the trace satisfies no_spurious_purge\n"


@pytest.mark.parametrize("kind", ["liveness", "sometimes", "bogus"])
def test_wrong_kind_is_rejected(checked: Checked, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                kind: str) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, set_key("kind", kind), tmp_path / "kind.json")
    assert_show_rejects(capsys, path, "kind")


def test_length_that_disagrees_with_the_steps_is_rejected(checked: Checked, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, set_key("length", 3), tmp_path / "length.json")
    assert_show_rejects(capsys, path, "length")


def test_show_of_a_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert_show_rejects(capsys, tmp_path, str(tmp_path))


@pytest.mark.parametrize("change", [pytest.param(c, id=i) for i, c, _ in TAMPERS
                                    if i in {"drop-last-step", "rename-action", "unknown-property"}])
def test_show_error_names_the_trace_file(checked: Checked, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         change: Callable[[Raw], None]) -> None:
    _, _, written = checked(JGRP1873)
    path = tampered(written, change, tmp_path / "tampered.json")
    assert_show_rejects(capsys, path, str(path))


def test_show_finds_a_relative_model_from_another_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "m.toml").write_text(JGRP1873.path.read_text())
    monkeypatch.chdir(work)
    assert main(["check", "--no-progress", "--trace-dir", "out", "m.toml"]) == 0
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["show", str(work / "out" / "m.json")]) == 0
    assert "violates safety property no_spurious_purge" in capsys.readouterr().out


def test_show_draws_one_protocol_of_a_side_by_side_file(checked: Checked, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in VIOLATION_MODELS if c.protocol)
    _, outcome, written = checked(case)
    capsys.readouterr()
    assert main(["show", str(written)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{case.path.relative_to(MODELS_ROOT)} [{case.protocol}]: ")  # never absolute
    assert outcome.trace is not None
    assert lines[1].startswith("violates ") and f" property {outcome.trace.prop} after " in lines[1]
