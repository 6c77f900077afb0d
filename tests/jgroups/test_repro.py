"""The standalone reproductions of the multicast findings (``tests/jgroups/repro/*.java``: one file
each, JGroups' public API in its unit-test style, runnable as ``java -cp jgroups.jar:. X``), compiled
and run against the releases they are about; each prints REPRODUCED and exits 0 when JGroups shows
the finding, and checks a control run where it has one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from jgroups_harness import harness_for

from checks import cpu_limit
from checks.jgroups.locate import jdk, release

REPRO = Path(__file__).parent / "repro"
DETERMINISTIC = [
    ("LostAckThresholdZero", "5.4.12"), ("LostAckThresholdZero", "master"),
    ("JoinThresholdZero", "5.4.12"), ("JoinThresholdZero", "master"),
    ("JoinPurgeRace", "5.4.12"), ("JoinPurgeRace", "master"),
    ("Jgrp3034Fixed", "master"), ("Jgrp3034Fixed", "5.4.12"),
    ("MergeDigestLagsLoopback", "5.4.12"), ("MergeDigestLagsLoopback", "master"),
    ("OobAckThresholdOne", "5.4.12"), ("OobAckThresholdOne", "master"),
]


def run_repro(name: str, version: str, tmp_path: Path) -> str:
    jar, tools = release(version).jar, jdk()
    compiled = subprocess.run([str(tools.javac), "-nowarn", "-cp", str(jar), "-d", str(tmp_path),
                               str(REPRO / f"{name}.java")], capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    done = cpu_limit.run([str(tools.java), "-cp", f"{jar}:{tmp_path}", name], cpu_seconds=600,
                         capture_output=True, text=True, check=False)  # bounded by CPU, not by the machine's load
    assert done.returncode == 0 and "REPRODUCED" in done.stdout, done.stdout + done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("name, version", DETERMINISTIC)
def test_reproduction(tmp_path: Path, name: str, version: str) -> None:
    harness_for(version)  # skips (or fails under SEQCHECK_REQUIRE_JGROUPS) where the jars or a JDK are missing
    out = run_repro(name, version, tmp_path)
    if name == "Jgrp3034Fixed":  # master: the finding; 5.4.12: JGRP-3034 itself
        assert ("JGRP-3034 itself" in out) == (version == "5.4.12")
    if name == "JoinPurgeRace":  # the receiving thread blocks before JGRP-2906's fix only
        assert ("JGRP-2906" in out) == (version == "5.4.12")
    if name == "OobAckThresholdOne":  # stalls at thresholds 0 and 1; the twins (threshold 2) deliver everything
        for threshold in (0, 1):
            assert (f"capacity 1, ack_threshold {threshold}: after 50 retransmit round(s) B delivered 1 of 2; "
                    "A's send window low=0 high=1; A's last send STILL BLOCKED") in out
        assert ("capacity 4, ack_threshold 1, all OOB, last first: after 50 retransmit round(s) B delivered 4 of 5; "
                "A's send window low=0 high=4; A's last send STILL BLOCKED") in out
        twins = {"capacity 1, ack_threshold 2:": "B delivered 2 of 2; A's send window low=2 high=2; A's last send done",
                 "capacity 8, ack_threshold 2:": "B delivered 9 of 9; A's send window low=9 high=9; A's last send done",
                 "capacity 8, ack_threshold 2, all OOB, last first:":
                 "B delivered 9 of 9; A's send window low=9 high=9; A's last send done"}
        lines = out.splitlines()
        for twin, outcome in twins.items():
            assert any(line.startswith(twin + " after") and line.endswith(outcome) for line in lines), twin


@pytest.mark.slow
@pytest.mark.parametrize("version", ["5.4.12", "master"])
def test_send_atomically_overtaken(tmp_path: Path, version: str) -> None:
    """A race on real threads (a new thread barging the window's lock before the woken one): the
    reproduction tries up to 200 times; slow-marked because its outcome depends on the scheduler."""
    harness_for(version)
    run_repro("SendAtomicallyOvertaken", version, tmp_path)
