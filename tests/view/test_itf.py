"""ITF export: the format's rules hold, and reading the file back gives the states of replaying the trace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from viewer_traces import NAKACK2, UNICAST2, make_trace

from checks.cli import main
from checks.explore.trace import Trace, validate
from checks.view.itf import SAFE_INT, from_itf, to_itf
from models.modelfile import load


def _plain(value: Any) -> Any:
    """The test's own reading of a state value in from_itf's terms (records as dicts, maps as pairs)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, frozenset):
        return frozenset(_plain(v) for v in value)
    if isinstance(value, dict):
        return tuple((_plain(k), _plain(v)) for k, v in value.items())
    return value


def _check_value(value: Any) -> None:
    """ITF's value rules: no null, no float, integers within 2^53 or #bigint strings, # keys only as ITF's."""
    assert value is not None and not isinstance(value, float)
    if isinstance(value, int) and not isinstance(value, bool):
        assert -SAFE_INT <= value <= SAFE_INT
    elif isinstance(value, list):
        for item in value:
            _check_value(item)
    elif isinstance(value, dict):
        special = [k for k in value if k.startswith("#")]
        if special:
            assert len(value) == 1 and special[0] in {"#bigint", "#tup", "#set", "#map", "#unserializable"}
            if "#bigint" in value:
                assert isinstance(value["#bigint"], str) and int(value["#bigint"]) is not None
            else:
                _check_value(value[special[0]])
        else:
            for item in value.values():
                _check_value(item)


def test_big_integers_and_none() -> None:
    assert to_itf(2**60) == {"#bigint": str(2**60)} and to_itf(-(2**53)) == {"#bigint": str(-(2**53))}
    assert to_itf(SAFE_INT) == SAFE_INT and from_itf(to_itf(2**60)) == 2**60
    assert from_itf(to_itf((None, frozenset({3, 1})))) == (None, frozenset({1, 3}))


@pytest.mark.parametrize("model", [UNICAST2, NAKACK2], ids=["unicast2", "nakack2"])
def test_itf_rules_and_round_trip(tmp_path: Path, model: Path) -> None:
    trace_file = make_trace(tmp_path, model)
    out = tmp_path / "out.itf.json"
    assert main(["show", str(trace_file), "--itf", str(out)]) == 0
    document = json.loads(out.read_text())
    assert set(document) == {"#meta", "vars", "states"}
    assert document["vars"] == ["action", "nodes", "network", "history"]
    loaded = load(tmp_path / model.name)
    world = loaded.world
    path = validate(world, Trace.load(trace_file))
    assert len(document["states"]) == len(path) + 1
    expected = [world.init_states()[0], *(state for _, state in path)]
    for index, (itf_state, state) in enumerate(zip(document["states"], expected)):
        assert itf_state["#meta"] == {"index": index}
        assert set(itf_state) == {"#meta", *document["vars"]}
        for name in document["vars"]:
            _check_value(itf_state[name])
        view = world.view(state)
        names = world.member_names
        assert from_itf(itf_state["nodes"]) == {n: _plain(node) for n, node in zip(names, view.nodes)}
        assert from_itf(itf_state["network"]) == _plain(tuple(view.network))
        assert from_itf(itf_state["history"]) == _plain(view.history)
    assert [s["action"] for s in document["states"][1:]] == [world.format_action(a) for a, _ in path]
