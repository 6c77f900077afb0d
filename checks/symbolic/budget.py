"""z3's work budgets for ``seqcheck prove``: every query is bounded by z3's own resource count
(``rlimit``), never by wall time, so a verdict does not depend on the machine's load.

With wall-clock timeouts (8 s an obligation, four seeds for a CTI) a busy machine turned a proof
into "not validated", exit 1 (issue 28, item 3). z3's ``rlimit`` counts the solver's steps: the same
query, in the same sequence of queries, gets the same answer however slowly it runs. Rules:

1. Every query goes through ``check(solver)``, which sets the solver's ``rlimit`` to the query's
   budget (z3 counts it from the check's start) and never a ``timeout``.
2. Budgets are calibrated per obligation: ``budgets.json`` holds what each query used in a
   calibration run (``SEQCHECK_PROVE_CALIBRATE=FILE seqcheck prove all`` writes it), keyed by a
   digest of the query (its assertions as z3 prints them, and z3's random seed); a query's budget
   is ``FACTOR`` times that, at least ``FLOOR``. A query the table does not know (a model changed
   since) gets ``DEFAULT``, the largest calibrated budget's order.
3. A query that runs out of budget answers ``unknown`` (``exhausted`` tells why): ``seqcheck
   prove`` reports such a line as undecided, with its own exit status (3), never as a failed proof.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import weakref
from pathlib import Path

import z3

TABLE = Path(__file__).with_name("budgets.json")
CALIBRATE_ENV = "SEQCHECK_PROVE_CALIBRATE"
FACTOR = 20  # budget = FACTOR x the calibrated use: room for another process history (rule 2)
FLOOR = 2_000_000  # no query gets less (a few ms of z3's work)
DEFAULT = 1_000_000_000  # a query not in the table (rule 2): FACTOR x the heaviest calibrated use (49.9M)

_table: dict[str, int] | None = None
_used: dict[str, int] = {}
# z3's "rlimit count" grows per context (the main one, and the Context some lemmas make for themselves):
# a query's use is its context's count less that context's count after the query before.
_last_count: weakref.WeakKeyDictionary[z3.Context, int] = weakref.WeakKeyDictionary()


def _key(solver: z3.Solver) -> str:
    text = f"{z3.get_param('smt.random_seed')}\n{solver.sexpr()}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def budget(key: str) -> int:
    """The rlimit of the query with digest ``key`` (rule 2)."""
    global _table
    if _table is None:
        _table = json.loads(TABLE.read_text()) if TABLE.exists() else {}
    used = _table.get(key)
    return DEFAULT if used is None else max(FLOOR, FACTOR * used)


def check(solver: z3.Solver, rlimit: int | None = None) -> z3.CheckSatResult:
    """``solver.check()`` within the query's budget (rule 1; ``rlimit``: this one instead, for a
    test's own queries); records its use for a calibration."""
    key = _key(solver)
    solver.set("rlimit", budget(key) if rlimit is None else rlimit)
    answer = solver.check()
    count = int(solver.statistics().get_key_value("rlimit count"))
    _used[key] = max(_used.get(key, 0), count - _last_count.get(solver.ctx, 0))
    _last_count[solver.ctx] = count
    return answer


def _write_calibration() -> None:
    target = os.environ.get(CALIBRATE_ENV)
    if target and _used:
        Path(target).write_text(json.dumps(dict(sorted(_used.items())), indent=0) + "\n")


atexit.register(_write_calibration)


def exhausted(solver: z3.Solver) -> bool:
    """Did ``solver``'s last ``check`` answer unknown because its budget ran out (rule 3)?"""
    return "resource limit" in solver.reason_unknown()
