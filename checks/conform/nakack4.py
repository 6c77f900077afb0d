"""The NAKACK4 engines as the lockstep harness drives them.

This module owns the mapping between a NAKACK4 multicast world (``models/multicast_world.py``) and
``impl/nakack4``: which bytes stand for a world packet, which engine state stands for a spec member,
how each world action becomes engine calls, and the engines' configuration under the harness. It
registers them as ``BINDING`` (``checks/conform/engines.py``).

World actions and the engine calls they become (as NAKACK2's, ``checks/conform/nakack2.py``,
whose ``drive`` this reuses for deliveries, views, joins, merges and stops):

- ``AppMcast(src)``: ``multicast(payload n)`` at src (an application thread takes a seqno; with
  the window full, or send_atomically off, the engine holds the send as the spec holds the thread);
- ``FireTimer``: ``fire_timer(kind, peer)``: the retransmit task, BECOME_SERVER, ``SEND`` (the held
  send ``peer`` is added and passed down: a blocked thread released) and the ``DELIVER_FAULT``
  fault (JGRP-3034) for sender ``peer``;
- ``DeliverPacket`` / ``DuplicatePacket``, ``InstallView``, ``AnswerJoin``, ``MergeView``, ``Stop``,
  ``LosePacket``, ``DropBelow``: as NAKACK2.

The engines never pass held sends down by themselves here (``resume_blocked_sends`` off): the
world's SEND timers decide when each blocked thread moves, so every interleaving the spec
explores is reproduced. Time: ``handle_timer`` is never called and ``now`` stays 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from checks.conform import reference_codec
from checks.conform.engines import EngineBinding, same_flags
from checks.conform.nakack2 import Nakack2Engines, window_views, wire_digest
from checks.conform.reference_codec import disagreement, packet_encoder
from checks.conform.script import DELIVERY, ScriptProtocol
from impl.common import spec_payload
from impl.nakack4 import Config, EngineView, Nakack4Engine, Variant, codec
from impl.nakack4.codec import (
    AckMsg,
    HighestSeqnoMsg,
    JoinRspMsg,
    McastMsg,
    NakXmitReqMsg,
    WireMsg,
    XmitRspMsg,
    encode,
)
from impl.wire import XmitReqMsg
from models.multicast_world import AppMcast
from models.world import FireTimer, Packet
from spec import nakack4 as nak
from spec.nakack4_state import NO_ENTRY, READY, STUCK


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
    if isinstance(msg, nak.Ack):
        return AckMsg(msg.seqno)
    if isinstance(msg, nak.JoinRsp):
        return JoinRspMsg(tuple(msg.view), wire_digest(msg.digest))
    raise TypeError(f"not a NAKACK4 message: {msg!r}")


def wire_bytes(packet: Packet) -> bytes:
    """The datagram a world packet stands for."""
    return encode(wire_message(packet.msg))


def harness_config(spec_cfg: nak.Config) -> Config:
    """The engine configuration that behaves like ``spec_cfg`` under the harness: the same
    settings and variant flags, held sends passed down only by the world's SEND timers, resends
    not bounded (resend_factor 0, as the spec: the clock never moves)."""
    return Config(capacity=spec_cfg.capacity, ack_threshold=spec_cfg.ack_threshold,
                  send_atomically=spec_cfg.send_atomically, use_mcast_xmit=spec_cfg.use_mcast_xmit,
                  become_server_queue_size=spec_cfg.become_server_queue_size, dont_block=spec_cfg.dont_block,
                  dont_loopback=spec_cfg.dont_loopback, deliver_exceptions=spec_cfg.deliver_exceptions,
                  variant=same_flags(spec_cfg.variant, Variant), resume_blocked_sends=False, resend_factor=0)


class Nakack4Engines(Nakack2Engines):
    """n NAKACK4 engines standing for the n members of a multicast world."""

    engine_class = Nakack4Engine  # type: ignore[assignment]
    wire_bytes = staticmethod(wire_bytes)
    reference_bytes = staticmethod(packet_encoder(reference_codec.nakack4))  # issue 19 item 6

    @staticmethod
    def codec_disagreement(packet: Packet) -> str | None:
        return disagreement(packet.msg, reference_codec.nakack4, wire_message, encode, codec.decode)

    @staticmethod
    def engine_config(spec_cfg: nak.Config) -> Config:  # type: ignore[override]
        return harness_config(spec_cfg)

    @staticmethod
    def spec_view(node: nak.Node) -> EngineView[int]:  # type: ignore[override]
        return view_of_spec_node(node)

    def drive(self, action: Any, payload_number: int, before: Any = None) -> int | None:
        if isinstance(action, AppMcast):
            oob = self.world is not None and (action.src, payload_number) in self.world.bounds.oob
            self.engines[action.src].multicast(spec_payload(payload_number), now=self.now, oob=oob)
            return int(action.src)
        if isinstance(action, FireTimer):
            timer = action.timer
            self.engines[action.member].fire_timer(timer.kind, timer.peer, now=self.now)
            return int(action.member)
        return super().drive(action, payload_number, before)


def view_of_spec_node(node: nak.Node) -> EngineView[int]:
    """The engines' view of a spec member (``impl/nakack4/snapshot.py``'s mapping), peers being the
    spec's member numbers."""
    windows = window_views(node)
    return EngineView(
        node.me, node.members, node.seqno, windows,
        tuple((p, n) for p, n in enumerate(node.acks_counted) if n),
        frozenset(p for p, flag in enumerate(node.ack_pending) if flag),
        tuple((p, a) for p, a in enumerate(node.ack_table) if a != NO_ENTRY), node.ack_min,
        node.is_server, node.become_server_pending, tuple((src, wire_message(msg)) for src, msg in node.queue),
        tuple((p, v) for p, v in enumerate(node.xmit_last) if v != 0), node.skip_next_resend,
        tuple((seqno, spec_payload(payload)) for seqno, payload in node.sending),
        tuple((p, state) for p, state in enumerate(node.deliverer) if state != READY))


def script_engine(variant: Any, me: str, founders: Sequence[str], settings: dict[str, int]) -> Nakack4Engine[str]:
    """A NAKACK4 engine for a script (``checks/conform/mcast_script.py``): the model's settings and
    ``variant``, a founder if ``me`` is one of ``founders``, else a joiner; held sends passed down
    only by the script's SEND timers, as the trace's."""
    config = Config(capacity=settings.get("capacity", 16384), ack_threshold=settings.get("ack_threshold", 0),
                    send_atomically=bool(settings.get("send_atomically", False)),
                    use_mcast_xmit=bool(settings.get("use_mcast_xmit", True)),
                    become_server_queue_size=settings.get("become_server_queue_size", 50),
                    dont_block=bool(settings.get("dont_block", False)),
                    dont_loopback=bool(settings.get("dont_loopback", False)),
                    deliver_exceptions=bool(settings.get("deliver_exceptions", False)),
                    variant=variant, resume_blocked_sends=False, resend_factor=0)
    return Nakack4Engine[str](config, me=me, members=founders, now=0)


def judge_member(engine: Nakack4Engine[Any], settings: dict[str, int]) -> frozenset[str]:
    """The state properties of ``spec/nakack4_state.py`` one engine violates, judged on its snapshot
    (the spec's definitions over ``EngineView``'s fields) and its blocked sends."""
    violated = set()
    view = engine.snapshot()
    windows = dict(view.windows)
    own = windows.get(view.me)
    held = {seqno for seqno, _ in view.sending}
    if own is None:
        if held:
            violated.add("seqno_discipline")
    else:
        stored = set(range(own.low + 1, own.delivered + 1)) | {seqno for seqno, _ in own.buffered}
        high = max(stored, default=own.delivered)
        if high > view.seqno or stored & held or stored | held != set(range(own.low + 1, view.seqno + 1)):
            violated.add("seqno_discipline")
        if {p for p, _ in view.ack_table} != set(view.members):
            violated.add("ack_table_members")
        if any(seqno - own.low <= settings.get("capacity", 16384) for seqno in engine.blocked_sends):
            violated.add("blocks_only_when_full")
    acks = [a for _, a in view.ack_table]
    if acks and view.ack_min != min(acks):
        violated.add("ack_min_is_min")
    if any(state == STUCK for _, state in view.deliverer):
        violated.add("deliverer_released")
    capacity = settings.get("capacity", 16384)
    if any(w.highest_received - w.low > capacity for _, w in view.windows):
        violated.add("window_within_capacity")
    queue_size = settings.get("become_server_queue_size", 50)
    if len(view.queue) > (queue_size if queue_size > 0 else 50):
        violated.add("queue_within_bound")
    return frozenset(violated)


# The script of a multicast trace is ``checks/conform/mcast_script.McastScript``; the properties it
# judges on the engines are ``scriptable`` (the state ones through ``judge_member``).
STATE_PROPERTIES = frozenset({"seqno_discipline", "ack_table_members", "ack_min_is_min", "deliverer_released",
                              "window_within_capacity", "queue_within_bound", "blocks_only_when_full"})
SCRIPT = ScriptProtocol(
    "NAKACK4", "impl.nakack4", Variant, script_engine, codec.decode,
    {"MSG": McastMsg, "XMIT_REQ": NakXmitReqMsg, "XMIT_RSP": XmitRspMsg, "HIGHEST_SEQNO": HighestSeqnoMsg,
     "ACK": AckMsg, "JOIN_RSP": JoinRspMsg},
    {"Data": "MSG", "XmitReq": "XMIT_REQ", "XmitRsp": "XMIT_RSP", "HighestSeqno": "HIGHEST_SEQNO", "Ack": "ACK",
     "JoinRsp": "JOIN_RSP"},
    nak.TIMER_NAMES, ("xmit",), frozenset(f.name for f in fields(Variant)),
    DELIVERY | STATE_PROPERTIES | frozenset({"purge_covered", "no_spurious_xmit_req", "eventually_delivered",
                                             "senders_released", "no_self_delivery"}),
    seqno_timers=frozenset({"send"}), fault_timers=frozenset({"deliver_fault"}), judge_member=judge_member)
BINDING = EngineBinding("nakack4", Nakack4Engines, SCRIPT, codec.MAGIC, codec.decode)
