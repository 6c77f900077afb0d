"""The command line over mutated model (TOML) and trace (JSON) files (issue 18, "done when"): every
run ends with exit code 0, 1 or 2, never a traceback, within a CPU-time budget, and a usage error (2) is
one line on stderr, in the project's words (not an exception's: "'int' object is not subscriptable").

Seeds are small shipped models (copied, with ``max_states`` capped so no single mutation can make a
search long) and the counterexamples ``seqcheck check`` writes for them. Each mutated file gets one
mutation: a byte-level one (bit flip, deletion, insertion of syntax or invalid UTF-8, a line
duplicated or dropped, truncation), or a structural one (a TOML value or key replaced by a hostile
one; in a trace, any JSON value replaced, a key dropped or added, list elements dropped, doubled or
swapped). Model files run through ``check`` (and a third through ``show``), trace files through
``show`` and ``replay``, in process through ``checks.cli.main``; a sample of each also runs as a
``seqcheck`` process. Everything random comes from the printed seed; ``SEQCHECK_CLI_FUZZ_SEED``
passes one back and ``SEQCHECK_CLI_FUZZ_FILES`` sets how many files of each kind (default 200).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from checks import cpu_limit
from checks.cli import MODELS_DIR, main

SEED = int(os.environ.get("SEQCHECK_CLI_FUZZ_SEED", "20261124"))
FILES = int(os.environ.get("SEQCHECK_CLI_FUZZ_FILES", "200"))
CPU_SECONDS = 30  # CPU seconds one command may use on one mutated file (work, not wall time: issue 28)
SUBPROCESS_SAMPLE = 6  # files of each kind also run as a process
MAX_STATES = 20_000  # every seed's state space is smaller, so no single mutation makes a search long
SEED_MODELS = ["unicast3/jgrp1873-no-timestamps.toml", "unicast3/jgrp1874-no-sync-rate-limit.toml",
               "unicast2/scenario-2-accept-connection.toml", "unicast2/motivation-a-discards-no-conn-ids.toml",
               "unicast2/jgrp1563-no-first-ack.toml", "side-by-side/scenario-1.toml"]
VIOLATIONS = ["jgrp1873-no-timestamps", "jgrp1874-no-sync-rate-limit", "motivation-a-discards-no-conn-ids",
              "jgrp1563-no-first-ack"]

# ---------------------------------------------------------------------------------------------- mutations
TOML_VALUES = ["-1", "0", "1", "5", "9223372036854775808", "1" + "0" * 40, "1e309", "nan", "inf", "-0.0", "1.5",
               '"x"', '""', "true", "[]", '[1, "a"]', "[[[]]]", "{}", "{a = 1}", '"violation:"', '"pass"',
               '["all"]', '["no_such_property"]', '"A->A"', '"A->Z"', "2026-11-24", "'''\nx\n'''", '"\\u0000"',
               '"unicast2"', '["unicast2", "unicast2"]', '"nakack9"', '{unicast2 = "pass"}', '["A", "A"]',
               '["A", "B", "C", "D", "E"]', '"JGRP-9999"', '["fix:JGRP-1873", "JGRP-1873"]']
TOML_LINES = ["[nonsense]", "[[views]]", 'member = "Q"', "view = []", "[faults.extra]", "x = 1", "[sends]",
              '"B->A" = 1', "[check]", "[timers]", "conn_close = 1", "[config]", "max_stable_msgs = 0", "= 1", "[",
              "[[views]]\nmember = \"A\"\nview = [\"Z\"]"]
INSERTS = [b"[", b"]", b'"', b"=", b"\n", b"{", b"}", b"9" * 30, b"\xff", b"\x00", b"\xc3\x28", "é".encode(),
           b"\\", b"'''", b"#", b",", b"-", b"."]
JSON_VALUES: list[Any] = [None, -1, 0, 1, 7, 2**63, 2**64 + 1, 1.5, float("inf"), "x", "", "Data", "AppSend",
                          "DeliverPacket", "always", "liveness", "deadlock", "divergence", "no_spurious_purge",
                          "/dev/zero", "/", "..", [], {}, True, False, [[[[[]]]]], {"type": "Packet"},
                          {"action": "Nope"}, "seqcheck-trace/1", "A", -2**63]


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    op = rng.randrange(6)
    at = rng.randrange(len(buf) + 1)
    if op == 0 and buf:
        buf[min(at, len(buf) - 1)] ^= 1 << rng.randrange(8)
    elif op == 1:
        del buf[at:at + rng.randrange(1, 40)]
    elif op == 2:
        buf[at:at] = rng.choice(INSERTS)
    elif op in (3, 4):
        lines = bytes(buf).split(b"\n")
        i = rng.randrange(len(lines))
        if op == 3:
            lines.insert(i, lines[i])
        else:
            del lines[i]
        return b"\n".join(lines)
    else:
        del buf[at:]
    return bytes(buf)


ASSIGNMENT = re.compile(r'^(\s*)("[^"]*"|[A-Za-z_][\w-]*)(\s*=\s*)(.*)$')


def mutate_toml(rng: random.Random, text: str) -> str:
    """One structural change of a model file's text: a value, a key or a line."""
    lines = text.split("\n")
    assigned = [i for i, line in enumerate(lines) if ASSIGNMENT.match(line)]
    op = rng.randrange(4)
    if op == 0 and assigned:  # a value replaced
        i = rng.choice(assigned)
        m = ASSIGNMENT.match(lines[i])
        assert m is not None
        lines[i] = m.group(1) + m.group(2) + m.group(3) + rng.choice(TOML_VALUES)
    elif op == 1 and assigned:  # a key renamed
        i = rng.choice(assigned)
        m = ASSIGNMENT.match(lines[i])
        assert m is not None
        lines[i] = m.group(1) + rng.choice(['"x"', "members", "protocol", "expect", "loss", m.group(2) + "x",
                                            '"A->B"', "max_states"]) + m.group(3) + m.group(4)
    elif op == 2:  # a line added
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(TOML_LINES))
    elif assigned:  # a line dropped
        del lines[rng.choice(assigned)]
    return "\n".join(lines)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def mutate_json(rng: random.Random, raw: dict[str, Any], values: list[Any]) -> str:
    """One structural change anywhere in a trace's JSON, new values drawn from ``values``; the step
    count is kept right most times, so that the change reaches past the length check."""
    path = rng.choice([p for p in _nodes(raw) if p])
    parent: Any = raw
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    op = rng.randrange(4)
    if op == 0 or (op == 1 and isinstance(parent, list)):
        parent[last] = rng.choice(values)
    elif op == 1:
        del parent[last]
    elif op == 2 and isinstance(parent, dict):
        parent[rng.choice(["extra", "type", "action", "packet", "msg", "seqno"])] = rng.choice(values)
    elif isinstance(parent, list):
        which = rng.randrange(3)
        if which == 0:
            del parent[last]
        elif which == 1:
            parent.insert(last, json.loads(json.dumps(parent[last])))
        else:
            other = rng.randrange(len(parent))
            parent[last], parent[other] = parent[other], parent[last]
    else:
        parent[last] = rng.choice(values)
    if isinstance(raw.get("steps"), list) and rng.random() < 0.8:
        raw["length"] = len(raw["steps"])
    return json.dumps(raw, indent=1)


# ---------------------------------------------------------------------------------------------- running
def run_in_process(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of ``main(argv)``; a traceback, more than ``CPU_SECONDS`` of this
    process's CPU time, or a hang (blocked: ``cpu_limit.HANG_GUARD``) fails the test. A slow,
    busy machine does not: it stretches the wall time, not the CPU time."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with cpu_limit.cpu_budget(CPU_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as stop:  # argparse
        code = int(stop.code or 0)
    except cpu_limit.CpuBudgetExceeded:
        pytest.fail(f"seqcheck {' '.join(argv)}: still running after {CPU_SECONDS} s of CPU time")
    except cpu_limit.Hung:
        pytest.fail(f"seqcheck {' '.join(argv)}: blocked for {cpu_limit.HANG_GUARD:.0f} s")
    except Exception as error:  # every escape is the failure this test looks for
        pytest.fail(f"seqcheck {' '.join(argv)}: traceback: {type(error).__name__}: {error}")
    return code, err.getvalue()


def run_process(argv: list[str], cwd: Path) -> tuple[int, str]:
    run = cpu_limit.run([str(Path(sys.executable).parent / "seqcheck"), *argv], capture_output=True, text=True,
                        cpu_seconds=CPU_SECONDS, cwd=cwd)
    assert not cpu_limit.exceeded(run.returncode), f"seqcheck {' '.join(argv)}: more than {CPU_SECONDS} s of CPU"
    assert "Traceback" not in run.stderr, f"seqcheck {' '.join(argv)}:\n{run.stderr}"
    return run.returncode, run.stderr


# Python's own wording of an exception, which says nothing to someone who wrote a file wrong.
LEAKED = re.compile(r"object is not|indices must|update sequence|NoneType|unhashable|has no attribute|"
                    r"argument must be|invalid literal|positional argument|unexpected keyword|KeyError")


def judge(argv: list[str], code: int, err: str, where: str) -> None:
    assert code in (0, 1, 2), f"{where}: seqcheck {' '.join(argv)} exited {code}: {err}"
    if code == 2:
        lines = [line for line in err.splitlines() if not line.startswith("seqcheck: note:")]
        assert len(lines) == 1 and lines[0].startswith("seqcheck: "), f"{where}: not one line: {err!r}"
        assert not LEAKED.search(lines[0]), f"{where}: an exception's wording, not what was expected: {err!r}"


# ---------------------------------------------------------------------------------------------- seeds
@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[Path]]:
    """Copies of the seed models (max_states capped) and the traces ``check`` writes for them."""
    folder = tmp_path_factory.mktemp("seeds")
    models = []
    for name in SEED_MODELS:
        target = folder / name.replace("/", "-")
        text = (MODELS_DIR / name).read_text()
        assert "max_states" not in text
        text = text.replace("[check]", f"[check]\nmax_states = {MAX_STATES}", 1)
        target.write_text(text)
        models.append(target)
    code, err = run_in_process(["check", "--no-progress", "--trace-dir", str(folder / "traces"),
                                *map(str, models)])
    assert code == 0, err
    traces = sorted((folder / "traces").rglob("*.json"))
    assert len(traces) >= len(VIOLATIONS), traces
    return models, traces


def _mutants(kind: str, sources: list[Path], out: Path, rng: random.Random,
             mutate: Callable[[random.Random, Path], bytes]) -> list[Path]:
    out.mkdir()
    files = []
    for i in range(FILES):
        source = sources[i % len(sources)]
        target = out / f"{i:04}-{source.stem}{source.suffix}"
        target.write_bytes(mutate(rng, source))
        files.append(target)
    print(f"cli file fuzz: seed={SEED} {kind}={len(files)} in {out}")
    return files


def _model_mutation(rng: random.Random, source: Path) -> bytes:
    data = source.read_bytes()
    if rng.random() < 0.5:
        return mutate_bytes(rng, data)
    return mutate_toml(rng, data.decode()).encode()


def _trace_mutation(values: list[Any]) -> Callable[[random.Random, Path], bytes]:
    """One to three structural changes (a trace is only replayed, never searched), or one of bytes."""
    def mutation(rng: random.Random, source: Path) -> bytes:
        data = source.read_bytes()
        if rng.random() < 0.3:
            return mutate_bytes(rng, data)
        raw = json.loads(data)
        for _ in range(rng.randrange(1, 4)):
            text = mutate_json(rng, raw, values)
            raw = json.loads(text)
            if not isinstance(raw, dict):
                break
        return text.encode()

    return mutation


def _witness_mutation(rng: random.Random, source: Path) -> bytes:
    """One to three changes of a model file for ``show`` (which replays its witness, never searches)."""
    data = source.read_bytes()
    for _ in range(rng.randrange(1, 4)):
        text = data.decode(errors="replace")
        data = mutate_bytes(rng, data) if rng.random() < 0.3 else mutate_toml(rng, text).encode()
    return data


@pytest.mark.long
def test_mutated_model_files(seeds: tuple[list[Path], list[Path]], tmp_path: Path) -> None:
    rng = random.Random(SEED)
    files = _mutants("models", seeds[0], tmp_path / "mutated-models", rng, _model_mutation)
    codes = {0: 0, 1: 0, 2: 0}
    for i, path in enumerate(files):
        argv = ["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(path)]
        code, err = run_in_process(argv)
        judge(argv, code, err, f"seed={SEED} file={path}")
        codes[code] += 1
        if i % 3 == 0:  # the same seed, mutated up to three times, for `show` (its witness)
            path = path.with_suffix(".show.toml")
            path.write_bytes(_witness_mutation(rng, seeds[0][i % len(seeds[0])]))
            code, err = run_in_process(["show", str(path)])
            judge(["show", str(path)], code, err, f"seed={SEED} file={path}")
    for path in files[:SUBPROCESS_SAMPLE]:
        argv = ["check", "--no-progress", "--trace-dir", str(tmp_path / "traces"), str(path)]
        judge(argv, *run_process(argv, tmp_path), f"seed={SEED} file={path} (process)")
    print(f"cli file fuzz: model exit codes {codes}")
    assert codes[2] > FILES // 4 and codes[0] + codes[1] > FILES // 20  # both kinds of outcome are exercised


@pytest.mark.long
def test_mutated_trace_files(seeds: tuple[list[Path], list[Path]], tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # a model path that would hang a reader
    files = _mutants("traces", seeds[1], tmp_path / "mutated-traces", rng, _trace_mutation([*JSON_VALUES, str(fifo)]))
    for path in files[::4]:  # the trace intact, its model mutated under it
        seed_trace = seeds[1][files.index(path) % len(seeds[1])]
        raw = json.loads(seed_trace.read_bytes())
        model = path.with_suffix(".model.toml")
        model.write_bytes(_model_mutation(rng, Path(raw["model"])))
        raw["model"] = str(model)
        path.write_text(json.dumps(raw))
    codes = {0: 0, 1: 0, 2: 0}
    for path in files:
        for command in ("show", "replay"):
            code, err = run_in_process([command, str(path)])
            judge([command, str(path)], code, err, f"seed={SEED + 1} file={path}")
            codes[code] += 1
    for path in files[:SUBPROCESS_SAMPLE]:
        judge(["show", str(path)], *run_process(["show", str(path)], tmp_path),
              f"seed={SEED + 1} file={path} (process)")
    print(f"cli file fuzz: trace exit codes {codes}")
    assert codes[2] > FILES // 4 and codes[0] > FILES // 20


def test_the_seeds_themselves_pass(seeds: tuple[list[Path], list[Path]]) -> None:
    """Unmutated, every seed model checks as expected and every seed trace shows and replays: the
    mutants' errors come from the mutations."""
    models, traces = seeds
    for path in models:
        assert run_in_process(["check", "--no-progress", "--trace-dir", str(path.parent / "again"), str(path)])[0] == 0
    for path in traces:
        assert run_in_process(["show", str(path)])[0] == 0
        assert run_in_process(["replay", str(path)])[0] == 0


def test_a_traceback_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness itself: an exception escaping ``main`` fails the run (it is not mistaken for an
    exit code)."""
    import checks.cli

    def explode(args: Any) -> int:
        raise RuntimeError("planted")

    monkeypatch.setattr(checks.cli, "_list", explode)
    with pytest.raises(pytest.fail.Exception, match="traceback: RuntimeError: planted"):
        run_in_process(["list"])
