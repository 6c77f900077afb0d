"""The timed lockstep (checks/conform/timed.py; issue 19, item 1).

Invariants tested: under a clock, with small real durations, the UNICAST2 and UNICAST3 engines
agree with their timed specs on seeded walks of the lockstep models (as shipped, under every
variant run and with stale packets, under each timing of ``TIMINGS``) and every spec timer's time
comes in some walk; the NAKACK2 and NAKACK4 engines agree timed too; a walk is a function of its
seed; a timing out of range is refused in one line; ``seqcheck fuzz --engines-with timed`` runs;
and each planted timing defect passes the untimed walks and is caught timed: a busy UNICAST2
connection reaped (age from creation, idle check dropped), ``>`` for ``>=`` on a timeout (both
reapers) and ``<=`` for ``<`` on sync_min_interval, a late ``get_timer()`` or schedule (all four
engines), UNICAST3's close timeout measured from the last activity instead of the CLOSING
transition.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from lockstep_machine import WorldAgreement

from checks.cli import MODELS_DIR, main
from checks.conform.differential import EngineFactory, Lockstep, random_walk
from checks.conform.engines import engines_for
from checks.conform.timed import TIMINGS, Timing, engines_with, stepper_of, timed
from checks.conform.timed_rules import STALE_PROOF
from checks.conform.variants import variant_runs, with_variant
from checks.fuzz.command import FuzzOptions, run_fuzz
from checks.fuzz.shrink import Shrunk
from impl.nakack2 import Nakack2Engine
from impl.nakack4 import Nakack4Engine
from impl.unicast2 import Unicast2Engine
from impl.unicast2 import tasks as u2tasks
from impl.unicast3 import Unicast3Engine, entries
from impl.unicast3 import state as u3state
from impl.unicast3 import tasks as u3tasks
from models.modelfile import Model, load
from models.world import FireTimer

FUZZ = {n: MODELS_DIR / "fuzz" / f"unicast{n}-lockstep.toml" for n in (2, 3)}
MCAST = {n: MODELS_DIR / "fuzz" / f"nakack{n}-lockstep.toml" for n in (2, 4)}
STALE = {n: MODELS_DIR / "fuzz" / f"unicast{n}-lockstep-stale.toml" for n in (2, 3)}
WALKS, STEPS = 8, 300
FACTORIES = [engines_with(t) for t in TIMINGS]


def _walk(model: Model, factory: EngineFactory, seed: int, steps: int = STEPS) -> Lockstep:
    """A seeded walk, uniformly among the enabled actions; stops at the first divergence."""
    run, rng = Lockstep(model, factory, check_properties=True), random.Random(seed)
    for _ in range(steps):
        enabled = run.enabled()
        if not enabled:
            break
        divergence = run.step(*enabled[rng.randrange(len(enabled))])
        assert divergence is None, f"seed {seed}: {divergence}"
    return run


@pytest.mark.parametrize("timing", range(len(TIMINGS)))
@pytest.mark.parametrize("n", sorted(FUZZ))
def test_engines_agree_with_the_timed_spec(n: int, timing: int) -> None:
    model, fired = load(FUZZ[n]), set()
    for seed in range(WALKS):
        run = _walk(model, FACTORIES[timing], seed)
        fired |= {run.world.adapter.spec.TIMER_NAMES[a.timer.kind] for a, _ in run.path if isinstance(a, FireTimer)}
        assert run.engines.now > 0
    assert fired == set(run.world.adapter.spec.TIMER_NAMES)  # every timer's time came, in some walk


@pytest.mark.parametrize("n", sorted(FUZZ))
def test_engines_agree_timed_under_every_variant_and_with_stale_packets(n: int) -> None:
    for variant in variant_runs(load(FUZZ[n])):
        model = with_variant(load(FUZZ[n]), variant.flags)
        for seed in range(1 if variant.flags else 3):
            result = random_walk(model, seed, 200, engines_for=timed, check_properties=variant.safety)
            assert result.divergence is None, f"{variant}, seed {seed}: {result.divergence}"
    for seed in range(3):
        result = random_walk(load(STALE[n]), seed, STEPS, engines_for=timed)
        assert result.divergence is None, f"stale packets, seed {seed}: {result.divergence}"


@pytest.mark.parametrize("n", sorted(MCAST))
def test_multicast_engines_agree_with_the_timed_spec(n: int) -> None:
    model, fired, ticks = load(MCAST[n]), 0, 0
    for seed in range(4):
        run = _walk(model, timed, seed, 200)
        fired += sum(isinstance(a, FireTimer) for a, _ in run.path)
        ticks += stepper_of(run).ticks
    assert fired > 0 and ticks > 20


def test_rule_6_under_a_clock() -> None:
    """A packet in flight on a window whose removal is due arrives first; a removal due in the run
    that put a packet of its window on the wire is made, and then only STALE_PROOF is checked."""
    forced = stale = 0
    for n in sorted(FUZZ):
        for seed in range(6):
            run = _walk(load(FUZZ[n]), timed, seed, 200)
            forced, stale = forced + stepper_of(run).forced, stale + stepper_of(run).stale
            names, shipped = {p.name for p in run.always_checked}, {p.name for p in run.shared.always}  # type: ignore[union-attr]
            assert names == (shipped & STALE_PROOF if stepper_of(run).stale else shipped), (n, seed, names)
    assert forced > 0 and stale > 0


def test_a_timed_walk_is_a_function_of_its_seed() -> None:
    model = load(FUZZ[3])
    first, again = _walk(model, timed, 5), _walk(model, timed, 5)
    assert first.path == again.path and first.engines.now == again.engines.now
    assert stepper_of(first).ticks == stepper_of(again).ticks > 10


def test_a_timing_out_of_range_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^timing conn_close_timeout: expected an int >= 1 \(ms\), got 0$"):
        Timing(conn_close_timeout=0)
    with pytest.raises(ValueError, match=r"^timing xmit_interval: expected an int >= 1 \(ms\), got 2.5$"):
        Timing(xmit_interval=2.5)  # type: ignore[arg-type]


def test_fuzz_runs_the_timed_lockstep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path, setting in ((FUZZ[2], "timed"), (FUZZ[3], "timed-short-close"), (MCAST[2], "timed-coprime")):
        assert main(["fuzz", str(path), "--engines-with", setting, "--runs", "10", "--steps", "80",
                     "--master", "none", "--out", str(tmp_path / path.stem), "--no-progress"]) == 0
        out = capsys.readouterr().out
        assert f"engines checks.conform.timed:{setting.replace('-', '_')}" in out and "failures             0" in out
        counts = dict(item.rsplit(" ", 1) for item in out.split("actions   ", 1)[1].splitlines()[0].split(", "))
        assert int(counts["xmit"].replace(",", "")) > 0  # the timers the clock fired, counted as taken


# -- planted timing defects: missed untimed, caught timed ------------------------------------------
def _age_from_creation(send: Callable[..., int]) -> Callable[..., int]:
    """UNICAST2's reaper measures a send entry's age from its creation: a busy connection is reaped
    with its unacknowledged messages."""
    def planted(self: Any, dst: Any, payload: bytes, *, now: int) -> int:
        entry = self._m.send.get(dst)
        created = None if entry is None else entry.touched
        seqno = send(self, dst, payload, now=now)
        if created is not None:
            self._m.send[dst].touched = created
        return seqno
    return planted


def _reap_strictly_older(m: Any, *, now: int) -> None:
    """UNICAST2's reaper with ``>`` for ``>=``: an entry idle exactly conn_expiry_timeout stays."""
    timeout = m.config.conn_expiry_timeout
    for peer in sorted(p for p, e in m.send.items() if now - e.touched > timeout):
        m.remove_sender(peer)
    for peer in sorted(p for p, e in m.recv.items() if now - e.touched > timeout):
        m.remove_receiver(peer)


def _reap_every_sender(reap: Callable[..., None]) -> Callable[..., None]:
    """UNICAST2's reaper without the idle check on send entries: every one goes, busy or not."""
    def planted(m: Any, *, now: int) -> None:
        for peer in sorted(m.send):
            m.remove_sender(peer)
        reap(m, now=now)
    return planted


def _sync_active_at_the_limit(self: Any, peer: Any, *, now: int) -> bool:
    """UNICAST3's last_sync_sent with ``<=`` for ``<``: a request exactly sync_min_interval old is
    still in force."""
    sent = self.sync_sent.get(peer)
    return sent is not None and now - sent <= self.config.sync_min_interval


def _remove_expired_strictly_older(m: Any, *, now: int) -> None:
    """UNICAST3's removal with ``>`` for ``>=``: a CLOSING entry exactly conn_close_timeout old stays."""
    timeout = m.config.conn_close_timeout
    for peer in sorted(p for p, e in m.send.items() if e.state is entries.CLOSING and e.age(now=now) > timeout):
        u3tasks._close_send_entry(m, peer, now=now)
    for peer in sorted(p for p, e in m.recv.items() if e.state is entries.CLOSING and e.age(now=now) > timeout):
        u3tasks.remove_receive_connection(m, peer, event=entries.Event.EXPIRED, now=now)


def _xmit_late(self: Any) -> int:
    """UNICAST3's get_timer() one ms after its retransmit task is due."""
    return int(self._next_xmit) + 1


def _u2_xmit_forgotten(self: Any) -> int:
    """UNICAST2's get_timer() leaves the retransmit task out (it runs late, with the next task)."""
    return int(self._next_stable if self._next_reap is None else min(self._next_stable, self._next_reap))


def _state_change_keeps_age(fire: Callable[..., bool]) -> Callable[..., bool]:
    """UNICAST3's entries keep their age across a state change: conn_close_timeout is measured
    from the last activity instead of from becoming CLOSING."""
    def planted(self: Any, event: Any, *, now: int) -> bool:
        touched = self.touched
        removed = fire(self, event, now=now)
        self.touched = touched
        return removed
    return planted


def _n2_stable_forgotten(self: Any) -> int:
    """NAKACK2's get_timer() leaves STABLE's gossip out (it runs late, with the retransmit task)."""
    return int(self._next_stable if self._next_xmit is None else self._next_xmit)


def _n4_rescheduled_twice(handle_timer: Callable[..., None]) -> Callable[..., None]:
    """NAKACK4's retransmit task rescheduled two periods ahead (the interval added twice)."""
    def planted(self: Any, *, now: int) -> None:
        due = self._next_xmit
        handle_timer(self, now=now)
        if self._next_xmit != due:
            self._next_xmit += self._config.xmit_interval
    return planted


PLANTED: dict[str, tuple[Path, Any, str, Callable[[Any], Any]]] = {
    "u2 reaper ages a busy send entry from its creation":
        (FUZZ[2], Unicast2Engine, "send", _age_from_creation),
    "u2 reaper compares > instead of >=": (FUZZ[2], u2tasks, "reap", lambda _: _reap_strictly_older),
    "u2 reaper drops the idle check on send entries": (FUZZ[2], u2tasks, "reap", _reap_every_sender),
    "u3 sync interval compares <= instead of <": (FUZZ[3], u3state.Member, "sync_active",
                                                  lambda _: _sync_active_at_the_limit),
    "u2 get_timer() forgets the retransmit task": (FUZZ[2], Unicast2Engine, "get_timer", lambda _: _u2_xmit_forgotten),
    "u3 removal compares > instead of >=":
        (FUZZ[3], u3tasks, "remove_expired", lambda _: _remove_expired_strictly_older),
    "u3 get_timer() one ms late": (FUZZ[3], Unicast3Engine, "get_timer", lambda _: _xmit_late),
    "u3 close timeout from the last activity": (FUZZ[3], entries.Entry, "fire", _state_change_keeps_age),
    "n2 get_timer() forgets STABLE's gossip": (MCAST[2], Nakack2Engine, "get_timer", lambda _: _n2_stable_forgotten),
    "n4 retransmit task rescheduled two periods ahead":
        (MCAST[4], Nakack4Engine, "handle_timer", _n4_rescheduled_twice),
}


@pytest.fixture(params=sorted(PLANTED))
def planted(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    path, owner, name, make = PLANTED[request.param]
    monkeypatch.setattr(owner, name, make(getattr(owner, name)))
    yield request.param, path


def _first_divergence(model: Model, factory: EngineFactory, walks: int) -> str | None:
    for seed in range(walks):
        result = random_walk(model, seed, STEPS, engines_for=factory, check_properties=False)
        if result.divergence is not None:
            return f"seed {seed}: {result.divergence}"
    return None


def test_a_planted_timing_defect_is_missed_untimed_and_caught_timed(planted: tuple[str, Path]) -> None:
    name, path = planted
    model = load(path)
    assert _first_divergence(model, engines_for, 4) is None, name
    found = _first_divergence(model, timed, 20)
    assert found is not None and "differ" in found, (name, found)


def test_a_timed_fuzz_failure_is_reproduced_shrunk_and_validated(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path, owner, name, make = PLANTED["u3 close timeout from the last activity"]
    monkeypatch.setattr(owner, name, make(getattr(owner, name)))
    report = run_fuzz(FuzzOptions(path, runs=6, steps=60, master="none", out=tmp_path,
                                  engines="checks.conform.timed:timed", shrink=1), progress=None)
    assert report.mismatch
    shrunk = [item for item in report.shrunk if isinstance(item, Shrunk)]
    assert len(shrunk) == len(report.shrunk) == 1, report.shrunk  # re-run from its seed, shrunk, validated
    assert len(shrunk[0].trace.actions) < shrunk[0].original_length
    assert shrunk[0].trace.summary[-1].endswith("differ")
    assert all(line.startswith("t=") for line in shrunk[0].trace.summary)  # each step's time


# -- the Hypothesis machines, timed -----------------------------------------------------------------
class Unicast2Timed(WorldAgreement):
    MODEL = load(FUZZ[2])

    def engine_factory(self) -> EngineFactory:
        return timed


class Unicast3Timed(WorldAgreement):
    MODEL = load(FUZZ[3])

    def engine_factory(self) -> EngineFactory:
        return timed


MACHINE = settings(max_examples=12, stateful_step_count=60)  # the walks above cover more, faster
TestUnicast2Timed = MACHINE(Unicast2Timed).TestCase
TestUnicast3Timed = MACHINE(Unicast3Timed).TestCase
