"""The NAKACK2 engines as the lockstep harness drives them.

This module owns the mapping between a NAKACK2 multicast world (``models/multicast_world.py``) and
``impl/nakack2``: which bytes stand for a world packet, which engine state stands for a spec member,
how each world action becomes engine calls, and the engines' configuration under the harness. It
registers them as ``BINDING`` (``checks/conform/engines.py``).

World actions (``models/multicast_world.py`` rules 2 to 8) and the engine calls they become:

- ``AppMcast(src)``: ``multicast(payload n)`` at src (n: the sender's n-th multicast);
- ``DeliverPacket`` / ``DuplicatePacket``: ``received(src, datagram)`` at the destination, unless it
  stopped (its socket is closed: nothing is called, as the world discards the packet);
- ``DeliverBatch`` (rule 11): ``received_batch(src, datagrams)`` at the destination, in the batch's order;
- ``FireTimer``: ``fire_timer(kind)`` (the retransmit task, STABLE's gossip, BECOME_SERVER);
- ``InstallView``: ``install_view(members)``;
- ``AnswerJoin(coordinator, joiner)``: at the coordinator, ``answer_join(joiner, view)`` then
  ``install_view(view)``, ``view`` being the coordinator's next scripted view (one step, rule 5);
- ``MergeView(member, view)``: ``merge_digest(digest)`` then ``install_view(view)`` (rule 10);
- ``Stop``: the member acts no more; ``LosePacket``, ``DropBelow``: no member acts.

Time: the harness never calls ``handle_timer`` and keeps ``now`` at 0, so only the timers the
world fires act, exactly as in the spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from checks.conform import reference_codec
from checks.conform.engines import EngineBinding, WorldEngines, same_flags
from checks.conform.reference_codec import disagreement, packet_encoder
from checks.conform.script import ScriptProtocol
from impl.common import spec_payload
from impl.nakack2 import Config, EngineView, Nakack2Engine, Variant, WindowView, codec
from impl.nakack2.codec import (
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    StabilityMsg,
    StableMsg,
    WireMsg,
    XmitRspMsg,
    encode,
)
from impl.wire import XmitReqMsg
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, McastEnv, MergeView, MulticastWorld, Stop
from models.world import DeliverBatch, DeliverPacket, DuplicatePacket, FireTimer, InstallView, LosePacket, Packet
from spec import nakack2 as nak
from spec.nakack2_state import NO_ENTRY, Digest


def wire_digest(digest: Digest) -> tuple[tuple[int, int, int], ...]:
    """A spec digest (indexed by member, None for no entry) as the codec's (member, hd, hr) triples."""
    return tuple((member, entry[0], entry[1]) for member, entry in enumerate(digest) if entry is not None)


def wire_message(msg: Any) -> WireMsg:
    """The codec message a spec message stands for (payload n is ``spec_payload(n)``)."""
    if isinstance(msg, nak.Data):
        return McastMsg(msg.seqno, spec_payload(msg.payload), msg.oob)
    if isinstance(msg, nak.XmitReq):
        return NakXmitReqMsg(msg.sender, XmitReqMsg(msg.seqnos))
    if isinstance(msg, nak.XmitRsp):
        return XmitRspMsg(msg.sender, msg.seqno, spec_payload(msg.payload), msg.oob)
    if isinstance(msg, nak.HighestSeqno):
        return HighestSeqnoMsg(msg.seqno)
    if isinstance(msg, nak.StableVote):
        return StableMsg(tuple(msg.view), wire_digest(msg.digest))
    if isinstance(msg, nak.Stability):
        return StabilityMsg(tuple(msg.view), wire_digest(msg.digest))
    if isinstance(msg, nak.JoinRsp):
        return JoinRspMsg(tuple(msg.view), wire_digest(msg.digest))
    raise TypeError(f"not a NAKACK2 message: {msg!r}")


def wire_bytes(packet: Packet) -> bytes:
    """The datagram a world packet stands for."""
    return encode(wire_message(packet.msg))


def harness_config(spec_cfg: nak.Config) -> Config:
    """The engine configuration that behaves like ``spec_cfg`` under the harness (the same settings
    and variant flags; durations only matter by their sign: ``handle_timer`` is never called);
    resends not bounded (resend_factor 0, as the spec: the clock never moves, so a budget per
    interval would be one budget per walk)."""
    return Config(xmit_interval=spec_cfg.xmit_interval, use_mcast_xmit=spec_cfg.use_mcast_xmit,
                  resend_last_seqno=spec_cfg.resend_last_seqno,
                  resend_last_seqno_max_times=spec_cfg.resend_last_seqno_max_times,
                  become_server_queue_size=spec_cfg.become_server_queue_size, dont_loopback=spec_cfg.dont_loopback,
                  variant=same_flags(spec_cfg.variant, Variant), resend_factor=0)


class Nakack2Engines(WorldEngines):
    """n NAKACK2 engines standing for the n members of a multicast world."""

    engine_class = Nakack2Engine
    wire_bytes = staticmethod(wire_bytes)
    reference_bytes = staticmethod(packet_encoder(reference_codec.nakack2))  # issue 19 item 6

    @staticmethod
    def codec_disagreement(packet: Packet) -> str | None:
        return disagreement(packet.msg, reference_codec.nakack2, wire_message, encode, codec.decode)

    def __init__(self, spec_cfg: Any, members: int, initial_views: Sequence[frozenset[int]],
                 world: MulticastWorld | None = None) -> None:
        config = self.engine_config(spec_cfg)
        self.now = 0
        self.datagram = self.wire_bytes
        self.world = world
        self.stopped: set[int] = set()
        self.engines = [self.engine_class(config, me=m, members=initial_views[m], now=0) for m in range(members)]

    @classmethod
    def for_world(cls, world: Any) -> WorldEngines:
        return cls(world.cfg, world.n, world.initial_views, world)

    @staticmethod
    def engine_config(spec_cfg: nak.Config) -> Config:
        return harness_config(spec_cfg)

    @staticmethod
    def spec_view(node: nak.Node) -> EngineView[int]:
        return view_of_spec_node(node)

    def drive(self, action: Any, payload_number: int, before: Any = None) -> int | None:
        now = self.now
        if isinstance(action, AppMcast):
            bounds = None if self.world is None else self.world.bounds
            flagged = bounds is not None and (action.src, payload_number) in bounds.dont_loopback
            oob = bounds is not None and (action.src, payload_number) in bounds.oob
            self.engines[action.src].multicast(spec_payload(payload_number), now=now, dont_loopback=flagged, oob=oob)
            return int(action.src)
        if isinstance(action, (DeliverPacket, DuplicatePacket)):
            packet = action.packet
            if packet.dst in self.stopped:
                return None
            self.engines[packet.dst].received(packet.src, self.datagram(packet), now=now)
            return int(packet.dst)
        if isinstance(action, DeliverBatch):  # never offered to a stopped member (models/multicast_batch.py)
            first = action.packets[0]
            self.engines[first.dst].received_batch(first.src, [self.datagram(p) for p in action.packets], now=now)
            return int(first.dst)
        if isinstance(action, FireTimer):
            self.engines[action.member].fire_timer(action.timer.kind, now=now)
            return int(action.member)
        if isinstance(action, InstallView):
            self.engines[action.member].install_view(action.members, now=now)
            return int(action.member)
        if isinstance(action, AnswerJoin):
            assert self.world is not None and before is not None, "AnswerJoin needs the world and its state"
            env: McastEnv = self.world.env_table.values[before[self.world.n + 1]]
            view = self.world.next_view(env, action.coordinator)
            assert view is not None, action
            coordinator = self.engines[action.coordinator]
            coordinator.answer_join(action.joiner, view, now=now)
            coordinator.install_view(view, now=now)
            return int(action.coordinator)
        if isinstance(action, MergeView):
            assert self.world is not None and before is not None, "MergeView needs the world and its state"
            _, digest, members = self.world.merge_stimulus(before, frozenset(action.members))
            engine = self.engines[action.member]
            engine.merge_digest(wire_digest(digest), now=now)
            engine.install_view(members, now=now)
            return int(action.member)
        if isinstance(action, Stop):
            self.stopped.add(action.member)
            return None
        assert isinstance(action, (LosePacket, DropBelow)), action
        return None


def window_views(node: Any) -> tuple[tuple[int, WindowView], ...]:
    """A spec member's windows as the engines' snapshots show them (payloads as bytes, gaps left
    out, an OOB placeholder's payload empty: ``stored_payload``), by sender; NAKACK4's binding uses it too."""
    return tuple(
        (sender, WindowView(w.low, w.delivered, tuple(stored_payload(m) for m in w.kept),
                            tuple((w.delivered + 1 + i, stored_payload(m))
                                  for i, m in enumerate(w.buffered) if m is not None)))
        for sender, w in enumerate(node.windows) if w is not None)


def stored_payload(msg: Any) -> bytes:
    """What the engines store for a spec window's message: its payload as bytes, none for an OOB
    placeholder (the spec's payload 0 with the flag: spec/nakack2.py decision 17)."""
    return b"" if msg.oob and msg.payload == 0 else spec_payload(msg.payload)


def view_of_spec_node(node: nak.Node) -> EngineView[int]:
    """The engines' view of a spec member (``impl/nakack2/snapshot.py``'s mapping), peers being the
    spec's member numbers."""
    windows = window_views(node)
    return EngineView(
        node.me, node.members, node.seqno, windows, node.is_server, node.become_server_pending,
        tuple((src, wire_message(msg)) for src, msg in node.queue),
        tuple((p, v) for p, v in enumerate(node.xmit_last) if v != 0),
        tuple((p, v) for p, v in enumerate(node.stable_xmit) if v != NO_ENTRY),
        node.last_seqno_resent, node.num_resends, node.skip_next_resend, node.votes,
        wire_digest(node.merged), node.stable_suspended)


def script_engine(variant: Any, me: str, founders: Sequence[str], settings: dict[str, int]) -> Nakack2Engine[str]:
    """A NAKACK2 engine for a script (``checks/conform/mcast_script.py``): the model's settings and
    ``variant``, a founder if ``me`` is one of ``founders``, else a joiner; no resend bound."""
    config = Config(xmit_interval=settings.get("xmit_interval", 1000),
                    use_mcast_xmit=bool(settings.get("use_mcast_xmit", True)),
                    resend_last_seqno=bool(settings.get("resend_last_seqno", True)),
                    resend_last_seqno_max_times=settings.get("resend_last_seqno_max_times", 1),
                    become_server_queue_size=settings.get("become_server_queue_size", 50),
                    dont_loopback=bool(settings.get("dont_loopback", False)), variant=variant, resend_factor=0)
    return Nakack2Engine[str](config, me=me, members=founders, now=0)


# The script of a multicast trace is ``checks/conform/mcast_script.McastScript``; the properties it
# judges on the engines are ``scriptable``.
SCRIPT = ScriptProtocol(
    "NAKACK2", "impl.nakack2", Variant, script_engine, codec.decode,
    {"MSG": McastMsg, "XMIT_REQ": NakXmitReqMsg, "XMIT_RSP": XmitRspMsg, "HIGHEST_SEQNO": HighestSeqnoMsg,
     "STABLE": StableMsg, "STABILITY": StabilityMsg, "JOIN_RSP": JoinRspMsg},
    {"Data": "MSG", "XmitReq": "XMIT_REQ", "XmitRsp": "XMIT_RSP", "HighestSeqno": "HIGHEST_SEQNO",
     "StableVote": "STABLE", "Stability": "STABILITY", "JoinRsp": "JOIN_RSP"},
    nak.TIMER_NAMES, ("xmit", "stable"), frozenset(f.name for f in fields(Variant)),
    frozenset({"no_duplicate", "in_order", "delivered_was_sent", "purge_covered", "window_bounded",
               "queue_within_bound", "no_premature_xmit_req", "eventually_delivered", "no_self_delivery"}))
BINDING = EngineBinding("nakack2", Nakack2Engines, SCRIPT, codec.MAGIC, codec.decode)
