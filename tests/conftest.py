"""Hypothesis profiles for every test directory: ``default`` for the suite's time budget, ``long`` for
soak runs (``pytest --hypothesis-profile=long``), ``ci`` = default with derandomization (repeatable).
No profile has a deadline: a verdict never depends on how busy the machine is (a run of a subset, say
``pytest tests/spec``, used Hypothesis' 200 ms deadline when this lived in tests/differential/)."""

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=60, stateful_step_count=80, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.register_profile("long", max_examples=5_000, stateful_step_count=400, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")
