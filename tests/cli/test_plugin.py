"""The plug-in point (``models/registry.py``): a protocol that is not in the tree, written here,
installed as an entry point of the group ``seqcheck.protocols`` (a distribution's metadata on
``PYTHONPATH``, as ``pip install`` would leave it), and run by the ``seqcheck`` command unchanged:
``list`` names it, ``check`` gives its verdict and a shortest trace, ``show`` replays and draws the
trace, and ``replay`` says in one line that it has no production engine.

The protocol is stop-and-wait ARQ with sequence numbers over a channel that may lose, duplicate
and reorder within budgets; its variant ``no_seqno_check`` has the receiver deliver every DATA it
gets, so a retransmission is delivered twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from checks import cpu_limit

PLUGIN = textwrap.dedent('''
    """Stop-and-wait ARQ as a seqcheck protocol (a test's plug-in)."""
    from dataclasses import dataclass, field
    from typing import Any, NamedTuple

    from checks.explore.system import Always, Liveness, Sometimes
    from models.registry import Built


    class State(NamedTuple):
        sent: int            # messages the sender has taken from its application
        waiting: bool        # a DATA is unacknowledged
        expect: int          # the receiver's next seqno
        delivered: tuple     # payloads delivered, in order
        flight: frozenset    # packets in flight: ("DATA", seqno) or ("ACK", seqno)
        loss: int
        duplicate: int


    class Arq:
        def __init__(self, name, messages, loss, duplicate, check_seqno, properties):
            self.name, self.messages, self.check_seqno = name, messages, check_seqno
            self.init = State(0, False, 1, (), frozenset(), loss, duplicate)
            self.properties = [p for p in self.all_properties() if p.name in properties]

        def all_properties(self):
            return [Always("no_duplicate", lambda s: len(set(s.delivered)) == len(s.delivered),
                           "no payload is delivered twice"),
                    Always("in_order", lambda s: s.delivered == tuple(range(1, len(s.delivered) + 1)),
                           "payloads are delivered 1, 2, 3, ..."),
                    Liveness("eventually_delivered", lambda s: len(s.delivered) >= self.messages,
                             "every message is eventually delivered"),
                    Sometimes("all_delivered_witness", lambda s: len(s.delivered) == self.messages,
                              "some state has every message delivered")]

        def init_states(self):
            return [self.init]

        def successors(self, s):
            if not s.waiting and s.sent < self.messages:
                yield ("send",), s._replace(sent=s.sent + 1, waiting=True, flight=s.flight | {("DATA", s.sent + 1)})
            if s.waiting and ("DATA", s.sent) not in s.flight:
                yield ("timeout",), s._replace(flight=s.flight | {("DATA", s.sent)})
            for p in sorted(s.flight):
                yield ("deliver", p), self.receive(s._replace(flight=s.flight - {p}), p)
                if s.duplicate:
                    yield ("duplicate", p), self.receive(s._replace(duplicate=s.duplicate - 1), p)
                if s.loss:
                    yield ("lose", p), s._replace(flight=s.flight - {p}, loss=s.loss - 1)

        def receive(self, s, p):
            if p[0] == "DATA":
                if self.check_seqno and p[1] != s.expect:
                    return s._replace(flight=s.flight | {("ACK", p[1])})
                return s._replace(expect=p[1] + 1, delivered=s.delivered + (p[1],), flight=s.flight | {("ACK", p[1])})
            if s.waiting and p[1] == s.sent:
                return s._replace(waiting=False)
            return s

        def within_bounds(self, s):
            return len(s.flight) <= 4

        def accepts_end(self, s):
            return True

        def is_fault(self, action):
            return action[0] in ("lose", "duplicate")

        def action_to_json(self, action):
            return {"action": action[0], "packet": list(action[1]) if len(action) > 1 else None}

        def format_action(self, action):
            return " ".join(str(x) for x in action)


    @dataclass
    class Factory:
        name: str = "toyarq"
        model_keys: frozenset = field(default_factory=lambda: frozenset({"variant", "messages", "faults"}))

        def property_docs(self):
            return {p.name: p.doc for p in Arq("", 1, 0, 0, True, ()).all_properties()}

        def describe(self):
            return ["variants:", "  no_seqno_check           the receiver delivers every DATA"]

        def build(self, reader, protocol, selected, options):
            variant = tuple(reader.raw.get("variant", []))
            if variant not in ((), ("no_seqno_check",)):
                raise reader.fail("variant", f"[] or [\\"no_seqno_check\\"], got {variant!r}")
            faults = reader.table("faults", {"loss", "duplicate"})
            arq = Arq(reader.path.stem, reader.natural("messages", reader.raw.get("messages", 2)),
                      reader.natural("faults.loss", faults.get("loss", 0)),
                      reader.natural("faults.duplicate", faults.get("duplicate", 0)),
                      "no_seqno_check" not in variant, selected)
            return Built(arq, ("S", "R"), variant)


    FACTORY = Factory()
''')

MODEL = '''
description = "stop-and-wait ARQ; without the seqno check a retransmission is delivered twice"
protocol = "toyarq"
variant = {variant}
messages = 2
[faults]
loss = 1
[check]
expect = "{expect}"
'''


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Python finds the plug-in and its entry point."""
    site = tmp_path_factory.mktemp("site")
    (site / "toyarq.py").write_text(PLUGIN)
    dist = site / "toyarq-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyarq\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[seqcheck.protocols]\ntoyarq = toyarq:FACTORY\n")
    return {**os.environ, "PYTHONPATH": str(site)}


def seqcheck(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return cpu_limit.run([sys.executable, "-m", "checks.cli", *args], capture_output=True, text=True,
                         env=env, cpu_seconds=120)


def test_a_plugged_in_protocol_is_listed(plugin_env: dict[str, str]) -> None:
    listed = seqcheck(plugin_env, "list")
    assert listed.returncode == 0, listed.stderr
    assert "protocol toyarq" in listed.stdout and "no_seqno_check" in listed.stdout
    assert "protocol unicast3" in listed.stdout


def test_a_plugged_in_protocol_is_checked_and_its_trace_shown(plugin_env: dict[str, str], tmp_path: Path) -> None:
    broken = tmp_path / "arq-no-seqno-check.toml"
    broken.write_text(MODEL.format(variant='["no_seqno_check"]', expect="violation:no_duplicate"))
    fixed = tmp_path / "arq.toml"
    fixed.write_text(MODEL.format(variant="[]", expect="pass"))
    traces = tmp_path / "traces"
    run = seqcheck(plugin_env, "check", "--json", "--no-progress", "--trace-dir", str(traces), str(broken), str(fixed))
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["protocol"], r["verdict"], r["matches"]) for r in rows] == [
        ("toyarq", "violation:no_duplicate", True), ("toyarq", "pass", True)]
    assert rows[0]["trace_length"] == 4  # send, deliver DATA 1, its ACK lost, timeout, deliver DATA 1 again
    trace = Path(rows[0]["trace"])
    shown = seqcheck(plugin_env, "show", str(trace))
    assert shown.returncode == 0, shown.stderr
    assert "violates safety property no_duplicate after 4 steps" in shown.stdout
    assert shown.stdout.count("deliver ('DATA', 1)") == 2
    replayed = seqcheck(plugin_env, "replay", str(trace))
    assert replayed.returncode == 2
    assert replayed.stderr.strip().count("\n") == 0 and "no production engine" in replayed.stderr


def test_an_unknown_protocol_is_a_one_line_error(tmp_path: Path) -> None:
    model = tmp_path / "m.toml"
    model.write_text(MODEL.format(variant="[]", expect="pass"))
    run = seqcheck(dict(os.environ), "check", str(model))
    assert run.returncode == 2
    assert run.stderr.strip() == (f"seqcheck: {model}: protocol: expected one of nakack2, nakack4, unicast2, unicast3, "
                                  "unicast4, got 'toyarq'")


def test_workers_are_refused_for_states_that_cannot_cross_processes(plugin_env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    """toyarq offers no ``PortableStates`` (checks/explore/system.py): ``--workers 2`` is one line, exit 2."""
    model = tmp_path / "arq.toml"
    model.write_text(MODEL.format(variant="[]", expect="pass"))
    run = seqcheck(plugin_env, "check", "--workers", "2", "--trace-dir", str(tmp_path / "traces"), str(model))
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == (f"seqcheck: --workers: {model}: protocol toyarq: its system offers no PortableStates "
                          "(checks.explore.system), so its states cannot cross processes; use --workers 1\n")
