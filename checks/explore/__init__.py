"""Exhaustive search, protocol-agnostic: the transition-system interface (``system``), breadth-first
search over fingerprints (``search``, ``frontier``, ``fpset``), liveness on the explored graph
(``liveness``), counterexample traces (``trace``) and their text charts (``render``).
Nothing here imports ``spec/``, ``impl/`` or ``models/``."""
