"""``EngineScript``: production engines driven by a readable script of network events.

This is what a regression test emitted by ``seqcheck replay --emit-test`` calls. A script names
events the way a trace chart shows them ("B receives the ACK(seqno=2) A... from B") and the script
finds the datagram the engine *under test* really sent, so one script runs on the defective
engine and on the fixed one: on the fixed engine, timestamps differ, some datagrams are never
sent (the event is then skipped and listed in ``skipped``) and others are sent in addition (they
stay in flight). Properties are evaluated on the engines' own state and output.

One script serves every protocol with an engine: its ``ScriptProtocol`` (in the protocol's engine
binding, ``checks/conform/<protocol>.py``) says which engine, codec, message kinds, timers and
variant flags it has, and how it settles (``protocol=`` picks one; UNICAST3 by default, so older
emitted tests still run).

Payload n of a pair is ``spec_payload(n)``; time stands still (timers are fired explicitly).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checks.conform.engines import binding
from impl.common import LocalProtocolError, payload_number, spec_payload
from models import registry
from spec import reliable_fifo as fifo


@dataclass(frozen=True)
class ScriptProtocol:
    """What a script needs to know about one protocol's engine."""

    title: str  # "UNICAST3"
    package: str  # the engine package, which exports ``Variant`` (for emitted tests)
    variant: type  # the spec's (and engine's) Variant
    # (variant, members, settings, me) -> engine for EngineScript; (variant, me, founders, settings) -> engine
    # for the multicast world's McastScript (checks/conform/mcast_script.py)
    engine: Callable[..., Any]
    decode: Callable[[bytes], Any]
    kinds: dict[str, type]  # "DATA" -> the codec's message class
    kind_names: dict[str, str]  # the spec's message type name -> "DATA"
    timer_names: tuple[str, ...]  # by spec timer kind
    settle_timers: tuple[str, ...]  # run on every member on every round of ``settle``
    defects: frozenset[str]  # variant flags that bring a defect back (the others are fixes)
    scriptable: frozenset[str]  # properties ``holds`` can judge on the engines
    no_conn: int | None = None  # a conn_id that names no connection: matches any (variants)
    rate_limited_sync: type | None = None  # a message sent at most once per rate-limit expiry (UNICAST3)
    # McastScript only (NAKACK4): timers whose peer is a seqno, not a member (a held send's SEND); timers
    # that are faults, which ``settle`` never fires; and the state properties judged on one member's
    # engine (engine, settings) -> the names of those it violates
    seqno_timers: frozenset[str] = frozenset()
    fault_timers: frozenset[str] = frozenset()
    judge_member: Callable[[Any, dict[str, int]], frozenset[str]] | None = None
    self_path: bool = False  # messages to self are delivered from the send window for oneself (UNICAST3)

    def timer_kind(self, name: str) -> int:
        return self.timer_names.index(name)


LIVENESS = frozenset({"eventually_delivered", "eventually_acked"})
DELIVERY = frozenset({"no_duplicate", "in_order", "delivered_was_sent"})  # spec/reliable_fifo, per incarnation
IGNORED_FIELDS = {"timestamp", "ts"}  # differ between engines that took the same steps


@dataclass
class Datagram:
    src: str
    dst: str
    msg: Any
    data: bytes


@dataclass(frozen=True)
class _SelfWindow:
    """The send entry for oneself read as the window messages to self are delivered from."""

    conn_id: int
    delivered: int
    state: int


@dataclass
class EngineScript:
    members: Sequence[str]
    variant: Any = None  # the protocol's Variant; None: as shipped
    protocol: str = "unicast3"
    settings: dict[str, int] = field(default_factory=dict)  # the model's [config] (UNICAST2)
    flight: list[Datagram] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    delivered: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    syncs: dict[tuple[str, str], int] = field(default_factory=dict)  # SEND_FIRST_SEQNO since expiry
    violations: set[str] = field(default_factory=set)
    # per (sender, receiver): spec/reliable_fifo's channel (this incarnation's run; OOB sends exempt from in_order)
    channels: dict[tuple[str, str], fifo.Channel] = field(default_factory=dict)
    windows: dict[tuple[str, str], tuple[int, int, int | None]] = field(default_factory=dict)  # conn_id, hd, state

    def __post_init__(self) -> None:
        self.spec = binding(self.protocol).script
        if self.variant is None:
            self.variant = self.spec.variant()
        self.engines = {m: self.spec.engine(self.variant, self.members, self.settings, m) for m in self.members}

    # -- events ------------------------------------------------------------------------------------
    def send(self, src: str, dst: str, oob: bool = False, dont_loopback: bool = False) -> None:
        """The application of ``src`` sends its next message to ``dst`` (flagged OOB: UNICAST3, UNICAST4;
        DONT_LOOPBACK, to itself: UNICAST3, UNICAST4)."""
        number = self.sent[src, dst] = self.sent.get((src, dst), 0) + 1
        flags = {name: True for name, on in (("oob", oob), ("dont_loopback", dont_loopback)) if on}
        self.engines[src].send(dst, spec_payload(number), now=0, **flags)
        self.channels[src, dst] = fifo.send(self.channels.get((src, dst), fifo.Channel()), oob,
                                            dont_loopback and src == dst)
        self._collect(src, ("send",))

    def deliver(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives the in-flight datagram from ``src`` of that kind and those fields."""
        datagram = self._find(src, dst, kind, fields, remove=True)
        if datagram is not None:
            self._receive(datagram)

    def deliver_batch(self, src: str, dst: str, messages: Sequence[tuple[str, dict[str, object]]]) -> None:
        """``dst`` receives the in-flight datagrams from ``src`` of those kinds and fields as one batch
        (``received_batch``: JGroups' ``up(MessageBatch)``, ``models/world.py`` rule 6b)."""
        found = [self._find(src, dst, kind, dict(fields), remove=True) for kind, fields in messages]
        datagrams = [d for d in found if d is not None]
        if datagrams:
            self.engines[dst].received_batch(src, [d.data for d in datagrams], now=0)
            self._collect(dst, ("batch", src))

    def duplicate(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives a copy; the datagram stays in flight."""
        datagram = self._find(src, dst, kind, fields, remove=False)
        if datagram is not None:
            self._receive(datagram)

    def lose(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """The network drops the datagram."""
        self._find(src, dst, kind, fields, remove=True)

    def timer(self, member: str, kind: str, peer: str | None = None) -> None:
        """Fire one of the spec's timers at ``member`` (skipped where the engine has no such timer now)."""
        try:
            self.engines[member].fire_timer(self.spec.timer_kind(kind), peer, now=0)
        except LocalProtocolError as error:
            self.skipped.append(f"timer {kind} at {member}: {error}")
            return
        if kind == "sync_expired" and peer is not None:
            self.syncs[member, peer] = 0
        self._collect(member, ("timer", self.spec.timer_kind(kind), peer))

    def view(self, member: str, members: Sequence[str]) -> None:
        self.engines[member].install_view(members, now=0)
        self._collect(member, ("view", frozenset(members)))

    def remove_receiver(self, member: str, peer: str) -> None:
        """JGroups' removeReceiveConnection test hook."""
        self.engines[member].remove_receive_connection(peer)
        self._collect(member, ("remove", peer))

    def settle(self, rounds: int = 30) -> None:
        """A fault-free continuation: ``rounds`` times, deliver everything in flight, let every rate
        limit expire and run every periodic task (a stalled sender resends on its second run)."""
        for _ in range(rounds):
            while self.flight:
                self._receive(self.flight.pop(0))
            for member, engine in self.engines.items():
                for peer in getattr(engine.snapshot(now=0), "sync_sent", ()):  # UNICAST3's rate limit
                    self.timer(member, "sync_expired", peer)
                for kind in self.spec.settle_timers:
                    self.timer(member, kind)

    # -- properties --------------------------------------------------------------------------------
    def holds(self, prop: str) -> bool:
        """Whether ``prop`` holds on what the engines did so far (liveness: call ``settle`` first)."""
        if prop in ("no_spurious_purge", "purge_covered"):
            return "purge" not in self.violations
        if prop in ("sync_rate_limited", "sync_resend_bounded"):
            return "sync" not in self.violations
        if prop == "no_spurious_reset":
            return "reset" not in self.violations
        if prop in DELIVERY:
            return prop not in self.violations
        if prop == "eventually_delivered":
            return not self.undelivered()
        if prop == "eventually_acked":
            return not self.undelivered() and all(not v.unacked for e in self.engines.values()
                                                  for _, v in e.snapshot(now=0).send)
        raise ValueError(f"no engine-level check for property {prop!r}")

    def undelivered(self) -> list[str]:
        return [f"#{n} from {s} to {d}" for (s, d), count in sorted(self.sent.items())
                for n in range(1, count + 1) if n not in self.delivered.get((s, d), set())]

    # -- internals ---------------------------------------------------------------------------------
    def _receive(self, datagram: Datagram) -> None:
        """``datagram.dst`` receives it. JGRP-1874's resource bound (UNICAST2): a SEND_FIRST_SEQNO
        is answered by at most ``settings["sync_resend_bound"]`` DATA (0: no bound)."""
        self.engines[datagram.dst].received(datagram.src, datagram.data, now=0)
        msg: Any = datagram.msg
        kind = next((name for name, cls in self.spec.kinds.items() if isinstance(msg, cls)), None)
        what: tuple[Any, ...] = ("other",)
        if kind == "CLOSE":
            what = ("close", datagram.src, msg.conn_id)
        elif kind == "DATA":
            what = ("data", datagram.src, msg.conn_id, msg.first)
        answers = self._collect(datagram.dst, what)
        bound = self.settings.get("sync_resend_bound", 0)
        if bound and isinstance(datagram.msg, self.spec.kinds["SEND_FIRST_SEQNO"]):
            if sum(isinstance(d.msg, self.spec.kinds["DATA"]) for d in answers) > bound:
                self.violations.add("sync")

    def _collect(self, member: str, what: tuple[Any, ...]) -> list[Datagram]:
        """Take ``member``'s output after the input ``what`` (as ``UnicastAdapter.classify_end``
        reads it). In flight is a set, as in the world (``models/world.py`` rule 2): a datagram
        identical to one still in flight adds nothing."""
        engine = self.engines[member]
        out = []
        for dst, data in engine.datagrams_to_send():
            msg = self.spec.decode(data)
            out.append(Datagram(member, dst, msg, data))
            if self.spec.rate_limited_sync is not None and isinstance(msg, self.spec.rate_limited_sync):
                count = self.syncs[member, dst] = self.syncs.get((member, dst), 0) + 1
                if count > 1:  # JGRP-1874: rate limited to one per sync_min_interval
                    self.violations.add("sync")
        for datagram in out:
            if not any((d.src, d.dst, d.data) == (datagram.src, datagram.dst, datagram.data) for d in self.flight):
                self.flight.append(datagram)
        views = {m: e.snapshot(now=0) for m, e in self.engines.items()}
        windows = dict(views[member].recv)
        if self.spec.self_path and not getattr(self.variant, "self_as_peer", False):
            own = dict(views[member].send).get(member)  # the send window for oneself delivers (UNICAST3 26)
            if own is not None:
                windows[member] = _SelfWindow(own.conn_id, own.acked, own.state)
        self._deliveries(member, engine.deliveries(), windows, what)
        self._check_purges(views)
        return out

    def _deliveries(self, member: str, delivered: list[tuple[str, bytes]], windows: dict[str, Any],
                    what: tuple[Any, ...]) -> None:
        """Record ``member``'s deliveries (spec/reliable_fifo): a receive window that appeared,
        vanished, changed its conn_id or went back since the last input starts a new incarnation,
        and the deliveries of this input belong to the window it ended with. A window that vanished
        or changed its conn_id must have ended by a cause its protocol allows (no_spurious_reset:
        ``UnicastAdapter.legitimate_window_ends``, judged on the input ``what``)."""
        for src in self.members:
            window = windows.get(src)
            now = None if window is None else (window.conn_id, window.delivered, getattr(window, "state", None))
            before = self.windows.pop((src, member), None)
            own = src == member and self.spec.self_path  # the send window for oneself: never a reset
            if before is not None and (now is None or now[0] != before[0]) and not own:
                self._window_ended(src, before, None if now is None else now[0], what)
            if now is None or before is None or now[0] != before[0] or now[1] < before[1]:
                self.channels[src, member] = fifo.new_incarnation(self.channels.get((src, member), fifo.Channel()))
            if now is not None:
                self.windows[src, member] = now
        for src, payload in delivered:
            number = payload_number(payload)
            self.delivered.setdefault((src, member), set()).add(number)
            if not 1 <= number <= self.sent.get((src, member), 0):
                self.violations.add("delivered_was_sent")
            channel = fifo.deliver(self.channels.get((src, member), fifo.Channel()), number)
            self.channels[src, member] = channel
            if not fifo.no_duplicate(channel):
                self.violations.add("no_duplicate")
            if not fifo.in_order(channel):
                self.violations.add("in_order")

    def _window_ended(self, src: str, before: tuple[int, int, int | None], after: int | None,
                      what: tuple[Any, ...]) -> None:
        adapter = registry.get(self.protocol).adapter  # type: ignore[attr-defined]
        cause = adapter.classify_end(before[0], after, src, what, before[2])
        if cause not in adapter.legitimate_window_ends(self.variant):
            self.violations.add("reset")

    def _check_purges(self, views: dict[str, Any]) -> None:
        for sender, view in views.items():
            for receiver, entry in view.send:
                window = dict(views[receiver].recv).get(sender)
                if window is not None and window.conn_id == entry.conn_id and window.delivered < entry.acked:
                    self.violations.add("purge")

    def _find(self, src: str, dst: str, kind: str, fields: dict[str, object], *, remove: bool) -> Datagram | None:
        want = self.spec.kinds[kind]
        for index, d in enumerate(self.flight):
            if (d.src, d.dst) == (src, dst) and isinstance(d.msg, want) and self._matches(d.msg, fields):
                return self.flight.pop(index) if remove else d
        self.skipped.append(f"{kind}{fields} from {src} to {dst}: not in flight")
        return None

    def _matches(self, msg: Any, fields: dict[str, object]) -> bool:
        for name, value in fields.items():
            if name in IGNORED_FIELDS:
                continue
            if name == "conn_id" and self.spec.no_conn is not None and value == self.spec.no_conn:
                continue  # a header that names no connection matches whatever the engine under test names
            actual = getattr(msg, name)
            if name == "payload" and isinstance(actual, bytes):
                actual = payload_number(actual)
            if name == "seqnos":
                actual, value = list(actual), list(value)  # type: ignore[call-overload]
            if actual != value:
                return False
        return True
