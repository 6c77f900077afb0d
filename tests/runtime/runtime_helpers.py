"""What the runtime's tests share: streams between the members of a ``LocalGroup`` judged by counts.

Every verdict here is a count (every message delivered exactly once and in order per sender);
``DEADLINE`` only stops a hung test, it never decides one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from checks.demo.member import Checker, expected_from, receive_stream, send_stream
from checks.validate.logset import Outcome, validate_logs
from impl.runtime.group import LocalGroup

DEADLINE = 900.0  # seconds: stops a hung test; no verdict depends on it
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, DEADLINE)
    return asyncio.run(bounded())


async def streams(group: LocalGroup, messages: int, *, size: int = 32,
                  script: Callable[[LocalGroup], Awaitable[None]] | None = None) -> list[Checker]:
    """Every member sends ``messages`` (``checks/demo/member.py``'s stream) and takes what is meant
    for it; ``script`` runs beside (partitions, views). Returns each member's checker."""
    n, multicast = group.n, group.protocol.startswith("nakack")
    checkers = [Checker(expected_from(i, n, messages, multicast)) for i in range(n)]
    work: list[Awaitable[None]] = [send_stream(e, n, messages, size=size) for e in group.endpoints]
    work += [receive_stream(e, c) for e, c in zip(group.endpoints, checkers)]
    if script is not None:
        work.append(script(group))
    await asyncio.gather(*work)
    return checkers


def assert_exactly_once_in_order(checkers: list[Checker]) -> None:
    for member, checker in enumerate(checkers):
        assert checker.duplicates == 0 and checker.out_of_order == 0 and checker.foreign == 0, (member, checker)
        assert checker.complete and checker.ok, (member, checker)


def validated(log_dir: Path, *, may_stop_at: tuple[str, ...] = ()) -> Outcome:
    """Every member's log validated to its end, or, for a limit in ``may_stop_at``, up to the step
    where that limit bit (the validator follows a member no further there, and says so)."""
    outcome = validate_logs(sorted(log_dir.glob("member-*.jsonl")))
    assert outcome.first is None, str(outcome.first)
    for r in outcome.logs:
        assert not r.truncated, r
        if r.followed_to is not None:
            assert any(f"limit {name} bit" in r.followed_to[1] for name in may_stop_at), r
        else:
            assert r.ended, r
    return outcome
