"""Unbounded proofs with z3 (issue 16): the protocols' inductive invariants and the engines'
arithmetic, for all values and any number of packets in flight.

- ``ops``: one vocabulary of formulas that evaluates both on z3 terms and on plain Python values,
  so the symbolic transition relation is the same source that the cross-check runs on the explicit
  checker's concrete steps.
- ``unicast3_model``: one UNICAST3 connection as a symbolic transition system (state, actions).
- ``unicast3_abstraction``: concrete worlds of ``models/world.py`` as symbolic states, and back.
- ``unicast3_invariants``: the invariants of the issue and the strengthenings that make them
  inductive, each with the sentence that says why it holds.
- ``obligations``: one z3 query per action x invariant (mypyvy's discipline), with timings.
- ``crosscheck``: every explicit step satisfies the symbolic relation; enabledness agrees.
- ``cti``: a failed obligation as a concrete counterexample-to-induction, replayed on the spec,
  and a bounded search for a reachable one (JGRP-1873).
- ``table``: ``impl/window.Table``'s seqno -> (row, column) arithmetic on 64-bit vectors.
- ``command``: ``seqcheck prove``.
"""
