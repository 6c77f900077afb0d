"""seqcheck: checks."""
