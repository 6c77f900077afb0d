"""seqcheck: spec."""
