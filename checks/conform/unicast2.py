"""The UNICAST2 engines as the lockstep harness drives them: one engine per world member.

This module owns the mapping between a UNICAST2 world of ``models/`` and ``impl/unicast2``: how a
world action becomes engine calls, which bytes stand for a world packet, and which engine state
stands for a spec member; ``checks/conform/engines.py`` does the same for UNICAST3 and picks this class for
UNICAST2 worlds (``engines_for``).

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now``; every
real period is set far away (``FAR``) and the byte-triggered STABLE, which the spec leaves out, is
off (``max_bytes = 0``), so only the timers the world fires act, exactly as in the spec.
"""

from __future__ import annotations

from checks.conform.engines import FAR, WorldEngines
from impl.common import spec_payload
from impl.unicast2 import Config, EngineView, Unicast2Engine, view_of_spec_node
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

    @staticmethod
    def engine_config(spec_cfg: u2.Config) -> Config:
        """The engine configuration that behaves like the spec's ``spec_cfg`` under the harness."""
        return Config(variant=spec_cfg.variant, max_stable_msgs=spec_cfg.max_stable_msgs, max_bytes=0,
                      xmit_interval=FAR, stable_interval=FAR,
                      conn_expiry_timeout=FAR if spec_cfg.conn_expiry else 0)

    @staticmethod
    def spec_view(node: u2.Node) -> EngineView[int]:
        return view_of_spec_node(node)
