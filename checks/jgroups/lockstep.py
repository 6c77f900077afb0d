"""The spec in lockstep with JGroups' own protocol classes.

Rules
-----
1. The world of ``models/`` (unreduced: real timestamps and conn_ids, as JGroups issues them) chooses
   every action; the spec takes it, and the harness makes JGroups take the same one: an application
   send, the delivery, copy or loss of a packet in flight, a timer, a view, a receiver removal.
2. The spec runs as the release: the binding's flags for the release (``bindings.ReleaseProfile``:
   a release before a fix is the spec with that fix's defect flag) replace the model's variant.
3. Packets. JGroups' packets are captured when sent and read in the spec's vocabulary. The world's
   network is a set (``models/world.py`` rule 2): the harness keeps, for each spec packet in flight,
   the ids of the JGroups packets equal to it; delivering it delivers one of them and forgets the
   others, losing it drops them all, duplicating it delivers a copy of one.
4. What is compared after each step, for the member that acted: the packets it sent (as a multiset:
   the world does not order the network), what it delivered (in order), and its state read from
   JGroups and mapped to a spec node (``bindings``) against the spec's node. Every member's state is
   compared at the end of a run (``check_all``). The first difference is a ``Divergence``.
5. A divergence is then matched against the table of known differences (``explained.py``); one
   that matches none is a defect of the spec, the harness or JGroups.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from checks.explore.trace import Trace, file_digest
from checks.jgroups.bindings import JGroupsBinding, binding
from checks.jgroups.harness import Harness
from impl.common import payload_number, spec_payload
from models.modelfile import Model, load
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
    World,
)


@dataclass(frozen=True)
class Divergence:
    step: int  # 1-based; 0: the end-of-run comparison
    action: str
    what: str  # "packets of A", "deliveries of B", "state of A"
    spec: str
    jgroups: str
    kind: str = ""  # "packets", "deliveries", "state"
    member: int = -1
    spec_packets: tuple[Packet, ...] = ()  # for "packets": what each side sent
    jgroups_packets: tuple[Packet, ...] = ()
    spec_delivered: tuple[tuple[int, int], ...] = ()  # for "deliveries": (src, payload) of each side, in order
    jgroups_delivered: tuple[tuple[int, int], ...] = ()

    def __str__(self) -> str:
        return (f"step {self.step} ({self.action}): {self.what} differ\n  spec:    {self.spec}\n"
                f"  jgroups: {self.jgroups}")


class JGroupsLockstep:
    """One schedule: the spec's world and the harness's members, step by step (rules 1 to 4)."""

    def __init__(self, model: Model, harness: Harness, *, flags: Sequence[str] | None = None) -> None:
        self.model, self.harness = model, harness
        self.binding: JGroupsBinding = binding(model.protocol)
        if flags is None:
            kept = tuple(f for f in model.variant if f in self.binding.settings_flags)
            flags = tuple(sorted(set(self.binding.flags_for(harness.release)) | set(kept)))
        self.flags = tuple(flags)
        self.world: World = load(model.path, reduce_timestamps=False, variant=self.flags,
                                 protocol=model.protocol).world
        self.state: Any = self.world.init_states()[0]
        self.path: list[tuple[Any, Any]] = []
        self.inflight: dict[Packet, list[int]] = {}
        self.steps_taken = 0
        self.before: Any = self.state  # the state before the last step
        self.binding.check(self.world.cfg, harness.release)
        harness.command("reset", protocol=self.binding.harness_name, members=self.world.n,
                        views=[sorted(v) for v in self.world.initial_views],
                        props=self.binding.props(self.world.cfg))

    # -- the schedule -------------------------------------------------------------------------
    def enabled(self) -> list[tuple[Any, Any]]:
        if not self.world.within_bounds(self.state):
            return []
        return list(self.world.successors(self.state))

    def step(self, action: Any, after: Any) -> Divergence | None:
        """Take ``action`` (with its spec successor ``after``) on both sides and compare (rule 4)."""
        world, before = self.world, self.state
        member, packets, delivered = world.step_effects(before, action)
        answer = self._drive(action, before, member)
        self.before = before
        self.path.append((action, after))
        self.state = after
        self.steps_taken += 1
        if member is None:
            return None
        name = world.member_name(member)
        try:
            got = [self._packet(p) for p in answer["packets"]]
        except (ValueError, KeyError) as error:
            return self._divergence(f"packets of {name}", "spec messages", str(error), "packets", member)
        if Counter(got) != Counter(packets):
            return replace(self._divergence(f"packets of {name}", _show(packets), _show(got), "packets", member),
                           spec_packets=tuple(packets), jgroups_packets=tuple(got))
        for packet, sent in zip(got, answer["packets"]):
            self.inflight.setdefault(packet, []).append(sent["id"])
        want_up = [(src, payload) for src, payload in delivered]
        got_up = [(d["src"], payload_number(bytes.fromhex(d["payload"]))) for d in answer["delivered"]]
        if got_up != want_up:
            return replace(self._divergence(f"deliveries of {name}", repr(want_up), repr(got_up), "deliveries", member),
                           spec_delivered=tuple(want_up), jgroups_delivered=tuple(got_up))
        return self._compare_state(member, answer["state"])

    def _packet(self, sent: dict[str, Any]) -> Packet:
        msg = self.binding.message(sent["msg"])
        return Packet(sent["src"], sent["dst"], type(msg).__name__, msg)

    def _drive(self, action: Any, before: Any, member: int | None) -> dict[str, Any]:
        if self.binding.drive is not None:  # a world of its own (the multicast world)
            return self.binding.drive(self, action, before, member)
        command = self.harness.command
        if member is not None and member in getattr(self.world.bounds, "dead", ()):
            # a dead member (models/world.py rule 7) handles nothing: a packet to it is gone
            if isinstance(action, DeliverPacket):
                command("drop", ids=self.inflight.pop(action.packet))
            for packet in getattr(action, "packets", ()):  # a batch (models/world.py rule 6b)
                command("drop", ids=self.inflight.pop(packet))
            return {"packets": [], "delivered": [], "state": command("state", m=member)["state"]}
        if isinstance(action, AppSend):
            number = self.world.app_payload(before, action)
            payload = spec_payload(number).hex()
            key = (action.src, action.dst, number)
            flags = {name: True for name in ("oob", "dont_loopback")  # [oob] and [dont_loopback] sends
                     if key in getattr(self.world.bounds, name, ())}
            return command("send", m=action.src, dst=action.dst, payload=payload, state=True, **flags)
        if isinstance(action, DeliverPacket):
            ids = self.inflight.pop(action.packet)
            return command("deliver", id=ids[0], discard=ids[1:], m=member, state=True)
        if isinstance(action, DeliverBatch):  # one copy of each packet up as a MessageBatch, the others gone
            copies = [self.inflight.pop(packet) for packet in action.packets]
            return command("batch", ids=[ids[0] for ids in copies], discard=[i for ids in copies for i in ids[1:]],
                           m=member, state=True)
        if isinstance(action, DuplicatePacket):
            return command("copy", id=self.inflight[action.packet][0], m=member, state=True)
        if isinstance(action, LosePacket):
            return command("drop", ids=self.inflight.pop(action.packet))
        if isinstance(action, FireTimer):
            kind, peer = self.binding.timer(action.timer)
            return command("timer", m=action.member, kind=kind, peer=-1 if peer is None else peer, state=True)
        if isinstance(action, InstallView):
            return command("view", m=action.member, members=list(action.members), state=True)
        assert isinstance(action, RemoveReceiver), action
        return command("remove", m=action.member, peer=action.peer, state=True)

    def _compare_state(self, member: int, state: dict[str, Any]) -> Divergence | None:
        spec_node = self.world.view(self.state).nodes[member]
        try:
            jgroups_node = self.binding.node(state, member, self.world.n)
        except (ValueError, KeyError) as error:
            return self._divergence(f"state of {self.world.member_name(member)}", repr(spec_node),
                                    f"unreadable: {error}", "state", member)
        if jgroups_node != spec_node:
            spec_text, jgroups_text = _field_diff(spec_node, jgroups_node)
            return self._divergence(f"state of {self.world.member_name(member)}", spec_text, jgroups_text,
                                    "state", member)
        return None

    def check_all(self) -> Divergence | None:
        """Every member's state against the spec's (rule 4's end-of-run comparison)."""
        for member in range(self.world.n):
            divergence = self._compare_state(member, self.harness.command("state", m=member)["state"])
            if divergence is not None:
                return divergence
        return None

    def _divergence(self, what: str, spec: str, jgroups: str, kind: str, member: int) -> Divergence:
        text = self.world.format_action(self.path[-1][0]) if self.path else "(end of run)"
        return Divergence(len(self.path), text, what, spec, jgroups, kind, member)

    def trace(self, divergence: Divergence, seed: int | None) -> Trace:
        """The run so far as a trace of the model's world (timestamps and conn_ids as the checker names
        them), for ``seqcheck show`` and ``seqcheck replay --jgroups``."""
        canonical, state = [], self.world.init_states()[0]
        for action, after in self.path:
            canonical.append(self.world.canonical_action(state, action))
            state = after
        texts = [self.world.format_action(a) for a, _ in self.path]
        if texts:
            texts[-1] = f"{texts[-1]}  <- {divergence.what} differ from JGroups {self.harness.release.version}"
        reduced = self.model.world
        return Trace(str(self.model.path), file_digest(self.model.path), "jgroups_agrees", "divergence",
                     tuple(reduced.action_to_json(a) for a in canonical), seed, tuple(texts))


def _show(packets: Sequence[Packet]) -> str:
    return "[" + ", ".join(f"{p.src}->{p.dst} {p.msg}" for p in sorted(packets)) + "]"


def _field_diff(spec: Any, jgroups: Any) -> tuple[str, str]:
    """The fields of two nodes that differ, as two lines."""
    left, right = [], []
    for f in fields(spec):
        a, b = getattr(spec, f.name), getattr(jgroups, f.name, None)
        if a != b:
            left.append(f"{f.name}={a!r}")
            right.append(f"{f.name}={b!r}")
    return "; ".join(left), "; ".join(right)


@dataclass(frozen=True)
class WalkResult:
    seed: int
    steps: int
    divergence: Divergence | None
    run: JGroupsLockstep


def random_walk(model: Model, harness: Harness, seed: int, steps: int, *,
                flags: Sequence[str] | None = None) -> WalkResult:
    """``steps`` actions drawn uniformly among the enabled ones by ``seed``, both sides compared
    after every step and every member at the end."""
    rng = random.Random(seed)
    run = JGroupsLockstep(model, harness, flags=flags)
    for taken in range(steps):
        enabled = run.enabled()
        if not enabled:
            break
        action, after = enabled[rng.randrange(len(enabled))]
        divergence = run.step(action, after)
        if divergence is not None:
            return WalkResult(seed, taken + 1, divergence, run)
    return WalkResult(seed, run.steps_taken, run.check_all(), run)
