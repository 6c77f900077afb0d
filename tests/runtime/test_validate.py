"""``seqcheck validate`` (issue 34, done-when 2): the logs of a lossy run are accepted; a log
corrupted at one step is rejected at that step, whichever part of the step was changed, and the
rejection is drawn as a trace (text chart and the viewer's page); files that are not logs, or
logs that do not belong together, are one-line usage errors (exit 2)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from runtime_helpers import assert_exactly_once_in_order, run, streams

from checks.cli import main
from checks.validate.logset import validate_logs
from impl.runtime import Delay, Faults
from impl.runtime.group import LocalGroup

Record = dict[str, Any]


@pytest.fixture(scope="module", params=["unicast3", "nakack4"])
def lossy_logs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(f"logs-{request.param}")

    async def go() -> None:
        faults = Faults(loss=0.2, duplicate=0.05, reorder=0.1, delay=Delay("uniform", 1, 10))
        async with LocalGroup(request.param, 3, faults=faults, seed=7, log_dir=folder) as group:
            assert_exactly_once_in_order(await streams(group, 300))

    run(go())
    return folder


def _copy(folder: Path, into: Path) -> list[Path]:
    into.mkdir()
    return [Path(shutil.copy(p, into)) for p in sorted(folder.glob("member-*.jsonl"))]


def _corrupt(path: Path, pick: Callable[[Record], bool], change: Callable[[Record], None], *, after: int = 100
             ) -> int:
    """Change the first step past line ``after`` that ``pick`` accepts; returns its line number."""
    lines = path.read_text().splitlines()
    for index in range(after, len(lines)):
        record = json.loads(lines[index])
        if record.get("ev") not in ("end", "truncated") and pick(record):
            change(record)
            lines[index] = json.dumps(record)
            path.write_text("\n".join(lines) + "\n")
            return index + 1
    raise AssertionError("no step to corrupt")


def test_the_logs_of_a_lossy_run_are_accepted(lossy_logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = sorted(lossy_logs.glob("member-*.jsonl"))
    assert main(["validate", *map(str, logs)]) == 0
    out = capsys.readouterr().out
    assert "valid: every one of" in out and out.count("steps allowed") == 3
    assert main(["validate", "--json", *map(str, logs)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] and all(log["complete"] for log in report["logs"])
    assert sum(log["delivered"] for log in report["logs"]) > 0


def _first_byte_flipped(hex_text: str, at: int) -> str:
    data = bytearray(bytes.fromhex(hex_text))
    data[at] ^= 0x01
    return data.hex()


CORRUPTIONS: dict[str, tuple[Callable[[Record], bool], Callable[[Record], None], str]] = {
    "a delivered payload": (lambda r: bool(r.get("up")),
                            lambda r: r["up"][0].__setitem__(1, _first_byte_flipped(r["up"][0][1], 0)),
                            "delivered other messages"),
    "a delivery left out": (lambda r: len(r.get("up", [])) >= 1, lambda r: r["up"].pop(), "delivered other messages"),
    "a sent datagram's last byte": (lambda r: bool(r.get("out")),
                                    lambda r: r["out"][0].__setitem__(1, _first_byte_flipped(r["out"][0][1], -1)),
                                    "sent"),
    "a datagram sent twice": (lambda r: bool(r.get("out")), lambda r: r["out"].append(r["out"][0]), "sent other"),
    "a timer run that sent nothing": (lambda r: r.get("ev") == "timer" and bool(r.get("out")),
                                      lambda r: r.pop("out"), "sent other"),
    "time going backwards": (lambda r: r.get("t", 0) > 50, lambda r: r.__setitem__("t", 0), "time went backwards"),
    "a step's number": (lambda r: True, lambda r: r.__setitem__("n", r["n"] + 5), "not a valid step"),
    "an arrival nobody sent": (lambda r: r.get("ev") == "in" and r.get("from") != 0,
                               lambda r: r.__setitem__("data", _first_byte_flipped(r["data"], -1)), "never sent"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_a_corrupted_log_is_rejected_at_the_corrupted_step(lossy_logs: Path, tmp_path: Path, name: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    logs = _copy(lossy_logs, tmp_path / "logs")
    pick, change, said = CORRUPTIONS[name]
    line = _corrupt(logs[1], pick, change)
    outcome = validate_logs(logs)
    assert outcome.first is not None, name
    assert (outcome.first.path, outcome.first.line) == (str(logs[1]), line), (name, str(outcome.first))
    assert said in outcome.first.what, outcome.first.what
    assert main(["validate", "--trace-dir", str(tmp_path / "traces"), *map(str, logs)]) == 1
    out = capsys.readouterr().out
    assert f"{logs[1]}:{line}: step" in out and "✗" in out  # the text chart marks the refused step
    page = next((tmp_path / "traces").glob("validate-*.html")).read_text()
    assert "trace-data" in page and str(line) in page


def test_a_deleted_step_is_rejected_where_its_absence_shows(lossy_logs: Path, tmp_path: Path) -> None:
    """A sender's log without one of its sends: the next send's datagram carries a seqno the spec
    did not give it, or the arrival of the lost one is a datagram nobody sent."""
    logs = _copy(lossy_logs, tmp_path / "logs")
    lines = logs[0].read_text().splitlines()
    index = next(i for i in range(20, len(lines)) if json.loads(lines[i]).get("ev") in ("send", "mcast"))
    del lines[index]
    for i in range(index, len(lines)):  # renumber, so only the missing step itself is wrong
        record = json.loads(lines[i])
        if "n" in record:
            record["n"] -= 1
            lines[i] = json.dumps(record)
    logs[0].write_text("\n".join(lines) + "\n")
    outcome = validate_logs(logs)
    assert outcome.first is not None


def test_logs_that_are_not_logs_are_usage_errors(lossy_logs: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    not_json = tmp_path / "a.jsonl"
    not_json.write_text("hello\n")
    other = tmp_path / "b.jsonl"
    other.write_text(json.dumps({"format": "seqcheck-netlog/1", "protocol": "unicast9"}) + "\n")
    logs = sorted(lossy_logs.glob("member-*.jsonl"))
    for args, said in (([str(not_json)], "not JSON"), ([str(other)], "protocol: expected one of"),
                       ([str(tmp_path / "none.jsonl")], "no such log file"),
                       ([str(logs[0]), str(logs[0])], "has a log already")):
        assert main(["validate", *args]) == 2
        err = capsys.readouterr().err.strip()
        assert said in err and len(err.splitlines()) == 1, err


def test_a_truncated_log_validates_its_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from impl.runtime import EndpointLimits

    async def go() -> None:
        limits = EndpointLimits(max_log_bytes=20_000)
        async with LocalGroup("unicast3", 2, log_dir=tmp_path, limits=limits) as group:
            assert_exactly_once_in_order(await streams(group, 500))

    run(go())
    logs = sorted(tmp_path.glob("member-*.jsonl"))
    assert all(p.stat().st_size <= 20_000 for p in logs)
    assert main(["validate", *map(str, logs)]) == 0
    assert "truncated" in capsys.readouterr().out


def test_a_data_far_above_its_window_that_was_taken_is_refused_without_holding_it(lossy_logs: Path,
                                                                                    tmp_path: Path) -> None:
    """A hostile or corrupted log cannot make the validator allocate what the engine may not: a DATA
    2^40 above its window that the log says was taken (no limit bit) is refused at its step."""
    if "unicast3" not in lossy_logs.name:
        pytest.skip("the arrival rewritten is a UNICAST3 DATA")
    from impl.unicast3 import codec

    logs = _copy(lossy_logs, tmp_path / "logs")

    def far(record: Record) -> None:
        msg = codec.decode(bytes.fromhex(record["data"]))
        assert isinstance(msg, codec.DataMsg)
        record["data"] = codec.encode(codec.DataMsg(msg.seqno + (1 << 40), msg.conn_id, False, b"far")).hex()
        record.pop("up", None)
        record.pop("out", None)

    line = _corrupt(logs[1], lambda r: r.get("ev") == "in" and r.get("from") == 0 and "DataMsg(" in r.get("msg", "")
                    and "first=False" in r["msg"], far)
    outcome = validate_logs([logs[1]])  # without member 0's log the arrival is the environment's
    assert outcome.first is not None and outcome.first.line == line
    assert "seqnos above its window was taken" in outcome.first.what


def test_a_limit_the_spec_does_not_follow_ends_that_members_replay(lossy_logs: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    logs = _copy(lossy_logs, tmp_path / "logs")
    line = _corrupt(logs[2], lambda r: r.get("ev") == "in", lambda r: r.__setitem__("limits", {"receive_evicted": 1}))
    outcome = validate_logs(logs)
    assert outcome.first is None and outcome.logs[2].followed_to is not None
    assert outcome.logs[2].followed_to[0] == line
    assert main(["validate", *map(str, logs)]) == 0
    assert f"followed to line {line} only: limit receive_evicted bit" in capsys.readouterr().out
