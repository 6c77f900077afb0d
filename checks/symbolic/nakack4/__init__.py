"""One NAKACK4 sender's window and AckTable as a symbolic model (``model``), its map to the
multicast world (``abstraction``), its invariants (``invariants``) and what ``seqcheck prove
nakack4`` runs (``proofs``)."""
