"""A set of event logs (one per member of a run) validated against the spec.

This module owns what the logs say together: they name one protocol and distinct members; the
members are 0 .. n-1, n one more than the largest member any log names. It validates in two
passes: the first collects every datagram each log sent (with the host clock's time it left), the
second replays each member's log on the spec (``checks/validate/member.py``) and checks the
environment: a datagram that arrives from a member whose log is in the set must be one that
member's log sent, no later than it arrived (the network may lose, duplicate and reorder, not
make datagrams up; logs of one host share ``time.monotonic``). A datagram from a member with no
log in the set (a hostile peer in the robustness runs) is the environment's input, judged only by
the receiver's spec step. The verdict is the earliest violation (by the host clock) of any log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checks.validate.logs import Header, StepError, open_log
from checks.validate.member import MemberReplay, Violation
from checks.validate.protocols import LogRefused, Payloads

CLOCK_SLACK_MS = 5.0  # steps carry whole milliseconds (and a timer run may read its deadline): see pass 1


@dataclass
class LogResult:
    path: Path
    member: int
    steps: int = 0
    violation: Violation | None = None
    followed_to: tuple[int, str] | None = None
    ended: bool = False
    truncated: bool = False
    delivered: int = 0
    datagrams: int = 0


@dataclass
class Outcome:
    protocol: str
    members: int
    logs: list[LogResult] = field(default_factory=list)
    first: Violation | None = None
    replay: MemberReplay | None = None  # of the log with the first violation

    @property
    def valid(self) -> bool:
        return self.first is None


def _headers(paths: Sequence[Path]) -> list[Header]:
    headers = []
    for path in paths:
        header, steps = open_log(path)
        steps.close()
        headers.append(header)
    protocols = {h.protocol.name for h in headers}
    if len(protocols) > 1:
        raise LogRefused(f"the logs name different protocols: {', '.join(sorted(protocols))}")
    seen: dict[int, Path] = {}
    for h in headers:
        if h.me in seen:
            raise LogRefused(f"{h.path}: member {h.me} has a log already ({seen[h.me]})")
        seen[h.me] = h.path
    return headers


def _sent(headers: Sequence[Header]) -> dict[int, float]:
    """Pass 1: hash((src, dst, bytes)) -> the earliest time (host clock, ms) a log sent it. A
    64-bit hash stands for the bytes (so a datagram another sent with the same hash would pass:
    about 1 in 10^12 for a million datagrams)."""
    sent: dict[int, float] = {}
    for header in headers:
        _, steps = open_log(header.path)
        me, clock = header.me, header.clock_ms
        for _, record in steps:
            if isinstance(record, StepError):
                break
            outs, t = record.get("out"), record.get("t")
            if not isinstance(outs, list) or type(t) is not int:
                continue
            for item in outs:
                try:
                    key = hash((me, item[0], bytes.fromhex(item[1])))
                except (TypeError, ValueError, IndexError):
                    continue
                when = clock + t
                if sent.get(key, when + 1) > when:
                    sent[key] = when
    return sent


def validate_logs(paths: Sequence[Path]) -> Outcome:
    """Validate the logs at ``paths`` together (module docstring); ``LogRefused`` (one line) for a
    file that is not a log, or logs that do not belong together."""
    if not paths:
        raise LogRefused("no log files given")
    headers = _headers(paths)
    n = 1 + max(max(h.directory) for h in headers)
    n = max(n, 1 + max(h.me for h in headers))
    sent = _sent(headers)
    logged = {h.me for h in headers}

    def sent_before(src: int, dst: int, data: bytes, when: float) -> bool:
        if src not in logged:
            return True
        first = sent.get(hash((src, dst, data)))
        return first is not None and first <= when + CLOCK_SLACK_MS

    outcome = Outcome(headers[0].protocol.name, n)
    payloads = Payloads()
    for header in headers:
        replay = MemberReplay(header, payloads, n, sent_before)
        result = LogResult(header.path, header.me)
        _, steps = open_log(header.path)
        for line, record in steps:
            found = replay.step(line, record)
            if isinstance(record, dict):
                result.delivered += len(record.get("up", ())) if isinstance(record.get("up"), list) else 0
                result.datagrams += 1 if record.get("ev") == "in" else 0
            if found is not None:
                result.violation = found
                if outcome.first is None or _earlier(found, outcome.first):
                    outcome.first, outcome.replay = found, replay
                break
            if replay.followed_to is not None:
                break
        steps.close()
        result.steps, result.followed_to = replay.steps, replay.followed_to
        result.ended, result.truncated = replay.ended, replay.truncated
        outcome.logs.append(result)
    return outcome


def _earlier(a: Violation, b: Violation) -> bool:
    """Whether ``a`` goes before ``b`` as the first violation: by time, where a receiver's arrival of
    a datagram no log sent counts ``CLOCK_SLACK_MS`` later (the hosts' clocks may differ by that
    much, and that arrival is a consequence: a corrupted or lying sender's step is where its log and
    the spec part), and at the same time after any other."""
    return (_when(a), a.made_up) < (_when(b), b.made_up)


def _when(v: Violation) -> float:
    return v.when_ms + (CLOCK_SLACK_MS if v.made_up else 0)
