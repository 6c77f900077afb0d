"""What the adapters of the multicast world's protocols share (``models/protocols/nakack2.py``,
``nakack4.py``): the world's stimuli handed to the spec's handlers, the hooks every multicast spec
answers the same way, the rendering of the world's own actions, and ``MulticastProperties``, the
memoised evaluation of properties over a multicast world's states.

A subclass sets ``spec`` (a module with ``Config``, ``Variant``, ``on_receive``, ``on_send``,
``on_timer``, ``on_view``, ``on_join``, ``on_merge_digest``, ``digest_of``) and the class
attributes of ``ProtocolAdapter``; ``title`` names the protocol in rendered text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from models.multicast_world import DONT_LOOPBACK, OOB, observe_channels, stopped
from models.protocols.base import ProtocolAdapter
from models.render_actions import format_action as format_world_action
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.multicast_world import MulticastWorld
    from models.world import History


class MulticastAdapter(ProtocolAdapter):
    """``ProtocolAdapter`` for the multicast world: no connections, no per-node, pair or step
    properties of the point-to-point kind, no ``[timers]``."""

    title: ClassVar[str]
    has_connections = False  # no conn_id: charts leave it out of their notes
    node_properties = ()
    pair_properties = ()
    step_properties = ()
    timer_keys: ClassVar[dict[str, bool]] = {}
    boolean_settings: ClassVar[frozenset[str]] = frozenset()  # [config] switches, read true/false
    dont_loopback_per_send: ClassVar[bool] = False  # the spec's on_send takes ``dont_loopback`` ([dont_loopback])
    batch_spec: ClassVar[Any] = None  # the module with the spec's ``on_batch`` ([faults] max_batch)
    # world rule 11 (models/multicast_batch.py): the protocol's messages by the batch JGroups' transport
    # hands them up in: (multicast or unicast bundle, OOB flag). MSG and XMIT_RSP are regular; XMIT_REQ,
    # HIGHEST_SEQNO and NAKACK4's ACK are sent OOB (NAKACK2.java 5.4.12 lines 1334, 1445; ReliableMulticast
    # 1256, 1362; NAKACK4.sendAck), and the transport splits a bundle into its OOB and regular batches.
    batch_kinds: ClassVar[dict[str, tuple[str, bool]]] = {
        "Data": ("mcast", False), "HighestSeqno": ("mcast", True), "XmitRsp": ("ucast", False),
        "XmitReq": ("ucast", True)}

    def bundle(self, msg: Any) -> tuple[str, bool] | None:
        """The batch a message in flight may be handed up in (world rule 11, ``models/multicast_batch.py``):
        its bundle (the sender's multicasts, or its unicasts to the receiver) and its OOB flag; None for
        a message not the protocol's."""
        return self.batch_kinds.get(type(msg).__name__)
    oob_flag: ClassVar[bool] = False  # the spec's on_send takes ``oob`` (a model file's [oob] table)
    # symmetry (models/multicast_symmetry.py): the node's fields that name no member (the others are
    # ``me``, the layout's per-member tuples and member sets, and the queue's senders)
    member_free: ClassVar[frozenset[str]] = frozenset()
    # ... and whether a handler reads a view's coordinator (its lowest member): NAKACK2's STABLE does
    coordinator_matters: ClassVar[bool] = True

    def make_config(self, members: int, variant: Sequence[str], timers: dict[str, bool],
                    settings: dict[str, int]) -> Any:
        values: dict[str, Any] = {k: bool(v) if k in self.boolean_settings else v for k, v in settings.items()}
        return self.spec.Config(members, variant=self.spec.Variant(**{name: True for name in variant}), **values)

    # -- the multicast world's hooks ------------------------------------------------------------
    def handle(self, cfg: Any, node: Any, stimulus: Hashable) -> tuple[Any, tuple[Any, ...]]:
        """The spec's handler of a world stimulus: a packet, ("mcast", n), ("timer", timer),
        ("view", members), ("merge", digest, members): MERGE_DIGEST then the view, or
        ("join", joiner, members): the coordinator's digest and JoinRsp, then its view."""
        spec = self.spec
        if isinstance(stimulus, tuple) and len(stimulus) == 4 and hasattr(stimulus, "msg"):
            step = spec.on_receive(cfg, node, stimulus.src, stimulus.msg)  # type: ignore[attr-defined]
            return step.node, step.effects
        kind = stimulus[0] if isinstance(stimulus, tuple) and stimulus else None
        if kind == "mcast":  # ("mcast", n), then OOB and DONT_LOOPBACK when flagged: world rule 6
            flags = stimulus[2:]  # type: ignore[index]
            flag = {"dont_loopback": True} if DONT_LOOPBACK in flags and not cfg.dont_loopback else {}
            if OOB in flags:
                flag["oob"] = True
            step = spec.on_send(cfg, node, stimulus[1], **flag)  # type: ignore[index]
        elif kind == "timer":
            step = spec.on_timer(cfg, node, stimulus[1])  # type: ignore[index]
        elif kind == "view":
            step = spec.on_view(cfg, node, stimulus[1])  # type: ignore[index]
        elif kind == "batch":  # ("batch", src, packets): world rule 11 (models/multicast_batch.py)
            msgs = tuple(p.msg for p in stimulus[2])  # type: ignore[index]
            step = self.batch_spec.on_batch(cfg, node, stimulus[1], msgs)  # type: ignore[index]
        elif kind in ("merge", "join"):
            first = (spec.on_merge_digest(cfg, node, stimulus[1]) if kind == "merge"  # type: ignore[index]
                     else spec.on_join(cfg, node, stimulus[1], stimulus[2]))  # type: ignore[index]
            step = spec.on_view(cfg, first.node, stimulus[2])  # type: ignore[index]
            return step.node, first.effects + step.effects
        else:
            raise ValueError(f"{self.name}: no handler for the world's stimulus {stimulus!r}")
        return step.node, step.effects

    # -- symmetry (models/multicast_symmetry.py) ---------------------------------------------------
    def permute_node(self, node: Any, perm: tuple[int, ...]) -> Any:
        """``node`` with every member it names renamed by ``perm``: its own number, its view and the
        other member sets of the state layout, every per-member tuple (windows, digests, ACK, XMIT and
        STABLE vectors, moved to the renamed index), and the senders and messages of its
        become_server_queue. A field neither listed so nor in ``member_free`` is an error (a new field
        must be classified before the world may rename members)."""
        layout, changes = self.state_layout, {}
        for f in dataclasses.fields(node):
            name, value = f.name, getattr(node, f.name)
            if name in self.member_free:
                continue
            if name == "me":
                changes[name] = perm[value]
            elif name in layout.per_member:
                changes[name] = _moved(value, perm)
            elif name in layout.member_set:
                changes[name] = frozenset(perm[m] for m in value)
            elif name == "queue":
                changes[name] = tuple((perm[src], self.permute_message(msg, perm)) for src, msg in value)
            else:
                raise ValueError(f"{self.name}: the node's field {name!r} is not classified for renaming members")
        return dataclasses.replace(node, **changes)

    def permute_message(self, msg: Any, perm: tuple[int, ...]) -> Any:
        """``msg`` renamed: the original sender of an XMIT_REQ or XMIT_RSP; the view (re-sorted) and
        the per-member digest of a STABLE vote, a STABILITY or a JoinRsp; MSG, HIGHEST_SEQNO and ACK name
        no member."""
        if hasattr(msg, "sender"):
            return msg._replace(sender=perm[msg.sender])
        if hasattr(msg, "view"):
            return msg._replace(view=tuple(sorted(perm[m] for m in msg.view)), digest=_moved(msg.digest, perm))
        return msg

    def own_digest(self, node: Any) -> tuple[int, int] | None:
        """The digest entry of the member's own window, None without one (a merge digest's entry)."""
        entry: tuple[int, int] | None = self.spec.digest_of(node)[node.me]
        return entry

    def has_view(self, node: Any) -> bool:
        """May the world install a scripted view at ``node`` (not before a joiner's JoinRsp)?"""
        return bool(node.members)

    def view_members(self, node: Any) -> frozenset[int]:
        """The members of ``node``'s view (empty before a joiner's JoinRsp)."""
        return frozenset(node.members)

    def requested(self, packet: Any) -> tuple[int, ...]:
        """The seqnos ``packet`` asks its destination to retransmit (none but for an XMIT_REQ)."""
        return packet.msg.seqnos if packet.kind == "XmitReq" else ()

    def observe_history(self, history: History, member: int, observed: tuple[tuple[str, Any], ...],
                        n: int) -> History:
        """The multicast world's history after ``member``'s observations (its channels only)."""
        return observe_channels(history, member, observed, n)

    # -- rendering --------------------------------------------------------------------------------
    def format_action(self, action: Any, name: Callable[[int], str]) -> str:
        kind = type(action).__name__
        if kind == "AppMcast":
            return f"{name(action.src)}: application multicasts"
        if kind == "DropBelow":
            p = action.packet
            return (f"{name(p.dst)} never sees {self.format_message(p.kind, p.msg)} from {name(p.src)} "
                    f"(dropped below {self.title})")
        if kind == "Stop":
            return f"{name(action.member)} " + ("crashes" if action.crash else "leaves (disconnects)")
        if kind == "AnswerJoin":
            return f"{name(action.coordinator)} answers {name(action.joiner)}'s join (digest, new view)"
        if kind == "MergeView":
            return (f"{name(action.member)} installs merge view [{', '.join(map(name, action.members))}] "
                    "(MERGE_DIGEST first)")
        if kind == "FireTimer":
            return f"{name(action.member)}: {self.timer_line(action.timer, name)}"
        return format_world_action(action, name, self.timer_text)

    def timer_line(self, timer: Any, name: Callable[[int], str]) -> str:
        """What a timer's firing does, for traces."""
        return self.timer_text[timer.kind]


def _moved(per_member: tuple[Any, ...], perm: tuple[int, ...]) -> tuple[Any, ...]:
    """A per-member tuple renamed: member ``m``'s item at ``perm[m]``."""
    out: list[Any] = [None] * len(per_member)
    for member, value in enumerate(per_member):
        out[perm[member]] = value
    return tuple(out)


class MulticastProperties:
    """Properties over a multicast world's states, memoised on node and history ids."""

    def __init__(self, world: MulticastWorld) -> None:
        self.world, self.n = world, world.n
        self.nodes, self.hist = world.node_table.values, world.hist_table.values
        self.cfg = world.cfg
        self._memo: dict[Hashable, bool] = {}

    def _cached(self, key: Hashable, compute: Callable[[], bool]) -> bool:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = compute()
        return found

    def channels(self, name: str, predicate: Callable[[fifo.Channel], bool]) -> Callable[[tuple[int, ...]], bool]:
        """``predicate`` on every (sender, receiver) channel of the history."""
        n, hist = self.n, self.hist
        return lambda w: self._cached((name, w[n + 2]), lambda: all(map(predicate, hist[w[n + 2]].channels)))

    def per_node(self, name: str, predicate: Callable[[Any], bool]) -> Callable[[tuple[int, ...]], bool]:
        """``predicate`` on every member's node."""
        nodes, n, cached = self.nodes, self.n, self._cached

        def holds(w: tuple[int, ...]) -> bool:
            return all(cached((name, i), lambda: predicate(nodes[i])) for i in w[:n])  # noqa: B023 (called at once)

        return holds

    def running(self, w: tuple[int, ...]) -> list[Any]:
        """The nodes of the members that have not stopped."""
        env = self.world.env_table.values[w[self.n + 1]]
        return [self.nodes[i] for m, i in enumerate(w[:self.n]) if not stopped(env, m)]

    def delivered(self, w: tuple[int, ...]) -> bool:
        """Every running member sharing a view with a running sender (each in the other's), with a
        window for it, delivered every seqno the sender took."""
        nodes = self.running(w)
        for sender in nodes:
            for receiver in nodes:
                window = receiver.windows[sender.me]
                if window is None or sender.me not in receiver.members or receiver.me not in sender.members:
                    continue
                if window.delivered < sender.seqno:
                    return False
        return True

    def witness(self, w: tuple[int, ...]) -> bool:
        """Every budgeted multicast made, and delivered."""
        n, sends = self.n, self.world.bounds.sends
        channels = self.hist[w[n + 2]].channels
        return all(channels[m * n + m].sent == sends[m] for m in range(n)) and self.delivered(w)
