"""Timed lockstep: virtual time passes, and each engine runs its own timers (issue 19, item 1).

The untimed harness holds ``now`` at 0, sets every duration of the engines far away and fires the
spec's timers one by one (``fire_timer``), so nothing checks the engines' ages, their timeout
comparisons or their schedule (``handle_timer`` at ``get_timer()``). ``engines_with(Timing())`` is
an engine factory for the harness (``checks/conform/differential.py`` rule 9) under which the
engines run with small real durations (``Timing``) and a clock, and every world step goes
through ``TimedStepper.step``. ``seqcheck fuzz MODEL --engines-with timed`` runs it.

Design: a timed refinement check. The spec has no time; its timers may fire whenever the world
enables them. This module adds the time the spec leaves out, from JGroups' documented rules
(digest 1.1 (c), 1.2 (c) and (e)), kept apart from the engines' code:

- a clock ``now`` (integer ms) shared by all engines, and per member the schedule of each
  periodic task (``Rules.tasks``: UNICAST2's retransmit, stable and reaper tasks, UNICAST3's
  retransmit task, NAKACK2's retransmit task and STABLE gossip, NAKACK4's retransmit task), each
  run one period after the last, the first one period after the start;
- per connection entry its last activity, from the spec's own steps (``Rules.used``): the entry
  was created or replaced (another conn_id), changed state (UNICAST3: OPEN <-> CLOSING), or was
  used: an application send on the send entry, a DATA that the receive entry took (the spec's
  own test of which window a DATA belongs to); nothing else (ACKs, STABLEs, XMIT_REQs,
  retransmissions) makes an entry younger;
- per member the time each peer entered ``sync_sent`` (UNICAST3's last_sync_sent).

A spec timer is *timed-enabled* at time t when the world enables it and its guard holds: XMIT
and STABLE when their task runs at t; UNICAST2's IDLE_SEND / IDLE_RECV when the reaper runs at t
and the entry's age (t - last activity) >= conn_expiry_timeout; UNICAST3's IDLE_* on an OPEN entry
of that age and CLOSE_* on a CLOSING entry whose age >= conn_close_timeout when the retransmit
task runs at t (phase by phase, in the engine's documented order: an entry made CLOSING is 0 old,
so never closed and removed in one run); SYNC_EXPIRED when t - the request's time >=
sync_min_interval. Timed-enabled timers fire at once (maximal progress: JGroups' tasks act at
their run), so the timed spec is deterministic in time, and the run the harness drives is:

- a world timer (``FireTimer``) chosen by the walk means "time passes": the clock moves to the
  next deadline (the earliest task run, sync expiry, or engine ``get_timer()``), the spec fires
  the expired syncs, and every member due runs ``handle_timer(now)`` once against the sequence
  of its timed-enabled spec timers: the engine's datagrams must be all of theirs, in order, and
  its state theirs. A member whose task is due while its engine's ``get_timer()`` is later
  diverges ("timer schedule"); an engine asking for a run with nothing due must do nothing.
  The engine runs at once and its outputs are held (``Event``); the spec timers that change the
  world are taken one per harness step, whatever action the walk hands in meanwhile, each
  matched against the next held datagrams, and the state compared at the end of the run. So the
  path stays one world action per step, and a trace of it (shrunk by the fuzz) replays under
  this factory to the same divergence: a tick passes on until some spec step changes the world,
  the walk's timer starts the path of a tick that diverges before one does, and a rule-6
  delivery drifts like any other;
- any other action happens at the current time, after the clock has moved, half of the time, to
  a time strictly before the next deadline (drawn from the step's index and action, so a walk is
  a function of its seed).

Soundness: the spec steps taken are world steps (timed-enabled implies world-enabled), so the
run is a run of the untimed world and every property checked there holds; the engine must do,
at each of its timer runs, exactly what the timed spec does: no removal, expiry or datagram
without a timer whose time has come (a reaped busy entry, an age from the wrong instant, a
timeout compared with ``<`` instead of ``<=`` all diverge), and none left out when it has come
(a late schedule, ``>`` for ``>=``). Rule 6 of ``models/world.py`` (no packet outlives its
window: conn_close_timeout is 2 x MSL) becomes: a packet in flight on a window whose removal is
due is delivered before time passes (the step is that delivery). A packet the same timer run
itself puts on the wire before the removal cannot be: UNICAST3's retransmit task resends a
CLOSING sender's highest message and then removes the entry when conn_close_timeout is up (as
JGroups does: nearly every timed UNICAST3 walk of the lockstep model meets it), UNICAST2's
reaper runs after the retransmit and stable tasks (a quarter of the walks). The run goes on as
JGroups does, the removal without rule 6 (``TimedStepper.stale`` counts them), and from then on
only the properties a stale packet cannot break are checked (``STALE_PROOF``, as in the
stale-packet models; the fuzz judges no liveness on such a run).

What it cannot check: the durations and times are the harness's (integer ms, periods from 0,
every run exactly on time: no drift, jitter or late runs of a loaded timer thread); the
activity rules are the documented ones, so an engine and this module wrong the same way agree;
the AgeOutCache (max_retransmit_time), receive_evict_idle, the resend budget per xmit_interval,
min_window_replace_interval and UNICAST2's byte-triggered STABLE stay off; sync_min_interval's
table capacity is not reached. The multicast engines (NAKACK2, NAKACK4) keep no ages: for them
only the schedule and the content of each run are checked (the retransmit task, STABLE's gossip
once in the view, NAKACK4's retransmit task once with a view); BECOME_SERVER, NAKACK4's sending
threads and delivery faults stay the world's choice (``Rules.untimed``), as do views and stops
(a stopped member's engine runs no timer).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from checks.conform.differential import Divergence, EngineFactory, Lockstep
from checks.conform.engines import WorldEngines, binding, describe_datagram
from checks.conform.timed_rules import RULES, STALE_PROOF, TIMINGS, Activity, Rules, Timing, observe
from models.world import DeliverPacket, FireTimer, World

Steps = list[tuple[Any, Any, bool]]  # (world action, state after it, opens a harness step: ``Event.opens``)
MAX_QUIET_TICKS = 1_000  # ticks one walk step may pass through while no spec step changes the world


@dataclass
class Group:
    """One engine input of a tick: ``member``'s spec timers (``steps``) and whether its engine runs
    ``handle_timer`` (False: sync expiries only, which the engine reads off its clock)."""

    member: int
    steps: Steps
    runs: bool
    tasks: tuple[str, ...] = ()
    stale: int = 0  # removals among ``steps`` made with a packet of their window in flight (rule 6)


@dataclass
class Event:
    """One thing a tick does, in order: ``run`` (the group's engine input, its outputs held until
    the spec steps are taken), ``spec`` (one spec step: its datagrams must come next among the held
    ones), ``end`` (none may be left; deliveries and state compared), ``end_tick`` (every member)."""

    kind: str
    group: Group | None = None
    action: Any = None
    after: Any = None
    opens: bool = False  # a path step the world enables (not a no-op, not past rule 6): one per harness step


class TimedStepper:
    """The clock of one lockstep run and the timed spec beside it (module docstring)."""

    def __init__(self, engines: WorldEngines, world: World, rules: Rules, timing: Timing) -> None:
        self.engines, self.world, self.rules, self.timing = engines, world, rules, timing
        self.cfg = world.cfg
        periods = rules.tasks(world.cfg, timing)
        self.periods = periods
        self.due: list[dict[str, int]] = [dict(periods) for _ in range(world.n)]  # first run: one period in
        self.activity: Activity = {}
        self.syncs: dict[tuple[int, int], int] = {}
        self.stale = 0  # removals made despite rule 6 (a packet the same run put on the wire)
        self.forced = 0  # deliveries rule 6 made before a removal's time
        self.ticks = 0
        self.pending: deque[Event] = deque()  # the rest of the tick in progress
        self.times: list[int] = []  # the clock at each step of the path
        self.held: dict[int, list[tuple[int, bytes]]] = {}  # member -> its engine's datagrams not yet matched
        self.delivered: dict[int, tuple[list[Any], list[Any]]] = {}  # member -> (engine's, spec's) deliveries

    # -- the harness's entry point ----------------------------------------------------------------
    def step(self, run: Lockstep, action: Any, after: Any) -> Divergence | None:
        """A walk's step: the next spec step of a tick in progress, whatever ``action`` is; else a
        world timer lets time pass (``tick``), and anything else happens now, maybe a little later
        than the last step."""
        if self.pending:
            divergence = self.resume(run)
        elif isinstance(action, FireTimer) and action.timer.kind not in self.rules.untimed:
            start = len(run.path)
            divergence = self.tick(run)
            if divergence is not None and len(run.path) == start:  # the trace's last step must start the tick
                run.path.append((action, run.state))
                divergence = replace(divergence, step=len(run.path))
        else:
            self._drift(len(run.path), action)
            divergence = self._take(run, action, after)
        self._stamp(run)
        return divergence

    def _stamp(self, run: Lockstep) -> None:
        """The time of every path step taken since the last stamp: now."""
        self.times += [self.engines.now] * (len(run.path) - len(self.times))

    def label(self, index: int, text: str) -> str:
        """``text`` (path step ``index``'s) with its time."""
        return f"t={self.times[index]}: {text}" if index < len(self.times) else text

    def _take(self, run: Lockstep, action: Any, after: Any) -> Divergence | None:
        before = run.state
        divergence = run.take(action, after)
        self._observe(before, action, after)
        return self._at(divergence)

    def _drift(self, index: int, action: Any) -> None:
        """Half of the time the clock moves to a time strictly before the next deadline."""
        room = self.next_deadline() - self.engines.now
        rng = random.Random(f"timed {index} {action!r}")
        if room >= 2 and rng.random() < 0.5:
            self.engines.now += rng.randrange(1, room)

    def live(self) -> list[int]:
        """The members whose engines still run (a stopped multicast member's do not)."""
        stopped = getattr(self.engines, "stopped", ())
        return [m for m in range(self.world.n) if m not in stopped]

    def next_deadline(self) -> int:
        live = self.live()
        found = [t for m in live for t in self.due[m].values()]
        found += [t + self.timing.sync_min_interval for t in self.syncs.values()]
        found += [self.engines.engines[m].get_timer() for m in live]
        return min(found, default=self.engines.now + self.timing.xmit_interval)

    def node(self, state: Any, member: int) -> Any:
        """``member``'s spec node in ``state`` (either world)."""
        world = self.world
        return world.node(state, member) if hasattr(world, "node") else world.node_table.values[state[member]]

    # -- time passes ------------------------------------------------------------------------------
    def tick(self, run: Lockstep) -> Divergence | None:
        """Time passes to the next deadline, and on until a spec step changes the world (so that
        the path, replayed, passes the same ticks): the expired syncs and the due members' timer
        runs, whose spec steps are then taken one per harness step (``resume``)."""
        start = len(run.path)
        for _ in range(MAX_QUIET_TICKS):
            now = max(self.next_deadline(), self.engines.now)
            late = self._late_engine(run, now)
            if late is not None:
                return late
            groups, blocked = self.plan(run.state, now)
            if blocked is not None:  # rule 6: the packet arrives before the removal's time
                packet_action = DeliverPacket(blocked)
                successor = self.world.successor(run.state, packet_action)
                assert successor is not None
                self._drift(len(run.path), packet_action)  # as any delivery's (a replay cannot tell)
                self.forced += 1
                return self._take(run, packet_action, successor)
            self.engines.now = now
            self.ticks += 1
            for group in groups:
                for task in group.tasks:
                    self.due[group.member][task] = now + self.periods[task]
                if group.stale:  # a packet may outlive its window from now on
                    self.stale += group.stale
                    run.always_checked = [p for p in run.always_checked if p.name in STALE_PROOF]
            self.pending.extend(_events(groups))
            divergence = self.resume(run)
            if divergence is not None or len(run.path) > start:
                return divergence
        return None

    def resume(self, run: Lockstep) -> Divergence | None:
        """Carry the tick on: its events up to the next one that opens a harness step, or all."""
        taken = False
        while self.pending:
            event = self.pending[0]
            if event.opens and taken:
                break
            self.pending.popleft()
            taken = taken or event.opens
            divergence = self._do(run, event)
            if divergence is not None:
                self.pending.clear()
                return divergence
        return None

    def flush(self, run: Lockstep) -> Divergence | None:
        """Finish the tick in progress (the harness does before it compares every member)."""
        divergence = None
        while self.pending and divergence is None:
            divergence = self.resume(run)
        self._stamp(run)
        return divergence

    def _do(self, run: Lockstep, event: Event) -> Divergence | None:
        if event.kind == "end_tick":
            return self._at(run.check_all()) if run.full_check_every else None
        group = event.group
        assert group is not None
        member = group.member
        if event.kind == "run":
            if group.runs:
                self.engines.engines[member].handle_timer(now=self.engines.now)
            self.held[member] = run.engines.datagrams(member)
            self.delivered[member] = (run.engines.deliveries(member), [])
            return None
        if event.kind == "spec":
            return self._spec_step(run, group, event.action, event.after)
        left, (got, want) = self.held.pop(member), self.delivered.pop(member)
        if left:
            return self._diverged(run, group, f"datagrams of {self.world.member_name(member)}", "[]", _show(left))
        want = [run.engines.spec_delivery(src, payload) for src, payload in want]
        if got != want:
            return self._diverged(run, group, f"deliveries of {self.world.member_name(member)}", repr(want), repr(got))
        divergence = run.compare_state(member)
        return None if divergence is None else self._diverged(run, group, divergence.what, divergence.spec,
                                                                divergence.engine)

    def _spec_step(self, run: Lockstep, group: Group, action: Any, after: Any) -> Divergence | None:
        """One spec timer of ``group``: its datagrams are the next the engine held, in order."""
        assert run.shared is not None
        before, member = run.state, group.member
        _, packets, delivered = self.world.step_effects(before, action)
        for packet in packets:  # the harness's rule 7, as for any step
            disagreement = run.shared.codec_disagreement(run.engines, packet)
            if disagreement is not None:
                return self._diverged(run, group, f"codec of {type(packet.msg).__name__}", "the documented layout",
                                      disagreement)
        want = [(p.dst, run.shared.datagram(p)) for p in packets]
        held = self.held[member]
        if held[:len(want)] != want:
            return self._diverged(run, group, f"datagrams of {self.world.member_name(member)}", _show(want),
                                  _show(held))
        del held[:len(want)]
        self.delivered[member][1].extend(delivered)
        if after == before:  # resent only what is in flight: no step of the world
            return None
        run.path.append((action, after))
        run.state = after
        self._observe(before, action, after)
        return self._at(run.check_always()) if run.check_properties else None

    def _diverged(self, run: Lockstep, group: Group, what: str, spec: str, engine: str) -> Divergence:
        fired = "; ".join(self.world.format_action(a) for a, _, _ in group.steps) or "no spec timer due"
        run_of = "handle_timer" if group.runs else "the clock"
        action = f"t={self.engines.now}: {run_of} of {self.world.member_name(group.member)} ({fired})"
        return Divergence(len(run.path), action, what, spec, engine)

    def _late_engine(self, run: Lockstep, now: int) -> Divergence | None:
        for member in self.live():
            due = self.due[member]
            tasks = sorted(task for task, t in due.items() if t <= now)
            asked = self.engines.engines[member].get_timer()
            if tasks and asked > now:
                name = self.world.member_name(member)
                return Divergence(len(run.path), f"t={now}: time passes", f"timer schedule of {name}",
                                  f"{', '.join(tasks)} due at {now}", f"get_timer() = {asked}")
        return None

    def plan(self, state: Any, now: int) -> tuple[list[Group], Any]:
        """The engine inputs of a tick at ``now`` from ``state`` (nothing is changed), or the packet
        in flight that rule 6 delivers first (then no groups)."""
        activity, syncs = dict(self.activity), dict(self.syncs)
        network = self.world.view(state).network
        groups: list[Group] = []
        live = self.live()
        for member in live:  # first every expired sync (every engine's view reads the clock)
            steps: Steps = []
            interval = self.timing.sync_min_interval
            expired = {peer for (m, peer), t in syncs.items() if m == member and t + interval <= now}
            for timer in self.world.adapter.enabled_timers(self.cfg, self.node(state, member)) if expired else ():
                if timer.kind == self.rules.spec.SYNC_EXPIRED and timer.peer in expired:
                    state = self._fire(state, member, timer, steps, activity, syncs, now)
            if steps:
                groups.append(Group(member, steps, False))
        for member in live:
            tasks = tuple(task for task, t in self.due[member].items() if t <= now)
            if not tasks and self.engines.engines[member].get_timer() > now:
                continue
            steps, stale = [], 0
            for task in tasks:
                state, blocked, lifted = self._run_task(state, member, task, steps, activity, syncs, now, network)
                if blocked is not None:
                    return [], blocked
                stale += lifted
            groups.append(Group(member, steps, True, tasks, stale))
        return groups, None

    def _run_task(self, state: Any, member: int, task: str, steps: Steps, activity: Activity,
                  syncs: dict[tuple[int, int], int], now: int, network: Sequence[Any]) -> tuple[Any, Any, int]:
        """``task``'s run at ``member``, phase by phase, added to ``steps``: (the state after it,
        None, the removals made despite rule 6), or (``state``, the packet of ``network`` rule 6
        delivers first, 0)."""
        world, n, stale = self.world, self.world.n, 0
        quiet_connection = getattr(world.adapter, "quiet_connection", lambda member, timer: None)

        def age(role: str, peer: int) -> int:
            return now - activity[member, role, peer]

        for phase in self.rules.phases(task, self.cfg, self.timing):
            for timer in phase(world.adapter.enabled_timers(self.cfg, self.node(state, member)), age):
                pair = quiet_connection(member, timer)
                if pair is not None and not world.quiet(state[n], *pair):
                    blocking = [p for p in network if world.adapter.receive_window_of(p) == pair]
                    if blocking:
                        return state, blocking[0], 0
                    stale += 1
                    state = self._fire(state, member, timer, steps, activity, syncs, now, opens=False)
                    continue
                state = self._fire(state, member, timer, steps, activity, syncs, now)
        return state, None, stale

    def _fire(self, state: Any, member: int, timer: Any, steps: Steps, activity: Activity,
              syncs: dict[tuple[int, int], int], now: int, *, opens: bool = True) -> Any:
        """``steps`` + ``member``'s spec ``timer`` from ``state`` (``opens``: False for a step past
        rule 6, which no replay finds enabled); the state after it."""
        action = FireTimer(member, timer)
        after = self.world.successor(state, action)
        if after is None:  # a run that changes nothing in the world, but may resend what is in flight
            steps.append((action, state, False))
            return state
        observe(self.rules, self.cfg, activity, syncs, now, member, self.node(state, member), self.node(after, member),
                action)
        steps.append((action, after, opens))
        return after

    def _observe(self, before: Any, action: Any, after: Any) -> None:
        member = self.world.step_effects(before, action)[0]
        if member is None or not self.rules.roles:
            return
        observe(self.rules, self.cfg, self.activity, self.syncs, self.engines.now, member,
                self.node(before, member), self.node(after, member), action)

    def _at(self, divergence: Divergence | None) -> Divergence | None:
        return None if divergence is None else replace(divergence, action=f"t={self.engines.now}: {divergence.action}")


def _events(groups: list[Group]) -> list[Event]:
    """A tick's events: per group its engine input, its spec steps and its end; then the tick's end."""
    out: list[Event] = []
    for group in groups:
        out.append(Event("run", group))
        out += [Event("spec", group, action, after, opens) for action, after, opens in group.steps]
        out.append(Event("end", group))
    return [*out, Event("end_tick")]


def _show(datagrams: list[tuple[int, bytes]]) -> str:
    return "[" + ", ".join(f"to {dst}: {describe_datagram(data)}" for dst, data in datagrams) + "]"


# -- the engine factory ---------------------------------------------------------------------------
def engines_with(timing: Timing) -> EngineFactory:
    """An engine factory for the harness: the protocol's engines with ``timing``'s durations and a
    clock that the harness moves (``TimedStepper``)."""
    made: dict[type[WorldEngines], type[WorldEngines]] = {}

    def factory(world: World) -> WorldEngines:
        name = world.adapter.name
        rules = RULES.get(name)
        if rules is None:
            raise ValueError(f"timed lockstep: expected a model of {', '.join(sorted(RULES))}, got {name}")
        base = binding(name).world_engines
        cls = made.get(base)
        if cls is None:
            def engine_config(spec_cfg: Any, _base: type[WorldEngines] = base, _rules: Rules = rules) -> Any:
                return _rules.configure(_base.engine_config(spec_cfg), spec_cfg, timing)
            cls = made[base] = type(f"{base.__name__}Timed", (base,), {"engine_config": staticmethod(engine_config)})
        engines = cls.for_world(world)
        engines.timed = TimedStepper(engines, world, rules, timing)
        return engines

    return factory


timed = engines_with(TIMINGS[0])
"""The default timing; a fuzz job takes it as ``FuzzOptions(engines="checks.conform.timed:timed")``
(``seqcheck fuzz MODEL --engines-with timed``)."""
timed_coprime = engines_with(TIMINGS[1])
"""Periods coprime with the retransmit interval (``--engines-with timed-coprime``)."""
timed_short_close = engines_with(TIMINGS[2])
"""A close timeout shorter than the idle expiry, everything short (``--engines-with timed-short-close``)."""


def stepper_of(run: Lockstep) -> TimedStepper:
    """The clock of a timed run (for tests and reports)."""
    found = run.engines.timed
    assert isinstance(found, TimedStepper), "not a timed run"
    return found


__all__: Sequence[str] = ("TIMINGS", "TimedStepper", "Timing", "engines_with", "stepper_of", "timed", "timed_coprime",
                          "timed_short_close")
