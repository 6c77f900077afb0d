"""The timed spec of each protocol: its durations, periodic tasks, ages and timer guards.

This module owns what time means for the spec of each protocol with an engine, as the timed
lockstep (``checks/conform/timed.py``, whose docstring states the design and its soundness) reads
it: ``Timing`` (the engines' small real durations), a ``Rules`` per protocol (``RULES``: the
engine's durations from a ``Timing``, the periodic tasks and the spec timers each run fires, in
the engine's documented order, given the entries' ages; which timers the world fires instead of
the clock), and ``observe``, which keeps the ages (the last activity of every connection entry)
and the times of UNICAST3's sync requests from the spec's own steps, by JGroups' documented rules
(digest 1.1 (c), 1.2 (c) and (e)), apart from the engines' code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from models.world import AppSend, DeliverPacket, DuplicatePacket
from spec import nakack2 as nak2
from spec import nakack4 as nak4
from spec import unicast2 as u2
from spec import unicast3 as u3

Activity = dict[tuple[int, str, int], int]  # (member, "send" | "recv", peer) -> time of its last activity
Phase = Callable[[Sequence[Any], Callable[[str, int], int]], list[Any]]  # (enabled timers, age) -> those it fires


@dataclass(frozen=True)
class Timing:
    """The engines' durations in the timed lockstep (ms); each > 0."""

    xmit_interval: int = 3
    stable_interval: int = 5  # UNICAST2's stable task
    conn_expiry_timeout: int = 9  # UNICAST2's reaper (period and idle time); UNICAST3's idle closing
    conn_close_timeout: int = 12  # UNICAST3: CLOSING entries removed
    sync_min_interval: int = 4  # UNICAST3: one SEND_FIRST_SEQNO per peer per interval

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if type(value) is not int or value < 1:
                raise ValueError(f"timing {name}: expected an int >= 1 (ms), got {value!r}")

    def __str__(self) -> str:
        return ", ".join(f"{name} {value}" for name, value in vars(self).items())


TIMINGS = (Timing(), Timing(4, 7, 9, 11, 5), Timing(2, 3, 5, 4, 3))
"""The timings the tests walk under: timeouts that are multiples of the retransmit interval (an age
equal to a timeout at a run), periods and timeouts coprime with it, and everything short with a
close timeout shorter than the idle expiry."""


# -- the timed spec: what each protocol's tasks are and what makes an entry younger ---------------
class Rules:
    """What time means for one protocol's spec (the module docstring's rules)."""

    spec: Any
    roles: tuple[str, ...] = ("send", "recv")  # the node's per-peer entries that have an age
    untimed: frozenset[int] = frozenset()  # timer kinds the world fires, not the clock (GMS events, threads)

    def configure(self, config: Any, spec_cfg: Any, timing: Timing) -> Any:
        raise NotImplementedError

    def tasks(self, spec_cfg: Any, timing: Timing) -> dict[str, int]:
        """Task name -> period, in the order a run at one time takes them."""
        raise NotImplementedError

    def phases(self, task: str, spec_cfg: Any, timing: Timing) -> list[Phase]:
        """The phases of one run of ``task``, in order: each picks the spec timers it fires among
        those the world enables the member (``enabled_timers``: the spec's own guards, e.g. an entry
        exists, UNICAST3's OPEN or CLOSING) by the entries' ages at the run (``age(role, peer)``),
        read after the phase before it is applied."""
        raise NotImplementedError

    def takes(self, spec_cfg: Any, entry: Any, msg: Any) -> bool:
        """Does the receive entry ``entry`` take the DATA ``msg`` (the spec's test)?"""
        raise NotImplementedError


class Unicast2Rules(Rules):
    spec = u2

    def configure(self, config: Any, spec_cfg: Any, timing: Timing) -> Any:
        return replace(config, xmit_interval=timing.xmit_interval, stable_interval=timing.stable_interval,
                       conn_expiry_timeout=timing.conn_expiry_timeout if spec_cfg.conn_expiry else 0)

    def tasks(self, spec_cfg: Any, timing: Timing) -> dict[str, int]:
        found = {"xmit": timing.xmit_interval, "stable": timing.stable_interval}
        if spec_cfg.conn_expiry:
            found["reap"] = timing.conn_expiry_timeout
        return found

    def phases(self, task: str, spec_cfg: Any, timing: Timing) -> list[Phase]:
        if task != "reap":
            return [_due(u2.XMIT if task == "xmit" else u2.STABLE)]
        return [_due(u2.IDLE_SEND, "send", timing.conn_expiry_timeout),
                _due(u2.IDLE_RECV, "recv", timing.conn_expiry_timeout)]

    def takes(self, spec_cfg: Any, entry: Any, msg: Any) -> bool:
        return u2.same_connection(spec_cfg, entry, msg)


class Unicast3Rules(Rules):
    spec = u3

    def configure(self, config: Any, spec_cfg: Any, timing: Timing) -> Any:
        return replace(config, xmit_interval=timing.xmit_interval, sync_min_interval=timing.sync_min_interval,
                       conn_expiry_timeout=timing.conn_expiry_timeout if spec_cfg.conn_expiry else 0,
                       conn_close_timeout=timing.conn_close_timeout if spec_cfg.conn_close else 0)

    def tasks(self, spec_cfg: Any, timing: Timing) -> dict[str, int]:
        return {"xmit": timing.xmit_interval}

    def phases(self, task: str, spec_cfg: Any, timing: Timing) -> list[Phase]:
        expiry, close = timing.conn_expiry_timeout, timing.conn_close_timeout
        return [_due(u3.XMIT),  # then idle closing (OPEN entries), send entries first, then removal (CLOSING)
                _due(u3.IDLE_SEND, "send", expiry), _due(u3.IDLE_RECV, "recv", expiry),
                _due(u3.CLOSE_SEND, "send", close), _due(u3.CLOSE_RECV, "recv", close)]

    def takes(self, spec_cfg: Any, entry: Any, msg: Any) -> bool:
        return bool(entry.conn_id == msg.conn_id)


def _due(kind: int, role: str | None = None, timeout: int = 0) -> Phase:
    """A phase firing every enabled spec timer of ``kind``, in the spec's (peer) order; with
    ``role``, only for an entry of that role at least ``timeout`` old."""
    def phase(enabled: Sequence[Any], age: Callable[[str, int], int]) -> list[Any]:
        return [t for t in enabled if t.kind == kind and (role is None or age(role, t.peer) >= timeout)]
    return phase


class Nakack2Rules(Rules):
    """NAKACK2: no ages; the retransmit task (with retransmission on) and STABLE's gossip (acting
    only once the member is in its own view) run periodically; BECOME_SERVER is GMS's event."""

    spec = nak2
    roles = ()
    untimed = frozenset({nak2.BECOME_SERVER})

    def configure(self, config: Any, spec_cfg: Any, timing: Timing) -> Any:
        xmit = timing.xmit_interval if spec_cfg.retransmission else config.xmit_interval
        return replace(config, xmit_interval=xmit, stable_interval=timing.stable_interval)

    def tasks(self, spec_cfg: Any, timing: Timing) -> dict[str, int]:
        found = {"xmit": timing.xmit_interval} if spec_cfg.retransmission else {}
        return {**found, "stable": timing.stable_interval}

    def phases(self, task: str, spec_cfg: Any, timing: Timing) -> list[Phase]:
        return [_due(nak2.XMIT if task == "xmit" else nak2.STABLE)]


class Nakack4Rules(Rules):
    """NAKACK4: no ages; the retransmit task runs periodically, acting once the member has a view;
    BECOME_SERVER, the sending threads and the delivery faults are the world's."""

    spec = nak4
    roles = ()
    untimed = frozenset({nak4.BECOME_SERVER, nak4.SEND, nak4.DELIVER_FAULT})

    def configure(self, config: Any, spec_cfg: Any, timing: Timing) -> Any:
        return replace(config, xmit_interval=timing.xmit_interval)

    def tasks(self, spec_cfg: Any, timing: Timing) -> dict[str, int]:
        return {"xmit": timing.xmit_interval}

    def phases(self, task: str, spec_cfg: Any, timing: Timing) -> list[Phase]:
        return [_due(nak4.XMIT)]


RULES: dict[str, Rules] = {"unicast2": Unicast2Rules(), "unicast3": Unicast3Rules(), "nakack2": Nakack2Rules(),
                           "nakack4": Nakack4Rules()}


def observe(rules: Rules, spec_cfg: Any, activity: Activity, syncs: dict[tuple[int, int], int], now: int,
            member: int, before: Any, after: Any, action: Any) -> None:
    """Record what the spec step ``action`` of ``member`` (its node ``before`` -> ``after``) did to
    the ages of its entries and to its sync requests, at ``now``."""
    data_from = None
    if isinstance(action, (DeliverPacket, DuplicatePacket)) and isinstance(action.packet.msg, rules.spec.Data):
        data_from = action.packet.src
    for role in rules.roles:
        for peer, (old, new) in enumerate(zip(getattr(before, role), getattr(after, role))):
            key = (member, role, peer)
            if new is None:
                activity.pop(key, None)
            elif (old is None or old.conn_id != new.conn_id or getattr(old, "state", 0) != getattr(new, "state", 0)
                  or (role == "send" and isinstance(action, AppSend) and action.dst == peer)
                  or (role == "recv" and data_from == peer and rules.takes(spec_cfg, new, action.packet.msg))):
                activity[key] = now
    old_syncs: frozenset[int] = getattr(before, "sync_sent", frozenset())
    new_syncs: frozenset[int] = getattr(after, "sync_sent", frozenset())
    for peer in new_syncs - old_syncs:
        syncs[member, peer] = now
    for peer in old_syncs - new_syncs:
        del syncs[member, peer]


STALE_PROOF = frozenset({"no_duplicate", "in_order", "delivered_was_sent", "window_order", "conn_id_purity",
                         "timestamps_issued", "acks_monotone", "timestamps_increase", "sync_resend_bounded",
                         "sync_rate_limited"})
"""The safety properties a packet that outlives its window cannot break (those the stale-packet
models ``models/fuzz/unicast*-lockstep-stale.toml`` check): the only ones a run checks after a
removal made despite rule 6."""
