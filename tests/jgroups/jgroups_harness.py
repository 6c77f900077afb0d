"""JGroups for the tests: one harness JVM per release and test process, shared by its tests.
A test calls ``harness_for(version)`` (the JVMs end with the test process).

Where no jar or JDK can be found (a machine without ``../shared/jgroups``), the tests that need
them skip with the one-line reason; with ``SEQCHECK_REQUIRE_JGROUPS=1`` (set by ``.ci/run``) that
is a failure instead, so CI can never pass without running them.
"""

from __future__ import annotations

import atexit
import os

import pytest

from checks.jgroups.harness import Harness
from checks.jgroups.locate import JGroupsUnavailable, release

_HARNESSES: dict[str, Harness] = {}


def unavailable(reason: str) -> None:
    if os.environ.get("SEQCHECK_REQUIRE_JGROUPS") == "1":
        pytest.fail(f"SEQCHECK_REQUIRE_JGROUPS=1 but {reason}")
    pytest.skip(reason)


def harness_for(version: str) -> Harness:
    """The shared harness of ``version`` (started on first use; skips when JGroups is missing)."""
    found = _HARNESSES.get(version)
    if found is None or found.process.poll() is not None:
        try:
            found = _HARNESSES[version] = Harness(release(version))
        except JGroupsUnavailable as error:
            unavailable(str(error))
            raise
    return found


@atexit.register
def _close_all() -> None:
    for harness in _HARNESSES.values():
        harness.close()
    _HARNESSES.clear()
