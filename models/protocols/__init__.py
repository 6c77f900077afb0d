"""Protocol adapters: how the world talks to a ``spec/`` module. ``base`` is what every protocol
declares, ``unicast`` what the unicast protocols share, one module per protocol the rest."""

from typing import Any


def __getattr__(name: str) -> Any:
    """The names of the old module ``models.protocols`` (now ``models.protocols.base``), deprecated."""
    from checks.renamed import old_attribute

    return old_attribute(__name__, name)
