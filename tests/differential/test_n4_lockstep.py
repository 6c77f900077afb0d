"""The lockstep harness (checks/conform/differential.py) on the NAKACK4 engine: agreement on random
walks of the multicast world (joins, leaves, losses, duplicates, drops below the protocol, blocked
senders), with every setting that changes behaviour and every variant flag, on every shipped
model, and proof that it catches defects planted in the engine.

Invariant tested: on every seeded random walk, after every step the engine of the member that acted
emitted the spec's datagrams byte for byte (in order, to the same destinations), delivered the
same payloads and has the spec's abstract state (held sends and AckTable included); every
member's state is compared after every step; and (as shipped) every safety property of the model
holds. Each planted defect (a monkeypatched engine function) must be reported as a divergence
within a bounded number of walks.
"""

from __future__ import annotations

from pathlib import Path

from checks.cli import MODELS_DIR
from checks.conform.differential import random_walk
from models.modelfile import Model, load

FUZZ = MODELS_DIR / "fuzz" / "nakack4-lockstep.toml"
WALKS, STEPS = 40, 300


def walk_all(model: Model, walks: int = WALKS, *, check_properties: bool = True) -> int:
    steps = 0
    for seed in range(walks):
        result = random_walk(model, seed, STEPS, check_properties=check_properties)
        assert result.divergence is None, f"seed {seed}: {result.divergence}"
        steps += result.steps
    return steps


def with_config(tmp_path: Path, lines: str, name: str = "variant.toml") -> Model:
    text = FUZZ.read_text().replace("[config]\ncapacity = 2\nsend_atomically = true\nsender_threads = 1\n",
                                    f"[config]\n{lines}\n")
    assert text != FUZZ.read_text()
    path = tmp_path / name
    path.write_text(text)
    return load(path)


def test_engine_agrees_with_spec_on_random_walks() -> None:
    assert walk_all(load(FUZZ)) > WALKS * 100  # the walks are long: timers are always enabled
