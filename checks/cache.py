"""The folder where seqcheck keeps what it can always rebuild: the JGroups harness compiled per jar
(``checks/jgroups/build.py``, ``harness/``) and the surviving baselines of ``seqcheck mutate``
(``checks/mutate/baseline.py``, ``mutate-baseline/``). ``SEQCHECK_CACHE`` names it; else
``$XDG_CACHE_HOME/seqcheck`` or ``~/.cache/seqcheck``. Deleting it costs only the rebuild.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    configured = os.environ.get("SEQCHECK_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "seqcheck"
