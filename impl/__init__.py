"""seqcheck implementation: sans-IO protocol engines, their data structures and wire format."""
