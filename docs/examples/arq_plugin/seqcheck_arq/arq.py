"""A sliding-window ARQ (go-back-N) as a seqcheck transition system, written only against the public
contract (``checks.explore.system``).

The sender S takes ``messages`` payloads 0, 1, 2, ... from its application and keeps at most
``window`` of them unacknowledged; a DATA packet carries its payload's sequence number, the payload
modulo ``modulus`` (0: unbounded, the payload itself). The receiver R delivers a DATA whose sequence
number is the one it expects, then acknowledges cumulatively: an ACK carries the sequence number it
expects next, after every DATA it gets (also one it discards). S slides its window by an ACK that
acknowledges 1 .. (unacknowledged) packets, and, when nothing is in flight in either direction (its
timer is longer than a round trip), retransmits its whole window (go-back-N). Each direction is a
FIFO channel of at most ``capacity`` packets that may lose any packet (``loss`` times in a run) and
duplicate any packet in place (``duplicate`` times), both faults for liveness.

Go-back-N over FIFO channels needs ``modulus > window``: with ``modulus = window`` a retransmission,
after every ACK of a full window was lost, is taken for the next window's first packet.

``arq.pml`` beside this file is the same model in Promela, state for state (``spin_twin``:
``seqcheck bench --race-spin`` races the two checkers on it).

A state is a tuple of 9 ints (``FIELDS``): counters that mean the same in every process, and the ids
of the two channels' contents, which this system interns (id spaces 0 and 1 of ``PortableStates``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any

from checks.explore.system import Always, Liveness, Property, Sometimes

FIELDS = ("base", "next", "expect", "delivered", "bad", "data", "acks", "loss", "duplicate")
BASE, NEXT, EXPECT, DELIVERED, BAD, DATA, ACKS, LOSS, DUP = range(len(FIELDS))
DATA_SPACE, ACK_SPACE = 0, 1
Action = tuple[Any, ...]  # (kind, *arguments); kinds below
FAULTS = frozenset({"lose_data", "lose_ack", "duplicate_data", "duplicate_ack"})


def property_list(messages: int) -> list[Property]:
    """Every property, in the order ``check.properties = ["all"]`` takes them."""
    return [
        Always("in_order_exactly_once", lambda s: s[BAD] == 0,
               "R delivers payloads 0, 1, 2, ... in order, each once (a payload out of order or twice sets bad)"),
        Liveness("eventually_all_acknowledged", lambda s: s[BASE] == messages,
                 "from every state, once the channels stop failing, S has every message acknowledged"),
        Sometimes("all_delivered_witness", lambda s: s[DELIVERED] == messages,
                  "some state has every message delivered (the model is not vacuous)"),
    ]


class Table:
    """Values <-> small ids in first-seen order (one id space)."""

    def __init__(self) -> None:
        self.ids: dict[Hashable, int] = {}
        self.values: list[Any] = []

    def __call__(self, value: Hashable) -> int:
        found = self.ids.setdefault(value, len(self.values))
        if found == len(self.values):
            self.values.append(value)
        return found


class SlidingWindowArq:
    """The model (a ``TransitionSystem`` with the capabilities ``PackedStates``, ``PortableStates`` and
    ``ExtraFigures``)."""

    def __init__(self, name: str, *, messages: int, window: int, modulus: int, capacity: int, loss: int,
                 duplicate: int, properties: Sequence[str]) -> None:
        self.name, self.messages, self.window, self.modulus, self.capacity = name, messages, window, modulus, capacity
        self.properties = [p for p in property_list(messages) if p.name in properties]
        self.tables = (Table(), Table())  # DATA channels (tuples of payloads), ACK channels (tuples of seqnos)
        empty = (self.tables[DATA_SPACE](()), self.tables[ACK_SPACE](()))
        self.init = (0, 0, 0, 0, 0, *empty, loss, duplicate)

    state_width = len(FIELDS)  # PackedStates: every int is in 0 .. 2**31 - 1

    # -- TransitionSystem ------------------------------------------------------------------------
    def init_states(self) -> list[tuple[int, ...]]:
        return [self.init]

    def seqno(self, payload: int) -> int:
        return payload % self.modulus if self.modulus else payload

    def successors(self, s: tuple[int, ...]) -> Iterator[tuple[Action, tuple[int, ...]]]:
        data, acks = self.tables[DATA_SPACE].values[s[DATA]], self.tables[ACK_SPACE].values[s[ACKS]]
        base, sent = s[BASE], s[NEXT]
        if sent < min(base + self.window, self.messages) and len(data) < self.capacity:
            yield ("send", sent), self.with_(s, NEXT, sent + 1, DATA, self.data(data + (sent,)))
        if not data and not acks and base < sent:
            resent = tuple(range(base, min(sent, base + self.capacity)))
            yield ("timeout", *resent), self.with_(s, DATA, self.data(resent))
        if data and len(acks) < self.capacity:
            yield ("receive_data", data[0]), self.receive_data(s, data[0], data[1:], acks)
        if acks:
            yield ("receive_ack", acks[0]), self.receive_ack(s, acks[0], acks[1:])
        yield from self.faults(s, data, DATA, "data", self.data)
        yield from self.faults(s, acks, ACKS, "ack", self.acks)

    def faults(self, s: tuple[int, ...], channel: tuple[int, ...], lane: int, what: str,
               intern: Any) -> Iterator[tuple[Action, tuple[int, ...]]]:
        for at, packet in enumerate(channel):
            if s[LOSS]:
                yield (f"lose_{what}", at, packet), self.with_(s, lane, intern(channel[:at] + channel[at + 1:]),
                                                               LOSS, s[LOSS] - 1)
            if s[DUP] and len(channel) < self.capacity:
                yield (f"duplicate_{what}", at, packet), self.with_(s, lane, intern(channel[:at + 1] + channel[at:]),
                                                                    DUP, s[DUP] - 1)

    def receive_data(self, s: tuple[int, ...], payload: int, rest: tuple[int, ...],
                     acks: tuple[int, ...]) -> tuple[int, ...]:
        state = list(s)
        if self.seqno(payload) == s[EXPECT]:
            state[BAD] = s[BAD] or int(payload != s[DELIVERED])
            state[DELIVERED] = s[DELIVERED] + 1
            state[EXPECT] = self.seqno(s[EXPECT] + 1)
        state[DATA], state[ACKS] = self.data(rest), self.acks(acks + (state[EXPECT],))
        return tuple(state)

    def receive_ack(self, s: tuple[int, ...], seqno: int, rest: tuple[int, ...]) -> tuple[int, ...]:
        newly = (seqno - self.seqno(s[BASE])) % self.modulus if self.modulus else seqno - s[BASE]
        base = s[BASE] + newly if 0 < newly <= s[NEXT] - s[BASE] else s[BASE]
        return self.with_(s, BASE, base, ACKS, self.acks(rest))

    def data(self, packets: tuple[int, ...]) -> int:
        return self.tables[DATA_SPACE](packets)

    def acks(self, packets: tuple[int, ...]) -> int:
        return self.tables[ACK_SPACE](packets)

    @staticmethod
    def with_(s: tuple[int, ...], *changes: int) -> tuple[int, ...]:
        state = list(s)
        for at in range(0, len(changes), 2):
            state[changes[at]] = changes[at + 1]
        return tuple(state)

    def within_bounds(self, s: tuple[int, ...]) -> bool:
        return True  # the capacity bounds the channels: nothing is cut

    def accepts_end(self, s: tuple[int, ...]) -> bool:
        return s[BASE] == self.messages

    def is_fault(self, action: Action) -> bool:
        return action[0] in FAULTS

    def action_to_json(self, action: Action) -> dict[str, Any]:
        return {"action": action[0], "args": list(action[1:])}

    def format_action(self, action: Action) -> str:
        kind, args = action[0], action[1:]
        words = {"send": "S sends DATA {0}", "receive_data": "R receives DATA {0}", "receive_ack": "S receives ACK {0}",
                 "lose_data": "DATA {1} lost (position {0})", "lose_ack": "ACK {1} lost (position {0})",
                 "duplicate_data": "DATA {1} duplicated (position {0})",
                 "duplicate_ack": "ACK {1} duplicated (position {0})"}
        if kind == "timeout":
            return "S times out, resends DATA " + ", ".join(map(str, args))
        return words[kind].format(*args)

    # -- PortableStates: the channels' ids are this process's; everything else is a plain number --
    def portable_layout(self) -> tuple[int | None, ...]:
        return tuple(DATA_SPACE if i == DATA else ACK_SPACE if i == ACKS else None for i in range(len(FIELDS)))

    def known_ids(self, space: int) -> int:
        return len(self.tables[space].values)

    def export_values(self, space: int, ids: Sequence[int]) -> list[Hashable]:
        values = self.tables[space].values
        return [values[i] for i in ids]

    def import_values(self, space: int, values: Sequence[Hashable]) -> list[int]:
        return [self.tables[space](value) for value in values]

    # -- ExtraFigures ------------------------------------------------------------------------------
    def extra_figures(self) -> dict[str, int | float | str]:
        return {"data_channel_contents": len(self.tables[DATA_SPACE].values),
                "ack_channel_contents": len(self.tables[ACK_SPACE].values),
                "modulus": self.modulus or "unbounded"}

    # -- the Promela twin (seqcheck bench --race-spin) -----------------------------------------------
    def spin_twin(self) -> tuple[Path, dict[str, int]]:
        """``arq.pml`` and its macros for this model (it holds channels of up to 8 packets, payloads
        up to 255)."""
        if self.capacity > 8 or self.messages > 255:
            raise ValueError(f"the Promela twin holds capacity <= 8 and messages <= 255, got {self.capacity} "
                             f"and {self.messages}")
        loss, duplicate = self.init[LOSS], self.init[DUP]
        return Path(__file__).with_name("arq.pml"), {
            "MESSAGES": self.messages, "WINDOW": self.window, "MODULUS": self.modulus, "CAPACITY": self.capacity,
            "LOSS": loss, "DUPLICATE": duplicate}
