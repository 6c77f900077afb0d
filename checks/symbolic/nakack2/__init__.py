"""One NAKACK2 sender's window at every member under STABLE (model, abstraction onto the multicast
world, invariants) and what ``seqcheck prove nakack2`` runs (``proofs``)."""
