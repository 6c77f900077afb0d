"""UNICAST2 in the symbolic world: one connection as a transition system (``model``), its map to and
from concrete worlds (``abstraction``), its invariants and strengthenings (``invariants``), and what
``seqcheck prove unicast2`` runs (``proofs``)."""
