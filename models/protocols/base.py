"""How the world talks to a protocol spec: one ``ProtocolAdapter`` per ``spec/`` module.

The adapter turns world stimuli into calls of the spec's handlers, tells which effects are packets,
and maps the spec's observations (``spec/effects.py``) onto history: the abstract channel of
``spec/reliable_fifo`` and one bit per violated *step* property (a property about a transition,
such as "a purge never removes what the receiver's window still needs"). It also lists the
protocol's properties, variants, settings and timers by name, for model files and charts.

This base knows no protocol's fields: it calls the handlers ``on_send``, ``on_receive``,
``on_timer``, ``on_view``, ``on_remove_receiver`` and ``enabled_timers`` of the spec module, keeps
the channel history of the effects ``Deliver``, ``WindowCreated``, ``WindowRemoved`` and
``Discarded`` (with the grace bits, set by the observation ``GraceChanged``, that decide which
discards are excused), and leaves everything else to what a protocol declares: its properties
(node, pair and step), the observations it turns into step-property bits (``observe_effect``,
``step_checks``), and, for the world's reductions, which connections a timer or packet belongs to
and which fields are timestamps (none by default). ``models/protocols/unicast.py`` declares what
the unicast protocols share; one module per protocol the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, fields
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from models.state_fields import GENERIC, StateLayout
from spec import reliable_fifo as fifo

if TYPE_CHECKING:
    from models.world import History


@dataclass(frozen=True)
class NodeProperty:
    """A safety property of one member's state."""

    name: str
    holds: Callable[[Any], bool]
    doc: str


@dataclass(frozen=True)
class PairProperty:
    """A safety property of (sender state, receiver state)."""

    name: str
    holds: Callable[[Any, Any], bool]
    doc: str


def doc_of(function: Callable[..., Any]) -> str:
    return function.__doc__ or ""


class ProtocolAdapter:
    """The world's view of one spec module. Subclasses set the class attributes."""

    name: str
    spec: ModuleType
    node_properties: tuple[NodeProperty, ...]
    pair_properties: tuple[PairProperty, ...]
    step_properties: tuple[tuple[str, str], ...]  # (name, doc); bit i of History.step_violations
    variant_aliases: ClassVar[dict[str, str]]  # JIRA id or scenario name -> Variant field
    timer_keys: ClassVar[dict[str, bool]]  # model file [timers]: Config field -> default
    config_keys: ClassVar[dict[str, tuple[int, int]]]  # model file [config]: Config field -> (default, minimum)
    config_maxima: ClassVar[dict[str, int]] = {}  # ... and the settings that have a maximum
    timer_text: tuple[str, ...]  # per timer kind, for traces; "{peer}" is the timer's peer
    progress_timers: frozenset[int]  # timer kinds a liveness continuation may use
    has_connections: ClassVar[bool] = True  # windows carry a conn_id (charts print it)
    history_timers: frozenset[int] = frozenset()  # timer kinds whose firing ``observe_timer`` records
    # properties beyond the shared catalogue (``models/properties.py``): (name, doc) of safety
    # properties of one node that read the model's Config (``config_property_holds``), and of
    # liveness goals of one node each (``goal_holds``), judged like eventually_delivered
    config_properties: tuple[tuple[str, str], ...] = ()
    oob_flag: ClassVar[bool] = False  # the spec's on_send takes ``oob`` (a model file's [oob] table)
    batches: ClassVar[bool] = False  # the spec has ``on_batch`` (a model file's [faults] max_batch)
    self_sends: ClassVar[bool] = False  # a member may send to itself (a model file's "A->A" in [sends])
    dont_loopback_flag: ClassVar[bool] = False  # on_send takes ``dont_loopback`` (a model file's [dont_loopback])
    liveness_goals: tuple[tuple[str, str], ...] = ()
    state_layout: ClassVar[StateLayout] = GENERIC  # what the state's fields mean, for the viewer's panel

    def step_bit(self, name: str) -> int:
        return 1 << [n for n, _ in self.step_properties].index(name)

    # -- configuration ----------------------------------------------------------------------
    def variant_names(self) -> set[str]:
        return {f.name for f in fields(self.spec.Variant)}

    def make_config(self, members: int, variant: Sequence[str], timers: dict[str, bool],
                    settings: dict[str, int]) -> Any:
        """The spec's Config for a validated model file."""
        return self.spec.Config(members, variant=self.spec.Variant(**{name: True for name in variant}),
                                **timers, **settings)

    # -- handlers ---------------------------------------------------------------------------
    def initial_node(self, cfg: Any, member: int, view: frozenset[int]) -> Any:
        return self.spec.initial_node(member, cfg, view)

    def handle(self, cfg: Any, node: Any, stimulus: Hashable) -> tuple[Any, tuple[Any, ...]]:
        spec = self.spec
        if isinstance(stimulus, tuple) and len(stimulus) == 4 and hasattr(stimulus, "msg"):
            step = spec.on_receive(cfg, node, stimulus.src, stimulus.msg)  # type: ignore[attr-defined]
        elif stimulus[0] == "send":  # type: ignore[index]
            flags = {flag: True for flag in stimulus[3:]}  # type: ignore[index]  # World.send_stimulus
            step = spec.on_send(cfg, node, stimulus[1], stimulus[2], **flags)  # type: ignore[index]
        elif stimulus[0] == "timer":  # type: ignore[index]
            step = spec.on_timer(cfg, node, stimulus[1])  # type: ignore[index]
        elif stimulus[0] == "view":  # type: ignore[index]
            step = spec.on_view(cfg, node, stimulus[1])  # type: ignore[index]
        elif stimulus[0] == "batch":  # type: ignore[index]  # World.batch_stimulus (rule 6b)
            step = self.batch_input(cfg, node, stimulus[1], stimulus[2])  # type: ignore[index]
        else:
            step = spec.on_remove_receiver(cfg, node, stimulus[1])  # type: ignore[index]
        return step.node, step.effects

    def batch_input(self, cfg: Any, node: Any, src: int, msgs: tuple[Any, ...]) -> Any:
        """The spec's handler of a batch of ``msgs`` from ``src`` (a ``Step``); only a protocol whose
        ``batch_mode`` batches something is ever asked."""
        raise NotImplementedError(f"{self.name}: no batch input")

    def batch_mode(self, msg: Any) -> bool | None:
        """The batch (OOB or not) a message in flight may be delivered in (``models/world.py`` rule 6b);
        None: it is never batched."""
        return None

    def enabled_timers(self, cfg: Any, node: Any) -> tuple[Any, ...]:
        return tuple(self.spec.enabled_timers(cfg, node))

    def timer_is_progress(self, timer: Any) -> bool:
        return timer.kind in self.progress_timers

    def is_send(self, effect: Any) -> bool:
        return type(effect).__name__ == "Send"

    # -- the world's reductions and gates (models/world.py rules 5 and 6): none by default -------
    def receivers(self, node: Any) -> list[int]:
        """The peers ``node`` holds a receive window for (a receiver removal may drop one)."""
        return []

    def quiet_connection(self, member: int, timer: Any) -> tuple[int, int] | None:
        """(sender, receiver) of the connection ``timer`` at ``member`` removes an entry of, if it
        is one that ``models/world.py`` rule 6 lets fire only while none of its packets is in flight."""
        return None

    def receive_window_of(self, packet: Any) -> tuple[int, int] | None:
        """(sender, receiver) of the receive window ``packet`` belongs to, if any (rule 6)."""
        return None

    # -- partial-order reduction (models/reduction.py): conservative defaults ----------------------
    def timer_on_one_connection(self, cfg: Any, timer: Any) -> bool:
        """Does ``timer`` read and write only its member's state about ``timer.peer``? No unless a
        protocol says so (then it acts on the whole member)."""
        return False

    def view_peers(self, cfg: Any, member: int, old: frozenset[int], new: frozenset[int]) -> frozenset[int] | None:
        """The peers whose connections ``member``'s installation of view ``new`` after view ``old``
        may read or write, in any state (``models/reduction.py`` rule 1); None: every peer."""
        return None

    def view_widens(self, cfg: Any) -> bool:
        """May a view without a peer make a timer on the whole member possible later (e.g.
        UNICAST3's conn_close_timeout on the receive entry it makes CLOSING)?"""
        return True

    def removal_on_one_connection(self) -> bool:
        """Does the receiver-removal hook touch only the removed window? No unless a protocol says so."""
        return False

    def wide_timers_possible(self, cfg: Any, node: Any) -> bool:
        """Can a timer that acts on the whole member fire at ``node``, now or after any steps of
        its connections (a view change aside)? Yes unless a protocol says otherwise."""
        return True

    def opens_connection(self, node: Any, peer: int) -> bool:
        """Would an application send from ``node`` to ``peer`` now take the member's next conn_id
        (``models/reduction.py``)? Yes unless a protocol says otherwise."""
        return True

    def config_property_holds(self, name: str, cfg: Any, node: Any) -> bool:
        """Does the ``config_properties`` entry ``name`` hold of ``node`` under ``cfg``?"""
        raise NotImplementedError(name)

    def goal_holds(self, name: str, node: Any) -> bool:
        """Has ``node`` reached the ``liveness_goals`` entry ``name``?"""
        raise NotImplementedError(name)

    def nothing_unacked(self, node: Any, peer: int) -> bool:
        """``node`` holds nothing it still waits to have acknowledged by ``peer`` (eventually_acked)."""
        return bool(self.spec.nothing_unacked(node, peer))

    def node_timestamps(self, node: Any) -> tuple[int, tuple[int, ...]]:
        """(timestamps issued so far, last timestamp accepted from each peer; 0 = none): rule 5."""
        return 0, ()

    def packet_timestamp(self, msg: Any) -> int:
        """The timestamp a message carries, 0 if none."""
        return 0

    def timestamp_fields(self) -> dict[type, frozenset[str]]:
        """The fields rule 5 renumbers, by the type that has them."""
        return {}

    def renumber_node(self, node: Any, ranks: tuple[dict[int, int], ...]) -> Any:
        """``node`` with its timestamps replaced by their ranks: ``ranks[issuer * n + holder]``
        maps the timestamps in use on that stream to 1..k (rule 5)."""
        return node

    def renumber_packet(self, packet_msg: Any, rank: dict[int, int]) -> Any:
        return packet_msg

    # -- conn_id ranking (models/conn_ranks.py, rule 5b) ---------------------------------------
    ranks_conn_ids = False  # a protocol that sets it promises what models/conn_ranks.py's header says

    def node_conn_ids(self, node: Any) -> tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]:
        """(next conn_id, conn_id of the send entry per peer (-1 none), the conn_ids the receive
        entry per peer holds (its own and its buffered messages'))."""
        raise NotImplementedError

    def packet_conn_id(self, msg: Any) -> tuple[bool, int] | None:
        """(sent by the conn_id's issuer?, conn_id) of a message that carries one, else None."""
        return None

    def rename_conn_ids(self, node: Any, maps: tuple[dict[int, int], ...]) -> Any:
        """``node`` with each conn_id replaced by ``maps[issuer * n + holder][conn_id]`` and its
        counter by the largest number of conn_ids in use on one of its streams."""
        return node

    def rename_packet_conn_id(self, msg: Any, rank: dict[int, int]) -> Any:
        return msg

    # -- symmetry (checks/explore/symmetry.py) ------------------------------------------------
    def permute_node(self, node: Any, perm: tuple[int, ...]) -> Any:
        """``node`` with every member ``m`` it names replaced by ``perm[m]`` (its own identity
        included), for symmetry reduction; None if the protocol treats members asymmetrically
        (then the world offers no symmetry). A protocol that returns a node here promises that
        its handlers, timers and properties commute with renaming members."""
        return None

    def permute_message(self, msg: Any, perm: tuple[int, ...]) -> Any:
        """A message with every member it names renamed by ``perm`` (none by default)."""
        return msg

    # -- observations and history -----------------------------------------------------------
    def step_observations(self, old: Any, new: Any, stimulus: Hashable, effects: tuple[Any, ...]
                          ) -> tuple[tuple[str, Any], ...]:
        """Observations of one handler call that need the node before and after it (none here)."""
        return ()

    def observe(self, history: History, member: int, old: Any, nodes: tuple[Any, ...],
                observed: tuple[tuple[str, Any], ...], n: int, cfg: Any) -> History:
        """History after ``member`` moved from ``old`` to ``nodes[member]`` observing ``observed``:
        the channels of ``spec/reliable_fifo`` kept here, every other observation passed to
        ``observe_effect`` in order, then ``step_checks`` of the move.

        The liveness excuse: a ``Discarded`` marked ``flushed`` (the spec says its grace period ran)
        excuses its payloads only when the world saw that grace period begin legitimately: the
        ``GraceChanged`` observation of that send entry (``models/protocols/unicast.py``) set the
        pair's bit of ``History.grace`` and nothing has cleared it since."""
        channels, syncs = list(history.channels), list(history.syncs)
        violations, grace = history.step_violations, history.grace
        for kind, value in observed:
            if kind == "stimulus" and value[0] == "send":
                channels[member * n + value[1]] = fifo.send(channels[member * n + value[1]], "oob" in value[3:],
                                                            "dont_loopback" in value[3:])
            elif kind == "stimulus":
                self.observe_timer(value[1], member, n, syncs)
            elif kind == "Deliver":
                channels[value.src * n + member] = fifo.deliver(channels[value.src * n + member], value.payload)
            elif kind in ("WindowCreated", "WindowRemoved"):
                channels[value.src * n + member] = fifo.new_incarnation(channels[value.src * n + member])
            elif kind == "Discarded":
                if value.flushed and grace >> (member * n + value.dst) & 1:
                    channels[member * n + value.dst] = fifo.excuse(channels[member * n + value.dst], value.payloads)
            elif kind == "GraceChanged":
                bit = 1 << (member * n + value.dst)
                grace = grace | bit if value.excusable else grace & ~bit
            else:
                violations |= self.observe_effect(kind, value, member, nodes, syncs, n, cfg)
        violations |= self.step_checks(old, nodes[member])
        return type(history)(tuple(channels), violations, tuple(syncs), grace)

    def observe_effect(self, kind: str, value: Any, member: int, nodes: tuple[Any, ...], syncs: list[int],
                       n: int, cfg: Any) -> int:
        """The step-property bits one protocol-specific observation of ``member`` violates (it may
        update the counters ``syncs``)."""
        return 0

    def step_checks(self, old: Any, new: Any) -> int:
        """The step-property bits a member's move from ``old`` to ``new`` violates by itself."""
        return 0

    def observe_timer(self, timer: Any, member: int, n: int, syncs: list[int]) -> None:
        """A timer fired at ``member``: update the counters ``syncs`` (only timers of
        ``history_timers``; the world skips the others when they change nothing else)."""

    def observe_reads(self, member: int, observed: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
        """The members whose new node ``observe`` reads for these observations (it reads no other
        entry of ``nodes``), so that history updates can be memoised on those nodes alone. The
        batched world (``models/batch.py``) passes None for the others: a read not listed here fails."""
        return (member,)

    # -- the multicast world's rule 9 (young copies): defaults for protocols without threads ---
    def unsent(self, node: Any, seqno: int) -> bool:
        """Does an application thread of ``node`` hold ``seqno`` without having sent it (never, here)?"""
        return False

    def sends_originals(self, action: Any) -> bool:
        """Does ``action`` put original copies of application messages on the wire?"""
        return type(action).__name__ == "AppMcast"

    # -- rendering --------------------------------------------------------------------------
    def format_action(self, action: Any, name: Callable[[int], str]) -> str:
        from models.render_actions import format_action

        return format_action(action, name, self.timer_text)

    def format_message(self, kind: str, msg: Any) -> str:
        from models.render_actions import format_message

        return format_message(kind, msg)

    def describe_node(self, node: Any, names: Sequence[str]) -> list[str]:
        """One line per connection of ``node``, for the end of a chart."""
        return [repr(node)]

    def describe_pair(self, sender: Any, receiver: Any, names: Sequence[str]) -> list[str]:
        """What the chart's reader must see about one direction (nothing by default)."""
        return []
