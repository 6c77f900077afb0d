"""The UNICAST4 engines as the lockstep harness and the scripts drive them.

This module owns the mapping between a UNICAST4 world of ``models/`` and ``impl/unicast4``: which
bytes stand for a world packet (the spec side's from ``reference_codec.unicast4``), which engine
state stands for a spec member, how the engines are configured under the harness and under a
script, and the script's names for messages and timers. It registers them as ``BINDING``.

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now``; every
real duration is far away (``FAR``). A blocked application thread is the engine's blocked send,
which the engine does not resume by itself here (``resume_blocked_sends`` off): the world's
``Timer(SEND, peer, seqno)`` resumes it, as in the spec. A dead member's engine is never driven.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any

from checks.conform import reference_codec
from checks.conform.engines import FAR, EngineBinding, NoEngine, WorldEngines, same_flags
from checks.conform.reference_codec import disagreement, packet_encoder
from checks.conform.script import DELIVERY, LIVENESS, ScriptProtocol
from impl.common import spec_payload
from impl.unicast4 import Config, EngineView, RecvView, SendView, Unicast4Engine, Variant, codec
from impl.unicast4.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg, encode
from models.world import FireTimer, Packet
from spec import unicast4 as u4


def wire_message(msg: u4.Msg) -> WireMsg:
    """The codec message a spec message stands for (payload n is ``spec_payload(n)``)."""
    if isinstance(msg, u4.Data):
        return DataMsg(msg.seqno, msg.conn_id, msg.first, spec_payload(msg.payload), msg.oob)
    if isinstance(msg, u4.Ack):
        return AckMsg(msg.seqno, msg.conn_id, msg.ts)
    if isinstance(msg, u4.SendFirstSeqno):
        return SendFirstSeqnoMsg(msg.ts)
    if isinstance(msg, u4.XmitReq):
        return XmitReqMsg(msg.seqnos)
    return CloseMsg(msg.conn_id)


def wire_bytes(packet: Packet) -> bytes:
    """The datagram a world packet stands for."""
    return encode(wire_message(packet.msg))


class Unicast4Engines(WorldEngines):
    """n UNICAST4 engines standing for the n members of a world."""

    engine_class = Unicast4Engine
    knows_me = True  # decision 12: messages to self
    wire_bytes = staticmethod(wire_bytes)
    reference_bytes = staticmethod(packet_encoder(reference_codec.unicast4))

    @staticmethod
    def codec_disagreement(packet: Packet) -> str | None:
        return disagreement(packet.msg, reference_codec.unicast4, wire_message, encode, codec.decode)

    @staticmethod
    def engine_config(spec_cfg: u4.Config) -> Config:
        if spec_cfg.xmit_per_connection:
            raise NoEngine("timers.xmit_per_connection: the production engine runs its retransmit task for "
                           "every connection at once, so a run split per connection has no engine steps")
        return harness_config(same_flags(spec_cfg.variant, Variant), capacity=spec_cfg.capacity,
                              ack_threshold=spec_cfg.ack_threshold, first_conn_id=spec_cfg.first_conn_id,
                              dont_block=spec_cfg.dont_block)

    @staticmethod
    def spec_view(node: u4.Node) -> EngineView[int]:
        return view_of_spec_node(node)

    def drive(self, action: Any, payload_number: int, before: Any = None) -> int | None:
        """``WorldEngines.drive``, with the blocked send's seqno of a SEND timer."""
        if isinstance(action, FireTimer) and action.timer.kind == u4.SEND and action.member not in self.dead:
            timer = action.timer
            self.engines[action.member].fire_timer(timer.kind, timer.peer, timer.seqno, now=self.now)
            return int(action.member)
        return super().drive(action, payload_number, before)


def harness_config(variant: Variant, **settings: Any) -> Config:
    """The engine configuration the harness and the scripts drive: every real duration far away
    (only the timers fired by name act), blocked sends resumed only by the SEND timer, resends not
    bounded (resend_factor 0, as the spec)."""
    return Config(variant=variant, sync_min_interval=FAR, conn_expiry_timeout=FAR, conn_close_timeout=FAR,
                  resend_factor=0, resume_blocked_sends=False, **settings)


def script_engine(variant: Any, members: Sequence[str], settings: dict[str, int], me: str = "") -> Unicast4Engine[str]:
    """A UNICAST4 engine for a script (``harness_config`` with the model's [config])."""
    known = {"capacity", "ack_threshold", "first_conn_id"}
    given = {k: v for k, v in settings.items() if k in known}
    if "dont_block" in settings:
        given["dont_block"] = bool(settings["dont_block"])
    config = replace(harness_config(variant, **given), resume_blocked_sends=True)  # no SEND timer in a script
    return Unicast4Engine[str](config, members=members, now=0, me=me or None)


SCRIPT = ScriptProtocol(
    "UNICAST4", "impl.unicast4", Variant, script_engine, codec.decode,
    {"DATA": DataMsg, "ACK": AckMsg, "SEND_FIRST_SEQNO": SendFirstSeqnoMsg, "XMIT_REQ": XmitReqMsg, "CLOSE": CloseMsg},
    {"Data": "DATA", "Ack": "ACK", "SendFirstSeqno": "SEND_FIRST_SEQNO", "XmitReq": "XMIT_REQ", "Close": "CLOSE"},
    u4.TIMER_NAMES, ("xmit",), frozenset(f.name for f in fields(u4.Variant)),
    frozenset({"no_spurious_purge", "purge_covered", "no_spurious_reset"}) | DELIVERY | LIVENESS,
    rate_limited_sync=SendFirstSeqnoMsg)
BINDING = EngineBinding("unicast4", Unicast4Engines, SCRIPT, codec.MAGIC, codec.decode)


def view_of_spec_node(node: u4.Node) -> EngineView[int]:
    """The view of a spec member, peers being the spec's member numbers."""
    send = tuple(
        (peer, SendView(e.conn_id, e.state, e.acked,
                        tuple(None if p is None else spec_payload(p) for p in e.unacked), e.watermark, e.last_ts,
                        e.seqno, tuple((s, spec_payload(p)) for s, p in e.blocked), tuple(sorted(e.oob)),
                        tuple(sorted(e.dont_loopback)), tuple(sorted(e.oob_delivered)), e.acks_counted))
        for peer, e in enumerate(node.send) if e is not None)
    recv = tuple(
        (peer, RecvView(e.conn_id, e.state, e.delivered,
                        tuple(e.delivered + 1 + i for i, m in enumerate(e.buffered) if m is not None),
                        e.ack_pending, e.acks_counted,
                        tuple(e.delivered + 1 + i for i, m in enumerate(e.buffered) if m is not None and m.oob)))
        for peer, e in enumerate(node.recv) if e is not None)
    xmit_last = tuple((peer, last) for peer, last in enumerate(node.xmit_last) if last != 0)
    cache = tuple((peer, tuple(sorted((d.seqno, d.conn_id, d.first, spec_payload(d.payload), d.oob) for d in cached)))
                  for peer, cached in enumerate(node.cache) if cached)
    return EngineView(node.members, send, recv, node.sync_sent, xmit_last, node.timestamper, node.next_conn_id,
                      cache)
