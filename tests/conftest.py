"""Hypothesis profiles for every test directory: ``default`` for the suite's time budget, ``long`` for
soak runs (``pytest --hypothesis-profile=long``), ``ci`` = default with derandomization (repeatable).
No profile has a deadline: a verdict never depends on how busy the machine is (a run of a subset, say
``pytest tests/spec``, used Hypothesis' 200 ms deadline when this lived in tests/differential/)."""

import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# pytest (prepend import mode) put this folder on sys.path to import this file. Take it off again: its
# folders models/, checks/, impl/ and spec/ would shadow the real packages as namespace packages (a run of
# one test file, say tests/cli/test_bench_fpset.py, then imported tests/models as ``models``). Test files
# get their own folder on sys.path as before, so their helper modules still import.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [entry for entry in sys.path if str(Path(entry or ".").resolve()) != _HERE]

settings.register_profile("default", max_examples=60, stateful_step_count=80, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.register_profile("long", max_examples=5_000, stateful_step_count=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
