"""``explore(..., workers=N)``: the breadth-first search of ``checks/explore/search.py`` with the
successor generation spread over N forked worker processes.

What it owns: the worker processes, how states and chunks cross between them and this process (the
*coordinator*), and the order in which their results are recorded. Everything else is the one
process's search (``Search``, subclassed): the fingerprint set, the numbering, the parents, the
properties, the recovery edges, liveness, Ctrl-C, ``max_states``, progress and budget reports.

Rules
-----
1. Division of work. The coordinator keeps the frontier and hands each chunk of ``CHUNK`` states
   to a worker (the next chunk to a worker as soon as it has fewer than ``LOOKAHEAD`` outstanding).
   A worker expands it (``expand_batch``: most of the time of a search), removes duplicates among the
   chunk's successors, and sends back per state its successor count (-1: cut), the distinct successors
   in order of first appearance, the position in the chunk of each one's first parent, per successor
   which distinct one it is, and the progress (not a fault) flags. The coordinator then does for the
   chunk what ``Search._expand`` does (symmetry representatives, fingerprints, look-ups, numbering,
   parents, properties, recovery edges) on the distinct successors only.
2. Results are recorded chunk by chunk in frontier order, whichever worker finishes first, so the
   search records exactly what one process does: the same chunks, the same successors per chunk in
   the same order (``successors`` is deterministic, system.py rule 3), hence the same states per
   level numbered in order of first appearance, the same parents, cut states, deadlocks, recovery
   edges and stopping point (``max_states``, the first violation). Removing duplicates first changes
   no first appearance: a distinct successor first appears where its first copy does, and an orbit
   where its first member does. So state and transition counts, levels, depth, verdicts, trace lengths
   and liveness findings equal the one process's.
3. States cross as values. A state is a tuple of interned ids (``models/interning.py``), and each
   process interns on its own, so an id means nothing elsewhere. Workers are forked (their tables
   start as copies of the coordinator's) and then translate: the coordinator sends with a chunk the
   values of the ids the worker has not been sent, the worker sends with its results the values it
   interned since its last message, and each side keeps arrays from the other's ids to its own.
4. Determinism. The coordinator interns a worker's value only when a recorded state needs it, in
   the order the states and their ints are recorded, so its ids, and with them its fingerprints and
   symmetry representatives (the smallest tuple of ids of an orbit), do not depend on which worker
   did what or when. They are not the one process's ids: with symmetry the representative of an
   orbit, hence the numbering within a level, may differ from one process's (counts, levels and
   verdicts do not: rule 7 of search.py), and are the same in every run with workers.
5. Workers are started only for a level of at least ``START_AT`` states (a small model never pays for
   them) and stopped when the search ends, however it ends. They ignore SIGINT: Ctrl-C reaches the
   coordinator, which stops as one process does. A worker that fails reports its error, which the
   coordinator raises.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import queue
import signal
import threading
import traceback
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from checks.explore.frontier import Level, PackedLevel
from checks.explore.search import CHUNK, Result, Search, explore

LOOKAHEAD = 3  # chunks a worker may have outstanding
START_AT = 4 * CHUNK  # the first level of this many states starts the workers

Ids = npt.NDArray[np.int64]


class Interned(Protocol):
    """An interner (``models/interning.Interner``): values <-> ids in first-seen order."""

    values: list[Any]

    def __call__(self, value: Hashable) -> int: ...


def explore_with_workers(system: Any, tables: Sequence[Interned], workers: int, **options: Any) -> Result:
    """``explore(system, **options)`` with the successors computed by ``workers`` processes (rule 1);
    ``tables[i]`` is the interner of int ``i`` of every state of ``system``. A search with
    partial-order reduction (``partial_order=True``) runs in this process alone."""
    if options.get("partial_order"):  # a reduced search chooses successors by what it has seen: one process
        return explore(system, **options)

    def search(*args: Any, **kwargs: Any) -> WorkerSearch:
        return WorkerSearch(tables, workers, *args, **kwargs)

    return explore(system, search_type=search, **options)


class _Lanes:
    """The distinct interners of a state's ints, and which one each int is an id of."""

    def __init__(self, tables: Sequence[Interned]) -> None:
        self.groups: list[Interned] = []
        self.group_of: list[int] = []
        for table in tables:
            found = next((g for g, known in enumerate(self.groups) if known is table), None)
            if found is None:
                found = len(self.groups)
                self.groups.append(table)
            self.group_of.append(found)
        self.lanes = [[lane for lane, g in enumerate(self.group_of) if g == group] for group in range(len(self.groups))]
        self.width = len(tables)

    def sizes(self) -> list[int]:
        return [len(table.values) for table in self.groups]


def _grown(array: npt.NDArray[Any], size: int, fill: Any) -> npt.NDArray[Any]:
    """``array`` with at least ``size`` entries, the new ones ``fill``."""
    if size <= len(array):
        return array
    return np.concatenate([array, np.full(max(size, 2 * len(array)) - len(array), fill, dtype=array.dtype)])


def _identity(size: int) -> Ids:
    return np.concatenate([np.arange(size, dtype=np.int64), np.full(max(size, 64), -1, dtype=np.int64)])


@dataclass
class _Reply:
    """A worker's expansion of one chunk (rule 1), ids still the worker's."""

    counts: npt.NDArray[np.int32]  # per chunk state: successors, -1 if cut
    distinct: npt.NDArray[np.int32]  # the distinct successors, in order of first appearance
    owner: npt.NDArray[np.int32]  # per distinct successor: position in the chunk of its first parent
    which: npt.NDArray[np.int32]  # per successor: its row in ``distinct``
    progress: npt.NDArray[np.bool_]  # per successor: not a fault


@dataclass
class _Worker:
    """The coordinator's side of one worker process."""

    process: Any
    inbox: Connection  # chunks to the worker
    outbox: Connection  # its replies
    to_mine: list[Ids]  # per group: the worker's id -> the coordinator's (-1: not interned here yet)
    values: list[list[Any]]  # per group: the values of the worker's ids (from the fork and its messages)
    sent: list[npt.NDArray[np.bool_]]  # per group: the coordinator's ids whose values the worker has
    pending: list[int] = field(default_factory=list)  # first indices of the chunks it has, in order


class WorkerSearch(Search):
    """``Search`` with the chunks' successors computed by worker processes for every level of ``START_AT`` states or
    more (rules 1 and 2); smaller levels are expanded here."""

    def __init__(self, tables: Sequence[Interned], workers: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if workers < 2:
            raise ValueError(f"workers: expected 2 or more, got {workers}")
        self.lanes, self.count = _Lanes(tables), workers
        self.workers: list[_Worker] = []
        self.level: Level | None = None
        self.todo: Iterator[int] = iter(())  # first indices of the level's chunks not handed out yet
        self.level_first = 0
        self.replies: dict[int, tuple[_Worker, _Reply]] = {}

    def run(self) -> list[Hashable]:
        try:
            return super().run()
        finally:
            self._stop_workers()

    def begin_level(self, frontier: Level, first: int) -> None:
        self.replies.clear()
        for worker in self.workers:  # a search stopped mid-level hands out nothing more; none is
            worker.pending.clear()   # begun after it, so this is only for a level fully recorded
        if len(frontier) < START_AT:
            self.level, self.todo = None, iter(())
            return
        if not self.workers:
            self._start_workers()
        self.level, self.level_first = frontier, first
        self.todo = iter(range(first, first + len(frontier), CHUNK))
        for worker in self.workers:
            self._hand_out(worker)

    def expand_elsewhere(self, chunk: Sequence[Hashable], first: int, next_frontier: Level) -> bool:
        if self.level is None:
            return False
        worker, reply = self._reply(first)
        self._record_chunk(chunk, first, next_frontier, self._translated(worker, reply.distinct), reply)
        return True

    # -- the coordinator's side ----------------------------------------------------------------
    def _start_workers(self) -> None:
        context = multiprocessing.get_context("fork")
        sizes = self.lanes.sizes()
        for _ in range(self.count):
            chunks_read, chunks_written = context.Pipe(duplex=False)
            replies_read, replies_written = context.Pipe(duplex=False)
            process = context.Process(target=_work, daemon=True, args=(
                self, chunks_read, replies_written, (chunks_written, replies_read), sizes))
            process.start()
            chunks_read.close()
            replies_written.close()
            self.workers.append(_Worker(process, chunks_written, replies_read, [_identity(size) for size in sizes],
                                        [list(table.values[:size]) for table, size in zip(self.lanes.groups, sizes)],
                                        [np.arange(max(size, 64)) < size for size in sizes]))

    def _stop_workers(self) -> None:
        """Stop every worker: one with chunks still outstanding (the search stopped early) at once."""
        for worker in self.workers:
            if worker.pending:
                worker.process.terminate()
            with contextlib.suppress(OSError):  # a worker that failed may have closed its end
                worker.inbox.send(None)
        for worker in self.workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.inbox.close()
            worker.outbox.close()
        self.workers.clear()

    def _hand_out(self, worker: _Worker) -> None:
        """Give ``worker`` chunks of the level until it has ``LOOKAHEAD``."""
        assert self.level is not None
        while len(worker.pending) < LOOKAHEAD:
            first = next(self.todo, None)
            if first is None:
                return
            start = first - self.level_first
            if isinstance(self.level, PackedLevel):
                rows = self.level.rows(start, start + CHUNK)
            else:
                rows = np.array(self.level.chunk(start, start + CHUNK), dtype=np.int32).reshape(-1, self.lanes.width)
            worker.inbox.send((first, rows, self._values_for(worker, rows)))
            worker.pending.append(first)

    def _values_for(self, worker: _Worker, rows: npt.NDArray[np.int32]) -> list[tuple[Ids, list[Any]]]:
        """Per group, the ids in ``rows`` whose values ``worker`` has not been sent, and the values."""
        out = []
        for group, lanes in enumerate(self.lanes.lanes):
            ids = np.unique(rows[:, lanes])
            table = self.lanes.groups[group]
            sent = worker.sent[group] = _grown(worker.sent[group], len(table.values), False)
            missing = ids[~sent[ids]]
            sent[missing] = True
            out.append((missing.astype(np.int64), [table.values[i] for i in missing.tolist()]))
        return out

    def _reply(self, first: int) -> tuple[_Worker, _Reply]:
        """The reply for the chunk numbered from ``first``, receiving others' meanwhile (rule 2)."""
        while first not in self.replies:
            busy = [worker.outbox for worker in self.workers if worker.pending]
            for ready in wait(busy):
                worker = next(w for w in self.workers if w.outbox is ready)
                self._receive(worker)
        return self.replies.pop(first)

    def _receive(self, worker: _Worker) -> None:
        try:
            message = worker.outbox.recv()
        except EOFError:
            raise RuntimeError(f"worker process {worker.process.pid} ended without its results "
                               f"(exit code {worker.process.exitcode})") from None
        if message[0] == "error":
            raise RuntimeError(f"worker process {worker.process.pid} failed:\n{message[1]}")
        _, first, reply, new_values = message
        for group, values in enumerate(new_values):
            worker.values[group].extend(values)
        assert worker.pending[0] == first
        worker.pending.pop(0)
        self.replies[first] = (worker, reply)
        self._hand_out(worker)

    def _translated(self, worker: _Worker, rows: npt.NDArray[np.int32]) -> Ids:
        """``rows`` (the worker's ids) in this process's ids, interning values not met before in
        the order of the rows and their ints (rule 4)."""
        out = np.empty(rows.shape, dtype=np.int64)
        for group, lanes in enumerate(self.lanes.lanes):
            cells = rows[:, lanes].ravel()
            to_mine = worker.to_mine[group] = _grown(worker.to_mine[group], len(worker.values[group]), -1)
            mine = to_mine[cells]
            unknown = mine < 0
            if unknown.any():
                ids, at = np.unique(cells[unknown], return_index=True)
                table, values = self.lanes.groups[group], worker.values[group]
                for local in ids[np.argsort(at)].tolist():
                    to_mine[local] = table(values[local])
                mine = to_mine[cells]
            out[:, lanes] = mine.reshape(len(rows), len(lanes))
        return out

    def _record_chunk(self, chunk: Sequence[Hashable], first: int, next_frontier: Level, distinct: Ids,
                reply: _Reply) -> None:
        """What ``Search._expand`` does with a chunk's successors, on the distinct ones (rule 1)."""
        per_state = reply.counts.astype(np.int64)
        self._cut_and_deadlocks(chunk, per_state, first)
        self.stats.transitions += len(reply.which)
        np.maximum(per_state, 0, out=per_state)
        orbits: list[int] = []
        if self.canonical is not None:
            representatives, orbits = self.canonical(cast(Any, distinct))
            distinct = np.asarray(representatives, dtype=np.int64).reshape(len(distinct), self.lanes.width)
        fps = self.fingerprints(cast(Any, distinct) if self.width is not None else list(map(tuple, distinct.tolist())))
        unique, first_at, inverse = np.unique(fps, return_index=True, return_inverse=True)
        index_of = self.seen.lookup(unique)
        new = np.flatnonzero(index_of < 0)
        order = np.argsort(first_at[new])
        fresh = first_at[new][order]
        base = self.stats.distinct
        index_of[new[order]] = np.arange(base, base + len(fresh))
        self.seen.add_new(fps[fresh], base)
        self.parents.frombytes((reply.owner[fresh] + np.int32(first)).astype(np.int32).tobytes())
        states: list[Any] = list(map(tuple, distinct[fresh].tolist()))
        next_frontier.extend(states)
        self.stats.distinct += len(fresh)
        self.stats.unreduced += sum(orbits[p] for p in fresh.tolist()) if orbits else len(fresh)
        self._check_all(states, base)
        if self.liveness:
            owner = np.repeat(np.arange(len(chunk), dtype=np.int32), per_state)
            recovering = np.flatnonzero(reply.progress)
            self._record_edges(np.bincount(owner[recovering], minlength=len(chunk)),
                               index_of[inverse[reply.which[recovering]]])


# -- the worker's side ---------------------------------------------------------------------------
def _work(search: WorkerSearch, inbox: Connection, outbox: Connection, theirs: tuple[Connection, Connection],
          sizes: list[int]) -> None:
    """A worker process: expand the chunks it is sent until it is sent None or the coordinator's
    end of ``inbox`` closes (rules 1 and 3)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for end in [*theirs, *(c for w in search.workers for c in (w.inbox, w.outbox))]:
        end.close()  # the coordinator's ends, copied by fork: closed here, so a pipe ends when it closes them
    chunks: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def receive() -> None:  # drains the pipe at once, so the coordinator never waits to send
        while True:
            try:
                message = inbox.recv()
            except EOFError:
                message = None
            chunks.put(message)
            if message is None:
                return

    threading.Thread(target=receive, daemon=True).start()
    lanes = search.lanes
    to_mine = [_identity(size) for size in sizes]
    told = list(sizes)  # per group: the values of ids below this were sent to the coordinator
    try:
        while (message := chunks.get()) is not None:
            first, rows, values = message
            for group, (ids, group_values) in enumerate(values):
                to_mine[group] = _grown(to_mine[group], int(ids.max()) + 1 if len(ids) else 0, -1)
                for coordinator_id, value in zip(ids.tolist(), group_values):
                    to_mine[group][coordinator_id] = lanes.groups[group](value)
            local = np.empty(rows.shape, dtype=np.int64)
            for lane, group in enumerate(lanes.group_of):
                local[:, lane] = to_mine[group][rows[:, lane]]
            reply = _expand_chunk(search, list(map(tuple, local.tolist())), lanes.width)
            new_values = []
            for group, table in enumerate(lanes.groups):
                new_values.append(table.values[told[group]:])
                told[group] = len(table.values)
            outbox.send(("ok", first, reply, new_values))
    except BaseException:  # any failure goes to the coordinator, which raises it
        outbox.send(("error", traceback.format_exc()))


def _expand_chunk(search: Search, chunk: list[tuple[int, ...]], width: int) -> _Reply:
    """Expand ``chunk`` and keep its distinct successors in order of first appearance (rule 1)."""
    afters, counts, progress = search.expand_batch(chunk)
    distinct = dict.fromkeys(afters)  # in order of first appearance
    numbered = dict(zip(distinct, range(len(distinct))))
    which = np.fromiter(map(numbered.__getitem__, afters), dtype=np.int32, count=len(afters))
    before = np.maximum.accumulate(np.concatenate(([np.int32(-1)], which[:-1]))) if len(which) else which
    firsts = np.flatnonzero(which > before)  # where each distinct successor first appears
    per_state = np.maximum(np.array(counts, dtype=np.int64), 0)
    owner = np.repeat(np.arange(len(chunk), dtype=np.int32), per_state)
    rows = np.array(list(distinct), dtype=np.int32).reshape(len(distinct), width)
    return _Reply(np.array(counts, dtype=np.int32), rows, owner[firsts], which,
                  np.array(progress, dtype=bool).reshape(len(afters)))
