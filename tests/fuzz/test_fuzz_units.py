"""The fuzzer's parts without Spark: weights and choice, seed ranges, scaled model files,
fingerprints and per-seed determinism, protocol phases, shrinking, liveness findings, usage errors.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main
from checks.explore.trace import Trace, validate
from checks.fuzz.coverage import CELLS, FAULTS, KINDS, coverage_table, kind_of, phases_met
from checks.fuzz.fingerprints import Fingerprints
from checks.fuzz.model import scaled_model_text, write_scaled_model
from checks.fuzz.run import Chooser, FuzzPlan, Runner, Weights
from checks.fuzz.shrink import reproduce_and_shrink
from checks.fuzz.spark import seed_ranges
from models.modelfile import load
from models.world import AppSend, DeliverPacket, LosePacket

FUZZ = MODELS_DIR / "fuzz" / "unicast3-lockstep.toml"
JGRP1873 = MODELS_DIR / "unicast3" / "jgrp1873-no-timestamps.toml"
JGRP2327 = MODELS_DIR / "unicast3" / "jgrp2327-message-cache.toml"
JGRP1548 = MODELS_DIR / "unicast3" / "jgrp1548-no-hs-resend.toml"


# ---------------------------------------------------------------- schedule: weights and choice
def test_weights_parse_over_the_defaults() -> None:
    weights = Weights.parse("deliver=20, loss=0")
    assert (weights.deliver, weights.loss, weights.send) == (20.0, 0.0, Weights().send)
    for bad in ("deliver", "frob=1", "loss=-1", "loss=x", "loss=inf"):
        with pytest.raises(ValueError):
            Weights.parse(bad)


def test_choice_draws_kinds_by_weight_and_never_a_zero_weight() -> None:
    world = load(FUZZ, reduce_timestamps=False).world
    state = world.init_states()[0]
    for _ in range(3):  # three sends: three DATA in flight, sends still enabled
        state = next(t for a, t in world.successors(state) if isinstance(a, AppSend))
    enabled = list(world.successors(state))
    rng = random.Random(7)
    only_deliver = Chooser(world, Weights(**{k: 0.0 for k in KINDS if k != "deliver"}))
    assert all(isinstance(only_deliver.pick(rng, state)[0], DeliverPacket) for _ in range(50))  # type: ignore[index]
    nothing = Chooser(world, Weights(**dict.fromkeys(KINDS, 0.0)))
    assert nothing.pick(rng, state) is None and nothing.enabled_any(state)
    chooser = Chooser(world, Weights())
    picks = [chooser.pick(rng, state) for _ in range(3000)]
    assert all(pick in enabled for pick in picks)  # an enabled action, with the state it leads to
    kinds = [kind_of(pick[0]) for pick in picks if pick is not None]
    assert kinds.count("deliver") > 2 * kinds.count("send") > 0 and kinds.count("loss") < kinds.count("send")


@pytest.mark.parametrize(("runs", "partitions"), [(1, 1), (10, 3), (7, 20), (1000, 8)])
def test_seed_ranges_cover_every_seed_once(runs: int, partitions: int) -> None:
    ranges = seed_ranges(5, runs, partitions)
    assert [s for lo, hi in ranges for s in range(lo, hi)] == list(range(5, 5 + runs))
    assert len(ranges) == min(runs, partitions)


# ---------------------------------------------------------------- budgets
def test_scaled_model_multiplies_budgets_and_repeats_views(tmp_path: Path) -> None:
    raw = tomllib.loads(scaled_model_text(FUZZ, 3))
    original = tomllib.loads(FUZZ.read_text())
    assert raw["sends"] == {k: 3 * v for k, v in original["sends"].items()}
    assert raw["faults"] == {k: 3 * v for k, v in original["faults"].items()}
    assert raw["views"] == original["views"] * 3 and raw["timers"] == original["timers"]
    assert write_scaled_model(FUZZ, 1, tmp_path) == FUZZ
    derived = write_scaled_model(JGRP1873, 2, tmp_path)
    model = load(derived)
    assert model.pinned_states is None and model.expect == "violation:no_spurious_purge"
    assert model.variant == ("no_message_cache", "no_timestamps") and model.world.bounds.sends[1] == 4


# ---------------------------------------------------------------- determinism and fingerprints
def test_a_run_depends_on_its_seed_not_on_what_the_process_did_before() -> None:
    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 50)
    fresh = Runner(plan, FUZZ).run(9)
    used = Runner(plan, FUZZ)
    for seed in range(9):
        used.run(seed)
    assert used.run(9) == fresh
    assert fresh.steps == sum(fresh.counts) and len(fresh.phase_hits) == len(CELLS) + len(FAULTS)


def test_fingerprints_are_of_values_not_interned_ids() -> None:
    one, two = load(FUZZ).world, load(FUZZ).world
    for _, after in reversed(list(two.successors(two.init_states()[0]))):
        list(two.successors(after))  # world two interns states in another order first
    state, path = one.init_states()[0], []
    for _ in range(4):
        action, state = list(one.successors(state))[-1]
        path.append(action)
    other = two.init_states()[0]
    for action in path:
        other = next(t for a, t in two.successors(other) if type(a) is type(action) and a == action)
    assert one.view(state) == two.view(other) and state != other  # same state, different ids
    assert Fingerprints(one)(state) == Fingerprints(two)(other)
    assert Fingerprints(one)(state) != Fingerprints(one)(one.init_states()[0])


# ---------------------------------------------------------------- protocol phases
def test_losing_the_last_message_of_a_burst_is_a_burst_tail_fault() -> None:
    world = load(JGRP1873).world
    state = world.init_states()[0]
    for _ in range(2):
        state = next(t for a, t in world.successors(state) if isinstance(a, AppSend))
    view = world.view(state)
    loss = {p.msg.seqno: LosePacket(p) for p in view.network}  # phases are judged on any action
    assert sorted(loss) == [1, 2]
    assert "burst tail" in phases_met(view, loss[2]) and "burst tail" not in phases_met(view, loss[1])
    assert {"opening", "unacked"} <= set(phases_met(view, loss[1]))
    assert phases_met(view, DeliverPacket(loss[1].packet)) == []  # not a fault


def test_a_fault_while_the_receiver_caches_data_is_a_cached_fault() -> None:
    """A sends #1 and #2, #2 arrives first and waits in B's message cache: losing #1 then meets the
    phase "cached"; once #1 arrived (the cache drained), it does not."""
    world = load(JGRP2327).world
    state = world.init_states()[0]
    for _ in range(2):
        state = next(t for a, t in world.successors(state) if isinstance(a, AppSend))
    second = next(t for a, t in world.successors(state)
                  if isinstance(a, DeliverPacket) and a.packet.msg.seqno == 2 and a.packet.src == 0)
    view = world.view(second)
    first = next(p for p in view.network if p.kind == "Data")
    assert "cached" in phases_met(view, LosePacket(first))
    drained = next(t for a, t in world.successors(second) if isinstance(a, DeliverPacket) and a.packet == first)
    after = world.view(drained)
    assert all("cached" not in phases_met(after, LosePacket(p)) for p in after.network)


def test_coverage_table_lists_cells_never_reached() -> None:
    hits = [0] * (len(CELLS) + len(FAULTS))
    hits[CELLS.index(("burst tail", "loss"))] = 3
    hits[len(CELLS) + FAULTS.index("loss")] = 3
    text = "\n".join(coverage_table(hits))
    assert re.search(r"never reached \(\d+ of 10 cells", text) and "loss x opening" in text
    assert "loss x burst tail" not in text and "faults that never occurred" in text


# ---------------------------------------------------------------- shrinking and findings
def test_a_liveness_defect_is_found_shrunk_and_validated(tmp_path: Path) -> None:
    derived = write_scaled_model(JGRP1548, 2, tmp_path)
    plan = FuzzPlan(derived.name, derived.read_text(), 60)
    runner = Runner(plan, derived)
    record = next(r for r in map(runner.run, range(100)) if r.verdict != "pass")
    assert record.verdict in ("violation:eventually_delivered", "violation:eventually_acked")
    found = reproduce_and_shrink(plan, derived, record.seed, record.verdict, record.fail_step, tmp_path / "traces")
    trace = Trace.load(found.path)
    assert trace.kind == "liveness" and trace.seed == record.seed and len(trace.actions) <= record.steps
    validate(load(derived).world, trace)
    assert main(["replay", str(found.path)]) == 0


# ---------------------------------------------------------------- usage errors: exit 2, one line
@pytest.mark.parametrize(("args", "message"), [
    (["--runs", "0"], "--runs: expected a whole number >= 1, got 0"),
    (["--steps", "0"], "--steps: expected a whole number >= 1, got 0"),
    (["--partitions", "0"], "--partitions: expected a whole number >= 1, got 0"),
    (["--budget-scale", "0"], "--budget-scale: expected a whole number >= 1, got 0"),
    (["--random-views", "-1"], "--random-views: expected a whole number >= 0, got -1"),
    (["--master", "yarn"], "--master: expected auto, none, local, local[N], local[*] or spark://HOST:PORT, got 'yarn'"),
    (["--weights", "frob=1"], "--weights: expected KIND=WEIGHT items with KIND one of"),
    (["--steps", str(10**30)], "--steps: expected a whole number <= 100,000 (steps per schedule), got 1e+30"),
    (["--steps", "100001"], "--steps: expected a whole number <= 100,000 (steps per schedule), got 100001"),
    (["--weights", "send=0,deliver=0,duplicate=0,loss=0,xmit=0,sync=0,reap=0,view=0,remove=0"],
     "--weights: expected at least one kind with a weight > 0, got send=0,deliver=0,"),
    (["--weights", "send=0,deliver=0,duplicate=0,loss=0,xmit=0,sync=0,reap=0,view=0,remove=0", "--swarm"],
     "--weights: expected at least one kind with a weight > 0"),
])
def test_bad_options_are_one_line(args: list[str], message: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(FUZZ), "--out", str(tmp_path), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"seqcheck: {message}") and err.count("\n") == 1


def test_missing_model_and_out_file_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", str(tmp_path / "nope.toml"), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"seqcheck: {tmp_path / 'nope.toml'}: no such model file\n"
    (tmp_path / "file").write_text("")
    assert main(["fuzz", str(FUZZ), "--out", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"seqcheck: --out: {tmp_path / 'file'} exists and is not a folder\n"
    assert main(["bench", "--fuzz", "--runs", "0"]) == 2


def test_argparse_errors_exit_2_in_a_real_process() -> None:
    done = subprocess.run([sys.executable, "-m", "checks.cli", "fuzz", str(FUZZ), "--runs", "many"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1].startswith("seqcheck fuzz: error: argument --runs")


def test_visited_fingerprints_are_states_of_the_checkers_state_space() -> None:
    from checks.fuzz.command import count_states

    model_path = MODELS_DIR / "unicast3" / "jgrp1873-fixed.toml"
    model = load(model_path)
    world, fingerprint = model.world, Fingerprints(model.world)
    seen, frontier = set(world.init_states()), list(world.init_states())
    while frontier:  # every reachable state, as the checker counts them (cut states not expanded)
        state = frontier.pop()
        if world.within_bounds(state):
            for _, after in world.successors(state):
                if after not in seen:
                    seen.add(after)
                    frontier.append(after)
    reachable = {fingerprint(s) for s in seen}
    assert len(reachable) == len(seen) == count_states(model)[0]
    runner = Runner(FuzzPlan(model_path.name, model_path.read_text(), 100), model_path)
    visited = {fp for seed in range(60) for fp in runner.run(seed).fingerprints}
    assert visited <= reachable and len(visited) > 50


FUZZ_U2 = MODELS_DIR / "fuzz" / "unicast2-lockstep.toml"


def test_unicast2_runs_drive_the_unicast2_engines_and_pass() -> None:
    """The fuzzer is protocol-agnostic: a UNICAST2 model runs on the UNICAST2 engines (a UNICAST3
    engine would diverge at its first datagram), its stable task counts as a periodic task, not a
    disruption, and its faults are classified by phase without UNICAST3's fields."""
    plan = FuzzPlan(FUZZ_U2.name, FUZZ_U2.read_text(), 60)
    runner = Runner(plan, FUZZ_U2)
    records = [runner.run(seed) for seed in range(12)]
    assert all(r.verdict == "pass" for r in records), [(r.seed, r.verdict, r.detail) for r in records]
    assert sum(r.counts[KINDS.index("xmit")] for r in records) > 0
    assert sum(sum(r.phase_hits) for r in records) > 0


@pytest.mark.parametrize("name", ["jgrp1873.toml", "jgrp1563.toml", "scenario-6.toml", "stable-cap.toml"])
def test_one_protocol_of_a_side_by_side_file_is_that_protocols_model(name: str, tmp_path: Path) -> None:
    """The derived single-protocol file (``seqcheck fuzz FILE#PROTOCOL``) is the model the checker
    builds for that protocol of the file: same variant, settings, timers, properties, expectation."""
    side = MODELS_DIR / "side-by-side" / name
    for protocol in ("unicast2", "unicast3"):
        want = load(side, protocol=protocol)
        got = load(write_scaled_model(side, 1, tmp_path, protocol=protocol))
        assert (got.protocol, got.variant, got.expect, got.properties, got.members, got.witness) == (
            want.protocol, want.variant, want.expect, want.properties, want.members, want.witness)
        assert got.world.cfg == want.world.cfg and got.world.bounds == want.world.bounds


def test_swarm_runs_draw_their_own_weights_from_their_seed() -> None:
    """``--swarm``: each run's weights are the plan's times a factor per kind drawn from the seed
    (deliveries never left out); the run stays a function of its seed, and runs differ in mix."""
    from checks.fuzz.run import SWARM_FACTORS

    base = Weights()
    drawn = [base.swarm(seed) for seed in range(200)]
    assert drawn[:50] == [base.swarm(seed) for seed in range(50)]
    for weights in drawn:
        assert weights.deliver > 0
        for kind in KINDS:
            assert any(getattr(weights, kind) == getattr(base, kind) * f for f in SWARM_FACTORS)
    assert {w.loss == 0 for w in drawn} == {True, False} and len(set(drawn)) > 100
    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 60, swarm=True)
    runner = Runner(plan, FUZZ)
    records = [runner.run(seed) for seed in range(12)]
    assert records == [Runner(plan, FUZZ).run(seed) for seed in range(12)]
    assert {r.verdict for r in records} == {"pass"}
    left_out = [r for seed, r in enumerate(records) if base.swarm(seed).loss == 0]
    assert left_out and all(r.counts[KINDS.index("loss")] == 0 for r in left_out)


def test_pct_runs_deliver_the_packet_of_highest_priority() -> None:
    """``--pct``: every delivery and duplication takes the candidate packet of highest priority (a
    function of the seed and the packet), and the run stays a function of its seed."""
    from checks.fuzz.run import PriorityChooser

    plan = FuzzPlan(FUZZ.name, FUZZ.read_text(), 60, pct=True)
    runner = Runner(plan, FUZZ)
    world, taken = runner.shared.world, 0
    for seed in range(6):
        walk, _, failure = runner.walk(seed)
        assert failure is None
        chooser = runner.chooser.with_priorities(seed)
        assert isinstance(chooser, PriorityChooser)
        before = world.init_states()[0]
        for action, after in walk.lock.path:
            if isinstance(action, DeliverPacket):
                rivals = [a.packet for a in world.candidates(before, DeliverPacket) if isinstance(a, DeliverPacket)]
                assert chooser.priority(action.packet) == max(map(chooser.priority, rivals))
                taken += 1
            before = after
    assert taken > 30
    assert [Runner(plan, FUZZ).run(s) for s in range(4)] == [runner.run(s) for s in range(4)]
    assert [runner.run(s) for s in range(4)] != [Runner(FuzzPlan(FUZZ.name, FUZZ.read_text(), 60), FUZZ).run(s)
                                                 for s in range(4)]
