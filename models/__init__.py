"""seqcheck: models."""

from checks.renamed import install

install()  # old public module names (checks/renamed.py)
