"""The generated parts of docs/model-files.md (every key of every world) and docs/properties.md (every
property of every protocol) are what ``models/reference.py`` makes now from the readers' own tables,
and every key a reader accepts has a meaning written (and no meaning is written for a key none accepts)."""

from __future__ import annotations

import pytest
from doc_links import ROOT

from models import multicast_factory, reference, registry, world_factory
from models.reference import PAGES, generated_block


@pytest.mark.parametrize("name", sorted(PAGES))
def test_the_page_holds_the_current_generated_block(name: str) -> None:
    relative, make = PAGES[name]
    block = generated_block((ROOT / relative).read_text())
    assert block is not None, f"{relative}: no generated block"
    assert block == make(), f"{relative} is stale: run `python -m models.reference --write`"


def test_every_accepted_key_has_a_meaning_and_every_meaning_a_key() -> None:
    assert reference.undocumented() == []


def test_every_built_in_protocol_is_in_a_world_the_page_knows() -> None:
    for factory in reference.builtin_factories():
        assert reference.world_of(factory) is not None, factory.name
    assert set(reference.PAGES) == {"model-files", "properties"}


def test_the_reference_names_every_key_variant_and_setting_of_the_readers() -> None:
    text = reference.reference()
    for world in reference.WORLDS:
        for key in reference.accepted_keys(world):
            table, _, name = key.rpartition(".")
            assert (f"`[{table}]` `{name}`" if table else f"`{key}`") in text, (world, key)
    for factory in reference.builtin_factories():
        adapter = factory.adapter
        for alias, flag in adapter.variant_aliases.items():
            assert f"`{alias}` ({flag})" in text, (factory.name, alias)
        for key in [*adapter.timer_keys, *adapter.config_keys]:
            assert f"| `{key}` |" in text, (factory.name, key)
    catalogue = reference.properties_reference()
    for name in registry.BUILT_IN:
        for prop, definition in registry.get(name).property_docs().items():
            assert f"| `{prop}` | {definition.replace('|', chr(92) + '|')} |" in catalogue, (name, prop)


def test_a_key_added_to_a_reader_without_a_meaning_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(world_factory.FAULT_KEYS, "corrupt", 0)
    monkeypatch.setitem(multicast_factory.DEFAULTS, "window_growth", 1)
    monkeypatch.setattr(multicast_factory, "MODEL_KEYS", multicast_factory.MODEL_KEYS | {"window_growth"})
    assert reference.undocumented() == ["point-to-point faults.corrupt: accepted, no meaning written",
                                        "multicast window_growth: accepted, no meaning written"]


def test_the_module_prints_a_block_and_refuses_anything_else(capsys: pytest.CaptureFixture[str]) -> None:
    assert reference.main(["properties"]) == 0
    assert capsys.readouterr().out == reference.properties_reference()
    assert reference.main(["bogus"]) == 2
    assert capsys.readouterr().err == ("models.reference: expected one of model-files, properties or --write, "
                                       "got 'bogus'\n")
