"""seqcheck: models."""
