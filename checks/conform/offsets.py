"""Receive windows that start near 2**31 or 2**63: the lockstep with every receiver's seqnos shifted.

Both protocols start every connection's sender at seqno 1, but a receiver opens its window just
below the seqno of the first DATA it takes (``Table(seqno - 1)``), whatever that is: the protocol
lets a receive window start anywhere up to 2**63 - 1, and the spec cannot tell one start from
another. The lockstep models send a few messages per pair, so every receive window of the harness
starts at 0 (issue 19, item 5). ``engines_with_offset(k)`` is an engine factory for the harness
(``checks/conform/differential.py``'s ``engines_for``) under which every receiver sees the world
shifted by ``k``:

- a DATA handed to an engine carries seqno + k (its sender's engine, like the spec, counts from 1);
- every datagram a receiver emits names seqnos of its window: ACK, XMIT_REQ, SEND_FIRST_SEQNO and
  STABLE have k taken off their seqnos (``seqno``, ``seqnos``, ``hd``, ``hr``) before the harness
  compares them with the spec's, and the sender's engine gets them as the spec sent them;
- an engine's view of its receive windows has k taken off (``delivered``, the buffered seqnos,
  UNICAST2's ``last_highest``, ``xmit_last``, UNICAST3's cached DATA) before it is compared.

So the receive windows, the XMIT_REQ bitsets and the codec's 8-byte seqnos run at 2**31 or 2**63
while the spec runs at 1. Only UNICAST2 and UNICAST3 (their DATA is the only message a sender
emits with a seqno); UNICAST2's variant ``no_conn_ids`` opens a missing window at 0 whatever the
seqno (JGroups' UNICAST), so it has no shifted run and is refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from checks.conform.differential import EngineFactory
from checks.conform.engines import WorldEngines, binding
from impl.unicast2 import codec as u2codec
from impl.unicast3 import codec as u3codec
from impl.wire import MAX_SEQNO, XmitReqMsg
from models.world import DeliverPacket, DuplicatePacket, World

ENCODERS: dict[str, Callable[[Any], bytes]] = {"unicast2": u2codec.encode, "unicast3": u3codec.encode}
NEAR_2_31 = 2**31 - 3  # the third message of a window crosses 2**31
NEAR_2_63 = MAX_SEQNO - 16  # room for the most messages a lockstep model sends per pair
RECEIVER_SEQNO_FIELDS = ("seqno", "hd", "hr")  # of every message but DATA: the receiver's window's


def check_offset(k: int, world: World) -> None:
    """``k`` must keep every seqno of ``world`` within 1 .. 2**63 - 1 (one line otherwise)."""
    most = max(max(world.bounds.sends, default=0), 1)
    if not 0 <= k <= MAX_SEQNO - most:
        raise ValueError(f"seqno offset: expected 0..{MAX_SEQNO - most} (the model sends up to {most} messages "
                         f"per pair), got {k}")
    if world.adapter.name not in ENCODERS:
        raise ValueError(f"seqno offset: expected a model of {' or '.join(sorted(ENCODERS))}, "
                         f"got {world.adapter.name}")
    if getattr(world.cfg.variant, "no_conn_ids", False):  # UNICAST2's variant (UNICAST3 has no such flag)
        raise ValueError("seqno offset: the variant no_conn_ids opens every window at 0, it has no shifted run")


def shift_in(msg: Any, k: int) -> Any:
    """A datagram's message as the receiving engine gets it: a DATA's seqno + k."""
    return replace(msg, seqno=msg.seqno + k) if type(msg).__name__ == "DataMsg" else msg


def shift_out(msg: Any, k: int) -> Any:
    """A message an engine emitted, in the spec's numbering: k off the seqnos a receiver names."""
    if type(msg).__name__ == "DataMsg":
        return msg
    if isinstance(msg, XmitReqMsg):
        return XmitReqMsg(tuple(s - k for s in msg.seqnos))
    names = [f.name for f in fields(msg) if f.name in RECEIVER_SEQNO_FIELDS]
    return replace(msg, **{name: getattr(msg, name) - k for name in names}) if names else msg


def _unshift(value: int, k: int) -> int:
    return value - k if value >= k else value  # UNICAST2's last_highest 0: none yet


def view_unshifted(view: Any, k: int) -> Any:
    """An engine's snapshot with k taken off its receive windows' seqnos, xmit_last and cached DATA."""
    recv = []
    for peer, entry in view.recv:
        changes: dict[str, Any] = {"delivered": entry.delivered - k,
                                   "buffered": tuple(s - k if isinstance(s, int) else (s[0] - k, *s[1:])
                                                     for s in entry.buffered)}
        if hasattr(entry, "last_highest"):
            changes["last_highest"] = _unshift(entry.last_highest, k)
        recv.append((peer, replace(entry, **changes)))
    shifted: dict[str, Any] = {"recv": tuple(recv),
                               "xmit_last": tuple((peer, last - k) for peer, last in view.xmit_last)}
    if hasattr(view, "cache"):  # UNICAST3's message cache: (seqno, conn_id, payload) per sender
        shifted["cache"] = tuple((peer, frozenset((s - k, *rest) for s, *rest in cached))
                                 for peer, cached in view.cache)
    return replace(view, **shifted)


def engines_with_offset(k: int) -> EngineFactory:
    """An engine factory for the harness: the protocol's engines, every receive window shifted by k."""
    made: dict[type[WorldEngines], type[WorldEngines]] = {}

    def factory(world: World) -> WorldEngines:
        check_offset(k, world)
        base = binding(world.adapter.name).world_engines
        cls = made.get(base)
        if cls is None:
            cls = made[base] = _shifted_class(base, ENCODERS[world.adapter.name], binding(world.adapter.name).decode, k)
        return cls.for_world(world)

    return factory


def _shifted_class(base: type[WorldEngines], encode: Callable[[Any], bytes], decode: Callable[[bytes], Any],
                   k: int) -> type[WorldEngines]:
    class Shifted(base):  # type: ignore[valid-type, misc]
        def drive(self, action: Any, payload_number: int, before: Any = None) -> int | None:
            if isinstance(action, (DeliverPacket, DuplicatePacket)):
                packet = action.packet
                data = encode(shift_in(decode(self.datagram(packet)), k))
                self.engines[packet.dst].received(packet.src, data, now=self.now)
                return int(packet.dst)
            return super().drive(action, payload_number, before)

        def datagrams(self, member: int) -> list[tuple[int, bytes]]:
            return [(dst, encode(shift_out(decode(data), k))) for dst, data in super().datagrams(member)]

        def view(self, member: int) -> Any:
            return view_unshifted(super().view(member), k)

    Shifted.__name__ = Shifted.__qualname__ = f"{base.__name__}Shifted{k}"
    return Shifted


near_2_31 = engines_with_offset(NEAR_2_31)
"""Receive windows from 2**31 - 3 on; a fuzz job takes it as
``FuzzOptions(engines="checks.conform.offsets:near_2_31")``."""
near_2_63 = engines_with_offset(NEAR_2_63)
"""Receive windows from 2**63 - 17 on, as ``near_2_31``."""
