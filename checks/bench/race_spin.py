"""``seqcheck bench --race-spin``: the checker against Spin on one model written for both: a model file
whose system has a Promela twin (``SpinTwin``: the example plug-in docs/examples/arq_plugin and its
``arq.pml``, one Promela global state per state of the system, the same transitions).

Rules:
1. Both sides search for safety only, as Spin does with ``-DSAFETY``: seqcheck explores with the
   model's ``Always`` properties (and deadlocks, which Spin reports as invalid end states); Spin
   checks the twin's assertions. The model must pass: a violation stops each search where its own
   order meets it (breadth-first and depth-first), and the counts are then not comparable.
2. Fresh processes, interleaved: Spin's ``pan`` (compiled once, ``cc -O2 -DSAFETY``, its compile time
   reported apart; its hash table sized to twice the model's pinned state count, ``-w``) and ``python -m
   checks.bench.race_spin MODEL`` run alternately ``repeat`` times each. Each process's CPU seconds
   (user and system) are the kernel's account of the child (``os.wait4``), its peak resident memory the
   ``VmHWM`` of its own ``/proc/self/status`` as it ends (``pan`` prints it from an ``atexit`` handler
   compiled in, ``HWM_HEADER``): the whole process, its start included. (The children's ``ru_maxrss``
   would not do: Linux counts in it the memory of the process that forked them, this one.)
3. The counts must agree: Spin's states stored equal seqcheck's distinct states, and Spin's
   transitions (stored + matched: the initial state counts as reached once) are seqcheck's plus one.
   Otherwise the report says ``same_counts: false`` and the command exits 1.
4. The figures are the medians; ``cpu_ratio`` and ``memory_ratio`` are seqcheck's over Spin's.
Without ``spin`` or ``cc`` on the PATH the command says so in one line (exit 2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SpinTwin(Protocol):
    def spin_twin(self) -> tuple[Path, dict[str, int]]:
        """The Promela file that models this system state for state, and the values of its macros
        (``-DNAME=VALUE``) for this model."""
        ...


class RaceUnavailable(Exception):
    """Spin, a C compiler or a twin is missing: one line."""


def missing_tools() -> str | None:
    """Why the race cannot run here (one line), or None."""
    for tool, where in (("spin", "Debian's package spin"), ("cc", "a C compiler, e.g. Debian's gcc")):
        if shutil.which(tool) is None:
            return f"bench --race-spin: {tool} is not on the PATH (install {where})"
    return None


def twin_of(model_path: Path) -> tuple[Path, dict[str, int], int | None]:
    """The model's Promela twin, its macros, and the model's pinned state count (None: not pinned)."""
    from models.modelfile import load

    model = load(model_path)
    if not isinstance(model.world, SpinTwin):
        raise RaceUnavailable(f"bench --race-spin: {model_path}: protocol {model.protocol}: its system has no "
                              "Promela twin (spin_twin(); the example plug-in docs/examples/arq_plugin has one)")
    try:
        return (*model.world.spin_twin(), model.pinned_states)
    except ValueError as error:
        raise RaceUnavailable(f"bench --race-spin: {model_path}: {error}") from None


HWM_HEADER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void seqcheck_print_hwm(void) {  /* rule 2: the peak resident memory, as the process ends */
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmHWM:", 6) == 0) printf("seqcheck-hwm-kb %ld\n", atol(line + 6));
    if (status) fclose(status);
    fflush(stdout);
}
__attribute__((constructor)) static void seqcheck_at_exit(void) { atexit(seqcheck_print_hwm); }
"""


def peak_kb(status: str) -> int:
    """``VmHWM`` of a ``/proc/<pid>/status`` text, in kB (0 if absent)."""
    found = re.search(r"^VmHWM:\s*(\d+)", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def build_pan(pml: Path, defines: dict[str, int], folder: Path) -> float:
    """Generate and compile Spin's verifier for ``pml`` in ``folder`` (``HWM_HEADER`` compiled in);
    the compile's CPU seconds."""
    flags = [f"-D{name}={value}" for name, value in defines.items()]
    (folder / "hwm.h").write_text(HWM_HEADER)
    started = _children_cpu()
    for command in (["spin", "-a", *flags, str(pml)],
                    ["cc", "-O2", "-DSAFETY", "-include", "hwm.h", "-o", "pan", "pan.c"]):
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:
            raise RaceUnavailable(f"bench --race-spin: {' '.join(command[:2])} failed: "
                                  f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    return _children_cpu() - started


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(command: list[str], cwd: Path | None = None) -> tuple[str, float, float]:
    """Run ``command`` in a fresh process: (its stdout, CPU seconds, wall seconds)."""
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if process.returncode != 0:
        raise RaceUnavailable(f"bench --race-spin: {' '.join(command[:3])} exited {process.returncode}: "
                              f"{text.strip().splitlines()[-1:] if text.strip() else ''}")
    return text, usage.ru_utime + usage.ru_stime, wall


def spin_counts(output: str) -> dict[str, int]:
    found = {key: re.search(pattern, output) for key, pattern in (
        ("states", r"(\d+) states, stored"), ("transitions", r"(\d+) transitions"), ("errors", r"errors: (\d+)"))}
    if not all(found.values()):
        raise RaceUnavailable("bench --race-spin: pan's report has no state count")
    return {key: int(match.group(1)) for key, match in found.items() if match}


def hash_bits(states: int) -> int:
    """Spin's ``-w``: the log2 of a hash table of at least twice ``states`` slots (2**10 at least)."""
    return max(10, (2 * states - 1).bit_length())


def run_race(model_path: Path, *, repeat: int = 1) -> dict[str, Any]:
    """Rules 2-4: the report (one JSON object)."""
    problem = missing_tools()
    if problem:
        raise RaceUnavailable(problem)
    pml, defines, pinned = twin_of(model_path)
    pan = ["./pan", "-m100000"]
    if pinned:  # Spin's hash table at twice the states (its default, 2**24 slots, would decide its memory)
        pan.append(f"-w{hash_bits(pinned)}")
    runs: dict[str, list[dict[str, Any]]] = {"spin": [], "seqcheck": []}
    with tempfile.TemporaryDirectory(prefix="race-spin-") as folder:
        compile_cpu = build_pan(pml, defines, Path(folder))
        for _ in range(repeat):
            text, cpu, wall = measured(pan, cwd=Path(folder))
            hwm = re.search(r"^seqcheck-hwm-kb (\d+)$", text, re.MULTILINE)
            runs["spin"].append({**spin_counts(text), "cpu_s": cpu, "seconds": wall,
                                 "peak_rss_mb": int(hwm.group(1)) / 1024 if hwm else 0.0})
            text, cpu, wall = measured([sys.executable, "-m", "checks.bench.race_spin", str(model_path)])
            runs["seqcheck"].append({**json.loads(text), "cpu_s": cpu, "seconds": wall})
    spin, mine = runs["spin"][0], runs["seqcheck"][0]
    same = (all(r["states"] == spin["states"] and r["transitions"] == spin["transitions"] for r in runs["spin"])
            and all(r["states"] == mine["states"] and r["transitions"] == mine["transitions"] for r in runs["seqcheck"])
            and spin["states"] == mine["states"] and spin["transitions"] == mine["transitions"] + 1
            and spin["errors"] == 0 and mine["complete"] and not mine["violated"])

    def summary(kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {key: round(statistics.median(r[key] for r in runs[kind]), 3)
                               for key in ("cpu_s", "peak_rss_mb", "seconds")}
        out["cpu_each"] = [round(r["cpu_s"], 3) for r in runs[kind]]
        return out

    spin_summary, mine_summary = summary("spin"), summary("seqcheck")
    spin_summary["compile_cpu_s"] = round(compile_cpu, 3)
    spin_summary["options"] = " ".join(pan[1:])
    mine_summary["search_cpu_s"] = round(statistics.median(r["search_cpu_s"] for r in runs["seqcheck"]), 3)
    return {"bench": "race-spin", "model": str(model_path), "twin": str(pml), "defines": defines, "repeat": repeat,
            "states": mine["states"], "transitions": mine["transitions"], "spin_transitions": spin["transitions"],
            "same_counts": same, "spin": spin_summary, "seqcheck": mine_summary,
            "cpu_ratio": round(mine_summary["cpu_s"] / max(spin_summary["cpu_s"], 1e-9), 3),
            "memory_ratio": round(mine_summary["peak_rss_mb"] / max(spin_summary["peak_rss_mb"], 1e-9), 3),
            "load": round(os.getloadavg()[0], 2)}


def search_safety(model_path: Path) -> dict[str, Any]:
    """Rule 1, in this process (``python -m checks.bench.race_spin MODEL``): the model's search for
    its safety properties and deadlocks."""
    from checks.explore.search import explore
    from checks.explore.system import Always
    from models.modelfile import load

    model = load(model_path)
    world = model.world
    cpu = time.process_time()
    result = explore(world, [p for p in world.properties if isinstance(p, Always)], max_states=model.max_states,
                     symmetry=False)
    stats = result.stats
    with open("/proc/self/status") as status:
        peak = peak_kb(status.read())
    return {"states": stats.distinct, "transitions": stats.transitions, "complete": stats.complete,
            "violated": [f.prop for f in result.findings], "search_cpu_s": round(time.process_time() - cpu, 3),
            "peak_rss_mb": peak / 1024}


if __name__ == "__main__":
    print(json.dumps(search_safety(Path(sys.argv[1]))))
