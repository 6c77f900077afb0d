"""The UNICAST2 engines as the lockstep harness drives them: one engine per world member.

This module owns the mapping between a UNICAST2 world of ``models/`` and ``impl/unicast2``: which
bytes stand for a world packet, which engine state stands for a spec member, how the engines are
configured under the harness and under a script, and the script's names for messages and timers.
It registers them as ``BINDING`` (``checks/conform/engines.py``).

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now``; every
real period is set far away (``FAR``) and the byte-triggered STABLE, which the spec leaves out, is
off (``max_bytes = 0``), so only the timers the world fires act, exactly as in the spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checks.conform import reference_codec
from checks.conform.engines import FAR, EngineBinding, WorldEngines, same_flags
from checks.conform.reference_codec import disagreement, packet_encoder
from checks.conform.script import DELIVERY, LIVENESS, ScriptProtocol
from impl.common import spec_payload
from impl.unicast2 import Config, EngineView, RecvView, SendView, Unicast2Engine, Variant, codec
from impl.unicast2.codec import AckMsg, DataMsg, SendFirstSeqnoMsg, StableMsg, WireMsg, XmitReqMsg, encode
from models.world import Packet
from spec import unicast2 as u2


def wire_message(msg: u2.Msg) -> WireMsg:
    """The codec message a spec message stands for (payload n is ``spec_payload(n)``)."""
    if isinstance(msg, u2.Data):
        return DataMsg(msg.seqno, msg.conn_id, msg.first, spec_payload(msg.payload))
    if isinstance(msg, u2.XmitReq):
        return XmitReqMsg(msg.seqnos)
    if isinstance(msg, u2.SendFirstSeqno):
        return SendFirstSeqnoMsg(msg.seqno, msg.ts)
    if isinstance(msg, u2.Stable):
        return StableMsg(msg.hd, msg.hr, msg.conn_id, msg.ts)
    return AckMsg(msg.seqno, msg.conn_id)


def wire_bytes(packet: Packet) -> bytes:
    """The datagram a world packet stands for."""
    return encode(wire_message(packet.msg))


class Unicast2Engines(WorldEngines):
    """n UNICAST2 engines standing for the n members of a world."""

    engine_class = Unicast2Engine
    wire_bytes = staticmethod(wire_bytes)  # the datagram a world packet stands for
    reference_bytes = staticmethod(packet_encoder(reference_codec.unicast2))  # issue 19 item 6

    @staticmethod
    def codec_disagreement(packet: Packet) -> str | None:
        return disagreement(packet.msg, reference_codec.unicast2, wire_message, encode, codec.decode)

    @staticmethod
    def engine_config(spec_cfg: u2.Config) -> Config:
        """The engine configuration that behaves like the spec's ``spec_cfg`` under the harness."""
        return harness_config(same_flags(spec_cfg.variant, Variant), spec_cfg.max_stable_msgs,
                              conn_expiry=spec_cfg.conn_expiry)

    @staticmethod
    def spec_view(node: u2.Node) -> EngineView[int]:
        return view_of_spec_node(node)


def harness_config(variant: Variant, max_stable_msgs: int, *, conn_expiry: bool = False) -> Config:
    """The engine configuration the harness and the scripts drive: periods far away (timers are
    fired by name), the byte-triggered STABLE off (the spec leaves it out), SEND_FIRST_SEQNO not
    rate-limited and resends not bounded (UNICAST2 as shipped: sync_min_interval and resend_factor 0),
    the reaper on only where the model has it."""
    return Config(variant=variant, max_stable_msgs=max_stable_msgs, max_bytes=0, xmit_interval=FAR,
                  stable_interval=FAR, sync_min_interval=0, resend_factor=0,
                  conn_expiry_timeout=FAR if conn_expiry else 0)


def script_engine(variant: Any, members: Sequence[str], settings: dict[str, int], me: str = "") -> Unicast2Engine[str]:
    """A UNICAST2 engine for a script (``harness_config``, the model's ``max_stable_msgs``)."""
    return Unicast2Engine[str](harness_config(variant, settings.get("max_stable_msgs", 5)), members=members, now=0)


SCRIPT = ScriptProtocol(
    "UNICAST2", "impl.unicast2", Variant, script_engine, codec.decode,
    {"DATA": DataMsg, "XMIT_REQ": XmitReqMsg, "SEND_FIRST_SEQNO": SendFirstSeqnoMsg, "STABLE": StableMsg,
     "ACK": AckMsg},
    {"Data": "DATA", "XmitReq": "XMIT_REQ", "SendFirstSeqno": "SEND_FIRST_SEQNO", "Stable": "STABLE", "Ack": "ACK"},
    u2.TIMER_NAMES, ("xmit", "stable"), frozenset({"no_conn_ids", "conn_id_first_only", "no_first_ack"}),
    frozenset({"no_spurious_purge", "purge_covered", "sync_resend_bounded", "no_spurious_reset"}) | DELIVERY
    | LIVENESS, u2.NO_CONN)
BINDING = EngineBinding("unicast2", Unicast2Engines, SCRIPT, codec.MAGIC, codec.decode)


def view_of_spec_node(node: u2.Node) -> EngineView[int]:
    """The view of a spec member, peers being the spec's member numbers."""
    send = tuple(
        (peer, SendView(e.conn_id, e.acked, tuple(spec_payload(p) for p in e.unacked), e.ack_received,
                        e.watermark, e.last_ts))
        for peer, e in enumerate(node.send)
        if e is not None
    )
    recv = tuple(
        (peer, RecvView(e.conn_id, e.delivered,
                        tuple((m.seqno, m.conn_id, m.first) for m in e.buffered if m is not None),
                        e.last_highest, e.stable_count))
        for peer, e in enumerate(node.recv)
        if e is not None
    )
    xmit_last = tuple((peer, last) for peer, last in enumerate(node.xmit_last) if last != 0)
    return EngineView(node.members, send, recv, xmit_last, node.timestamper, node.next_conn_id)

