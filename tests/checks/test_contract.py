"""The plug-in contract is the code of checks/explore/system.py: every member the checker looks up on
a system by name is a member of one of its ``Protocol`` classes (so the contract cannot drift from
what the checker reads), the shipped worlds offer the capabilities they are documented to, and the
example plug-in's states cross processes (its portable fingerprints agree between two copies whose
ids were given in other orders)."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

import checks.explore.system as contract
from checks.explore.swarm import portable_fingerprinter
from checks.explore.system import ExtraFigures, PortableStates, export_state, offers
from models.modelfile import load

ROOT = Path(__file__).resolve().parents[2]
NOT_IN_A_PROTOCOL = {"view": "swarm.py: the shipped worlds' own decoding, used before PortableStates"}


def protocol_members() -> set[str]:
    members: set[str] = set()
    for _, cls in inspect.getmembers(contract, inspect.isclass):
        if getattr(cls, "_is_protocol", False) and cls.__module__ == contract.__name__:
            members |= {name for name in vars(cls) if not name.startswith("_")}
            members |= set(getattr(cls, "__annotations__", {}))
    return members


def looked_up() -> dict[str, str]:
    """Every ``getattr(system, "name", ...)`` under checks/ (``system``, ``self.system``, ``model.world``)."""
    found = {}
    for path in sorted((ROOT / "checks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and ast.unparse(node.args[0]) in ("system", "self.system", "model.world")):
                found[str(node.args[1].value)] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return found


def test_what_the_checker_looks_up_is_in_the_contract() -> None:
    members, found = protocol_members(), looked_up()
    assert {"expand_batch", "state_width", "canonical_batch", "enable_partial_order"} <= set(found)
    stray = {name: where for name, where in found.items() if name not in members and name not in NOT_IN_A_PROTOCOL}
    assert stray == {}


@pytest.mark.parametrize("path", ["unicast3/jgrp1873-fixed.toml", "nakack4/lost-ack-threshold-2.toml"])
def test_the_shipped_worlds_offer_their_capabilities(path: str) -> None:
    world = load(ROOT / "models" / path).world
    assert offers(world, PortableStates) and offers(world, ExtraFigures)
    assert len(world.portable_layout()) == len(world.init_states()[0])


def arq(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "examples" / "arq_plugin"))
    module = importlib.import_module("seqcheck_arq.arq")
    return module.SlidingWindowArq("arq", messages=3, window=2, modulus=4, capacity=2, loss=1, duplicate=1,
                                   properties=())


def test_the_example_plugins_states_cross_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    here, there = arq(monkeypatch), arq(monkeypatch)
    assert offers(here, PortableStates) and offers(here, ExtraFigures)
    states, level = list(here.init_states()), list(here.init_states())
    for _ in range(6):
        level = list(dict.fromkeys(after for state in level for _, after in here.successors(state)))
        states += level
    for state in reversed(states):  # the other copy gives its channel ids in another order
        there_state = contract.import_state(there, export_state(here, state))
        assert export_state(there, there_state) == export_state(here, state)
    mine, theirs = portable_fingerprinter(here), portable_fingerprinter(there)
    assert mine is not None and theirs is not None
    crossed = [contract.import_state(there, export_state(here, s)) for s in states]
    assert mine(states).tolist() == theirs(crossed).tolist()
    assert len(set(mine(states).tolist())) == len(set(states)) > 50
