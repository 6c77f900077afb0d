"""The multicast world's vocabulary (``models/multicast_world.py`` owns their semantics): its own
actions (an application multicast, a drop below the protocol, a join's answer, a stop, a merge view),
the bounds a model file sets, the environment part of a state, the flags of a multicast stimulus and
the history's channels after a member's observations. Kept apart so that the world's transitions and
what names them (adapters, the fuzzer, the conformance harnesses, symmetry) read one small module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from models.world import (
    DeliverBatch,
    DeliverPacket,
    DuplicatePacket,
    FireTimer,
    History,
    InstallView,
    LosePacket,
    Packet,
)
from spec import reliable_fifo as fifo


class AppMcast(NamedTuple):
    src: int


class DropBelow(NamedTuple):
    packet: Packet


class AnswerJoin(NamedTuple):
    coordinator: int
    joiner: int


class Stop(NamedTuple):
    """``member`` leaves (``crash`` false: after its coordinator installed a view without it) or
    crashes (at any moment): it acts no more; its packets in flight stay (rule 8)."""

    member: int
    crash: bool


class MergeView(NamedTuple):
    """``member`` installs its last scripted view as a merge view: MERGE_DIGEST first (each sender
    of the view at the (hd, hr) of its own window, read from its node now), then the view (rule 10)."""

    member: int
    members: tuple[int, ...]


McastAction = (AppMcast | DeliverPacket | DeliverBatch | DuplicatePacket | LosePacket | DropBelow | FireTimer
               | InstallView | AnswerJoin | Stop | MergeView)
FAULTS = (AppMcast, DuplicatePacket, LosePacket, DropBelow, InstallView, AnswerJoin, Stop, MergeView)
LEAVE, CRASH = "leave", "crash"
PREMATURE = 1  # History.step_violations: a step asked for a young copy (rule 9)
DONT_LOOPBACK = "dont_loopback"  # the last item of an observed multicast stimulus that is DONT_LOOPBACK (rule 6)
OOB = "oob"  # an item of a multicast stimulus flagged OOB, before DONT_LOOPBACK (rule 6)


@dataclass(frozen=True, slots=True)
class McastBounds:
    """What the environment may do, from the model file."""

    sends: tuple[int, ...]  # per member: multicasts its application makes
    loss: int
    duplicate: int
    below_drop: int
    views: tuple[tuple[frozenset[int], ...], ...]  # per member, installed in this order
    joins: tuple[tuple[int, int], ...]  # (joiner, coordinator), each answered once
    max_in_flight: int
    sends_after_joins: bool = False  # multicasts only once every join is answered (rule 6)
    stops: tuple[tuple[int, str], ...] = ()  # (member, LEAVE or CRASH), each at most once (rule 8)
    track_young: bool = False  # keep McastEnv.young (rule 9): the model checks no_premature_xmit_req
    views_are_progress: bool = False  # scripted views may be installed by fault-free continuations (rule 7)
    merges: frozenset[int] = frozenset()  # members whose last scripted view is a merge view (rule 10)
    dont_loopback: frozenset[tuple[int, int]] = frozenset()  # (member, send number): DONT_LOOPBACK (rule 6)
    max_batch: int = 0  # rule 11: packets per batch delivery (0: no batches)
    oob: frozenset[tuple[int, int]] = frozenset()  # (member, send number): OOB (rule 6)


class McastEnv(NamedTuple):
    """Remaining fault budgets, each member's position in its view script, joins answered."""

    loss: int
    duplicate: int
    below_drop: int
    view_index: tuple[int, ...]
    joined: int  # bit i: join i of ``McastBounds.joins`` answered
    stopped: int = 0  # bit m: member m left or crashed (rule 8)
    young: frozenset[Packet] = frozenset()  # original copies sent since their receiver's last round (rule 9)


def observe_channels(history: History, member: int, observed: tuple[tuple[str, Any], ...], n: int) -> History:
    """The ``reliable_fifo`` channels after ``member``'s observations: a multicast is sent on every
    channel ``(member, r)`` (a DONT_LOOPBACK one flagged so on ``(member, member)``, an OOB one OOB on
    every channel: rule 6); a delivery, a window created or removed as in the unicast world."""
    channels = list(history.channels)
    for kind, value in observed:
        if kind == "stimulus" and value[0] == "mcast":
            flagged, oob = value[-1] == DONT_LOOPBACK, len(value) > 2 and value[2] == OOB
            for r in range(n):
                channels[member * n + r] = fifo.send(channels[member * n + r], oob,
                                                     dont_loopback=flagged and r == member)
        elif kind == "Deliver":
            channels[value.src * n + member] = fifo.deliver(channels[value.src * n + member], value.payload)
        elif kind in ("WindowCreated", "WindowRemoved"):
            channels[value.src * n + member] = fifo.new_incarnation(channels[value.src * n + member])
    return History(tuple(channels), history.step_violations, history.syncs)


def stopped(env: McastEnv, member: int) -> bool:
    return bool(env.stopped >> member & 1)


def advance_view(env: McastEnv, member: int) -> McastEnv:
    index = env.view_index
    return env._replace(view_index=index[:member] + (index[member] + 1,) + index[member + 1:])
