"""The production engines as the lockstep harness drives them: one engine per world member.

This module owns the mapping between the world of ``models/`` and ``impl/``: how a world action
becomes engine calls (``WorldEngines``, for every protocol), which bytes stand for a world packet,
and which engine state stands for a spec member (``Unicast3Engines`` here, ``Unicast2Engines`` in
``checks/conform/unicast2.py``), and which engines stand for a world (``engines_for``). The harness
itself (``checks/conform/differential.py``) knows none of it.

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now`` and
sets every real duration far away, so only the timers the world fires act, exactly as in the spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from impl.unicast3 import Config, EngineView, Unicast3Engine, spec_payload, view_of_spec_node
from impl.unicast3.codec import AckMsg, CloseMsg, DataMsg, SendFirstSeqnoMsg, WireMsg, XmitReqMsg, encode
from models.world import (
    AppSend,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    InstallView,
    LosePacket,
    Packet,
    RemoveReceiver,
)
from spec import unicast3 as u3

FAR = 10**12  # ms: "never", for every real duration of the engine


def wire_message(msg: u3.Msg) -> WireMsg:
    """The codec message a spec message stands for (payload n is ``spec_payload(n)``)."""
    if isinstance(msg, u3.Data):
        return DataMsg(msg.seqno, msg.conn_id, msg.first, spec_payload(msg.payload))
    if isinstance(msg, u3.Ack):
        return AckMsg(msg.seqno, msg.conn_id, msg.ts)
    if isinstance(msg, u3.SendFirstSeqno):
        return SendFirstSeqnoMsg(msg.ts)
    if isinstance(msg, u3.XmitReq):
        return XmitReqMsg(msg.seqnos)
    return CloseMsg(msg.conn_id)


def wire_bytes(packet: Packet) -> bytes:
    return encode(wire_message(packet.msg))


class WorldEngines:
    """n engines standing for the n members of a world: what every protocol's engines share.

    A subclass sets ``engine_class`` (an engine with the calls ``send``, ``received``,
    ``fire_timer``, ``install_view``, ``remove_receive_connection``, ``datagrams_to_send``,
    ``deliveries``, ``snapshot``) and ``engine_config`` (its configuration for a spec config: every
    real duration far away), ``wire_bytes`` (the datagram a world packet stands for) and
    ``spec_view`` (the engines' view of a spec member)."""

    engine_class: Any

    def __init__(self, spec_cfg: Any, members: int, initial_views: Sequence[frozenset[int]]) -> None:
        config = self.engine_config(spec_cfg)
        self.now = 0
        self.datagram: Callable[[Packet], bytes] = self.wire_bytes  # the harness may give a memoised one
        self.engines: list[Any] = [self.engine_class(config, members=initial_views[m], now=0) for m in range(members)]

    @staticmethod
    def engine_config(spec_cfg: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def wire_bytes(packet: Packet) -> bytes:
        raise NotImplementedError

    @staticmethod
    def spec_view(node: Any) -> Any:
        raise NotImplementedError

    def drive(self, action: Any, payload_number: int) -> int | None:
        """Apply ``action`` to the engines; returns the member that acted (None for a loss).
        ``payload_number`` is the number of the application message an ``AppSend`` sends."""
        now = self.now
        if isinstance(action, AppSend):
            self.engines[action.src].send(action.dst, spec_payload(payload_number), now=now)
            return int(action.src)
        if isinstance(action, (DeliverPacket, DuplicatePacket)):
            packet = action.packet
            self.engines[packet.dst].received(packet.src, self.datagram(packet), now=now)
            return int(packet.dst)
        if isinstance(action, FireTimer):
            timer = action.timer
            self.engines[action.member].fire_timer(timer.kind, None if timer.peer < 0 else timer.peer, now=now)
            return int(action.member)
        if isinstance(action, InstallView):
            self.engines[action.member].install_view(action.members, now=now)
            return int(action.member)
        if isinstance(action, RemoveReceiver):
            self.engines[action.member].remove_receive_connection(action.peer)
            return int(action.member)
        assert isinstance(action, LosePacket), action
        return None

    def datagrams(self, member: int) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = self.engines[member].datagrams_to_send()
        return out

    def deliveries(self, member: int) -> list[tuple[int, bytes]]:
        out: list[tuple[int, bytes]] = self.engines[member].deliveries()
        return out

    def view(self, member: int) -> Any:
        return self.engines[member].snapshot(now=self.now)

    @staticmethod
    def spec_delivery(src: int, payload: int) -> tuple[int, bytes]:
        return src, spec_payload(payload)


class Unicast3Engines(WorldEngines):
    """n UNICAST3 engines standing for the n members of a world."""

    engine_class = Unicast3Engine
    wire_bytes = staticmethod(wire_bytes)  # the datagram a world packet stands for

    @staticmethod
    def engine_config(spec_cfg: u3.Config) -> Config:
        return Config(variant=spec_cfg.variant, sync_min_interval=FAR, conn_expiry_timeout=FAR,
                      conn_close_timeout=FAR)

    @staticmethod
    def spec_view(node: u3.Node) -> EngineView[int]:
        return view_of_spec_node(node)


def describe_datagram(data: bytes) -> str:
    """A datagram of any engine's wire format, decoded for people (its codec found by its magic
    byte): the harness shows differing datagrams this way."""
    from impl.unicast2 import codec as unicast2_codec
    from impl.unicast3 import codec as unicast3_codec

    for codec in (unicast3_codec, unicast2_codec):
        if data[:1] == bytes((codec.MAGIC,)):
            try:
                return str(codec.decode(data))
            except ValueError as error:  # DecodeError
                return f"malformed {data.hex()} ({error})"
    return f"unknown datagram {data.hex()}"


def engines_for(world: Any) -> WorldEngines:
    """The engines standing for the members of ``world``, chosen by its protocol's name."""
    factories: dict[str, type[WorldEngines]] = {"unicast3": Unicast3Engines}
    try:
        from checks.conform.unicast2 import Unicast2Engines
    except ImportError:  # not written yet
        pass
    else:
        factories["unicast2"] = Unicast2Engines
    factory: type[WorldEngines] | None = factories.get(world.adapter.name)
    if factory is None:
        raise ValueError(f"no production engine for protocol {world.adapter.name!r}")
    return factory(world.cfg, world.n, world.initial_views)
