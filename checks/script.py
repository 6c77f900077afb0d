"""``EngineScript``: UNICAST3 engines driven by a readable script of network events.

This is what a regression test emitted by ``seqcheck replay --emit-test`` calls. A script names
events the way a trace chart shows them ("B receives the ACK(seqno=2) A... from B") and the script
finds the datagram the engine *under test* really sent, so one script runs on the defective
engine and on the fixed one: on the fixed engine, timestamps differ, some datagrams are never
sent (the event is then skipped and listed in ``skipped``) and others are sent in addition (they
stay in flight). Properties are evaluated on the engines' own state and output.

Payload n of a pair is ``spec_payload(n)``; time stands still (timers are fired explicitly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from checks.engines import FAR
from impl.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg, decode
from impl.unicast3 import Config, LocalProtocolError, Unicast3Engine, Variant, payload_number, spec_payload
from spec import unicast3 as u3

KINDS: dict[str, type] = {"DATA": DataMsg, "ACK": AckMsg, "SEND_FIRST_SEQNO": SendFirstSeqnoMsg,
                          "XMIT_REQ": XmitReqMsg, "CLOSE": CloseMsg}
TIMERS = {"xmit": u3.XMIT, "idle_send": u3.IDLE_SEND, "idle_recv": u3.IDLE_RECV, "close_send": u3.CLOSE_SEND,
          "close_recv": u3.CLOSE_RECV, "sync_expired": u3.SYNC_EXPIRED}
IGNORED_FIELDS = {"timestamp"}  # differ between engines that took the same steps


@dataclass
class Datagram:
    src: str
    dst: str
    msg: WireMsg
    data: bytes


@dataclass
class EngineScript:
    members: Sequence[str]
    variant: Variant = field(default_factory=Variant)
    flight: list[Datagram] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    sent: dict[tuple[str, str], int] = field(default_factory=dict)
    delivered: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    syncs: dict[tuple[str, str], int] = field(default_factory=dict)  # SEND_FIRST_SEQNO since expiry
    violations: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        config = Config(variant=self.variant, sync_min_interval=FAR, conn_expiry_timeout=FAR, conn_close_timeout=FAR)
        self.engines = {m: Unicast3Engine[str](config, members=self.members, now=0) for m in self.members}

    # -- events ------------------------------------------------------------------------------------
    def send(self, src: str, dst: str) -> None:
        """The application of ``src`` sends its next message to ``dst``."""
        number = self.sent[src, dst] = self.sent.get((src, dst), 0) + 1
        self.engines[src].send(dst, spec_payload(number), now=0)
        self._collect(src)

    def deliver(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives the in-flight datagram from ``src`` of that kind and those fields."""
        datagram = self._find(src, dst, kind, fields, remove=True)
        if datagram is not None:
            self.engines[dst].received(src, datagram.data, now=0)
            self._collect(dst)

    def duplicate(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """``dst`` receives a copy; the datagram stays in flight."""
        datagram = self._find(src, dst, kind, fields, remove=False)
        if datagram is not None:
            self.engines[dst].received(src, datagram.data, now=0)
            self._collect(dst)

    def lose(self, src: str, dst: str, kind: str, **fields: object) -> None:
        """The network drops the datagram."""
        self._find(src, dst, kind, fields, remove=True)

    def timer(self, member: str, kind: str, peer: str | None = None) -> None:
        """Fire one of the spec's timers at ``member`` (skipped where the engine has no such timer now)."""
        try:
            self.engines[member].fire_timer(TIMERS[kind], peer, now=0)
        except LocalProtocolError as error:
            self.skipped.append(f"timer {kind} at {member}: {error}")
            return
        if kind == "sync_expired" and peer is not None:
            self.syncs[member, peer] = 0
        self._collect(member)

    def view(self, member: str, members: Sequence[str]) -> None:
        self.engines[member].install_view(members, now=0)
        self._collect(member)

    def remove_receiver(self, member: str, peer: str) -> None:
        """JGroups' removeReceiveConnection test hook."""
        self.engines[member].remove_receive_connection(peer)
        self._collect(member)

    def settle(self, rounds: int = 30) -> None:
        """A fault-free continuation: ``rounds`` times, deliver everything in flight, let every rate
        limit expire and run every retransmit task (a stalled sender resends on its second run)."""
        for _ in range(rounds):
            while self.flight:
                d = self.flight.pop(0)
                self.engines[d.dst].received(d.src, d.data, now=0)
                self._collect(d.dst)
            for member, engine in self.engines.items():
                for peer in engine.snapshot(now=0).sync_sent:
                    self.timer(member, "sync_expired", peer)
                self.timer(member, "xmit")

    # -- properties --------------------------------------------------------------------------------
    def holds(self, prop: str) -> bool:
        """Whether ``prop`` holds on what the engines did so far (liveness: call ``settle`` first)."""
        if prop in ("no_spurious_purge", "purge_covered"):
            return "purge" not in self.violations
        if prop == "sync_rate_limited":
            return "sync" not in self.violations
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
    def _collect(self, member: str) -> None:
        engine = self.engines[member]
        for dst, data in engine.datagrams_to_send():
            msg = decode(data)
            self.flight.append(Datagram(member, dst, msg, data))
            if isinstance(msg, SendFirstSeqnoMsg):
                count = self.syncs[member, dst] = self.syncs.get((member, dst), 0) + 1
                if count > 1:
                    self.violations.add("sync")
        for src, payload in engine.deliveries():
            self.delivered.setdefault((src, member), set()).add(payload_number(payload))
        self._check_purges()

    def _check_purges(self) -> None:
        views = {m: e.snapshot(now=0) for m, e in self.engines.items()}
        for sender, view in views.items():
            for receiver, entry in view.send:
                window = dict(views[receiver].recv).get(sender)
                if window is not None and window.conn_id == entry.conn_id and window.delivered < entry.acked:
                    self.violations.add("purge")

    def _find(self, src: str, dst: str, kind: str, fields: dict[str, object], *, remove: bool) -> Datagram | None:
        want = KINDS[kind]
        for index, d in enumerate(self.flight):
            if (d.src, d.dst) == (src, dst) and isinstance(d.msg, want) and _matches(d.msg, fields):
                return self.flight.pop(index) if remove else d
        self.skipped.append(f"{kind}{fields} from {src} to {dst}: not in flight")
        return None


def _matches(msg: WireMsg, fields: dict[str, object]) -> bool:
    for name, value in fields.items():
        if name in IGNORED_FIELDS:
            continue
        actual = getattr(msg, name)
        if name == "payload" and isinstance(actual, bytes):
            actual = payload_number(actual)
        if name == "seqnos":
            actual, value = list(actual), list(value)  # type: ignore[call-overload]
        if actual != value:
            return False
    return True
