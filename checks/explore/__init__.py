"""Exhaustive search, protocol-agnostic: the transition-system interface (``system``), breadth-first
search over fingerprints (``search``, ``frontier``, ``fpset``), liveness on the explored graph
(``liveness``), counterexample traces (``trace``) and their text charts (``render``).
Nothing here imports ``spec/``, ``impl/`` or ``models/``."""

from typing import Any


def __getattr__(name: str) -> Any:
    """The names of the old module ``checks.explore`` (now ``checks.explore.search``), deprecated."""
    from checks.renamed import old_attribute

    return old_attribute(__name__, name)
