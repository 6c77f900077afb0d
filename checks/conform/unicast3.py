"""The UNICAST3 engines as the lockstep harness and the scripts drive them.

This module owns the mapping between a UNICAST3 world of ``models/`` and ``impl/unicast3``: which
bytes stand for a world packet, which engine state stands for a spec member, how the engines are
configured under the harness and under a script, and the script's names for messages and timers.
It registers them as ``BINDING`` (``checks/conform/engines.py``).

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now``; every
real duration is set far away (``FAR``), so only the timers the world fires act, as in the spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from checks.conform import reference_codec
from checks.conform.engines import FAR, EngineBinding, NoEngine, WorldEngines, same_flags
from checks.conform.reference_codec import disagreement, packet_encoder
from checks.conform.script import DELIVERY, LIVENESS, ScriptProtocol
from impl.common import spec_payload
from impl.unicast3 import Config, EngineView, RecvView, SendView, Unicast3Engine, Variant, codec
from impl.unicast3.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg, encode
from models.world import Packet
from spec import unicast3 as u3


def wire_message(msg: u3.Msg) -> WireMsg:
    """The codec message a spec message stands for (payload n is ``spec_payload(n)``)."""
    if isinstance(msg, u3.Data):
        return DataMsg(msg.seqno, msg.conn_id, msg.first, spec_payload(msg.payload), msg.oob)
    if isinstance(msg, u3.Ack):
        return AckMsg(msg.seqno, msg.conn_id, msg.ts)
    if isinstance(msg, u3.SendFirstSeqno):
        return SendFirstSeqnoMsg(msg.ts)
    if isinstance(msg, u3.XmitReq):
        return XmitReqMsg(msg.seqnos)
    return CloseMsg(msg.conn_id)


def wire_bytes(packet: Packet) -> bytes:
    """The datagram a world packet stands for."""
    return encode(wire_message(packet.msg))


class Unicast3Engines(WorldEngines):
    """n UNICAST3 engines standing for the n members of a world."""

    engine_class = Unicast3Engine
    knows_me = True  # decision 26: messages to self
    wire_bytes = staticmethod(wire_bytes)  # the datagram a world packet stands for
    reference_bytes = staticmethod(packet_encoder(reference_codec.unicast3))  # issue 19 item 6

    @staticmethod
    def codec_disagreement(packet: Packet) -> str | None:
        return disagreement(packet.msg, reference_codec.unicast3, wire_message, encode, codec.decode)

    @staticmethod
    def engine_config(spec_cfg: u3.Config) -> Config:
        if spec_cfg.xmit_per_connection:
            raise NoEngine("timers.xmit_per_connection: the production engine runs its retransmit task for "
                           "every connection at once, so a run split per connection has no engine steps")
        return harness_config(same_flags(spec_cfg.variant, Variant), spec_cfg.ack_threshold)

    @staticmethod
    def spec_view(node: u3.Node) -> EngineView[int]:
        return view_of_spec_node(node)


def harness_config(variant: Variant, ack_threshold: int = 100) -> Config:
    """The engine configuration the harness and the scripts drive: every real duration far away,
    so that only the timers fired by name act, as in the spec; resends not bounded (resend_factor 0, as
    the spec)."""
    return Config(variant=variant, sync_min_interval=FAR, conn_expiry_timeout=FAR, conn_close_timeout=FAR,
                  resend_factor=0, ack_threshold=ack_threshold)


def script_engine(variant: Any, members: Sequence[str], settings: dict[str, int], me: str) -> Unicast3Engine[str]:
    """UNICAST3 engine ``me`` for a script (``harness_config``)."""
    return Unicast3Engine[str](harness_config(variant, settings.get("ack_threshold", 100)), members=members, now=0,
                               me=me)


SCRIPT = ScriptProtocol(
    "UNICAST3", "impl.unicast3", Variant, script_engine, codec.decode,
    {"DATA": DataMsg, "ACK": AckMsg, "SEND_FIRST_SEQNO": SendFirstSeqnoMsg, "XMIT_REQ": XmitReqMsg, "CLOSE": CloseMsg},
    {"Data": "DATA", "Ack": "ACK", "SendFirstSeqno": "SEND_FIRST_SEQNO", "XmitReq": "XMIT_REQ", "Close": "CLOSE"},
    u3.TIMER_NAMES, ("xmit",), frozenset(f.name for f in fields(u3.Variant)),
    frozenset({"no_spurious_purge", "purge_covered", "sync_rate_limited", "no_spurious_reset"}) | DELIVERY | LIVENESS,
    rate_limited_sync=SendFirstSeqnoMsg, self_path=True)
BINDING = EngineBinding("unicast3", Unicast3Engines, SCRIPT, codec.MAGIC, codec.decode)


def view_of_spec_node(node: u3.Node) -> EngineView[int]:
    """The view of a spec member, peers being the spec's member numbers."""
    send = tuple(
        (peer, SendView(e.conn_id, e.state, e.acked, tuple(spec_payload(p) for p in e.unacked),
                        e.watermark, e.last_ts, tuple(sorted(e.oob)), tuple(sorted(e.dont_loopback))))
        for peer, e in enumerate(node.send)
        if e is not None
    )
    recv = tuple(
        (peer, RecvView(e.conn_id, e.state, e.delivered,
                        tuple(e.delivered + 1 + i for i, m in enumerate(e.buffered) if m is not None),
                        e.ack_pending))
        for peer, e in enumerate(node.recv)
        if e is not None
    )
    cache = tuple((peer, frozenset((m.seqno, m.conn_id, spec_payload(m.payload)) for m in cached))
                  for peer, cached in enumerate(node.cache) if cached)
    xmit_last = tuple((peer, last) for peer, last in enumerate(node.xmit_last) if last != 0)
    return EngineView(node.members, send, recv, cache, node.sync_sent, xmit_last, node.timestamper,
                      node.next_conn_id)

