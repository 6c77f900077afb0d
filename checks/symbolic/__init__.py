"""Unbounded proofs with z3 (issue 16): the protocols' inductive invariants and the engines'
arithmetic, for all values and any number of messages in flight (``seqcheck prove``).

- ``ops``: one vocabulary of formulas that evaluates both on z3 terms and on plain Python values,
  so the symbolic transition relation is the same source that the cross-check runs on the explicit
  checker's concrete steps.
- ``unicast3.model``, ``unicast2.model``: one connection of each protocol as a symbolic transition
  system (state, guarded actions); ``unicast3.abstraction``, ``unicast2.abstraction``: concrete
  worlds of ``models/world.py`` as symbolic states, and back.
- ``unicast3.invariants``, ``unicast2.invariants``: the issue's invariants and the strengthenings
  that make them inductive, each with the sentence that says why it holds.
- ``obligations``: one z3 query per action x invariant (mypyvy's discipline), with timings;
  ``bounded``: bounded pre-states that make a counterexample readable.
- ``crosscheck``: every explicit step satisfies the symbolic relation, enabledness agrees, the
  restated properties agree with the spec's (bounded BFS and seeded random walks).
- ``cti``: a failed obligation as a concrete counterexample-to-induction, replayed on the spec,
  and a bounded search for a reachable one, written as a trace.
- ``table``, ``fixed_buffer``, ``counters``: the engines' arithmetic (Table rows, FixedBuffer ring,
  wrapping timestamps and conn_ids) for every machine value.
- ``nakack4``: one NAKACK4 sender's window and AckTable (model, abstraction onto the multicast
  world, invariants, proofs): the window bound and purge safety for any group size.
- ``nakack2``: one NAKACK2 sender's window at every member under STABLE's rounds (views as ids
  with their members, votes and STABILITY carrying their view): purge safety for any group size.
- ``unicast2.proofs``, ``nakack4.proofs``, ``nakack2.proofs`` and ``command``: what ``seqcheck prove`` runs and prints.
"""
