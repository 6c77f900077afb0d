"""JGroups itself as the oracle: a deterministic harness around JGroups' own protocol classes
(``java/``: one JVM, N members, virtual time, every packet captured), the specs in lockstep with it
(``lockstep.py``), ``seqcheck conform`` (``conform.py``) and the replay of traces on a release
(``replay.py``). Jars are found by ``locate.py`` and the harness is compiled by ``build.py``."""
