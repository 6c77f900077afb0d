"""Protocol adapters: how the world talks to a ``spec/`` module. ``base`` is what every protocol
declares, ``unicast`` what the unicast protocols share, one module per protocol the rest."""
