"""Mutation testing of the project's own checks (``seqcheck mutate``, issue 19): a catalogue of
planted defects (``mutants.toml``, ``catalogue.py``), the checks that judge one in a patched copy
of the tree (``kill.py``), and the command that runs them all and prints the kill table
(``command.py``)."""
