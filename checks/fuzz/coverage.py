"""What a fuzz run covered: action kinds and faults met in protocol phases (state fingerprints: ``fingerprints.py``).

Rules
-----
1. Everything here is a pure function of world states and actions, so a run's coverage depends only
   on the run (never on the process or machine that computed it).
2. The canonical states a run visits are fingerprinted by ``checks/fuzz/fingerprints.py``.
3. Protocol-level coverage counts, for each fault (a column) the UNICAST3 *phases* (rows) of the
   connection it hits, read from the world state just before the fault. A fault concerns the
   connections (sender, receiver) it touches: a lost or duplicated packet the connection the
   packet belongs to (DATA and CLOSE: src -> dst; ACK, SEND_FIRST_SEQNO, XMIT_REQ: dst -> src);
   a view change every connection to or from a member whose membership changes; a receiver reset
   the reset window's connection; reaping (idle and close timers) the entry's connection. A fault
   counts once per phase that holds on any of its connections. Phases overlap (they are not a
   partition); ``PHASES`` says what each means for packet faults and for the others.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from typing import Any

from checks.fuzz.scheme import Scheme
from models.multicast_world import AnswerJoin, AppMcast, DropBelow, MergeView, MulticastWorld, Stop
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
    WorldView,
)
from spec import unicast3 as u3

# -- action kinds ---------------------------------------------------------------------------------
KINDS = ("send", "deliver", "duplicate", "loss", "xmit", "sync", "reap", "view", "remove")
KIND_DOCS = {
    "send": "application send (AppSend)",
    "deliver": "a packet in flight arrives (DeliverPacket; the network reorders freely), or DATA arrive as a "
               "batch (DeliverBatch, with [faults] max_batch)",
    "duplicate": "a packet arrives and a copy stays in flight (DuplicatePacket)",
    "loss": "a packet in flight is lost (LosePacket; also stands for a drop below the protocol at send time)",
    "xmit": "a run of the retransmit task (FireTimer xmit)",
    "sync": "sync_min_interval elapses (FireTimer sync_expired)",
    "reap": "conn_expiry / conn_close timers (FireTimer idle_* and close_*)",
    "view": "a member installs the next view of its script (InstallView)",
    "remove": "a receiver drops its window for a peer (RemoveReceiver, the test hook)",
}
_KIND_OF_TYPE = {AppSend: "send", DeliverPacket: "deliver", DeliverBatch: "deliver", DuplicatePacket: "duplicate",
                 LosePacket: "loss", InstallView: "view", RemoveReceiver: "remove",
                 # the multicast world's own actions (checks/fuzz/mcast_coverage.py says what each stands for)
                 AppMcast: "send", DropBelow: "loss", AnswerJoin: "view", Stop: "reap", MergeView: "view"}
# the periodic tasks (and the multicast world's BECOME_SERVER, a progress timer); the rest reap
_TIMER_KIND = {"xmit": "xmit", "stable": "xmit", "sync_expired": "sync", "become_server": "xmit",
               # NAKACK4: a held send passed down is the application's; the delivery fault loses deliveries
               "send": "send", "deliver_fault": "loss"}


def timer_name(timer: Any) -> str:
    """The name of a spec timer (its spec module's ``TIMER_NAMES``), whatever the protocol."""
    return str(sys.modules[type(timer).__module__].TIMER_NAMES[timer.kind])


def _is(msg: Any, *names: str) -> bool:
    """Is ``msg`` one of the message types ``names``, in whichever protocol's spec?"""
    return type(msg).__name__ in names


MULTICAST_KINDS = tuple(kind for kind in KINDS if kind not in ("sync", "remove"))  # no such actions there


def world_kinds(world: Any) -> tuple[str, ...]:
    """The kinds of ``KINDS`` that ``world`` has actions of (the multicast world: no sync, no remove)."""
    return MULTICAST_KINDS if isinstance(world, MulticastWorld) else KINDS


def kind_of(action: Any) -> str:
    """The action kind (one of ``KINDS``) of a world action."""
    if isinstance(action, FireTimer):
        return _TIMER_KIND.get(timer_name(action.timer), "reap")
    return _KIND_OF_TYPE[type(action)]


# -- protocol phases ------------------------------------------------------------------------------
FAULTS = ("loss", "duplicate", "view", "reset", "reap")
FAULT_DOCS = {"loss": "a packet lost", "duplicate": "a packet duplicated", "view": "a view change",
              "reset": "a receiver reset (RemoveReceiver)", "reap": "an idle or close timer (reaping)"}

PhaseTest = Callable[[WorldView, int, int, Packet | None], bool]


def _entries(view: WorldView, s: int, r: int) -> tuple[u3.SendEntry | None, u3.RecvEntry | None]:
    return view.nodes[s].send[r], view.nodes[r].recv[s]


def _on_connection(e: u3.SendEntry | None, w: u3.RecvEntry | None) -> bool:
    return e is not None and w is not None and w.conn_id == e.conn_id


def _opening(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, w = _entries(view, s, r)
    return e is not None and e.acked == 0 and not _on_connection(e, w)


def _stale(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, w = _entries(view, s, r)
    return e is not None and e.acked > 0 and not _on_connection(e, w)


def _burst_tail(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, w = _entries(view, s, r)
    if e is None or not e.unacked:
        return False
    if packet is not None:
        msg = packet.msg
        return _is(msg, "Data") and msg.conn_id == e.conn_id and msg.seqno == e.highest_sent
    return not _on_connection(e, w) or (w is not None and w.highest_received < e.highest_sent)


def _gap(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    _, w = _entries(view, s, r)
    return w is not None and bool(w.missing())


def _acked(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, w = _entries(view, s, r)
    if packet is not None:
        msg = packet.msg
        if _is(msg, "Data"):
            return e is not None and msg.conn_id == e.conn_id and msg.seqno <= e.acked
        if _is(msg, "Ack", "Stable"):
            return e is not None and e.last_ts != 0 and getattr(msg, "ts", 0) <= e.last_ts
        return False
    return (w is not None and getattr(w, "ack_pending", False)) or any(
        p.src == r and p.dst == s and _is(p.msg, "Ack", "Stable") for p in view.network)


def _sync(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    def answer_or_request(p: Packet) -> bool:
        msg = p.msg
        return _is(msg, "SendFirstSeqno") or (_is(msg, "Data") and msg.first and msg.seqno > 1)

    if packet is not None:
        return answer_or_request(packet)
    return s in getattr(view.nodes[r], "sync_sent", ()) or any(
        answer_or_request(p) and {p.src, p.dst} == {s, r} for p in view.network)


def _closing(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, w = _entries(view, s, r)
    return (e is not None and getattr(e, "state", None) == u3.CLOSING) or (
        w is not None and getattr(w, "state", None) == u3.CLOSING)


def _cached(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    cache = getattr(view.nodes[r], "cache", None)  # UNICAST3's message cache (JGRP-2327)
    return bool(cache and cache[s])


def _unacked(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    e, _ = _entries(view, s, r)
    return e is not None and bool(e.unacked)


def _settled(view: WorldView, s: int, r: int, packet: Packet | None) -> bool:
    return not _unacked(view, s, r, packet)


PHASES: tuple[tuple[str, str, PhaseTest], ...] = (
    ("opening", "the sender has purged nothing and the receiver has no window on its conn_id", _opening),
    ("stale conn", "the sender has purged some, the receiver has no window on its conn_id (reset, reaped)",
     _stale),
    ("burst tail", "packet faults: the packet is the DATA #HS (the last sent); others: #HS not yet received",
     _burst_tail),
    ("gap", "the receiver's window misses seqnos below its highest received", _gap),
    ("after ACK", "DATA: already purged by the sender; ACK: not newer than one accepted; others: an ACK "
                  "pending or in flight (a delayed ACK)", _acked),
    ("first-seqno sync", "packet faults: a SEND_FIRST_SEQNO or its answer (DATA first, #>1); others: one "
                         "in flight or within sync_min_interval", _sync),
    ("closing", "the send or receive entry is CLOSING", _closing),
    ("cached", "the receiver holds DATA of the sender in its message cache (UNICAST3, JGRP-2327)", _cached),
    ("unacked", "the sender has unacknowledged messages", _unacked),
    ("all acked", "the sender has no unacknowledged messages", _settled),
)
PHASE_NAMES = tuple(name for name, _, _ in PHASES)
CELLS = tuple((phase, fault) for phase in PHASE_NAMES for fault in FAULTS)  # row-major
TOTAL_ROW = "(any phase)"


def fault_of(action: Any) -> str | None:
    """The fault column of ``action``, None for an action that is no fault here."""
    if isinstance(action, LosePacket):
        return "loss"
    if isinstance(action, DuplicatePacket):
        return "duplicate"
    if isinstance(action, InstallView):
        return "view"
    if isinstance(action, RemoveReceiver):
        return "reset"
    if isinstance(action, FireTimer) and kind_of(action) == "reap":
        return "reap"
    return None


def connections(view: WorldView, action: Any) -> list[tuple[int, int]]:
    """The (sender, receiver) connections a fault touches (rule 3)."""
    if isinstance(action, (LosePacket, DuplicatePacket)):
        p = action.packet
        data_like = _is(p.msg, "Data", "Close")
        return [(p.src, p.dst) if data_like else (p.dst, p.src)]
    if isinstance(action, InstallView):
        m = action.member
        changed = view.nodes[m].members ^ frozenset(action.members)
        return [c for p in sorted(changed - {m}) for c in ((m, p), (p, m))]
    if isinstance(action, RemoveReceiver):
        return [(action.peer, action.member)]
    if isinstance(action, FireTimer):
        m, t = action.member, action.timer
        return [(m, t.peer)] if timer_name(t) in ("idle_send", "close_send") else [(t.peer, m)]
    return []


def phases_met(view: WorldView, action: Any) -> list[str]:
    """The phases (names, in ``PHASES`` order) the fault ``action`` meets in the state ``view``."""
    packet = getattr(action, "packet", None)
    conns = connections(view, action)
    return [name for name, _, test in PHASES if any(test(view, s, r, packet) for s, r in conns)]


UNICAST = Scheme("point-to-point", FAULTS, FAULT_DOCS, tuple((name, doc) for name, doc, _ in PHASES), fault_of,
                 phases_met, {"send": (AppSend,), "deliver": (DeliverPacket, DeliverBatch),
                              "duplicate": (DuplicatePacket,), "loss": (LosePacket,), "xmit": (FireTimer,),
                              "sync": (FireTimer,),
                              "reap": (FireTimer,), "view": (InstallView,), "remove": (RemoveReceiver,)},
                 KIND_DOCS)


def scheme_for(world: Any) -> Scheme:
    """The coverage scheme of ``world``'s kind."""
    if isinstance(world, MulticastWorld):
        from checks.fuzz.mcast_coverage import MULTICAST

        return MULTICAST
    return UNICAST


class PhaseCounter:
    """Per-run counts: one per cell of the scheme's cells plus one total per fault."""

    def __init__(self, scheme: Scheme = UNICAST) -> None:
        self.scheme = scheme
        self.cells = [0] * len(scheme.cells)
        self.totals = [0] * len(scheme.faults)
        self._index: dict[Hashable, int] = {cell: i for i, cell in enumerate(scheme.cells)}
        self._fault_index = {fault: i for i, fault in enumerate(scheme.faults)}

    def record(self, view: Any, action: Any) -> None:
        scheme = self.scheme
        fault = scheme.fault_of(action)
        if fault is None:
            return
        self.totals[self._fault_index[fault]] += 1
        for phase in scheme.phases_met(view, action):
            self.cells[self._index[phase, fault]] += 1

    def as_list(self) -> list[int]:
        """Cells (row-major) then the fault totals: the ``phase_hits`` column."""
        return self.cells + self.totals


def coverage_table(hits: list[int], scheme: Scheme = UNICAST) -> list[str]:
    """The phase x fault table (``hits`` as ``PhaseCounter.as_list`` summed over runs), then the
    cells never reached."""
    faults, names, cells_of = scheme.faults, scheme.phase_names, scheme.cells
    width = max(len(name) for name in (*names, TOTAL_ROW))
    head = f"{'phase':<{width}}" + "".join(f"{fault:>12}" for fault in faults)
    lines = [head, "─" * len(head)]
    totals = hits[len(cells_of):]
    for row, phase in enumerate(names):
        cells = hits[row * len(faults):(row + 1) * len(faults)]
        lines.append(f"{phase:<{width}}" + "".join(f"{c:>12,}" if c else f"{'·':>12}" for c in cells))
    lines.append(f"{TOTAL_ROW:<{width}}" + "".join(f"{c:>12,}" for c in totals))
    absent = {fault for fault, total in zip(faults, totals) if total == 0}
    never = [f"{fault} x {phase}" for (phase, fault), c in zip(cells_of, hits) if c == 0 and fault not in absent]
    lines.append(f"never reached ({len(never)} of {len(cells_of) - len(absent) * len(names)} cells of the "
                 f"faults that occurred): {', '.join(never) if never else 'none'}")
    if absent:
        lines.append(f"faults that never occurred (budget 0, weight 0 or never enabled): "
                     f"{', '.join(f for f in faults if f in absent)}")
    return lines


def phase_legend(scheme: Scheme = UNICAST) -> list[str]:
    return [f"  {name}: {doc}" for name, doc in scheme.phases]
