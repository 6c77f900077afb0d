"""What ``seqcheck validate`` needs per protocol, on top of the lockstep bindings.

This module owns the mapping from an event log (``impl/runtime/eventlog.py``) to the spec, per
protocol, and reuses ``checks/conform`` wherever the lockstep already maps something:

- spec message -> codec message: the binding's own ``wire_message`` (``checks/conform/<protocol>.py``),
  its payload n (``spec_payload(n)``) replaced by the bytes payload n stands for here;
- codec message -> spec message (a datagram the log says arrived): written here, once per message
  type, and checked against ``wire_message`` on every use (``to_spec`` maps back and compares), so
  a mistake here is reported, never believed;
- engine ``Config`` (rebuilt from the log's header) -> spec ``Config``, and what of the engine's
  configuration the spec has no step for (then validation refuses the log, one line);
- the timed rules (``checks/conform/timed_rules.py``): which spec timers a ``handle_timer`` run
  fires, from the engine's durations and the entries' ages.

Payloads: the spec's payloads are ints; here payload n is the n-th distinct payload (bytes) met in
the logs (``Payloads``), so equal ints are equal bytes and the spec never reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from checks.conform import nakack2 as conform_n2
from checks.conform import nakack4 as conform_n4
from checks.conform import unicast2 as conform_u2
from checks.conform import unicast3 as conform_u3
from checks.conform.timed_rules import RULES, Rules, Timing
from impl import nakack2, nakack4, unicast2, unicast3
from impl.common import payload_number, spec_payload
from impl.nakack2 import codec as n2codec
from impl.nakack4 import codec as n4codec
from impl.unicast2 import codec as u2codec
from impl.unicast3 import codec as u3codec
from impl.wire import CodecLimits
from models import registry
from spec import nakack2 as n2spec
from spec import nakack4 as n4spec
from spec import unicast2 as u2spec
from spec import unicast3 as u3spec


class LogRefused(ValueError):
    """A log this validator cannot judge (its configuration has no spec step); one line."""


class Foreign(ValueError):
    """A datagram naming a member outside the logs' members 0 .. n-1: the spec has no message for it."""


def _member(value: object, n: int) -> int:
    if type(value) is not int or not 0 <= value < n:
        raise Foreign(f"it names member {value!r}, not one of 0..{n - 1}")
    return value


class Payloads:
    """Payload bytes <-> the spec's payload ints (in order of first appearance, from 1)."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.blobs: list[bytes] = [b""]

    def id(self, payload: bytes) -> int:
        found = self.ids.get(payload)
        if found is None:
            found = self.ids[payload] = len(self.blobs)
            self.blobs.append(payload)
        return found

    def bytes_of(self, number: int) -> bytes:
        return self.blobs[number]


# -- codec messages back to spec messages -----------------------------------------------------------
def _u3_spec(msg: Any, pid: Callable[[bytes], int]) -> Any:
    if isinstance(msg, u3codec.DataMsg):
        return u3spec.Data(msg.seqno, msg.conn_id, msg.first, pid(msg.payload), msg.oob)
    if isinstance(msg, u3codec.AckMsg):
        return u3spec.Ack(msg.seqno, msg.conn_id, msg.timestamp)
    if isinstance(msg, u3codec.SendFirstSeqnoMsg):
        return u3spec.SendFirstSeqno(msg.timestamp)
    if isinstance(msg, u3codec.XmitReqMsg):
        return u3spec.XmitReq(tuple(msg.seqnos))
    return u3spec.Close(msg.conn_id)


def _u2_spec(msg: Any, pid: Callable[[bytes], int]) -> Any:
    if isinstance(msg, u2codec.DataMsg):
        return u2spec.Data(msg.seqno, msg.conn_id, msg.first, pid(msg.payload))
    if isinstance(msg, u2codec.XmitReqMsg):
        return u2spec.XmitReq(tuple(msg.seqnos))
    if isinstance(msg, u2codec.SendFirstSeqnoMsg):
        return u2spec.SendFirstSeqno(msg.seqno, msg.timestamp)
    if isinstance(msg, u2codec.StableMsg):
        return u2spec.Stable(msg.hd, msg.hr, msg.conn_id, msg.timestamp)
    return u2spec.Ack(msg.seqno, msg.conn_id)


def _spec_digest(entries: Any, n: int) -> tuple[tuple[int, int] | None, ...]:
    digest: list[tuple[int, int] | None] = [None] * n
    for member, hd, hr in entries:
        digest[_member(member, n)] = (hd, hr)
    return tuple(digest)


def _nak_spec(spec: Any, codec: Any, n: int) -> Callable[[Any, Callable[[bytes], int]], Any]:
    def to_spec(msg: Any, pid: Callable[[bytes], int]) -> Any:
        if isinstance(msg, codec.McastMsg):
            return spec.Data(msg.seqno, pid(msg.payload))
        if isinstance(msg, codec.NakXmitReqMsg):
            return spec.XmitReq(_member(msg.sender, n), tuple(msg.request.seqnos))
        if isinstance(msg, codec.XmitRspMsg):
            return spec.XmitRsp(_member(msg.sender, n), msg.seqno, pid(msg.payload))
        if isinstance(msg, codec.HighestSeqnoMsg):
            return spec.HighestSeqno(msg.seqno)
        if isinstance(msg, codec.JoinRspMsg):
            return spec.JoinRsp(tuple(_member(m, n) for m in msg.view), _spec_digest(msg.digest, n))
        if spec is n4spec and isinstance(msg, n4codec.AckMsg):
            return n4spec.Ack(msg.seqno)
        if spec is n2spec and isinstance(msg, n2codec.StableMsg):
            return n2spec.StableVote(tuple(_member(m, n) for m in msg.view), _spec_digest(msg.digest, n))
        if spec is n2spec and isinstance(msg, n2codec.StabilityMsg):
            return n2spec.Stability(tuple(_member(m, n) for m in msg.view), _spec_digest(msg.digest, n))
        raise ValueError(f"no spec message for {msg!r}")
    return to_spec


# -- engine configuration -> spec configuration -------------------------------------------------------
def _flags(config: Any, spec_variant: Any) -> Any:
    return spec_variant(**{f.name: getattr(config.variant, f.name) for f in fields(config.variant)})


def _u3_config(config: unicast3.Config, n: int) -> Any:
    if config.max_retransmit_time > 0:
        raise LogRefused("config max_retransmit_time > 0: the AgeOutCache has no step in the spec (decision 24)")
    return u3spec.Config(n, variant=_flags(config, u3spec.Variant), conn_expiry=config.conn_expiry_timeout > 0,
                         conn_close=config.conn_close_timeout > 0)


def _u2_config(config: unicast2.Config, n: int) -> Any:
    if config.max_retransmit_time > 0:
        raise LogRefused("config max_retransmit_time > 0: the AgeOutCache has no step in the spec")
    if config.max_bytes > 0:
        raise LogRefused("config max_bytes > 0: a STABLE triggered by received bytes has no step in the spec "
                         "(run with max_bytes=0)")
    return u2spec.Config(n, variant=_flags(config, u2spec.Variant), max_stable_msgs=config.max_stable_msgs,
                         conn_expiry=config.conn_expiry_timeout > 0)


def _n2_config(config: nakack2.Config, n: int) -> Any:
    return n2spec.Config(n, variant=_flags(config, n2spec.Variant), xmit_interval=config.xmit_interval,
                         use_mcast_xmit=config.use_mcast_xmit, resend_last_seqno=config.resend_last_seqno,
                         resend_last_seqno_max_times=config.resend_last_seqno_max_times,
                         become_server_queue_size=config.become_server_queue_size,
                         dont_loopback=config.dont_loopback)


def _n4_config(config: nakack4.Config, n: int) -> Any:
    return n4spec.Config(n, variant=_flags(config, n4spec.Variant), capacity=config.capacity,
                         ack_threshold=config.ack_threshold, send_atomically=config.send_atomically,
                         dont_block=config.dont_block, dont_loopback=config.dont_loopback,
                         deliver_exceptions=config.deliver_exceptions, sender_threads=config.max_pending_sends,
                         use_mcast_xmit=config.use_mcast_xmit,
                         become_server_queue_size=config.become_server_queue_size)


def _unicast_span(msg: Any, node: Any, src: int) -> int | None:
    """How far above its receive window's highest delivered seqno a DATA lands (None: no window of
    its connection, or not a DATA)."""
    if not hasattr(msg, "first"):
        return None
    entry = node.recv[src]
    return None if entry is None or entry.conn_id != msg.conn_id else int(msg.seqno - entry.delivered)


def _nak_span(msg: Any, node: Any, src: int) -> int | None:
    if not hasattr(msg, "payload"):
        return None
    sender = getattr(msg, "sender", src)
    window = node.windows[sender] if 0 <= sender < len(node.windows) else None
    return None if window is None else int(msg.seqno - window.delivered)


def _timing(config: Any) -> Timing:
    """The engine's durations as the timed rules read them (0, "off", read as 1: the spec's own
    guards keep a disabled timer from firing)."""
    def ms(name: str, default: int = 1) -> int:
        return max(1, int(getattr(config, name, default)))
    return Timing(xmit_interval=ms("xmit_interval"), stable_interval=ms("stable_interval"),
                  conn_expiry_timeout=ms("conn_expiry_timeout"), conn_close_timeout=ms("conn_close_timeout"),
                  sync_min_interval=ms("sync_min_interval"))


@dataclass(frozen=True)
class Protocol:
    """One protocol as the validator sees it."""

    name: str
    spec: Any
    config_class: type
    wire_message: Callable[[Any], Any]
    decode_with: Callable[[Any], Callable[[bytes], Any]]
    to_spec_n: Callable[[int], Callable[[Any, Callable[[bytes], int]], Any]]
    spec_config: Callable[[Any, int], Any]
    multicast: bool
    span: Callable[[Any, Any, int], int | None]  # (spec message, receiver's node, src) -> seqnos above its window
    span_limit: Callable[[Any], int]  # the engine config's bound on that (beyond it, the engine drops)

    @property
    def adapter(self) -> Any:
        return registry.get(self.name).adapter  # type: ignore[attr-defined]

    @property
    def rules(self) -> Rules:
        return RULES[self.name]

    def timing(self, config: Any) -> Timing:
        return _timing(config)

    def engine_config(self, raw: Any) -> Any:
        """The engine ``Config`` a log's header names (``LogRefused`` if it is not one)."""
        if not isinstance(raw, dict):
            raise LogRefused(f"config: expected an object of impl.{self.name}.Config fields, got {type(raw).__name__}")
        try:
            return _build(self.config_class, raw)
        except (TypeError, ValueError) as error:
            raise LogRefused(f"config: not an impl.{self.name}.Config: {error}") from None

    def wire(self, msg: Any, payloads: Payloads) -> Any:
        """The codec message the spec message ``msg`` stands for, with the real payload."""
        out = self.wire_message(msg)
        if hasattr(out, "payload"):
            out = replace(out, payload=payloads.bytes_of(payload_number(out.payload)))
        return out

    def to_spec(self, msg: Any, payloads: Payloads, n: int) -> Any:
        """The spec message a decoded datagram stands for (``ValueError`` if none does)."""
        found = self.to_spec_n(n)(msg, payloads.id)
        if self.wire(found, payloads) != msg:  # the lockstep's mapping is the reference
            raise ValueError(f"no spec message maps to {msg!r}")
        return found


def _build(cls: type, raw: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in raw:
            continue
        value = raw[f.name]
        default = getattr(cls(), f.name) if f.name in ("variant", "codec_limits") else None
        if isinstance(value, dict) and default is not None and is_dataclass(default):
            value = _build(type(default), value)
        kwargs[f.name] = value
    unknown = sorted(set(raw) - {f.name for f in fields(cls)})
    if unknown:
        raise ValueError(f"unknown fields {', '.join(unknown)}")
    return cls(**kwargs)


def _limits_decoder(decode: Callable[..., Any]) -> Callable[[Any], Callable[[bytes], Any]]:
    return lambda config: (lambda data: decode(data, config.codec_limits))


def _nak_decoder(decode: Callable[..., Any], members: Callable[[Any], int]) -> Callable[[Any], Callable[[bytes], Any]]:
    return lambda config: (lambda data: decode(data, config.codec_limits, members(config)))


PROTOCOLS: dict[str, Protocol] = {
    "unicast3": Protocol("unicast3", u3spec, unicast3.Config, conform_u3.wire_message,
                         _limits_decoder(u3codec.decode), lambda n: _u3_spec, _u3_config, False,
                         _unicast_span, lambda c: int(c.max_receive_span)),
    "unicast2": Protocol("unicast2", u2spec, unicast2.Config, conform_u2.wire_message,
                         _limits_decoder(u2codec.decode), lambda n: _u2_spec, _u2_config, False,
                         _unicast_span, lambda c: int(c.max_receive_span)),
    "nakack2": Protocol("nakack2", n2spec, nakack2.Config, conform_n2.wire_message,
                        _nak_decoder(n2codec.decode, lambda c: c.max_members),
                        lambda n: _nak_spec(n2spec, n2codec, n), _n2_config, True,
                        _nak_span, lambda c: int(c.max_receive_span)),
    "nakack4": Protocol("nakack4", n4spec, nakack4.Config, conform_n4.wire_message,
                        _nak_decoder(n4codec.decode, lambda c: c.member_limit),
                        lambda n: _nak_spec(n4spec, n4codec, n), _n4_config, True,
                        _nak_span, lambda c: int(c.capacity)),
}


def protocol(name: object) -> Protocol:
    if not isinstance(name, str) or name not in PROTOCOLS:
        raise LogRefused(f"protocol: expected one of {', '.join(sorted(PROTOCOLS))}, got {name!r}")
    return PROTOCOLS[name]


__all__ = ["PROTOCOLS", "CodecLimits", "Foreign", "LogRefused", "Payloads", "Protocol", "protocol", "spec_payload"]
