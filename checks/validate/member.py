"""One member's log replayed on the spec, step by step.

This module owns the judgement of one step: the spec member, in the state the log's earlier steps
put it in, is given the step's input (the protocol's world stimulus: ``models/protocols``'
adapters run the spec's handlers), and what the spec then sends and delivers must be exactly what
the log says the engine sent and delivered, in order. Rules:

1. Inputs: ``send`` / ``mcast`` are the application's (``("send", dst, payload)``, ``("mcast",
   payload)``; NAKACK4 with send_atomically off: then the thread's ``SEND`` timer, if the log says
   the send went out at once); ``in`` is a datagram, decoded with the engine's codec limits and
   mapped to the spec's message (``checks/validate/protocols.py``); ``view``, ``join``, ``merge``
   are membership stimuli; ``become_server`` fires BECOME_SERVER; ``xmit`` fires the retransmit
   task's XMIT timer out of its period (the endpoint's early run); ``resumed`` sends fire their
   ``SEND`` timers after the step's input. A timer the spec does not enable is not allowed.
2. Time (``timer``): the engine's periodic tasks run by the timed rules of the lockstep
   (``checks/conform/timed_rules.py``): a task is due one period after its last run (the first one
   period after time 0); a due task fires, phase by phase, the spec timers its rules pick by the
   entries' ages, which ``timed_rules.observe`` keeps from the spec's own steps. A run with nothing
   due must send nothing. UNICAST3's sync requests expire (SYNC_EXPIRED) before any step at which
   they are ``sync_min_interval`` old, as the engine reads its clock. Time never goes backwards.
3. Limits: a step whose ``limits`` say one of the engine's limits against hostile input bit is one
   of the engine's documented departures from the spec (docs/engines.md, "Hostile input"): ``drop`` limits
   (the input was dropped whole: the spec member is not given it) must send and deliver nothing;
   ``trim`` limits (an answer cut short) must send a subsequence of what the spec sends; after a
   ``follow`` limit the engine's state is one the spec does not name, so this member is followed
   no further (reported, never passed silently).
4. A malformed datagram (one the engine's codec refuses) has no spec step: nothing may come of it.
   A DATA further above its window than the engine's span limit (``max_receive_span``, NAKACK4's
   ``capacity``) must have been dropped: one the log says was taken is refused, and never handed
   to the spec (which would hold every seqno below it: a log cannot make the validator allocate
   more than the engine may).
   Nor has a datagram naming a member outside the logs' members 0 .. n-1 (in an XMIT_REQ, a view
   or a digest: only a hostile peer sends one): the engine must send and deliver nothing for it,
   and the spec member stays as it was (the engine's own state is not seen: a later step that
   depends on a change it made would differ from the spec and be reported there).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from checks.conform.timed_rules import observe
from checks.validate.logs import Header, StepError, event, hex_bytes, integer, members_of, pairs
from checks.validate.protocols import Foreign, Payloads
from models.world import AppSend, DeliverPacket, FireTimer, Packet

DROP = frozenset({"malformed", "bad_seqno", "beyond_window", "receive_table_full", "held_bytes_full",
                  "replace_refused", "xmit_req_foreign", "xmit_rsp_foreign", "stability_foreign",
                  "join_rsp_ignored", "queue_dropped"})
TRIM = frozenset({"resends_throttled", "xmit_seqnos_ignored"})
FOLLOW_NO_FURTHER = frozenset({"receive_evicted", "xmit_scans_deferred", "sync_table_full", "syncs_rate_limited",
                               "oversized_control", "send_without_window",
                               # UNICAST3's message cache: the spec caches (and later adds) what these dropped
                               "cache_full", "cache_evicted", "cache_drained_dropped"})
HISTORY = 16  # steps kept for the chart of a violation


@dataclass(frozen=True)
class Violation:
    """The first step of one log the spec does not allow."""

    path: str
    line: int
    step: int
    member: int
    t: int
    when_ms: float  # on the host's monotonic clock, to order violations of several logs
    what: str
    spec: str = ""
    logged: str = ""
    made_up: bool = False  # an arrival no log sent: the consequence of another log's step (logset ranks it after)

    def __str__(self) -> str:
        text = f"{self.path}:{self.line}: step {self.step} (t={self.t} ms): {self.what}"
        if self.spec or self.logged:
            text += f"\n  spec:   {self.spec}\n  logged: {self.logged}"
        return text


@dataclass(frozen=True)
class Seen:
    """One replayed step, for the chart."""

    line: int
    step: int
    t: int
    record: dict[str, Any]
    node: Any  # the spec member after it


class MemberReplay:
    """The spec member of one log (module docstring); ``step`` judges the next line."""

    def __init__(self, header: Header, payloads: Payloads, n: int,
                 sent_before: Callable[[int, int, bytes, float], bool] | None = None) -> None:
        self.header, self.payloads, self.n = header, payloads, n
        proto = header.protocol
        self.proto = proto
        self.adapter = proto.adapter
        self.cfg = proto.spec_config(header.config, n)
        self.rules = proto.rules
        self.timing = proto.timing(header.config)
        self.decode = proto.decode_with(header.config)
        self.me = header.me
        self.node = self.adapter.initial_node(self.cfg, self.me, frozenset(header.members))
        self.periods = self.rules.tasks(self.cfg, self.timing)
        self.due = dict(self.periods)
        self.activity: dict[tuple[int, str, int], int] = {}
        self.syncs: dict[tuple[int, int], int] = {}
        self.t = 0
        self.steps = 0
        self.sent_before = sent_before
        self.followed_to: tuple[int, str] | None = None  # (line, why) where a limit ended the replay
        self.history: deque[Seen] = deque(maxlen=HISTORY)
        self.ended = False
        self.truncated = False
        self.now = 0
        self.sends: list[tuple[int, Any]] = []  # what the spec sent and delivered in the current step
        self.ups: list[tuple[int, int]] = []
        self.malformed = False
        self.dropping = False
        self.last: tuple[int, dict[str, Any]] | None = None  # the line being judged, for the chart
        self.before = self.node  # the spec member before the steps of ``history``

    # ------------------------------------------------------------------ one line
    def step(self, line: int, record: dict[str, Any] | StepError) -> Violation | None:
        if self.followed_to is not None or self.ended:
            return None
        if isinstance(record, StepError):
            return self._violation(line, f"not a valid step: {record}")
        ev = record.get("ev")
        if ev in ("end", "truncated"):
            self.ended, self.truncated = True, ev == "truncated"
            return None
        self.steps += 1
        self.last = (line, record)
        try:
            return self._step(line, record)
        except StepError as error:
            return self._violation(line, f"not a valid step: {error}")

    def _step(self, line: int, record: dict[str, Any]) -> Violation | None:
        number = integer(record, "n", low=1)
        if number != self.steps:
            raise StepError(f"n: expected {self.steps} (steps are numbered in order), got {number}")
        t = integer(record, "t")
        if t < self.t:
            return self._violation(line, f"time went backwards: t={t} after t={self.t}")
        self.t = self.now = t
        ev = event(record)
        moved = record.get("limits", {})
        if not isinstance(moved, dict) or not all(isinstance(k, str) and type(v) is int for k, v in moved.items()):
            raise StepError("limits: expected an object: counter -> int")
        if moved.keys() & FOLLOW_NO_FURTHER:
            which = ", ".join(sorted(moved.keys() & FOLLOW_NO_FURTHER))
            self.followed_to = (line, f"limit {which} bit: the engine's state is one the spec does not name")
            return None
        self._expire_syncs()
        before = self.node
        self.sends, self.ups, self.malformed = [], [], False
        self.dropping = ev == "in" and bool(moved.keys() & DROP)  # rule 3: the spec is not given the input
        refusal = self._input(line, ev, record)
        if refusal is not None:
            return refusal
        for seqno, status in _resumed(record):
            if status != "sent":
                self.followed_to = (line, f"held send {seqno} {status}: DISCONNECT and DONT_BLOCK are not followed")
                return None
            refusal = self._timer(line, self.proto.spec.SEND, seqno, "the held send's SEND")
            if refusal is not None:
                return refusal
        found = self._compare(line, record, moved, before)
        if found is None:
            if len(self.history) == self.history.maxlen:
                self.before = self.history[0].node
            self.history.append(Seen(line, self.steps, t, record, self.node))
        return found

    def _input(self, line: int, ev: str, record: dict[str, Any]) -> Violation | None:
        me, payloads = self.me, self.payloads
        if ev == "send":
            dst = integer(record, "to")
            self._apply(("send", dst, payloads.id(hex_bytes(record, "payload"))), AppSend(me, dst))
        elif ev == "mcast":
            self._apply(("mcast", payloads.id(hex_bytes(record, "payload"))), None)
            status = record.get("status")
            if status not in ("sent", "blocked", "held"):
                raise StepError(f"status: expected sent, blocked or held, got {status!r}")
            if status == "sent" and self.proto.name == "nakack4" and not self.cfg.atomic:
                return self._timer(line, self.proto.spec.SEND, integer(record, "seqno", low=1), "the send's SEND")
        elif ev == "in":
            return self._datagram(line, integer(record, "from"), hex_bytes(record, "data"), record)
        elif ev == "timer":
            self._tasks()
        elif ev == "xmit":  # the retransmit task run early (impl/runtime/drivers.py: ack_after)
            return self._timer(line, self.proto.spec.XMIT, -1, "the retransmit task's XMIT")
        elif ev == "view":
            self._apply(("view", frozenset(members_of(record, "members"))), None)
        elif ev == "join":
            view = frozenset(members_of(record, "view"))
            self._apply(("join", integer(record, "joiner"), view), None)
        elif ev == "merge":
            return self._merge(record)
        else:  # become_server
            return self._timer(line, self.proto.spec.BECOME_SERVER, -1, "BECOME_SERVER")
        return None

    def _datagram(self, line: int, src: int, data: bytes, record: dict[str, Any]) -> Violation | None:
        header = self.header
        if self.sent_before is not None and not self.sent_before(src, self.me, data, header.clock_ms + self.t):
            return replace(self._violation(line, f"a datagram from {src} that {src}'s log never sent (before this "
                                           "time): the network may lose, duplicate and reorder datagrams, not make "
                                           "them up"), made_up=True)
        if self.dropping:
            return None  # rule 3: dropped whole at a limit: the spec member is not given it
        try:
            msg = self.decode(data)
        except ValueError:
            self.malformed = True
            return None  # rule 4: compared as a step that does nothing
        try:
            spec_msg = self.proto.to_spec(msg, self.payloads, self.n)
        except Foreign:
            self.malformed = True  # rule 4
            return None
        except ValueError as error:
            return self._violation(line, f"the datagram has no spec message: {error}")
        span, limit = self.proto.span(spec_msg, self.node, src), self.proto.span_limit(header.config)
        if span is not None and span > limit:  # the engine must drop it; the spec would hold everything below
            return self._violation(line, f"a DATA {span} seqnos above its window was taken: the engine's limit "
                                   f"({limit}) drops it, and the log says no limit bit")
        self._apply(Packet(src, self.me, type(spec_msg).__name__, spec_msg), "packet")
        return None

    def _merge(self, record: dict[str, Any]) -> Violation | None:
        digest = record.get("digest")
        if not isinstance(digest, list) or not all(
                isinstance(e, list) and len(e) == 3 and all(type(x) is int for x in e) for e in digest):
            raise StepError("digest: expected a list of [member, hd, high]")
        table: list[tuple[int, int] | None] = [None] * self.n
        for member, hd, high in digest:
            if not 0 <= member < self.n:
                raise StepError(f"digest: member {member} is not one of 0..{self.n - 1}")
            table[member] = (hd, high)
        self._apply(("merge", tuple(table), frozenset(members_of(record, "view"))), None)
        return None

    # ------------------------------------------------------------------ spec steps
    def _apply(self, stimulus: Any, action: Any) -> None:
        """The spec's handler of ``stimulus``; its sends and deliveries collected, the ages kept."""
        before = self.node
        after, effects = self.adapter.handle(self.cfg, before, stimulus)
        for effect in effects:
            if self.adapter.is_send(effect):
                self.sends.append((effect.dst, effect.msg))
            elif type(effect).__name__ == "Deliver":
                self.ups.append((effect.src, effect.payload))
        self.node = after
        if self.rules.roles and after is not before:
            if action == "packet":
                action = DeliverPacket(stimulus)
            observe(self.rules, self.cfg, self.activity, self.syncs, self.now, self.me, before, after, action)

    def _timer(self, line: int, kind: int, peer: int, what: str) -> Violation | None:
        timer = self.proto.spec.Timer(kind, peer)
        if timer not in self.adapter.enabled_timers(self.cfg, self.node):
            return self._violation(line, f"{what} timer ({timer}) is not enabled in the spec's state here")
        self._apply(("timer", timer), FireTimer(self.me, timer))
        return None

    def _tasks(self) -> None:
        """Rule 2: every periodic task due now runs, phase by phase."""
        now, me, activity = self.now, self.me, self.activity

        def age(role: str, peer: int) -> int:
            return now - activity.get((me, role, peer), now)

        for task, period in self.periods.items():
            if self.due[task] > now:
                continue
            for phase in self.rules.phases(task, self.cfg, self.timing):
                for timer in phase(self.adapter.enabled_timers(self.cfg, self.node), age):
                    self._apply(("timer", timer), FireTimer(me, timer))
            self.due[task] = now + period

    def _expire_syncs(self) -> None:
        spec = self.rules.spec
        if not self.syncs or not hasattr(spec, "SYNC_EXPIRED"):
            return
        interval = self.timing.sync_min_interval
        for (member, peer), asked in sorted(self.syncs.items()):
            if self.now - asked >= interval:
                timer = spec.Timer(spec.SYNC_EXPIRED, peer)
                if timer in self.adapter.enabled_timers(self.cfg, self.node):
                    self._apply(("timer", timer), FireTimer(member, timer))

    # ------------------------------------------------------------------ comparing
    def _compare(self, line: int, record: dict[str, Any], moved: dict[str, int], before: Any) -> Violation | None:
        decode, proto, payloads = self.decode, self.proto, self.payloads
        logged = pairs(record, "out", "dst")
        got: list[tuple[int, Any]] = []
        for dst, data in logged:
            try:
                got.append((dst, decode(data)))
            except ValueError as error:
                return self._violation(line, f"the engine sent a datagram its own codec refuses ({error})")
        want = [(dst, proto.wire(msg, payloads)) for dst, msg in self.sends]
        up_got = pairs(record, "up", "src")
        up_want = [(src, payloads.bytes_of(p)) for src, p in self.ups]
        drop, trim = bool(moved.keys() & DROP) or self.malformed, bool(moved.keys() & TRIM)
        if drop:
            self.node = before  # rule 3: the input was dropped whole
            if got or up_got:
                return self._violation(line, f"input dropped at a limit ({', '.join(sorted(moved)) or 'malformed'}) "
                                       "but the engine sent or delivered", "nothing", _show(got, up_got))
            return None
        if got != want and not (trim and _subsequence(got, want)):
            return self._violation(line, "the engine sent other datagrams than the spec", _show(want, []),
                                   _show(got, []))
        if up_got != up_want:
            return self._violation(line, "the engine delivered other messages than the spec", _show([], up_want),
                                   _show([], up_got))
        return None

    def _violation(self, line: int, what: str, spec: str = "", logged: str = "") -> Violation:
        header = self.header
        return Violation(str(header.path), line, self.steps, self.me, self.t, header.clock_ms + self.t, what, spec,
                         logged)


def _resumed(record: dict[str, Any]) -> list[tuple[int, str]]:
    value = record.get("resumed", [])
    if not isinstance(value, list) or not all(isinstance(e, list) and len(e) == 2 and type(e[0]) is int
                                              and isinstance(e[1], str) for e in value):
        raise StepError("resumed: expected a list of [seqno, status]")
    return [(e[0], e[1]) for e in value]


def _subsequence(got: list[Any], want: list[Any]) -> bool:
    it = iter(want)
    return all(any(g == w for w in it) for g in got)


def _show(datagrams: list[tuple[int, Any]], delivered: list[tuple[int, bytes]]) -> str:
    parts = [f"to {dst}: {msg!r}" for dst, msg in datagrams] + [f"deliver from {src}: {p!r}" for src, p in delivered]
    text = "[" + ", ".join(parts) + "]"
    return text if len(text) <= 2000 else text[:2000] + f" ... ({len(parts)} in all)"
