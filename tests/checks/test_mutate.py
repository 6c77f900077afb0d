"""``seqcheck mutate`` (checks/mutate/): the catalogue, its application to a copy, and the checks.

Invariants tested: the catalogue loads, has at least 30 mutants with one or more of every class of
issue 19, and every fragment of it occurs exactly once in the current tree (this test keeps the
catalogue in step with the code); a malformed or stale catalogue is a one-line error (exit 2);
applying a mutant patches only a copy, never the checkout; the kill checks kill a planted defect
and let the unmodified copy survive (so they can fail and can pass), and a mutant that runs out
its time counts as killed by ``timeout``; the worker refuses to judge packages that are not the
copy's.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from checks.cli import MODELS_DIR, main
from checks.mutate import baseline, command
from checks.mutate.catalogue import (
    CLASSES,
    PROTOCOLS,
    ROOT,
    CatalogueError,
    Edit,
    Mutant,
    apply,
    copy_tree,
    load_catalogue,
    stale_edits,
)
from checks.mutate.command import Row, judge, table_lines
from checks.mutate.kill import Budget

CHEAP = "u3-ack-purge-one-past"  # diverges within the first walks as shipped


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the checkout's packages for the tests that judge (never patched itself)."""
    return copy_tree(tmp_path_factory.mktemp("snapshot") / "tree")


def test_the_catalogue_covers_every_class_and_protocol() -> None:
    mutants = load_catalogue()
    assert len(mutants) >= 30
    assert {m.cls for m in mutants} == set(CLASSES)
    assert {p for m in mutants for p in m.protocols} == set(PROTOCOLS)
    files = {e.file for m in mutants for e in m.edits}
    assert any(f.startswith("spec/") for f in files) and any(f.startswith("impl/") for f in files)
    assert {"impl/window.py", "impl/fixed_window.py"} <= files and any("codec" in f for f in files)
    assert len({m.name for m in mutants}) == len(mutants)


def test_every_fragment_occurs_exactly_once_in_the_tree() -> None:
    assert stale_edits(load_catalogue()) == []


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mutants.toml"
    path.write_text(text)
    return path


ONE = """
[[mutant]]
name = "x"
class = "{cls}"
protocols = ["unicast3"]
description = "d"
[[mutant.edit]]
file = "{file}"
find = "{find}"
replace = "y"
"""


@pytest.mark.parametrize(("cls", "file", "find", "message"), [
    ("9", "impl/common.py", "a", "mutant x: class: expected one of"),
    ("1", "../etc/passwd", "a", "mutant x: edit #1: file: expected a path under"),
    ("1", "impl/common.py", "y", "mutant x: edit #1: replace: expected a change"),
])
def test_a_malformed_mutant_is_one_line(tmp_path: Path, cls: str, file: str, find: str, message: str) -> None:
    with pytest.raises(CatalogueError, match=message) as caught:
        load_catalogue(_write(tmp_path, ONE.format(cls=cls, file=file, find=find)))
    assert len(str(caught.value).splitlines()) == 1


def test_a_stale_fragment_is_named_and_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, ONE.format(cls="1", file="impl/common.py", find="no such code in common.py"))
    assert stale_edits(load_catalogue(path)) == [
        "mutant x: impl/common.py: fragment 'no such code in common.py'... occurs 0 times, expected exactly once "
        "(update the catalogue)"]
    assert main(["mutate", "--catalogue", str(path), "--no-baseline"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mutant x: impl/common.py" in err and "occurs 0 times" in err


def test_list_and_an_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutate", "--list"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(load_catalogue())
    assert main(["mutate", "--only", "no-such-mutant"]) == 2
    assert "--only: no mutant named 'no-such-mutant'" in capsys.readouterr().err


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for package in ("spec", "impl") for p in sorted((root / package).rglob("*.py"))}


def test_applying_a_mutant_patches_the_copy_only(tmp_path: Path) -> None:
    mutants = load_catalogue()
    before = _digests(ROOT)
    copy = copy_tree(tmp_path / "tree")
    for mutant in mutants:
        if mutant.name in (CHEAP, "wire-long-sequence-swapped"):  # one edit, and two in one file
            apply(mutant, copy)
    patched = _digests(copy)
    assert _digests(ROOT) == before
    assert {name for name in before if patched[name] != before[name]} == {"impl/unicast3/receive.py", "impl/wire.py"}
    with pytest.raises(CatalogueError, match="occurs 0 times"):  # already applied: the fragment is gone
        apply(next(m for m in mutants if m.name == CHEAP), copy)
    with pytest.raises(CatalogueError, match="refusing to patch the checkout"):
        apply(mutants[0], ROOT)


LOCKSTEP_ONLY = Budget(walks=4, mode_walks=1, model_walks=1, steps=200, stages=("lockstep",))


@pytest.mark.long
def test_a_planted_defect_is_killed_and_the_unmodified_tree_survives(tree: Path) -> None:
    mutant = next(m for m in load_catalogue() if m.name == CHEAP)
    killed = judge(mutant, mutant.protocols, LOCKSTEP_ONLY, 300, tree)
    assert killed.killed_by == "lockstep" and "unicast3 as shipped, seed" in killed.detail
    survived = judge(None, ("unicast3",), LOCKSTEP_ONLY, 300, tree)
    assert survived.killed_by is None, survived.detail
    assert "lockstep walks" in survived.detail


@pytest.mark.long
def test_a_spec_defect_is_killed_by_the_check_of_the_shipped_models(tree: Path) -> None:
    """``seqcheck check`` of the shipped models sees a spec defect on its own (the stable task's cap
    one late in UNICAST2's spec), and passes the unmodified spec."""
    mutant = Mutant("spec-u2-stable-cap", "other", ("unicast2",), "d", (
        Edit("spec/unicast2.py", "if entry.stable_count >= cfg.max_stable_msgs:",
             "if entry.stable_count > cfg.max_stable_msgs:"),))
    only_check = Budget(stages=("check",))
    killed = judge(mutant, mutant.protocols, only_check, 300, tree)
    assert killed.killed_by == "check" and "[unicast2]: expected" in killed.detail, killed.detail
    assert judge(None, mutant.protocols, only_check, 300, tree).killed_by is None


def test_a_mutant_out_of_time_counts_as_killed_by_timeout(tree: Path) -> None:
    row = judge(None, ("unicast3",), LOCKSTEP_ONLY, 0.01, tree)  # one CPU second (RLIMIT_CPU's unit)
    assert row.killed_by == "timeout" and "more than 0.01 s of CPU time" in row.detail


def test_the_worker_refuses_packages_from_elsewhere(tmp_path: Path) -> None:
    """Run from a folder that is not a copy, it would judge the checkout: it refuses."""
    done = subprocess.run([sys.executable, "-m", "checks.mutate.kill", "--protocols", "unicast3",
                           "--budget", "{}"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "not from the copy" in done.stderr


def test_the_table_totals_per_class() -> None:
    rows = [Row("a", "1", ("impl/x.py",), None, "ran", 1.0, {}),
            Row("b", "1", ("impl/x.py",), "lockstep", "seed 3", 2.0, {}),
            Row("c", "6", ("impl/y.py", "impl/z.py"), "timeout", "", 3.0, {})]
    lines = table_lines(rows, Budget(), 6.0, timed=False)
    assert any(line.startswith("1 time") and line.split()[2:4] == ["2", "1"] for line in lines)
    assert any(line.startswith("6 codec, symmetric") and line.endswith("0/0/0/1") for line in lines)
    assert "2 of 3 mutants killed (66.7%)" in "\n".join(lines)
    assert "survivors: a (class 1)" in lines and any(line.startswith("note: the timed lockstep") for line in lines)


def test_json_and_the_exit_status_follow_the_kill_rate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A mutant that changes a docstring only (no check can see it) survives a short fuzz: kill
    rate 0, exit 1 under the default --min-kill, 0 under --min-kill 0; the JSON names it."""
    catalogue = _write(tmp_path, ONE.format(cls="1", file="impl/unicast3/receive.py",
                                            find="Handlers for the five UNICAST3 message types"))
    args = ["mutate", "--catalogue", str(catalogue), "--no-baseline", "--stages", "fuzz", "--fuzz-runs", "2",
            "--fuzz-steps", "20", "--seed", "7", "--json"]
    assert main(args) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["kill_rate"] == 0 and report["seed"] == 7 and report["budget"]["stages"] == ["fuzz"]
    runs = 2 * len(list((MODELS_DIR / "fuzz").glob("unicast3-lockstep*.toml")))  # 2 runs of each
    assert [(r["mutant"], r["killed_by"], r["detail"]) for r in report["rows"]] == [("x", None, f"{runs} fuzz runs")]
    assert report["rows"][0]["cpu_seconds"] > 0 and report["cpu_seconds"] == round(report["rows"][0]["cpu_seconds"], 1)
    row = report["rows"][0]  # each stage's CPU beside its wall seconds (a child process: no upper bound)
    assert set(row["stage_cpu_seconds"]) == set(row["stage_seconds"]) == {"fuzz"}
    assert row["stage_cpu_seconds"]["fuzz"] > 0
    assert main([*args, "--min-kill", "0"]) == 0


def test_a_surviving_baseline_is_remembered_by_sources_and_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Rule 3: the second run on the same sources and budget does not judge the baseline again (it
    says so, with the first run's seconds); --fresh-baseline does (the key: the test below). The
    judgements are stubbed (the real one runs in the tests above): this is the bookkeeping."""
    monkeypatch.setenv("SEQCHECK_CACHE", str(tmp_path / "cache"))
    judged: list[str] = []

    def fake_judge(mutant: Mutant | None, protocols: object, budget: object, timeout: object, tree: object) -> Row:
        judged.append(mutant.name if mutant else "(baseline)")
        return Row(mutant.name if mutant else "(baseline)", "1", (), None, "ran", 2.0, {}, 1.5)

    monkeypatch.setattr(command, "judge", fake_judge)
    catalogue = _write(tmp_path, ONE.format(cls="1", file="impl/unicast3/receive.py",
                                            find="Handlers for the five UNICAST3 message types"))
    args = ["mutate", "--catalogue", str(catalogue), "--stages", "fuzz", "--min-kill", "0"]
    assert main(args) == 0
    assert "baseline (no mutant, unicast3): survives in 2 s (CPU 2 s)" in capsys.readouterr().err
    assert main(args) == 0
    assert "survives (remembered for these sources and this budget: 2 s, CPU 2 s" in capsys.readouterr().err
    assert main([*args, "--fresh-baseline"]) == 0
    assert main([*args, "--seed", "3"]) == 0
    assert judged == ["(baseline)", "x", "x", "(baseline)", "x", "(baseline)", "x"]
    lines = capsys.readouterr().out.splitlines()
    assert any("CPU 2 s in the checks' processes" in line for line in lines)


def test_the_baseline_key_follows_every_file_and_the_budget(tmp_path: Path) -> None:
    (tmp_path / "impl").mkdir()
    (tmp_path / "impl" / "a.py").write_text("x = 1\n")
    first = baseline.key(tmp_path, ["unicast3"], Budget())
    assert baseline.key(tmp_path, ["unicast3"], Budget()) == first
    assert baseline.key(tmp_path, ["unicast2"], Budget()) != first
    assert baseline.key(tmp_path, ["unicast3"], Budget(seed=1)) != first
    (tmp_path / "impl" / "a.py").write_text("x = 2\n")
    assert baseline.key(tmp_path, ["unicast3"], Budget()) != first
    (tmp_path / "impl" / "b.py").write_text("")
    assert baseline.key(tmp_path, ["unicast3"], Budget()) != first
