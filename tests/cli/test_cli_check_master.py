"""``seqcheck check --master`` refused before Spark starts (``checks/check_command.py``), and the
process-independent values the search on Spark is built on (``checks/explore/portable.py``).

Invariants tested: each option the search on Spark cannot honour is one line naming it, exit 2, before a
session starts (a liveness property is never silently skipped); a state's encoding is
``canonical_text(export_state(...))``; an orbit's representative and size are the same from every member
of the orbit and the sizes are ``canonical_batch``'s; a state crosses processes and comes back equal.
"""

from __future__ import annotations

import sys

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR
from checks.explore.fingerprint import canonical_text
from checks.explore.portable import Portable
from checks.explore.system import export_state
from models.modelfile import load

SAFE = MODELS_DIR / "unicast2" / "scenario-4-sender-reopens.toml"  # no liveness property
LIVE = MODELS_DIR / "unicast3" / "basic-one-way.toml"
RING = MODELS_DIR / "unicast3" / "per-connection-ring.toml"  # a symmetry group of order 3


@pytest.mark.parametrize(("args", "message"), [
    ([str(SAFE), "--master", "yarn"], "--master: expected local, local[N], local[*] or spark://HOST:PORT (omit"),
    ([str(SAFE), "--master", "local[0]"], "--master: expected local, local[N], local[*] or spark://HOST:PORT"),
    ([str(LIVE), "--master", "local[2]"], f"--master: {LIVE}: protocol unicast3: the search on Spark checks no "
                                           "liveness property (eventually_delivered, eventually_acked); add "
                                           "--safety-only"),
    ([str(SAFE), "--master", "local[2]", "--workers", "2"], "--workers: not with --master"),
    ([str(SAFE), "--master", "local[2]", "--por"], "--por: not with --master"),
    ([str(SAFE), "--master", "local[2]", "--estimate"], "--estimate: not with --master"),
    ([str(SAFE), "--checkpoint", "somewhere"], "--checkpoint: only with --master"),
    ([str(SAFE), "--master", "spark://127.0.0.1:1"], "--master: cannot reach the Spark master spark://127.0.0.1:1"),
])
def test_what_the_search_on_spark_cannot_do_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "check", *args], capture_output=True, text=True,
                         cpu_seconds=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"seqcheck: {message}"), done.stderr


def test_bench_refuses_a_bad_master_in_one_line() -> None:
    done = cpu_limit.run([sys.executable, "-m", "checks.cli", "bench", "--model", str(SAFE), "--master", "yarn"],
                         capture_output=True, text=True, cpu_seconds=120)
    assert done.returncode == 2 and done.stderr == ("seqcheck: --master: expected local, local[N], local[*] or "
                                                    "spark://HOST:PORT, got 'yarn'\n")


def _states(world: object, count: int) -> list[tuple[int, ...]]:
    """The first ``count`` states breadth-first (with repeats), from the initial one."""
    level = list(world.init_states())  # type: ignore[attr-defined]
    out = list(level)
    while len(out) < count and level:
        level = [after for state in level[:200] for _, after in world.successors(state)]  # type: ignore[attr-defined]
        out.extend(level)
    return out[:count]


def test_the_encoding_is_the_canonical_text_of_the_exported_value() -> None:
    world = load(SAFE).world
    portable = Portable(world)
    for state in _states(world, 400):
        assert portable.encode(state) == canonical_text(export_state(world, state))
        assert portable.unwire(portable.wire(state)) == state


def test_representatives_do_not_depend_on_the_orbit_member_or_the_process() -> None:
    world = load(RING).world
    portable = Portable(world)
    assert portable.symmetric and portable.group_size == 3
    states = _states(world, 500)
    reps, texts, sizes = portable.representatives(states)
    assert sizes == list(world.canonical_batch(states)[1])
    assert max(sizes) == 3 and min(sizes) == 1
    for image in world.symmetry_images(states)[1:]:
        assert portable.representatives(image)[1] == texts
    other = load(RING).world  # another "process": the same model, ids given in another order
    _states(other, 50)
    moved = [Portable(other).unwire(portable.wire(state)) for state in reversed(states)]
    assert Portable(other).representatives(moved)[1] == texts[::-1]
    assert all(portable.encode(rep) == text for rep, text in zip(reps, texts, strict=True))
