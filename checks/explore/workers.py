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
   A worker runs the system's ``expand_batch`` on it (most of the time of a search: successors,
   handler calls, interning) and sends back the successors as rows of ints, the per-state counts
   (-1: cut) and the progress flags. For the coordinator that reply *is* the chunk's
   ``expand_batch`` (``WorkerSearch.expand_batch``), so everything after it is ``Search._expand``
   itself: symmetry representatives, fingerprints, look-ups, numbering, parents, properties, cut
   states, deadlocks and recovery edges. (A worker that also removed duplicate successors, so that
   the coordinator handled distinct ones only, measured no better: its dictionary work cost about
   what the coordinator saved.)
2. Results are recorded chunk by chunk in frontier order, whichever worker finishes first. So the
   search records what one process does: the same chunks, each with the same successors in the same
   order (``successors`` is a function of the state, ``checks/explore/system.py`` rule 3), hence the
   same states per level numbered in order of first appearance, the same parents, cut states,
   deadlocks, recovery edges and stopping point (``max_states``, the first violation). State and
   transition counts, levels, depth, verdicts, trace lengths and liveness findings are the one
   process's.
3. States cross as values, through the system's ``PortableStates`` capability
   (``checks/explore/system.py``) and nothing else: a state is a tuple of ints, each either the same
   in every process or an id in one of the system's id spaces, which each process gives on its own,
   so an id means nothing elsewhere. Workers are forked (each starts with a copy of the system and
   its ids) and then translate: the coordinator sends with a chunk the values of the ids the worker
   has not been sent (``export_values``), the worker sends with its results the values of the ids
   its system gave since its last message, and each side keeps arrays from the other's ids to its
   own (``import_values``: the system gives its ids, and grows its tables, itself).
4. Determinism. The coordinator imports a worker's value only when a recorded successor needs it,
   in the order of the successors and their ints, so its ids, and with them its fingerprints and
   symmetry representatives (the smallest tuple of ids of an orbit, ``models/symmetry.py`` rule 4),
   do not depend on which worker did what or when: every run with workers numbers the states alike,
   whatever their number. The ids are not one process's (which interns in another order), so with
   symmetry an orbit's representative, and then the order of the states within a level, may differ
   from one process's; the orbits per level do not (rule 7 of search.py), nor, on every shipped
   model, the verdict (a model with two properties first violated at the same depth could see the
   other one reported, as it could with another interning order in one process).
5. Workers are started only for a level of at least ``START_AT`` states (a small model never pays for
   them) and stopped when the search ends, however it ends. They ignore SIGINT (blocked from the fork
   until then): Ctrl-C reaches the coordinator, which stops as one process does. A worker that fails
   reports its error, which the coordinator raises.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import threading
import traceback
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import numpy.typing as npt

from checks.explore.frontier import Level, PackedLevel
from checks.explore.search import CHUNK, Result, Search, explore
from checks.explore.system import PortableStates, offers

LOOKAHEAD = 3  # chunks a worker may have outstanding
START_AT = 4 * CHUNK  # the first level of this many states starts the workers

Ids = npt.NDArray[np.int64]


def explore_with_workers(system: Any, workers: int, **options: Any) -> Result:
    """``explore(system, **options)`` with the successors computed by ``workers`` processes (rule 1);
    ``system`` must offer ``PortableStates`` (rule 3). A search with partial-order reduction
    (``partial_order=True``) runs in this process alone."""
    if not offers(system, PortableStates):
        raise ValueError(f"{getattr(system, 'name', system)}: the system offers no PortableStates: its states "
                         "cannot cross processes")
    if options.get("partial_order"):  # a reduced search chooses successors by what it has seen: one process
        return explore(system, **options)

    def search(*args: Any, **kwargs: Any) -> WorkerSearch:
        return WorkerSearch(workers, *args, **kwargs)

    return explore(system, search_type=search, **options)


class _Lanes:
    """The id spaces of a state's ints (``PortableStates.portable_layout``), and which ints are ids of each."""

    def __init__(self, system: PortableStates) -> None:
        layout = list(system.portable_layout())
        self.system = system
        self.spaces = sorted({space for space in layout if space is not None})
        self.lanes = [[lane for lane, space in enumerate(layout) if space == wanted] for wanted in self.spaces]
        self.width = len(layout)

    def sizes(self) -> list[int]:
        return [self.system.known_ids(space) for space in self.spaces]

    def export(self, group: int, ids: Sequence[int]) -> list[Any]:
        return list(self.system.export_values(self.spaces[group], ids)) if len(ids) else []

    def import_(self, group: int, values: Sequence[Any]) -> list[int]:
        return list(self.system.import_values(self.spaces[group], values)) if len(values) else []


def _grown(array: npt.NDArray[Any], size: int, fill: Any) -> npt.NDArray[Any]:
    """``array`` with at least ``size`` entries, the new ones ``fill``."""
    if size <= len(array):
        return array
    return np.concatenate([array, np.full(max(size, 2 * len(array)) - len(array), fill, dtype=array.dtype)])


def _identity(size: int) -> Ids:
    return np.concatenate([np.arange(size, dtype=np.int64), np.full(max(size, 64), -1, dtype=np.int64)])


@dataclass
class _Reply:
    """A worker's ``expand_batch`` of one chunk (rule 1), ids still the worker's."""

    counts: npt.NDArray[np.int32]  # per chunk state: successors, -1 if cut
    rows: npt.NDArray[np.int32]  # the successors, one row each
    progress: npt.NDArray[np.bool_]  # per successor: not a fault


@dataclass
class _Worker:
    """The coordinator's side of one worker process."""

    process: Any
    inbox: Connection  # chunks to the worker
    outbox: Connection  # its replies
    to_mine: list[Ids]  # per group: the worker's id -> the coordinator's (-1: not imported here yet)
    base: list[int]  # per group: the ids the worker had from the fork (the same as the coordinator's)
    values: list[list[Any]]  # per group: the values of the worker's later ids, from its messages
    sent: list[npt.NDArray[np.bool_]]  # per group: the coordinator's ids whose values the worker has
    pending: list[int] = field(default_factory=list)  # first indices of the chunks it has, in order


class WorkerSearch(Search):
    """``Search`` with the chunks' successors computed by worker processes for every level of
    ``START_AT`` states or more (rules 1 and 2); smaller levels are expanded here."""

    def __init__(self, workers: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if workers < 2:
            raise ValueError(f"workers: expected 2 or more, got {workers}")
        self.lanes, self.count = _Lanes(self.system), workers  # type: ignore[arg-type]
        self.workers: list[_Worker] = []
        self.level: Level | None = None
        self.todo: Iterator[int] = iter(())  # first indices of the level's chunks not handed out yet
        self.level_first = 0
        self.replies: dict[int, tuple[_Worker, _Reply]] = {}
        self.recording: Iterator[int] = iter(())  # first indices of the level's chunks not recorded yet
        self.here = self.expand_batch  # the system's (in a worker too)
        self.expand_batch = self._expand_batch  # what ``Search._expand`` calls

    def run(self) -> list[Hashable]:
        try:
            return super().run()
        finally:
            self._stop_workers()

    def begin_level(self, frontier: Level, first: int) -> None:
        if len(frontier) < START_AT:
            self.level, self.todo = None, iter(())
            return
        if not self.workers:
            self._start_workers()
        self.level, self.level_first = frontier, first
        self.todo = iter(range(first, first + len(frontier), CHUNK))
        self.recording = iter(range(first, first + len(frontier), CHUNK))
        for worker in self.workers:
            self._hand_out(worker)

    def helpers_cpu(self) -> float:
        """CPU seconds the running workers have used (``Search.helpers_cpu``)."""
        return sum(process_cpu(worker.process.pid) for worker in self.workers if worker.process.pid is not None)

    def _expand_batch(self, chunk: Sequence[Hashable]) -> tuple[Any, Any, Any]:
        """``BatchExpansion.expand_batch`` of ``chunk``, the next chunk of the level in order: a
        worker's, its successors in this process's ids (rows of an array for packed states)."""
        if self.level is None:
            return self.here(chunk)
        worker, reply = self._reply(next(self.recording))
        rows = self._translated(worker, reply.rows)
        return (rows if self.width is not None else list(map(tuple, rows.tolist()))), reply.counts, reply.progress

    # -- the coordinator's side ----------------------------------------------------------------
    def _start_workers(self) -> None:
        context = multiprocessing.get_context("fork")
        sizes = self.lanes.sizes()
        self.stats.worker_processes = self.count
        for _ in range(self.count):
            chunks_read, chunks_written = context.Pipe(duplex=False)
            replies_read, replies_written = context.Pipe(duplex=False)
            process = context.Process(target=_work, daemon=True, args=(
                self, chunks_read, replies_written, (chunks_written, replies_read), sizes))
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # until the worker ignores it
            try:
                process.start()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            chunks_read.close()
            replies_written.close()
            self.workers.append(_Worker(process, chunks_written, replies_read, [_identity(size) for size in sizes],
                                        list(sizes), [[] for _ in sizes],
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
            sent = worker.sent[group] = _grown(worker.sent[group], int(ids[-1]) + 1 if len(ids) else 0, False)
            missing = ids[~sent[ids]]
            sent[missing] = True
            out.append((missing.astype(np.int64), self.lanes.export(group, missing.tolist())))
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
        """``rows`` (the worker's ids) in this process's ids, importing values not met before in
        the order of the rows and their ints (rule 4); the ints that are no ids as they are."""
        out = rows.astype(np.int64)
        for group, lanes in enumerate(self.lanes.lanes):
            cells = rows[:, lanes].ravel()
            base, values = worker.base[group], worker.values[group]
            to_mine = worker.to_mine[group] = _grown(worker.to_mine[group], base + len(values), -1)
            mine = to_mine[cells]
            unknown = mine < 0
            if unknown.any():
                ids, at = np.unique(cells[unknown], return_index=True)
                ordered = ids[np.argsort(at)]
                to_mine[ordered] = self.lanes.import_(group, [values[local - base] for local in ordered.tolist()])
                mine = to_mine[cells]
            out[:, lanes] = mine.reshape(len(rows), len(lanes))
        return out


# -- the worker's side ---------------------------------------------------------------------------
def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` has used so far, from ``/proc`` (0 where there
    is none: the workers' time is then counted once they have ended, from the children's usage)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _work(search: WorkerSearch, inbox: Connection, outbox: Connection, theirs: tuple[Connection, Connection],
          sizes: list[int]) -> None:
    """A worker process: expand the chunks it is sent until it is sent None or the coordinator's
    end of ``inbox`` closes (rules 1 and 3)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # SIGINT is blocked from the fork to here (_start_workers)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
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
                to_mine[group][ids] = lanes.import_(group, group_values)
            local = rows.astype(np.int64)
            for group, group_lanes in enumerate(lanes.lanes):
                local[:, group_lanes] = to_mine[group][rows[:, group_lanes]]
            reply = _expand_chunk(search, list(map(tuple, local.tolist())), lanes.width)
            new_values = []
            for group, known in enumerate(lanes.sizes()):
                new_values.append(lanes.export(group, range(told[group], known)))
                told[group] = known
            outbox.send(("ok", first, reply, new_values))
    except BaseException:  # any failure goes to the coordinator, which raises it
        outbox.send(("error", traceback.format_exc()))


def _expand_chunk(search: WorkerSearch, chunk: list[tuple[int, ...]], width: int) -> _Reply:
    """The system's ``expand_batch`` of ``chunk``, as arrays."""
    afters, counts, progress = search.here(chunk)
    return _Reply(np.array(counts, dtype=np.int32), np.array(afters, dtype=np.int32).reshape(len(afters), width),
                  np.array(progress, dtype=bool).reshape(len(afters)))
