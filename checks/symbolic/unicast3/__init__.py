"""UNICAST3 in the symbolic world: one connection as a transition system (``model``), its map to and
from ``models/world.py``'s concrete worlds (``abstraction``), and its invariants with the
strengthenings that explain why it works (``invariants``)."""
