"""``seqcheck demo``: the network runtime (``impl/runtime``) shown end to end, one process per member."""
