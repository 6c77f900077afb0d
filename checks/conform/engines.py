"""The production engines as the lockstep harness drives them, for every protocol with an engine.

This module owns what every protocol's engine mapping shares: how a world action becomes engine
calls (``WorldEngines``), and which engines stand for a world (``engines_for``). What differs per
protocol (which bytes stand for a world packet, which engine state stands for a spec member, how a
script drives its engines) is an ``EngineBinding``, one per protocol, in a module of its own
(``checks/conform/unicast3.py``, ``unicast2.py``). The harness (``checks/conform/differential.py``)
knows none of it.

A binding is found by protocol name like a model factory (``models/registry.py``): built in
(``BUILT_IN`` below), or an entry point of the group ``seqcheck.engines`` naming it.

Time: the harness fires the spec's timers one by one (``fire_timer``) at a constant ``now`` and
sets every real duration far away, so only the timers the world fires act, exactly as in the spec;
a timed engine factory (``checks/conform/timed.py``) gives its engines a clock instead
(``WorldEngines.timed``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

from impl.common import spec_payload
from models.registry import Registry
from models.world import (
    AppSend,
    DeliverBatch,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    InstallView,
    LosePacket,
    Packet,
    RemoveReceiver,
)

if TYPE_CHECKING:
    from checks.conform.script import ScriptProtocol

V = TypeVar("V")
FAR = 10**12  # ms: "never", for every real duration of the engine


class WorldEngines:
    """n engines standing for the n members of a world: what every protocol's engines share.

    A subclass sets ``engine_class`` (an engine with the calls ``send``, ``received``,
    ``fire_timer``, ``install_view``, ``remove_receive_connection``, ``datagrams_to_send``,
    ``deliveries``, ``snapshot``) and ``engine_config`` (its configuration for a spec config: every
    real duration far away), ``wire_bytes`` (the datagram a world packet stands for) and
    ``spec_view`` (the engines' view of a spec member)."""

    engine_class: Any
    # The spec side's datagram of a world packet from an encoder independent of the engine's
    # (``checks/conform/reference_codec.py``); None: the engine's own (``wire_bytes``).
    reference_bytes: Callable[[Packet], bytes] | None = None
    # What takes every lockstep step when time passes (``checks/conform/timed.py``; the harness's
    # rule 9); None: the clock stands still at 0 and the world fires the spec's timers.
    timed: Any = None
    dead: frozenset[int] = frozenset()  # members that never act (``models/world.py`` rule 7)
    oob: frozenset[tuple[int, int, int]] = frozenset()  # the sends flagged OOB, (src, dst, n) (UNICAST3, UNICAST4)
    dont_loopback: frozenset[tuple[int, int, int]] = frozenset()  # sends to self flagged DONT_LOOPBACK (UNICAST3/4)
    knows_me = False  # the engine takes its own address (``me=``): UNICAST3's and UNICAST4's messages to self

    def __init__(self, spec_cfg: Any, members: int, initial_views: Sequence[frozenset[int]]) -> None:
        config = self.engine_config(spec_cfg)
        self.now = 0
        self.datagram: Callable[[Packet], bytes] = self.wire_bytes  # the harness may give a memoised one
        me: Callable[[int], dict[str, int]] = (lambda m: {"me": m}) if self.knows_me else (lambda m: {})
        self.engines: list[Any] = [self.engine_class(config, members=initial_views[m], now=0, **me(m))
                                   for m in range(members)]

    @staticmethod
    def engine_config(spec_cfg: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def wire_bytes(packet: Packet) -> bytes:
        raise NotImplementedError

    @staticmethod
    def spec_view(node: Any) -> Any:
        raise NotImplementedError

    def codec_disagreement(self, packet: Packet) -> str | None:
        """Where the engines' codec departs from the reference encoding on ``packet``'s message
        with large field values (``checks/conform/reference_codec.py``); None if it agrees or the
        protocol has no reference."""
        return None

    @classmethod
    def for_world(cls, world: Any) -> WorldEngines:
        """The engines standing for the members of ``world``."""
        engines = cls(world.cfg, world.n, world.initial_views)
        engines.dead = getattr(world.bounds, "dead", frozenset())
        engines.oob = getattr(world.bounds, "oob", frozenset())
        engines.dont_loopback = getattr(world.bounds, "dont_loopback", frozenset())
        return engines

    def drive(self, action: Any, payload_number: int, before: Any = None) -> int | None:
        """Apply ``action`` to the engines; returns the member that acted (None for a loss).
        ``payload_number`` is the number of the application message an ``AppSend`` sends;
        ``before`` the world state the action is taken in (a binding may read its environment)."""
        now = self.now
        acting = _actor(action)
        if acting is not None and acting in self.dead:
            return acting  # a dead member handles nothing (its packets are consumed)
        if isinstance(action, AppSend):
            key = (action.src, action.dst, payload_number)
            # UNICAST3's and UNICAST4's engines take oob and dont_loopback
            flags = {name: True for name, chosen in (("oob", self.oob), ("dont_loopback", self.dont_loopback))
                     if key in chosen}
            self.engines[action.src].send(action.dst, spec_payload(payload_number), now=now, **flags)
            return int(action.src)
        if isinstance(action, (DeliverPacket, DuplicatePacket)):
            packet = action.packet
            self.engines[packet.dst].received(packet.src, self.datagram(packet), now=now)
            return int(packet.dst)
        if isinstance(action, DeliverBatch):  # UNICAST3's and UNICAST4's engines have a batch input
            first = action.packets[0]
            self.engines[first.dst].received_batch(first.src, [self.datagram(p) for p in action.packets], now=now)
            return int(first.dst)
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


def _actor(action: Any) -> int | None:
    """The member that handles ``action`` (None for a loss)."""
    if isinstance(action, AppSend):
        return int(action.src)
    if isinstance(action, (DeliverPacket, DuplicatePacket)):
        return int(action.packet.dst)
    if isinstance(action, DeliverBatch):
        return int(action.packets[0].dst)
    if isinstance(action, (FireTimer, InstallView, RemoveReceiver)):
        return int(action.member)
    return None


def same_flags(variant: Any, engine_variant: Callable[..., V]) -> V:
    """The engine's variant flags that stand for the spec's ``variant`` (the same names: the
    engines keep their own copy of the flags, ``impl/`` never imports ``spec/``)."""
    return engine_variant(**{f.name: getattr(variant, f.name) for f in fields(variant)})


class NoEngine(LookupError):
    """A protocol without a registered production engine; the message is one line."""


@dataclass(frozen=True)
class EngineBinding:
    """What a protocol's production engines register: the lockstep mapping, the script mapping
    (``checks/conform/script.py``), and the wire format's magic byte and decoder."""

    protocol: str
    world_engines: type[WorldEngines]
    script: ScriptProtocol
    magic: int
    decode: Callable[[bytes], Any]


ENTRY_POINT_GROUP = "seqcheck.engines"
BUILT_IN = {
    "unicast2": "checks.conform.unicast2:BINDING",
    "unicast3": "checks.conform.unicast3:BINDING",
    "unicast4": "checks.conform.unicast4:BINDING",
    "nakack2": "checks.conform.nakack2:BINDING",
    "nakack4": "checks.conform.nakack4:BINDING",
}
BINDINGS: Registry[EngineBinding] = Registry(
    ENTRY_POINT_GROUP, BUILT_IN, lambda found, name: isinstance(found, EngineBinding) and found.protocol == name)


def register(binding: EngineBinding) -> None:
    BINDINGS.register(binding.protocol, binding)


def engine_protocols() -> list[str]:
    """Every protocol with a production engine, sorted."""
    return BINDINGS.names()


def binding(protocol: str) -> EngineBinding:
    """The engine binding of ``protocol``; ``NoEngine`` if it has none."""
    try:
        return BINDINGS.get(protocol)
    except KeyError:
        raise NoEngine(f"protocol {protocol} has no production engine to run on (none registered in "
                       f"{ENTRY_POINT_GROUP})") from None


def describe_datagram(data: bytes) -> str:
    """A datagram of any engine's wire format, decoded for people (its codec found by its magic
    byte): the harness shows differing datagrams this way."""
    for name in engine_protocols():
        codec = binding(name)
        if data[:1] == bytes((codec.magic,)):
            try:
                return str(codec.decode(data))
            except ValueError as error:  # DecodeError
                return f"malformed {data.hex()} ({error})"
    return f"unknown datagram {data.hex()}"


def engines_for(world: Any) -> WorldEngines:
    """The engines standing for the members of ``world``, chosen by its protocol's name."""
    engines: WorldEngines = binding(world.adapter.name).world_engines.for_world(world)
    return engines
