"""``McastScript``: multicast engines (NAKACK2, NAKACK4) driven by a readable script of group events.

The multicast world's counterpart of ``checks/conform/script.py``'s ``EngineScript``, and what a
regression test emitted by ``seqcheck replay --emit-test`` from a NAKACK2 trace calls. Events are
named as the trace chart names them ("C receives MSG(seqno=2) from A"); the script finds the
datagram the engine *under test* really sent, so one script runs on the defective engine and on the
fixed one (an event whose datagram was never sent is skipped and listed in ``skipped``).
Properties are judged on the engines' own snapshots and outputs, never on the spec:

- ``no_duplicate``, ``in_order``, ``delivered_was_sent``: per (sender, receiver) window incarnation
  (a window that vanished, or restarted below what it delivered, starts a new one), judged by
  ``spec/reliable_fifo``'s channel: a multicast flagged OOB is exempt from ``in_order``;
- ``no_self_delivery``: no member delivers its own multicast flagged DONT_LOOPBACK (every one with
  ``settings["dont_loopback"]``, else those ``multicast`` flags);
- ``purge_covered``: while two running members are in each other's views, the receiver's window for
  the sender never lags the sender's purges (a member still to install its merge view is exempt);
- ``window_bounded``: with retransmission off, no window holds more than ``settings["window_bound"]``
  messages above a gap nothing in flight to its member or in its queue can fill;
- ``queue_within_bound``: no become_server_queue holds more than its capacity;
- ``no_premature_xmit_req``: no round's end (a retransmit run, STABLE's gossip, a vote or a
  STABILITY handled) asks a sender for a message whose original copy to the asker is still in flight
  and was multicast since the asker's last round (the world's rule 9);
- ``eventually_delivered`` (after ``settle``): every running member in a running sender's view, and
  it in the member's, with a window for it, delivered everything the sender multicast;
- NAKACK4: ``senders_released`` (after ``settle``: no running member holds a send),
  ``no_spurious_xmit_req`` (``no_premature_xmit_req``, or an XMIT_REQ for a seqno an application
  thread of the sender holds unsent), and the state properties the binding's ``judge_member``
  reports per member (``ScriptProtocol.judge_member``).

Members are names (the engines' addresses); time stands still (timers are fired explicitly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checks.conform.engines import binding
from impl.common import LocalProtocolError, payload_number, spec_payload
from spec import reliable_fifo as fifo

LIVENESS = frozenset({"eventually_delivered", "senders_released"})
ROUND_TIMERS = ("xmit", "stable")  # the timers whose run ends a round (rule 9)


@dataclass
class Flying:
    src: str
    dst: str
    msg: Any
    data: bytes
    original: bool  # an application multicast's copy (not a retransmission)


@dataclass
class McastScript:
    members: Sequence[str]
    variant: Any = None  # the protocol's Variant; None: as shipped
    protocol: str = "nakack2"
    settings: dict[str, int] = field(default_factory=dict)  # the model's [config] and window_bound
    founders: Sequence[str] | None = None  # the initial group (the others are joiners); None: everybody
    merging: list[str] = field(default_factory=list)  # members still to install a merge view
    flight: list[Flying] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)  # multicasts per sender
    delivered: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    violations: set[str] = field(default_factory=set)
    channels: dict[tuple[str, str], fifo.Channel] = field(default_factory=dict)  # (sender, receiver)
    windows: dict[tuple[str, str], int] = field(default_factory=dict)  # (sender, receiver) -> delivered
    stopped: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.spec = binding(self.protocol).script
        if self.variant is None:
            self.variant = self.spec.variant()
        group = list(self.members if self.founders is None else self.founders)
        self.young: set[tuple[str, str, bytes]] = set()  # (src, dst, data) of young originals (rule 9)
        self.flagged: set[tuple[str, int]] = set()  # (sender, number): multicasts flagged DONT_LOOPBACK
        self.engines = {m: self.spec.engine(self.variant, m, group, self.settings) for m in self.members}

    # -- events ------------------------------------------------------------------------------------
    def multicast(self, src: str, dont_loopback: bool = False, oob: bool = False) -> None:
        """The application of ``src`` multicasts its next message (NAKACK2: flagged DONT_LOOPBACK
        alone if ``dont_loopback``; ``settings["dont_loopback"]`` flags every one), flagged OOB if
        ``oob``."""
        number = self.sent[src] = self.sent.get(src, 0) + 1
        flags = {"oob": True} if oob else {}
        if dont_loopback:
            self.flagged.add((src, number))
            flags["dont_loopback"] = True
        for receiver in self.members:
            key = (src, receiver)
            self.channels[key] = fifo.send(self.channels.get(key, fifo.Channel()), oob)
        self.engines[src].multicast(spec_payload(number), now=0, **flags)
        self._collect(src, original=True)

    def deliver(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives the in-flight datagram from ``src`` of that kind and those fields."""
        datagram = self._find(src, dst, kind, fields, remove=True)
        if datagram is not None:
            self._receive(datagram)

    def deliver_batch(self, src: str, dst: str, messages: Sequence[tuple[str, dict[str, object]]]) -> None:
        """``dst`` receives the in-flight datagrams from ``src`` of those kinds and fields as one batch
        (``received_batch``: JGroups' ``up(MessageBatch)``, the multicast world's ``[faults] max_batch``)."""
        found = [self._find(src, dst, kind, dict(fields), remove=True) for kind, fields in messages]
        datagrams = [d for d in found if d is not None]
        for d in datagrams:
            self.young.discard((d.src, d.dst, d.data))
        if datagrams and dst not in self.stopped:
            self.engines[dst].received_batch(src, [d.data for d in datagrams], now=0)
            self._collect(dst, round_end=any(type(d.msg).__name__ in ("StableMsg", "StabilityMsg") for d in datagrams))

    def duplicate(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives a copy; the datagram stays in flight."""
        datagram = self._find(src, dst, kind, fields, remove=False)
        if datagram is not None:
            self._receive(datagram)

    def lose(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """The network, or the transport below the protocol, drops the datagram."""
        datagram = self._find(src, dst, kind, fields, remove=True)
        if datagram is not None:
            self.young.discard((datagram.src, datagram.dst, datagram.data))

    def timer(self, member: str, kind: str, peer: str | int | None = None) -> None:
        """Fire one of the spec's timers at ``member`` (skipped where it is not enabled there now);
        ``peer``: the member or seqno (NAKACK4's held send) it is for."""
        try:
            self.engines[member].fire_timer(kind, peer, now=0)
        except LocalProtocolError as error:
            self.skipped.append(f"timer {kind} at {member}: {error}")
            return
        self._collect(member, round_end=kind in ROUND_TIMERS)

    def view(self, member: str, members: Sequence[str]) -> None:
        self.engines[member].install_view(members, now=0)
        self._collect(member)

    def answer_join(self, coordinator: str, joiner: str, members: Sequence[str]) -> None:
        """GMS at ``coordinator`` admits ``joiner`` into ``members``: the digest, then the view."""
        engine = self.engines[coordinator]
        engine.answer_join(joiner, members, now=0)
        engine.install_view(members, now=0)
        self._collect(coordinator)

    def merge(self, member: str, members: Sequence[str]) -> None:
        """``member`` installs the merge view ``members``: MERGE_DIGEST (each sender at its own
        window's (hd, hr) now), then the view."""
        digest = []
        for sender in members:
            own = dict(self.engines[sender].snapshot().windows).get(sender)
            if own is not None:
                digest.append((sender, own.delivered, own.highest_received))
        engine = self.engines[member]
        engine.merge_digest(digest, now=0)
        engine.install_view(members, now=0)
        if member in self.merging:
            self.merging.remove(member)
        self._collect(member)

    def stop(self, member: str) -> None:
        """``member`` leaves or crashes: it acts no more; what it sent stays in flight."""
        self.stopped.add(member)

    def settle(self, rounds: int = 30) -> None:
        """A fault-free continuation: ``rounds`` times, deliver everything in flight, then run every
        running member's enabled progress timers (BECOME_SERVER, the retransmit task, STABLE)."""
        for _ in range(rounds):
            while self.flight:
                self._receive(self.flight.pop(0))
            for member, engine in self.engines.items():
                if member in self.stopped:
                    continue
                for timer in engine.enabled_timers():
                    kind, peer = timer if isinstance(timer, tuple) else (timer, None)  # NAKACK4: (kind, peer)
                    name = self.spec.timer_names[kind]
                    if name not in self.spec.fault_timers:
                        self.timer(member, name, peer)

    # -- properties --------------------------------------------------------------------------------
    def holds(self, prop: str) -> bool:
        """Whether ``prop`` holds on what the engines did so far (liveness: call ``settle`` first)."""
        if prop in ("no_duplicate", "in_order", "delivered_was_sent", "purge_covered", "window_bounded",
                    "queue_within_bound", "no_premature_xmit_req", "no_self_delivery"):
            return prop not in self.violations
        if prop == "eventually_delivered":
            return not self.undelivered()
        if prop == "senders_released":  # NAKACK4: no running member holds a send
            return not any(getattr(e.snapshot(), "sending", ()) for m, e in self.engines.items()
                           if m not in self.stopped)
        if prop == "no_spurious_xmit_req":  # NAKACK4: rule 9, or a seqno a thread holds unsent
            return not {"no_premature_xmit_req", "no_spurious_xmit_req"} & self.violations
        if self.spec.judge_member is not None and prop in self.spec.scriptable:
            return prop not in self.violations
        raise ValueError(f"no engine-level check for property {prop!r}")

    def undelivered(self) -> list[str]:
        """What a running member sharing a view with a running sender, with a window for it, lacks."""
        views = {m: e.snapshot() for m, e in self.engines.items() if m not in self.stopped}
        out = []
        for sender, s in views.items():
            for receiver, r in views.items():
                window = dict(r.windows).get(sender)
                if window is None or sender not in r.members or receiver not in s.members:
                    continue
                out += [f"#{n} from {sender} at {receiver}" for n in range(window.delivered + 1, s.seqno + 1)]
        return out

    # -- internals ---------------------------------------------------------------------------------
    def _receive(self, datagram: Flying) -> None:
        self.young.discard((datagram.src, datagram.dst, datagram.data))
        if datagram.dst in self.stopped:
            return  # its socket is closed
        self.engines[datagram.dst].received(datagram.src, datagram.data, now=0)
        kind = type(datagram.msg).__name__
        self._collect(datagram.dst, round_end=kind in ("StableMsg", "StabilityMsg"))

    def _collect(self, member: str, *, original: bool = False, round_end: bool = False) -> None:
        """Take ``member``'s output (in flight is a set, as in the world), then check the state."""
        engine = self.engines[member]
        out = [Flying(member, dst, self.spec.decode(data), data, original and dst != member)
               for dst, data in engine.datagrams_to_send()]
        if round_end:
            self._check_premature(member, out)
        for d in out:
            if not any((f.src, f.dst, f.data) == (d.src, d.dst, d.data) for f in self.flight):
                self.flight.append(d)
                if d.original:
                    self.young.add((d.src, d.dst, d.data))
        self._deliveries(member, engine.deliveries())
        self._check_state()

    def _check_premature(self, member: str, out: list[Flying]) -> None:
        """Rule 9: a round's end that asks for a young original on its way to ``member``."""
        asked = {(d.dst, s) for d in out if type(d.msg).__name__ == "NakXmitReqMsg" for s in d.msg.request.seqnos}
        for sender, seqno in asked:  # NAKACK4: a seqno an application thread of the sender holds unsent
            held = getattr(self.engines[sender].snapshot(), "sending", ()) if sender in self.engines else ()
            if any(s == seqno for s, _ in held):
                self.violations.add("no_spurious_xmit_req")
        for f in self.flight:
            if f.dst == member and (f.src, f.dst, f.data) in self.young and (f.src, f.msg.seqno) in asked:
                self.violations.add("no_premature_xmit_req")
        self.young = {y for y in self.young if y[1] != member}

    def _deliveries(self, member: str, delivered: list[tuple[str, bytes]]) -> None:
        windows = dict(self.engines[member].snapshot().windows)
        for src in self.members:
            window = windows.get(src)
            before = self.windows.pop((src, member), None)
            if window is None or before is None or window.delivered < before:
                if (src, member) in self.channels:
                    self.channels[src, member] = fifo.new_incarnation(self.channels[src, member])
            if window is not None:
                self.windows[src, member] = window.delivered
        for src, payload in delivered:
            number = payload_number(payload)
            self.delivered.setdefault((src, member), set()).add(number)
            if not 1 <= number <= self.sent.get(src, 0):
                self.violations.add("delivered_was_sent")
            if src == member and (self.settings.get("dont_loopback") or (src, number) in self.flagged):
                self.violations.add("no_self_delivery")
            channel = fifo.deliver(self.channels.get((src, member), fifo.Channel()), number)
            self.channels[src, member] = channel
            if not fifo.no_duplicate(channel):
                self.violations.add("no_duplicate")
            if not fifo.in_order(channel):
                self.violations.add("in_order")

    def _check_state(self) -> None:
        views = {m: e.snapshot() for m, e in self.engines.items()}
        bound = self.settings.get("window_bound")
        queue = self.settings.get("queue_bound")
        judge = self.spec.judge_member
        for member, view in views.items():
            if judge is not None:
                self.violations |= judge(self.engines[member], self.settings)
            if bound is not None and not self.settings.get("xmit_interval", 1) > 0 and any(
                    self._above_permanent_gap(member, p, w, view) > bound for p, w in view.windows if p != member):
                self.violations.add("window_bounded")
            if queue is not None and len(view.queue) > queue:
                self.violations.add("queue_within_bound")
        for sender, s in views.items():
            own = dict(s.windows).get(sender)
            for receiver, r in views.items():
                window = dict(r.windows).get(sender)
                if own is None or window is None or receiver == sender or receiver in self.merging:
                    continue
                if sender in r.members and receiver in s.members and window.delivered < own.low:
                    self.violations.add("purge_covered")

    def _above_permanent_gap(self, member: str, sender: str, window: Any, view: Any) -> int:
        """How many messages ``window`` holds above its lowest gap that no copy in flight to ``member``
        and nothing in its become_server_queue can fill (the spec's window_bounded)."""
        held = {seqno for seqno, _ in window.buffered}
        coming = {f.msg.seqno for f in self.flight if (f.src, f.dst) == (sender, member)
                  and type(f.msg).__name__ == "McastMsg"}
        coming |= {m.seqno for src, m in view.queue if src == sender and type(m).__name__ == "McastMsg"}
        top = max(held, default=window.delivered)
        permanent = [g for g in range(window.delivered + 1, top) if g not in held and g not in coming]
        return sum(seqno > permanent[0] for seqno in held) if permanent else 0

    def _find(self, src: str, dst: str, kind: str, fields: dict[str, object], *, remove: bool) -> Flying | None:
        want = self.spec.kinds[kind]
        for index, d in enumerate(self.flight):
            if (d.src, d.dst) == (src, dst) and isinstance(d.msg, want) and self._matches(d.msg, fields):
                return self.flight.pop(index) if remove else d
        self.skipped.append(f"{kind}{fields} from {src} to {dst}: not in flight")
        return None

    def _matches(self, msg: Any, fields: dict[str, object]) -> bool:
        """The spec's fields (member names for members, payload numbers) against the decoded message."""
        return all(self._field(msg, name) == value for name, value in fields.items())

    def _field(self, msg: Any, name: str) -> object:
        if name == "seqnos":  # a tuple, as the script's fields hold it (replay's ``_fields``)
            return tuple(msg.request.seqnos)
        if name == "digest":  # per member, in the script's member order: [hd, hr] or None
            entries = {m: [hd, hr] for m, hd, hr in msg.digest}
            return [entries.get(m) for m in self.members]
        value = getattr(msg, name)
        if name == "payload":
            return payload_number(value)
        if name == "view":
            return list(value)
        return value
