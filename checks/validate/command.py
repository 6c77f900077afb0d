"""``seqcheck validate LOG...``: the command line of ``checks/validate/logset.py``.

Exit status: 0 when every step of every log is one the spec allows, 1 at the first that is not
(printed with its file, line and step, the differing datagrams or deliveries, a chart of the
steps before it, and the viewer's HTML page written to ``--trace-dir``), 2 for a usage error (a
file that is not an event log, logs that do not belong together), as one line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the spec, models and bindings load when the command runs, not with the parser
    from checks.validate.logset import Outcome


class ValidateUsageError(Exception):
    """A mistake in what the user asked for; one line, exit status 2."""


USAGE_ERRORS = (ValidateUsageError,)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", type=Path, help="event logs of one run (impl/runtime endpoints' log=...)")
    parser.add_argument("--trace-dir", type=Path, default=Path("traces"),
                        help="where the viewer page of a rejected step goes (default ./traces)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def command(args: argparse.Namespace) -> int:
    from checks.validate.logset import validate_logs
    from checks.validate.protocols import LogRefused
    from checks.validate.report import write_page

    try:
        outcome = validate_logs(list(args.logs))
    except LogRefused as error:
        raise ValidateUsageError(str(error)) from None
    page = None
    if outcome.first is not None and outcome.replay is not None:
        name = f"validate-{outcome.first.path.rsplit('/', 1)[-1].removesuffix('.jsonl')}-step{outcome.first.step}.html"
        page = write_page(args.trace_dir / name, outcome.replay, outcome.first)
    if args.json:
        print(json.dumps(summary(outcome, page)))
    else:
        _print(outcome, page, sys.stdout)
    return 0 if outcome.valid else 1


def summary(outcome: Outcome, page: Path | None = None) -> dict[str, Any]:
    first = outcome.first
    return {"protocol": outcome.protocol, "members": outcome.members, "valid": outcome.valid,
            "steps": sum(r.steps for r in outcome.logs),
            "logs": [{"path": str(r.path), "member": r.member, "steps": r.steps, "delivered": r.delivered,
                      "datagrams_in": r.datagrams, "complete": r.ended and r.followed_to is None and not r.truncated,
                      "truncated": r.truncated,
                      "followed_to": None if r.followed_to is None else {"line": r.followed_to[0],
                                                                         "why": r.followed_to[1]}}
                     for r in outcome.logs],
            "violation": None if first is None else {
                "path": first.path, "line": first.line, "step": first.step, "member": first.member, "t": first.t,
                "what": first.what, "spec": first.spec, "logged": first.logged},
            "trace_page": None if page is None else str(page)}


def _print(outcome: Outcome, page: Path | None, out: Any) -> None:
    from checks.validate.report import text_chart

    for r in outcome.logs:
        status = ("rejected at line " + str(r.violation.line)) if r.violation is not None else "allowed"
        notes = []
        if r.followed_to is not None:
            notes.append(f"followed to line {r.followed_to[0]} only: {r.followed_to[1]}")
        if r.truncated:
            notes.append("the log was truncated (max_log_bytes): its prefix was checked")
        elif not r.ended and r.violation is None:
            notes.append("no end line: the endpoint did not close cleanly (the steps logged were checked)")
        print(f"{r.path}: member {r.member}, {r.steps:,} steps {status} ({r.datagrams:,} datagrams in, "
              f"{r.delivered:,} deliveries){'; ' + '; '.join(notes) if notes else ''}", file=out)
    first = outcome.first
    steps = sum(r.steps for r in outcome.logs)
    if first is None:
        print(f"valid: every one of {steps:,} steps of {len(outcome.logs)} logs is a step the {outcome.protocol} "
              "spec allows", file=out)
        return
    print(f"\nthe first step the spec does not allow:\n{first}\n", file=out)
    if outcome.replay is not None:
        print(text_chart(outcome.replay, first), file=out, end="")
    if page is not None:
        print(f"viewer page: {page}", file=out)
