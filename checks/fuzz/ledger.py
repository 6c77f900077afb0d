"""What a fuzz job has finished, so that a stopped job goes on where it stopped (``seqcheck fuzz --resume``).

Rules
-----
1. A job's seeds are cut into ranges, one Spark task each (``checks/fuzz/spark.py`` rule 1), and
   the ranges into *segments* of ``SEGMENT_TASKS_PER_CORE`` ranges per core. Each segment is one
   Spark job writing its rows to ``runs/segment=K`` under the output folder; Spark commits that
   folder (its ``_SUCCESS`` marker) when the job ends, so a stopped job loses at most the segment
   it was running.
2. ``job.json`` in the output folder names the job: what the rows depend on (``JobKey``: the
   model text's digest, the seeds, the schedule options), the ranges and the segments, and the
   seconds each finished segment took. It is rewritten atomically (a new file replaces it) after
   every segment.
3. A segment is done when ``job.json`` records it and its ``_SUCCESS`` marker exists; any other
   segment folder is removed and its segment run again.
4. ``--resume`` runs only the segments not done, with the recorded ranges; it refuses (one line)
   an output folder without ``job.json`` or one whose job differs from the command's. Rows depend
   on their seed alone (``checks/fuzz/run.py`` rule 1), so a resumed job's rows are those of an
   uninterrupted one. Without ``--resume`` a new job replaces the folder's ``runs`` and ``job.json``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from checks.fuzz.run import FuzzPlan

SEGMENT_TASKS_PER_CORE = 8  # rule 1: tasks per core in one segment (its Spark job)
LEDGER = "job.json"


class ResumeError(ValueError):
    """``--resume`` cannot go on with this folder (one line naming it and what differs)."""


@dataclass(frozen=True)
class JobKey:
    """What a job's rows depend on (rule 2)."""

    model_name: str
    model_sha256: str
    first_seed: int
    runs: int
    steps: int
    weights: str
    liveness: bool
    engines: str | None
    swarm: bool
    pct: bool
    rows: str = "parquet"  # how the segments' rows are stored: parquet (Spark) or jsonl (in process)

    @staticmethod
    def of(plan: FuzzPlan, first_seed: int, runs: int, *, rows: str = "parquet") -> JobKey:
        return JobKey(plan.model_name, hashlib.sha256(plan.model_text.encode()).hexdigest(), first_seed, runs,
                      plan.steps, plan.weights.text(), plan.liveness, plan.engines, plan.swarm, plan.pct, rows)


@dataclass
class Ledger:
    """Rule 2: one job's ranges, segments and finished segments (index -> seconds)."""

    results: Path  # the ``runs`` folder
    key: JobKey
    ranges: list[tuple[int, int]]
    segments: list[tuple[int, int]]  # [first, end) indexes into ``ranges``
    seconds: dict[int, float] = field(default_factory=dict)
    cpu_seconds: dict[int, float] = field(default_factory=dict)  # CPU of the runs (absent: an older ledger)

    @property
    def path(self) -> Path:
        return self.results.parent / LEDGER

    def folder(self, segment: int) -> Path:
        return self.results / f"segment={segment}"

    def is_done(self, segment: int) -> bool:
        return segment in self.seconds and (self.folder(segment) / "_SUCCESS").exists()

    def to_do(self) -> list[int]:
        """The segments not done (rule 3), their leftover folders removed."""
        pending = [k for k in range(len(self.segments)) if not self.is_done(k)]
        for segment in pending:
            shutil.rmtree(self.folder(segment), ignore_errors=True)
            self.seconds.pop(segment, None)
            self.cpu_seconds.pop(segment, None)
        return pending

    def ranges_of(self, segment: int) -> list[tuple[int, int]]:
        first, end = self.segments[segment]
        return self.ranges[first:end]

    def runs_of(self, segments: list[int]) -> int:
        return sum(hi - lo for k in segments for lo, hi in self.ranges_of(k))

    def finished(self, segment: int, seconds: float, cpu_seconds: float) -> None:
        """``segment``'s rows are on disk: its wall seconds, and the CPU seconds its runs used."""
        self.seconds[segment] = round(seconds, 3)
        self.cpu_seconds[segment] = round(cpu_seconds, 3)
        self.save()

    @property
    def total_cpu(self) -> float | None:
        """The CPU seconds of every finished segment's runs; None if one was recorded without them."""
        if set(self.cpu_seconds) != set(self.seconds):
            return None
        return sum(self.cpu_seconds.values())

    def save(self) -> None:
        data = {"key": asdict(self.key), "ranges": self.ranges, "segments": self.segments,
                "seconds": {str(k): v for k, v in sorted(self.seconds.items())},
                "cpu_seconds": {str(k): v for k, v in sorted(self.cpu_seconds.items())}}
        partial = self.path.with_suffix(".json.partial")
        partial.write_text(json.dumps(data, indent=1) + "\n")
        partial.replace(self.path)


def new_ledger(results: Path, key: JobKey, ranges: list[tuple[int, int]], cores: int) -> Ledger:
    """Rule 4 without ``--resume``: a new job, the folder's old rows and ledger gone."""
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    per_segment = max(1, SEGMENT_TASKS_PER_CORE * cores)
    segments = [(i, min(i + per_segment, len(ranges))) for i in range(0, len(ranges), per_segment)]
    ledger = Ledger(results, key, ranges, segments)
    ledger.save()
    return ledger


def recorded_rows(folder: Path) -> str | None:
    """How the job in ``folder`` (an ``--out``) stores its rows (``JobKey.rows``), None without a
    readable ledger."""
    try:
        key = json.loads((folder / LEDGER).read_text())["key"]
        return str(key.get("rows", "parquet"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def resumed_ledger(results: Path, key: JobKey) -> Ledger:
    """Rule 4 with ``--resume``: the ledger of ``results``'s job, which must be ``key``'s."""
    path = results.parent / LEDGER
    if not path.exists():
        raise ResumeError(f"--resume: {results.parent} holds no fuzz job ({LEDGER} not found)")
    try:
        data = json.loads(path.read_text())
        recorded = JobKey(**data["key"])
        ranges = [(int(lo), int(hi)) for lo, hi in data["ranges"]]
        segments = [(int(a), int(b)) for a, b in data["segments"]]
        seconds = {int(k): float(v) for k, v in data["seconds"].items()}
        cpu = {int(k): float(v) for k, v in data.get("cpu_seconds", {}).items()}
    except (ValueError, KeyError, TypeError) as error:
        raise ResumeError(f"--resume: {path} is not a fuzz job ledger ({error})") from None
    if recorded != key:
        raise ResumeError(f"--resume: {results.parent} holds another job ({_difference(recorded, key)})")
    return Ledger(results, key, ranges, segments, seconds, cpu)


def _difference(recorded: JobKey, wanted: JobKey) -> str:
    there, here = asdict(recorded), asdict(wanted)
    name = next(k for k in there if there[k] != here[k])
    what = {"model_sha256": "model text", "first_seed": "--seed", "runs": "--runs", "steps": "--steps",
            "weights": "--weights", "liveness": "liveness (--no-liveness)", "engines": "engines", "swarm": "--swarm",
            "pct": "--pct", "model_name": "model", "rows": "rows"}[name]
    if name == "model_sha256":
        return "the model file's text differs"
    if name == "rows":
        return ("it ran in this process: resume it with --master none (or auto)" if there[name] == "jsonl"
                else "it ran on Spark: resume it with a Spark --master (or auto)")
    return f"{what} {_show(there[name])} there, {_show(here[name])} here"


def _show(value: Any) -> str:
    return str(value) if not isinstance(value, str) else repr(value)
