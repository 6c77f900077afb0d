"""JGroups itself as the oracle: a deterministic harness around JGroups' own protocol classes
(``java/``: one JVM, N members, virtual time, every packet captured), the specs in lockstep with it
(``lockstep.py``; the multicast world's actions: ``mcast_lockstep.py``), ``seqcheck conform``
(``conform.py``), the replay of traces on a release (``replay.py``) and the bug catalogues
(``catalogue.py``, ``mcast_catalogue.py`` with seqcheck's multicast findings). A protocol's binding is
``<protocol>.py``. Jars are found by ``locate.py`` and the harness is compiled by ``build.py``."""
